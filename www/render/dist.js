//# allFunctionsCalledOnLoad
// Panel 2: the top-10 next-token distribution, raw and after the rules, side
// by side, with buttons to ban or bias a token.

import { makeEl, setText, setAttr, syncChildren, ensureSlot } from "./dom.js";
import { formatProb, formatProbShort } from "./format.js";

/**
 * @typedef {Object} DistView
 * @property {any} distribution            the engine's Distribution
 * @property {{ id: number, display: string, prob: number, rank: number }|null} chosen
 * @property {Set<number>} banned
 * @property {Map<number, number>} bias
 */

/**
 * Paint the distribution panel.
 * @param {HTMLElement} root
 * @param {DistView} view
 */
export function renderDist(root, view) {
  const d = view.distribution;
  const head = ensureSlot(root, "head", () => makeEl("p", { class: "dist-head" }));
  const legend = ensureSlot(root, "legend", () => {
    const el = makeEl("div", { class: "legend" });
    el.append(makeEl("span", { class: "key raw" }), " raw (softmax of the logits)  ",
      makeEl("span", { class: "key final" }), " after the rules (what is sampled)");
    return el;
  });
  void legend;
  // An ARIA table, read row by row: a header row screen readers announce (not
  // drawn: the legend says it), then one row per token.
  const table = ensureSlot(root, "rows", () => {
    const t = makeEl("div", { class: "dist-rows", role: "table", "aria-label": "top tokens, raw and final probability" });
    const header = makeEl("div", { class: "sr-only", role: "rowgroup" });
    const hrow = makeEl("div", { role: "row" });
    for (const name of ["token", "raw bar", "raw probability", "bar after the rules", "probability after the rules", "ban or bias"]) {
      hrow.append(makeEl("span", { role: "columnheader" }, name));
    }
    header.append(hrow);
    t.append(header, makeEl("div", { class: "dist-body", role: "rowgroup" }));
    return t;
  });
  const body = /** @type {HTMLElement} */ (table.lastElementChild);
  if (!d) { setText(head, "No distribution yet."); syncChildren(body, 0, () => makeEl("div")); return; }

  const final = d.stages[d.stages.length - 1];
  const pMax = final.top.reduce((m, t) => Math.max(m, t.prob), 0);
  let headText = `Next token at position ${d.position}: p_max = ${formatProb(pMax)} after the rules`;
  if (view.chosen) headText = `Drawn at position ${d.position}: ${view.chosen.display} (rank ${view.chosen.rank}, p = ${formatProb(view.chosen.prob)})`;
  setText(head, headText);
  setAttr(head, "data-pmax", pMax);

  const rows = syncChildren(body, d.raw_top.length, makeRow);
  d.raw_top.forEach((tok, i) => {
    const row = rows[i];
    const after = final.top[i];
    const [name, rawBar, rawNum, finBar, finNum, acts] = row.children;
    const [ban, bias] = acts.children;
    setText(name, tok.display);
    setAttr(name, "title", `id ${tok.id}, logit ${tok.logit.toFixed(4)}`);
    setBar(rawBar.firstElementChild, tok.prob);
    setText(rawNum, formatProbShort(tok.prob));
    setAttr(rawNum, "title", formatProb(tok.prob));
    setBar(finBar.firstElementChild, after.prob);
    setText(finNum, after.kept ? formatProbShort(after.prob) : "cut");
    setAttr(finNum, "title", formatProb(after.prob));
    setAttr(finNum, "data-prob", after.prob);
    row.classList.toggle("cut", !after.kept);
    row.classList.toggle("chosen", view.chosen?.id === tok.id);
    const isBanned = view.banned.has(tok.id);
    setText(ban, isBanned ? "unban" : "ban");
    setAttr(ban, "data-id", tok.id);
    setAttr(ban, "aria-label", `${isBanned ? "unban" : "ban"} ${tok.display}`);
    const b = view.bias.get(tok.id);
    setText(bias, b === undefined ? "bias" : `bias ${b > 0 ? "+" : ""}${b} ×`);
    setAttr(bias, "data-id", tok.id);
    setAttr(bias, "aria-label", b === undefined ? `add bias to ${tok.display}` : `remove bias from ${tok.display}`);
  });
}

/** One row: token, raw bar, raw number, final bar, final number, ban, bias. */
function makeRow() {
  const row = makeEl("div", { class: "dist-row", role: "row" });
  row.append(
    makeEl("span", { class: "tokname", role: "cell" }),
    barCell("raw"), makeEl("span", { class: "num", role: "cell" }),
    barCell("final"), makeEl("span", { class: "num", role: "cell" }),
    makeEl("span", { class: "acts", role: "cell" }),
  );
  row.lastElementChild.append(
    makeEl("button", { type: "button", class: "mini", "data-action": "ban" }),
    makeEl("button", { type: "button", class: "mini", "data-action": "bias" }),
  );
  return row;
}

/** @param {string} kind */
function barCell(kind) {
  // The bar repeats the number next to it: drawn, not read.
  const cell = makeEl("span", { class: `bar ${kind}`, role: "cell", "aria-hidden": "true" });
  cell.append(makeEl("span", { class: "fill" }));
  return cell;
}

/**
 * @param {HTMLElement} fill
 * @param {number} p
 */
function setBar(fill, p) {
  const w = `${(p * 100).toFixed(2)}%`;
  if (fill.style.width !== w) fill.style.width = w;
}
