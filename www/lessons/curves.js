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
}
