//# allFunctionsCalledOnLoad
// Panel 4: entropy of the raw distribution and after each stage in force
// (the stages the rules table draws: an off stage changes nothing), and the
// entropy-vs-temperature curve with the current temperature marked.

import { makeEl, makeSvg, setText, setAttr, syncChildren, ensureSlot } from "./dom.js";
import { formatBits, labelStage, OKABE_ITO } from "./format.js";
import { stageDrawn } from "../state/settings.js";

/**
 * @typedef {Object} EntropyView
 * @property {any} distribution
 * @property {number} temperature  the current tau (0 = greedy)
 * @property {number} vocabSize
 * @property {Record<string, any>} settings the settings in force
 */

const W = 360, H = 180, M = { l: 40, r: 12, t: 10, b: 32 };

/**
 * Paint the entropy panel.
 * @param {HTMLElement} root
 * @param {EntropyView} view
 */
export function renderEntropy(root, view) {
  const d = view.distribution;
  const list = ensureSlot(root, "list", () => makeEl("dl", { class: "entropy-list" }));
  const svg = ensureSlot(root, "curve", () => makeCurveSvg());
  svg.style.display = d ? "" : "none";
  if (!d) { syncChildren(list, 0, () => makeEl("div")); return; }

  // The stages in force and the rules alone, as the rules table draws them.
  const drawn = (/** @type {{ name: string }} */ s) => stageDrawn(d, s.name);
  const items = [
    ...d.stages.filter(drawn).map((s) => ({ name: s.name === "final" ? "final (sampled)" : labelStage(s.name), s, kind: "stage" })),
    ...d.rules.filter(drawn).map((s) => ({ name: `${labelStage(s.name)} alone`, s, kind: "rule" })),
  ];
  const pairs = syncChildren(list, items.length, () => {
    const div = makeEl("div", { class: "ent-item" });
    div.append(makeEl("dt"), makeEl("dd"));
    return div;
  });
  items.forEach((it, i) => {
    const [dt, dd] = pairs[i].children;
    setText(dt, it.name);
    setText(dd, formatBits(it.s.entropy_bits));
    setAttr(dd, "title", `${it.s.entropy_nats.toFixed(6)} nats`);
    setAttr(pairs[i], "data-stage", `${it.kind}:${it.s.name}`);
    pairs[i].classList.toggle("final", it.s.name === "final");
  });

  drawCurve(svg, d, view);
}

/** The SVG skeleton; built once, patched on every paint. */
function makeCurveSvg() {
  const svg = makeSvg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img",
    "aria-label": "entropy in bits against temperature, log scale" });
  svg.append(
    makeSvg("g", { class: "axes" }),
    makeSvg("path", { class: "curve", fill: "none", stroke: OKABE_ITO.blue, "stroke-width": 2 }),
    makeSvg("line", { class: "marker", stroke: OKABE_ITO.vermillion, "stroke-width": 1.5, "stroke-dasharray": "4 3" }),
    makeSvg("circle", { class: "dot", r: 4, fill: OKABE_ITO.vermillion }),
    makeSvg("text", { class: "dot-label", "font-size": 11 }),
  );
  return svg;
}

/**
 * @param {SVGElement} svg
 * @param {any} d
 * @param {EntropyView} view
 */
function drawCurve(svg, d, view) {
  const pts = d.entropy_curve;
  if (!pts || pts.length < 2) return;
  const lx0 = Math.log10(pts[0].tau), lx1 = Math.log10(pts[pts.length - 1].tau);
  const yMax = Math.max(Math.log2(Math.max(2, view.vocabSize)), ...pts.map((p) => p.bits));
  const x = (tau) => M.l + ((Math.log10(tau) - lx0) / (lx1 - lx0)) * (W - M.l - M.r);
  const y = (bits) => H - M.b - (bits / yMax) * (H - M.t - M.b);

  const axes = svg.querySelector(".axes");
  const key = `${lx0}|${lx1}|${yMax}`;
  if (axes.getAttribute("data-key") !== key) {
    axes.setAttribute("data-key", key);
    axes.replaceChildren();
    axes.append(makeSvg("path", { d: `M${M.l},${M.t}V${H - M.b}H${W - M.r}`, stroke: "currentColor", fill: "none" }));
    for (const tau of [0.1, 0.5, 1, 2, 5, 10].filter((t) => t >= pts[0].tau && t <= pts[pts.length - 1].tau)) {
      axes.append(makeSvg("line", { x1: x(tau), x2: x(tau), y1: H - M.b, y2: H - M.b + 4, stroke: "currentColor" }));
      const t = makeSvg("text", { x: x(tau), y: H - M.b + 15, "text-anchor": "middle", "font-size": 10 });
      t.textContent = String(tau);
      axes.append(t);
    }
    const xl = makeSvg("text", { x: (W + M.l) / 2, y: H - 2, "text-anchor": "middle", "font-size": 11 });
    xl.textContent = "temperature τ (log scale)";
    const yl = makeSvg("text", { x: 4, y: M.t + 8, "font-size": 10 });
    yl.textContent = `${yMax.toFixed(1)} bits`;
    const y0 = makeSvg("text", { x: M.l - 4, y: H - M.b, "text-anchor": "end", "font-size": 10 });
    y0.textContent = "0";
    axes.append(xl, yl, y0);
  }
  setAttr(svg.querySelector(".curve"), "d",
    pts.map((p, i) => `${i ? "L" : "M"}${x(p.tau).toFixed(1)},${y(p.bits).toFixed(1)}`).join(""));

  // The marker shows the temperature rule alone at the current tau; tau = 0
  // is greedy (0 bits), drawn at the left edge.
  const tau = view.temperature;
  const tempRule = d.rules.find((r) => r.name === "temperature");
  const bits = tau === 0 ? 0 : tempRule ? tempRule.entropy_bits : interpolate(pts, tau);
  const tx = tau === 0 ? M.l : x(Math.min(Math.max(tau, pts[0].tau), pts[pts.length - 1].tau));
  const line = svg.querySelector(".marker");
  setAttr(line, "x1", tx); setAttr(line, "x2", tx); setAttr(line, "y1", M.t); setAttr(line, "y2", H - M.b);
  const dot = svg.querySelector(".dot");
  setAttr(dot, "cx", tx); setAttr(dot, "cy", y(bits));
  const label = svg.querySelector(".dot-label");
  setAttr(label, "x", tx + (tx > W / 2 ? -6 : 6));
  // above the dot, or below it when the dot is near the top edge
  setAttr(label, "y", y(bits) - 6 < M.t + 12 ? y(bits) + 16 : y(bits) - 6);
  setAttr(label, "text-anchor", tx > W / 2 ? "end" : "start");
  setText(label, `τ = ${tau}${tau === 0 ? " (greedy)" : ""}: ${bits.toFixed(4)} bits`);
}

/**
 * Entropy at tau by linear interpolation in log tau.
 * @param {{ tau: number, bits: number }[]} pts
 * @param {number} tau
 */
function interpolate(pts, tau) {
  const lt = Math.log(tau);
  for (let i = 1; i < pts.length; i++) {
    if (pts[i].tau >= tau) {
      const a = Math.log(pts[i - 1].tau), b = Math.log(pts[i].tau);
      const t = (lt - a) / (b - a);
      return pts[i - 1].bits + t * (pts[i].bits - pts[i - 1].bits);
    }
  }
  return pts[pts.length - 1].bits;
}
