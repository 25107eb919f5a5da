//# allFunctionsCalledOnLoad
// The load progress line: a bar (bytes and percent) while a model file
// downloads, then what the worker is doing with it.

import { setText, setAttr } from "./dom.js";

/**
 * @typedef {Object} ProgressView
 * @property {number} loaded   bytes so far
 * @property {number} total    bytes expected (0: unknown)
 * @property {string} what     the file's URL or name
 * @property {string} [stage]  "download" | "cache" | "read" (a file from the user's disk) | "build" (default "download")
 */

/** @param {number} n */
const mb = (n) => (n / 1e6).toFixed(1);

/**
 * Paint the progress line, or hide it (null). The last bar's figures stay in
 * data attributes of the line (data-loaded, data-total, data-percent) after it
 * is hidden, so a test can read how far the download went.
 * @param {HTMLElement} root the #loading box, holding a <progress> and a label
 * @param {ProgressView|null} p
 */
export function renderProgress(root, p) {
  const bar = /** @type {HTMLProgressElement} */ (root.querySelector("progress"));
  const label = root.querySelector(".label");
  if (!p) {
    bar.hidden = true;
    setText(label, "");
    root.removeAttribute("data-stage");
    return;
  }
  bar.hidden = false;
  const file = p.what.split("/").pop().replace(/\?.*$/, "");
  const stage = p.stage ?? "download";
  setAttr(root, "data-stage", stage);
  if (stage === "build") {
    // The engine works on the whole file at once: no figure to show, an indeterminate bar.
    bar.removeAttribute("value");
    setText(label, `Building the model from ${file} (${mb(p.total || p.loaded)} MB; this takes a few seconds)…`);
    return;
  }
  const percent = p.total ? Math.min(100, Math.floor((100 * p.loaded) / p.total)) : null;
  if (p.total) { bar.max = p.total; bar.value = p.loaded; } else bar.removeAttribute("value");
  setAttr(root, "data-loaded", p.loaded);
  setAttr(root, "data-total", p.total);
  if (percent !== null) setAttr(root, "data-percent", percent);
  const verb = stage === "cache" ? "Reading from the browser's cache" : stage === "read" ? "Reading from your disk" : "Downloading";
  setText(label, `${verb} ${file}: ${mb(p.loaded)}${p.total ? ` of ${mb(p.total)} MB (${percent}%)` : " MB"}`);
}
