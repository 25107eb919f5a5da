// KV-cache figures: the 12-step triangle of attention scores (naive: the
// whole triangle at every step; cached: one new row), and the lesson's
// 8-step demo's FLOPs per step, naive against cached.

import { makeSvg } from "../render/dom.js";
import { frame, axes, line, legend, COLORS, label } from "./svg.js";

export function triangle(box, d) {
  const n = d.triangle.steps, cell = 14, pad = 30;
  const W = 2 * (n * cell + pad) + 20, H = n * cell + 2 * pad;
  const svg = makeSvg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "lesson-chart", role: "img", "aria-label": "scores computed over 12 steps" });
  svg.append(makeSvg("rect", { x: 0, y: 0, width: W, height: H, fill: "var(--panel, #fff)" }));
  const draw = (x0, title, shade) => {
    label(svg, x0 + (n * cell) / 2, 16, title, { "text-anchor": "middle", "font-weight": "bold" });
    for (let i = 0; i < n; i++) {
      for (let j = 0; j <= i; j++) {
        svg.append(makeSvg("rect", { x: x0 + j * cell, y: pad + i * cell, width: cell - 1, height: cell - 1, fill: shade(i, j), stroke: "none" }));
      }
    }
  };
  // Naive: step t recomputes rows 1…t; darker = recomputed more often.
  draw(pad, `naive: ${d.triangle.naive_scores} scores`, (i) => `rgba(213, 94, 0, ${(0.25 + 0.75 * (n - i) / n).toFixed(2)})`);
  draw(pad + n * cell + pad + 20, `cached: ${d.triangle.cached_scores} scores`, () => "rgba(0, 114, 178, 0.8)");
  label(svg, W / 2, H - 8, "row t = the query at step t; columns = the keys it sees (causal)", { "text-anchor": "middle", "font-size": 10 });
  box.append(svg);
}

export function flopBars(box, d) {
  const t = d.naive_flops.map((_, i) => i + 1);
  const o = { x: [1, d.steps], y: [0, Math.max(...d.naive_flops) * 1.1], width: 460, height: 260,
    title: `FLOPs per step, d_head = ${d.d_head}: ${d.cumulative_naive} against ${d.cumulative_cached} in all`, xLabel: "step t", yLabel: "FLOPs", aria: "FLOPs per step" };
  const f = frame(o);
  axes(f, o);
  line(f, t, d.naive_flops, COLORS.red);
  line(f, t, d.cached_flops, COLORS.blue);
  legend(f, [["naive: 3t·d² + 2t²·d + t²", COLORS.red], ["cached: 3d² + 2t·d + t", COLORS.blue]]);
  box.append(f.svg);
}
