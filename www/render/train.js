//# allFunctionsCalledOnLoad
// The "bigram-abc" model's retraining result: the loss curve and the learned
// table P(next | current), to compare with lesson 18.

import { makeEl, makeSvg, setText, setAttr, syncChildren, ensureSlot } from "./dom.js";
import { OKABE_ITO } from "./format.js";

/**
 * @typedef {Object} TrainView
 * @property {{ losses: number[], probs: number[][] }|null} result
 * @property {boolean} busy
 */

const W = 320, H = 140, M = { l: 36, r: 8, t: 8, b: 24 };
const NAMES = ["a", "b", "c"];

/**
 * Paint the training result.
 * @param {HTMLElement} root
 * @param {TrainView} view
 */
export function renderTrain(root, view) {
  const note = ensureSlot(root, "note", () => makeEl("p", { class: "note" }));
  const svg = ensureSlot(root, "loss", () => {
    const s = makeSvg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img", "aria-label": "training loss per step" });
    s.append(makeSvg("path", { class: "axes", d: `M${M.l},${M.t}V${H - M.b}H${W - M.r}`, stroke: "currentColor", fill: "none" }),
      makeSvg("path", { class: "loss", stroke: OKABE_ITO.vermillion, fill: "none", "stroke-width": 1.5 }),
      makeSvg("text", { class: "ymax", x: M.l - 4, y: M.t + 8, "text-anchor": "end", "font-size": 10 }),
      makeSvg("text", { class: "xlab", x: (W + M.l) / 2, y: H - 4, "text-anchor": "middle", "font-size": 10 }));
    return s;
  });
  const table = ensureSlot(root, "probs", () => makeEl("table", { class: "probs" }));
  const r = view.result;
  if (!r) {
    setText(note, view.busy ? "Training…" : "Press Retrain to train the 24-parameter bigram of lesson 18 (600 AdamW steps) here in the browser.");
    svg.style.display = "none";
    table.replaceChildren();
    return;
  }
  svg.style.display = "";
  const last = r.losses[r.losses.length - 1];
  setText(note, `${r.losses.length} steps, final loss ${last.toFixed(4)} (lesson 18: 0.3395 = (24/49)·ln 2)`);
  const yMax = Math.max(...r.losses);
  const x = (i) => M.l + (i / Math.max(1, r.losses.length - 1)) * (W - M.l - M.r);
  const y = (v) => H - M.b - (v / yMax) * (H - M.t - M.b);
  setAttr(svg.querySelector(".loss"), "d", r.losses.map((v, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(""));
  setText(svg.querySelector(".ymax"), yMax.toFixed(2));
  setText(svg.querySelector(".xlab"), `step (0…${r.losses.length}); loss (nats)`);

  const rows = syncChildren(table, 4, () => makeEl("tr"));
  const head = syncChildren(rows[0], 4, () => makeEl("th"));
  ["P(next | current)", ...NAMES].forEach((t, i) => setText(head[i], t));
  r.probs.slice(0, 3).forEach((row, i) => {
    const cells = syncChildren(rows[i + 1], 4, (k) => makeEl(k ? "td" : "th"));
    setText(cells[0], `after ${NAMES[i]}`);
    row.forEach((p, j) => setText(cells[j + 1], p.toFixed(6)));
  });
}
