//# allFunctionsCalledOnLoad
// The message area at the top of the page (never a dialog) and the load
// progress line under it.

import { $, makeEl, setText } from "../render/dom.js";
import { renderProgress } from "../render/progress.js";

/**
 * Show a message.
 * @param {string} text
 * @param {"error"|"info"} [kind]
 * @param {string} [key] replace the earlier message with the same key
 */
export function say(text, kind = "error", key) {
  const box = $("#messages");
  let el = key ? box.querySelector(`[data-key="${key}"]`) : null;
  if (!el) {
    el = makeEl("div", { class: `message ${kind}`, role: kind === "error" ? "alert" : "status" });
    if (key) el.setAttribute("data-key", key);
    const close = makeEl("button", { type: "button", class: "mini", "aria-label": "dismiss" }, "×");
    close.addEventListener("click", () => el.remove());
    el.append(makeEl("span"), close);
    box.append(el);
  }
  el.className = `message ${kind}`;
  setText(el.firstElementChild, text);
}

/** @param {string} key */
export function unsay(key) {
  $("#messages").querySelector(`[data-key="${key}"]`)?.remove();
}

/**
 * The load progress line: a bar with bytes and percent, and what is happening.
 * @param {import("../render/progress.js").ProgressView} progress
 */
export function showProgress(progress) {
  renderProgress($("#loading"), progress);
}

/** Hide the progress line (the last figures stay in its data attributes). */
export function hideProgress() {
  renderProgress($("#loading"), null);
}
