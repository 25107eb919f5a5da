// Plain SVG charts for the lesson figures, built with DOM calls only (no
// markup strings): a frame with scales (linear or log), axes with ticks,
// polylines, bars, text and reference lines.

import { makeSvg } from "../render/dom.js";

export const COLORS = { blue: "#0072b2", red: "#d55e00", green: "#009e73", gray: "#777", ink: "currentColor", orange: "#e69f00" };

/**
 * A text node in SVG.
 * @param {SVGElement} parent
 * @param {number} x
 * @param {number} y
 * @param {string} text
 * @param {Record<string, string|number>} [attrs]
 */
export function label(parent, x, y, text, attrs = {}) {
  const t = makeSvg("text", { x: x.toFixed(1), y: y.toFixed(1), "font-size": 11, fill: "currentColor", ...attrs });
  t.textContent = text;
  parent.append(t);
  return t;
}

/**
 * A chart frame: an <svg> with a plot area and scales.
 * @param {{ width?: number, height?: number, x: [number, number], y: [number, number], logX?: boolean, logY?: boolean,
 *   title?: string, xLabel?: string, yLabel?: string, aria: string }} o
 */
export function frame(o) {
  const W = o.width ?? 460, H = o.height ?? 260, M = { l: 52, r: 12, t: o.title ? 24 : 10, b: 38 };
  const svg = /** @type {SVGSVGElement} */ (makeSvg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "lesson-chart", role: "img", "aria-label": o.aria }));
  const tx = o.logX ? Math.log10 : (v) => v, ty = o.logY ? Math.log10 : (v) => v;
  const [x0, x1] = o.x.map(tx), [y0, y1] = o.y.map(ty);
  const sx = (v) => M.l + ((tx(v) - x0) / (x1 - x0)) * (W - M.l - M.r);
  const sy = (v) => H - M.b - ((ty(v) - y0) / (y1 - y0)) * (H - M.t - M.b);
  svg.append(makeSvg("rect", { x: 0, y: 0, width: W, height: H, fill: "var(--panel, #fff)" }));
  svg.append(makeSvg("path", { d: `M${M.l},${M.t}V${H - M.b}H${W - M.r}`, stroke: "currentColor", fill: "none", "stroke-width": 1 }));
  if (o.title) label(svg, W / 2, 15, o.title, { "text-anchor": "middle", "font-size": 12, "font-weight": "bold", class: "chart-title" });
  if (o.xLabel) label(svg, (W + M.l) / 2, H - 4, o.xLabel, { "text-anchor": "middle" });
  if (o.yLabel) label(svg, 12, (H - M.b + M.t) / 2, o.yLabel, { "text-anchor": "middle", transform: `rotate(-90 12 ${(H - M.b + M.t) / 2})` });
  return { svg, sx, sy, W, H, M };
}

/** Tick values: powers of ten on a log axis, about five round numbers otherwise. */
export function ticks(lo, hi, log) {
  if (log) {
    const out = [];
    for (let e = Math.ceil(Math.log10(lo) - 1e-9); e <= Math.floor(Math.log10(hi) + 1e-9); e++) out.push(10 ** e);
    return out;
  }
  const step = 10 ** Math.floor(Math.log10((hi - lo) / 4));
  const nice = [1, 2, 2.5, 5, 10].map((m) => m * step).find((s) => (hi - lo) / s <= 6) ?? step * 10;
  const out = [];
  for (let v = Math.ceil(lo / nice) * nice; v <= hi + 1e-12; v += nice) out.push(Number(v.toPrecision(12)));
  return out;
}

/** Tick labels on both axes. */
export function axes(f, o) {
  const tickText = (v, log) => (log ? (v >= 1e4 || v < 1e-2 ? `1e${Math.round(Math.log10(v))}` : String(v)) : String(v));
  for (const v of ticks(o.x[0], o.x[1], o.logX)) {
    f.svg.append(makeSvg("path", { d: `M${f.sx(v).toFixed(1)},${f.H - f.M.b}v4`, stroke: "currentColor" }));
    label(f.svg, f.sx(v), f.H - f.M.b + 15, tickText(v, o.logX), { "text-anchor": "middle", "font-size": 10 });
  }
  for (const v of ticks(o.y[0], o.y[1], o.logY)) {
    f.svg.append(makeSvg("path", { d: `M${f.M.l - 4},${f.sy(v).toFixed(1)}h4`, stroke: "currentColor" }));
    label(f.svg, f.M.l - 6, f.sy(v) + 3, tickText(v, o.logY), { "text-anchor": "end", "font-size": 10 });
  }
}

/** A polyline through (xs[i], ys[i]). */
export function line(f, xs, ys, color, attrs = {}) {
  const d = xs.map((x, i) => `${i ? "L" : "M"}${f.sx(x).toFixed(1)},${f.sy(ys[i]).toFixed(1)}`).join("");
  const p = makeSvg("path", { d, stroke: color, fill: "none", "stroke-width": 2, ...attrs });
  f.svg.append(p);
  return p;
}

/** A horizontal reference line with its label. */
export function hline(f, y, text, color = COLORS.gray) {
  f.svg.append(makeSvg("path", { d: `M${f.M.l},${f.sy(y).toFixed(1)}H${f.W - f.M.r}`, stroke: color, "stroke-dasharray": "4 3", fill: "none" }));
  label(f.svg, f.W - f.M.r - 2, f.sy(y) - 3, text, { "text-anchor": "end", "font-size": 10, fill: color });
}

/** A legend in the top-left corner of the plot. */
export function legend(f, items) {
  items.forEach(([text, color], i) => {
    const y = f.M.t + 12 + i * 14;
    f.svg.append(makeSvg("rect", { x: f.M.l + 8, y: y - 8, width: 12, height: 4, fill: color }));
    label(f.svg, f.M.l + 24, y - 3, text, { "font-size": 10 });
  });
}

/**
 * A bar chart of one distribution (tokens 1…n), y from 0 to 1.
 * @returns {{ svg: SVGSVGElement, set: (probs: number[], title?: string) => void }}
 */
export function barChart(probs, { title = "", width = 300, height = 200, names = null, aria = "bar chart" } = {}) {
  const n = probs.length;
  const f = frame({ width, height, x: [0, n], y: [0, 1], title: title || " ", xLabel: "token", yLabel: "probability", aria });
  const titleEl = f.svg.querySelector(".chart-title");
  for (const v of [0, 0.5, 1]) {
    f.svg.append(makeSvg("path", { d: `M${f.M.l - 4},${f.sy(v)}h4`, stroke: "currentColor" }));
    label(f.svg, f.M.l - 6, f.sy(v) + 3, String(v), { "text-anchor": "end", "font-size": 10 });
  }
  const bw = (f.sx(1) - f.sx(0)) * 0.75;
  const bars = probs.map((_, i) => {
    const r = makeSvg("rect", { x: (f.sx(i) + (f.sx(1) - f.sx(0) - bw) / 2).toFixed(1), width: bw.toFixed(1), fill: COLORS.blue });
    f.svg.append(r);
    label(f.svg, f.sx(i + 0.5), f.H - f.M.b + 13, names ? names[i] : String(i + 1), { "text-anchor": "middle", "font-size": 10 });
    return r;
  });
  const set = (p, t) => {
    p.forEach((v, i) => {
      bars[i].setAttribute("y", f.sy(v).toFixed(1));
      bars[i].setAttribute("height", Math.max(0, f.sy(0) - f.sy(v)).toFixed(1));
    });
    if (t !== undefined && titleEl) titleEl.textContent = t;
  };
  set(probs);
  return { svg: f.svg, set };
}
