//# allFunctionsCalledOnLoad
// The chips of banned and biased tokens in the controls panel. Each chip is a
// button carrying data-action ("unban" or "unbias") and data-id; the page
// listens on the box.

import { makeEl } from "./dom.js";

/**
 * @typedef {Object} ChipsView
 * @property {number[]} banned
 * @property {[number, number][]} bias     [token id, bias]
 * @property {(id: number) => string} name  a token's visible form
 */

/**
 * @param {HTMLElement} box
 * @param {ChipsView} view
 */
export function renderChips(box, view) {
  const chips = [
    ...view.banned.map((id) => ({ id, action: "unban", text: `banned ${view.name(id)}` })),
    ...view.bias.map(([id, b]) => ({ id, action: "unbias", text: `${view.name(id)} ${b > 0 ? "+" : ""}${b}` })),
  ];
  box.replaceChildren(...chips.map((c) =>
    makeEl("button", { type: "button", class: "chip", "data-action": c.action, "data-id": c.id, "aria-label": `remove: ${c.text}` }, `${c.text} ×`)));
  if (!chips.length) box.append(makeEl("span", { class: "help" }, "none"));
}
