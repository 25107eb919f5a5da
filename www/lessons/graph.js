// Graph figures of the bigram: the greedy argmax map a→b, b→a, c→b (the
// 2-cycle in colour) with the penalised run's window, and the sampled
// chain's transition matrix as a graph with its probabilities.

import { makeEl, makeSvg } from "../render/dom.js";
import { COLORS, label } from "./svg.js";

const POS = { a: [70, 90], b: [210, 90], c: [350, 90] };

function base(aria) {
  const svg = makeSvg("svg", { viewBox: "0 0 420 200", width: 420, height: 200, class: "lesson-chart", role: "img", "aria-label": aria });
  svg.append(makeSvg("rect", { x: 0, y: 0, width: 420, height: 200, fill: "var(--panel, #fff)" }));
  const defs = makeSvg("defs");
  for (const [id, color] of [["arrow-ink", "#444"], ["arrow-red", COLORS.red]]) {
    const m = makeSvg("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
    m.append(makeSvg("path", { d: "M0,0L10,5L0,10z", fill: color }));
    defs.append(m);
  }
  svg.append(defs);
  return svg;
}

function node(svg, name) {
  const [x, y] = POS[name];
  svg.append(makeSvg("circle", { cx: x, cy: y, r: 22, fill: "var(--panel, #fff)", stroke: "currentColor", "stroke-width": 2 }));
  label(svg, x, y + 5, name, { "text-anchor": "middle", "font-size": 16, "font-weight": "bold" });
}

/** An arc from one node to another, bending up (bend > 0) or down. */
function arc(svg, from, to, bend, color, text) {
  const [x1, y1] = POS[from], [x2, y2] = POS[to];
  const dir = Math.sign(x2 - x1) || 1;
  const sx = x1 + 22 * dir * 0.7, ex = x2 - 22 * dir * 0.7;
  const sy = y1 - 16 * Math.sign(bend), ey = y2 - 16 * Math.sign(bend);
  const mx = (sx + ex) / 2, my = (sy + ey) / 2 - bend;
  svg.append(makeSvg("path", { d: `M${sx},${sy}Q${mx},${my} ${ex},${ey}`, stroke: color, fill: "none", "stroke-width": 2,
    "marker-end": `url(#${color === COLORS.red ? "arrow-red" : "arrow-ink"})` }));
  if (text) label(svg, mx, my + (bend > 0 ? 10 : 0), text, { "text-anchor": "middle", "font-size": 11, fill: color });
}

export function cycleGraph(box, d) {
  const svg = base("the greedy argmax map");
  label(svg, 210, 20, "greedy: x → argmax P(·|x)", { "text-anchor": "middle", "font-weight": "bold" });
  for (const m of d.map) {
    const inCycle = (m.from === "a" && m.to === "b") || (m.from === "b" && m.to === "a");
    const bend = m.from === "b" ? -40 : 40;
    arc(svg, m.from, m.to, bend, inCycle ? COLORS.red : "#444", `${m.from}→${m.to}`);
  }
  for (const n of ["a", "b", "c"]) node(svg, n);
  label(svg, 210, 190, "red: the 2-cycle every orbit falls into (period 2)", { "text-anchor": "middle", "font-size": 11, fill: COLORS.red });
  box.append(svg);
  // The penalised run, one step a row: the window the penalty sees and what greedy picks.
  const table = makeEl("table", { class: "lesson-window" });
  const head = makeEl("tr");
  head.append(makeEl("th", {}, "step"), makeEl("th", {}, `window (last ${d.window})`), makeEl("th", {}, "greedy + penalty picks"));
  table.append(head);
  d.penalty_windows.forEach((w, i) => {
    const tr = makeEl("tr");
    tr.append(makeEl("td", {}, String(i + 1)), makeEl("td", { class: "mono" }, w.window), makeEl("td", { class: "mono" }, w.next));
    table.append(tr);
  });
  // The same view with the penalty on: the output panel below then generates it live.
  const live = makeEl("p", { class: "help" });
  live.append(makeEl("a", { href: `?lesson=greedy-cycle&repetition_penalty=${d.penalty}&penalty_window=${d.window}&penalty_mode=per_occurrence`, "data-action": "cycle-penalty" },
    `Generate it live with the penalty on (ρ = ${d.penalty}, window ${d.window}, per occurrence)`));
  box.append(live);
  const details = makeEl("details", { class: "lesson-details" });
  details.append(makeEl("summary", {}, "The penalty's window at every step"), table);
  box.append(details);
}

export function matrix(box, d) {
  const svg = base("the sampled chain");
  const P = d.lesson.matrix;
  const names = ["a", "b", "c"];
  label(svg, 210, 20, "sampling at τ = 1: a Markov chain", { "text-anchor": "middle", "font-weight": "bold" });
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) {
      if (i === j || P[i][j] < 1e-3 || Math.abs(i - j) !== 1) continue;
      arc(svg, names[i], names[j], i < j ? 40 : -40, i === 1 ? COLORS.blue : "#444", P[i][j].toFixed(2));
    }
  }
  for (const n of names) node(svg, n);
  label(svg, 210, 190, `π = (${d.lesson.stationary.map((p) => p.toFixed(2)).join(", ")}), ${d.lesson.entropy_rate_bits.toFixed(2)} bits/token`, { "text-anchor": "middle", "font-size": 11 });
  box.append(svg);
  const table = makeEl("table", { class: "lesson-matrix" });
  const head = makeEl("tr");
  head.append(makeEl("th", {}, "P̂ (lesson)"), ...names.map((n) => makeEl("th", {}, `→ ${n}`)));
  table.append(head);
  P.forEach((row, i) => {
    const tr = makeEl("tr");
    tr.append(makeEl("th", {}, `from ${names[i]}`), ...row.map((p) => makeEl("td", {}, p.toFixed(6))));
    table.append(tr);
  });
  box.append(table);
}
