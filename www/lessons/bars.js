// Bar-chart figures: one chart per temperature (or per τ at the tie), top-k's
// kept bars, top-p's sorted bars with the cumulative mass, the lesson's four
// panels, and P(·|b) before and after the repetition penalty.

import { makeEl, makeSvg } from "../render/dom.js";
import { barChart, COLORS, label } from "./svg.js";

const ABC = ["a", "b", "c"];

/** A row of small charts, one per τ (the 10-class vector or P(·|b)). */
export function barsRows(box, d) {
  const names = d.logits.length === 3 ? ABC : null;
  for (const r of d.rows) {
    const bits = r.bits ?? r.entropy.bits;
    const title = `τ = ${r.tau}: H = ${bits.toFixed(4)} bits`;
    box.append(barChart(r.probs, { title, width: names ? 200 : 260, height: 180, names, aria: title }).svg);
  }
}

/** Top-k: the base distribution and what is kept, renormalised. */
export function barsOne(box, d) {
  box.append(barChart(d.base, { title: "p at τ = 1", width: 260, height: 180, aria: "base distribution" }).svg);
  box.append(barChart(d.probs, { title: `top-k = ${d.k}: ${d.support} kept, renormalised`, width: 260, height: 180, aria: "top-k = 3" }).svg);
}

/** Top-p: sorted probabilities with the cumulative mass and the 0.9 line. */
export function cumulative(box, d) {
  const chart = barChart(d.base, { title: `top-p = ${d.p}: the cumulative mass crosses ${d.p} at token ${d.support}`, width: 420, height: 220, aria: "cumulative mass" });
  const svg = chart.svg;
  const vb = svg.viewBox.baseVal;
  const M = { l: 52, r: 12, t: 24, b: 38 };
  const sx = (i) => M.l + ((i + 0.5) / d.cumulative.length) * (vb.width - M.l - M.r);
  const sy = (v) => vb.height - M.b - v * (vb.height - M.t - M.b);
  svg.append(makeSvg("path", { d: d.cumulative.map((c, i) => `${i ? "L" : "M"}${sx(i).toFixed(1)},${sy(c).toFixed(1)}`).join(""), stroke: COLORS.red, fill: "none", "stroke-width": 2 }));
  d.cumulative.forEach((c, i) => svg.append(makeSvg("circle", { cx: sx(i).toFixed(1), cy: sy(c).toFixed(1), r: i === d.support - 1 ? 4 : 2.5, fill: COLORS.red })));
  svg.append(makeSvg("path", { d: `M${M.l},${sy(d.p)}H${vb.width - M.r}`, stroke: COLORS.gray, "stroke-dasharray": "4 3" }));
  label(svg, vb.width - M.r - 2, sy(d.p) - 3, `p = ${d.p}`, { "text-anchor": "end", "font-size": 10, fill: COLORS.gray });
  label(svg, sx(d.support - 1) + 6, sy(d.reaches) + 14, `${d.reaches.toFixed(4)}`, { "font-size": 10, fill: COLORS.red });
  label(svg, sx(d.support - 2) - 6, sy(d.below) - 8, `${d.below.toFixed(4)}`, { "text-anchor": "end", "font-size": 10, fill: COLORS.red });
  box.append(svg);
  box.append(barChart(d.probs, { title: `kept: ${d.support} tokens, renormalised`, width: 260, height: 220, aria: "top-p = 0.9" }).svg);
}

/** The lesson's 2×2 figure. */
export function barsFour(box, d) {
  const grid = makeEl("div", { class: "lesson-four" });
  // Each panel's entropy from the engine's six, by the panel's rule.
  const names = ["tau=0.5", "tau=2.0", "top-K=3", "top-P=0.9"];
  d.panels.forEach((p, i) => {
    const h = d.entropies.find((e) => e.name === names[i]);
    const short = p.title.replace("Temperature ", "").replace(/ \((sharpened|flattened)\)/, "");
    const title = h ? `${short}: H = ${h.bits.toFixed(2)} bits` : p.title;
    grid.append(barChart(p.probs, { title, width: 280, height: 180, aria: title }).svg);
  });
  box.append(grid);
}

/** P(·|b) before and after two penalised a's. */
export function barsPenalty(box, d) {
  box.append(barChart(d.raw, { title: "P(·|b), the tie", width: 220, height: 180, names: ABC, aria: "raw P(.|b)" }).svg);
  box.append(barChart(d.penalised, { title: "after ρ = 2 on a, twice", width: 220, height: 180, names: ABC, aria: "penalised P(.|b)" }).svg);
}
