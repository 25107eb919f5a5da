// The beam-search tree: every expansion the search made (the engine's
// BeamReport nodes), by depth, the surviving beams' paths in colour.

import { makeEl, makeSvg } from "../render/dom.js";
import { COLORS, label } from "./svg.js";

export function beamTree(box, d) {
  const run = d.runs[0];
  const depth = Math.max(...run.nodes.map((n) => n.step)) + 1;
  const byStep = Array.from({ length: depth }, (_, s) => run.nodes.filter((n) => n.step === s));
  const rows = Math.max(...byStep.map((l) => l.length));
  const W = 60 + depth * 56, H = 40 + rows * 26;
  const svg = makeSvg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "lesson-chart", role: "img", "aria-label": "beam search tree" });
  svg.append(makeSvg("rect", { x: 0, y: 0, width: W, height: H, fill: "var(--panel, #fff)" }));
  const pos = new Map();
  byStep.forEach((list, s) => list.forEach((n, i) => pos.set(n.id, [70 + s * 56, 30 + (i + (rows - list.length) / 2) * 26])));
  const root = [24, 30 + ((rows - 1) / 2) * 26];
  // Final beams: mark every node on their paths.
  const onPath = new Set();
  for (const n of run.nodes.filter((x) => x.in_final_beam)) {
    let cur = n;
    while (cur) { onPath.add(cur.id); cur = cur.parent === null ? null : run.nodes.find((x) => x.id === cur.parent); }
  }
  for (const n of run.nodes) {
    const [x, y] = pos.get(n.id);
    const [px, py] = n.parent === null ? root : pos.get(n.parent);
    const hot = onPath.has(n.id);
    svg.append(makeSvg("path", { d: `M${px + 8},${py}L${x - 8},${y}`, stroke: hot ? COLORS.red : "#999", "stroke-width": hot ? 2 : 1, fill: "none" }));
  }
  label(svg, root[0], root[1] + 4, d.prompt, { "text-anchor": "middle", "font-weight": "bold" });
  for (const n of run.nodes) {
    const [x, y] = pos.get(n.id);
    const hot = onPath.has(n.id);
    const t = label(svg, x, y + 4, n.display, { "text-anchor": "middle", "font-weight": hot ? "bold" : "normal", fill: hot ? COLORS.red : "currentColor" });
    const tip = makeSvg("title");
    tip.textContent = `ln q = ${n.logprob.toFixed(4)}, total ${n.total_logprob.toFixed(4)}`;
    t.append(tip);
  }
  box.append(svg);
  const table = makeEl("table", { class: "lesson-window" });
  const head = makeEl("tr");
  head.append(makeEl("th", {}, "α"), makeEl("th", {}, "beam"), makeEl("th", {}, "total ln q"), makeEl("th", {}, "score = ln q / 8^α"));
  table.append(head);
  for (const r of d.runs) for (const b of r.beams) {
    const tr = makeEl("tr");
    tr.append(makeEl("td", {}, String(r.alpha)), makeEl("td", { class: "mono" }, `${d.prompt}${b.text}`), makeEl("td", {}, b.logprob.toFixed(4)), makeEl("td", {}, b.score.toFixed(4)));
    table.append(tr);
  }
  box.append(table);
}
