// Line-chart figures: entropy against τ (log axis, the lesson's reference
// lines), the FLOP curve on log-log axes with its slopes, and the bigram's
// training loss falling to its floor.

import { frame, axes, line, hline, legend, COLORS, label } from "./svg.js";

export function entropyCurves(box, d) {
  const o = { x: [d.taus[0], d.taus[d.taus.length - 1]], y: [0, 3.6], logX: true, width: 520, height: 300,
    title: "Output entropy vs temperature", xLabel: "τ (log axis)", yLabel: "H [bits]", aria: "entropy against temperature" };
  const f = frame(o);
  axes(f, o);
  for (const r of d.references) hline(f, r.bits, r.label);
  line(f, d.taus, d.h10_bits, COLORS.blue);
  line(f, d.taus, d.hb_bits, COLORS.red);
  // The slope at τ = 1: a short tangent of slope Var_q(z) nats per ln τ (in bits: / ln 2).
  // H at τ = 1, interpolated in ln τ between the two neighbouring points.
  const k = Math.max(1, d.taus.findIndex((t) => t >= 1));
  const w = (0 - Math.log(d.taus[k - 1])) / (Math.log(d.taus[k]) - Math.log(d.taus[k - 1]));
  const h1 = d.h10_bits[k - 1] + w * (d.h10_bits[k] - d.h10_bits[k - 1]);
  const s = d.var_z / Math.LN2;
  const lo = 0.6, hi = 1 / 0.6;
  line(f, [lo, hi], [h1 + s * Math.log(lo), h1 + s * Math.log(hi)], COLORS.green, { "stroke-dasharray": "2 2", "stroke-width": 1.5 });
  label(f.svg, f.sx(1.7), f.sy(h1 + 0.15), `slope at τ = 1: Var_q(z) = ${d.var_z.toFixed(5)}`, { "font-size": 10, fill: COLORS.green });
  legend(f, [["10-class logit vector", COLORS.blue], ["trained model, P(·|b)", COLORS.red]]);
  box.append(f.svg);
}

export function flopCurve(box, d) {
  const T = d.cumulative_naive.map((_, i) => i + 1);
  const o = { x: [1, d.t_max], y: [10, 10 ** Math.ceil(Math.log10(d.cumulative_naive[d.t_max - 1]))], logX: true, logY: true, width: 520, height: 300,
    title: `Cumulative FLOPs, d_head = ${d.d_head}`, xLabel: "T (log axis)", yLabel: "FLOPs (log axis)", aria: "FLOP curve" };
  const f = frame(o);
  axes(f, o);
  line(f, T, d.cumulative_naive, COLORS.red);
  line(f, T, d.cumulative_cached, COLORS.blue);
  legend(f, [[`naive: slope ${d.slope_naive_last_octave.toFixed(3)} (T³ → 3)`, COLORS.red], [`cached: slope ${d.slope_cached_last_octave.toFixed(3)} (T² → 2)`, COLORS.blue]]);
  box.append(f.svg);
}

export function lossCurve(box, d) {
  const steps = d.losses.map((_, i) => i);
  const o = { x: [0, d.losses.length], y: [0, Math.ceil(Math.max(...d.losses) * 10) / 10], width: 520, height: 280,
    title: `Training loss, ${d.steps} AdamW steps (seed ${d.seed})`, xLabel: "step", yLabel: "loss (nats/token)", aria: "training loss" };
  const f = frame(o);
  axes(f, o);
  hline(f, d.floor, `(24/49)·ln 2 = ${d.floor.toFixed(4)}`, COLORS.green);
  line(f, steps, d.losses, COLORS.red);
  box.append(f.svg);
  if (d.trace?.length) box.append(rowsSettling(d));
}

/**
 * The three rows of P settling as the bigram trains: the four probabilities
 * the corpus fixes (P(b|a) and P(b|c) toward 1, P(a|b) and P(c|b) toward ½)
 * at the engine's snapshots.
 */
function rowsSettling(d) {
  // The rows move in the first few dozen steps and then hold: the x axis
  // stops once they have settled (the last snapshot's values drawn on to the edge).
  const shown = Math.min(d.steps, 150);
  const trace = d.trace.filter((t) => t.step <= shown);
  const o = { x: [0, shown], y: [0, 1], width: 520, height: 260,
    title: shown < d.steps ? `The rows of P settling (the first ${shown} of ${d.steps} steps)` : "The rows of P settling",
    xLabel: "step", yLabel: "probability", aria: "the bigram's rows during training" };
  const f = frame(o);
  axes(f, o);
  hline(f, 1, "1", COLORS.gray);
  hline(f, 0.5, "½ (the tie at b)", COLORS.gray);
  const steps = trace.map((t) => t.step);
  const rows = [[0, 1, "P(b|a)", COLORS.blue], [2, 1, "P(b|c)", COLORS.green], [1, 0, "P(a|b)", COLORS.red], [1, 2, "P(c|b)", COLORS.orange]];
  for (const [x, y, , color] of rows) line(f, steps, trace.map((t) => t.probs[x][y]), color, { "data-row": `${x}${y}` });
  // The legend between the two targets, at the right, clear of the curves' start.
  legend({ ...f, M: { ...f.M, l: f.W - 120, t: f.sy(0.88) } }, rows.map(([, , name, color]) => [name, color]));
  return f.svg;
}
