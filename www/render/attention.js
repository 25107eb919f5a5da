// Attention over the KV cache, from the engine's InsideReport: the newest
// position's weights on every cached position, drawn as the KV panel's grid
// ((layer, KV head) rows × positions) with each cell shaded by its weight,
// and the arithmetic the inside panel's readouts share (a head's row, a
// group's mean, the positions a head reads most).

import { makeSvg, setAttr, syncChildren } from "./dom.js";
import { OKABE_ITO } from "./format.js";

/**
 * @typedef {Object} AttentionLayer     one layer of InsideReport.attention
 * @property {number} layer
 * @property {number|null} window       a sliding-window layer's window, else null
 * @property {number} first             transcript index of the first position read
 * @property {Float32Array|number[]} weights  heads × n, n = query − first + 1
 * @property {number[]} entropy         per head, nats
 * @property {number[]} sink            per head, the weight on cache position 0
 */

/**
 * A heat row: the weights on transcript positions first..=query; its label
 * (drawn where there is room; "" for none) and its name (drawn when chosen).
 * @typedef {{ label: string, first: number, values: ArrayLike<number>, title: string }} HeatRow
 */

/** The most columns a grid draws: longer texts put several positions in a column. */
const MAX_COLS = 128;
/** Shades of a weight (the square root of the column's weight, so small weights still show). */
const LEVELS = 8;
/** Row labels' width in the grid. */
const LABEL_W = 64;
/** Room above the first row for its label (rows can be 4 px tall). */
const TOP = 6;

/**
 * A token's tint for a weight: white to blue by the weight's square root
 * (as the grid's shades), and black or white text, whichever reads better
 * on it (at least 4.5:1 either way).
 * @param {number} w
 * @returns {{ bg: string, fg: string }}
 */
export function tintFor(w) {
  const t = Math.sqrt(Math.max(0, Math.min(1, w)));
  const rgb = [0, 114, 178].map((c) => Math.round(255 + (c - 255) * t));
  const lum = rgb.map((c) => { const s = c / 255; return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4; });
  const L = 0.2126 * lum[0] + 0.7152 * lum[1] + 0.0722 * lum[2];
  return { bg: `rgb(${rgb.join(", ")})`, fg: 1.05 / (L + 0.05) > (L + 0.05) / 0.05 ? "#fff" : "#000" };
}

/**
 * Query head h's weights on positions first..=query.
 * @param {AttentionLayer} a
 * @param {number} head
 * @param {number} query
 * @returns {Float32Array}
 */
export function headRow(a, head, query) {
  const n = query - a.first + 1;
  const w = a.weights instanceof Float32Array ? a.weights : Float32Array.from(a.weights);
  return w.subarray(head * n, (head + 1) * n);
}

/**
 * The query heads that read KV head k (grouped-query attention: query head
 * h reads KV head floor(h / (heads / kv_heads))).
 * @param {number} k
 * @param {number} heads
 * @param {number} kvHeads
 * @returns {number[]}
 */
export function headsOfGroup(k, heads, kvHeads) {
  const g = heads / kvHeads;
  return Array.from({ length: g }, (_, i) => k * g + i);
}

/**
 * @param {number} h a query head
 * @param {number} heads
 * @param {number} kvHeads
 * @returns {number} the KV head it reads
 */
export function groupOf(h, heads, kvHeads) {
  return Math.floor(h / (heads / kvHeads));
}

/**
 * The mean of a KV head's query heads' rows: what the group puts on each position.
 * @param {AttentionLayer} a
 * @param {number} k
 * @param {number} heads
 * @param {number} kvHeads
 * @param {number} query
 * @returns {Float32Array}
 */
export function groupMean(a, k, heads, kvHeads, query) {
  const members = headsOfGroup(k, heads, kvHeads);
  const out = new Float32Array(query - a.first + 1);
  for (const h of members) {
    const row = headRow(a, h, query);
    for (let i = 0; i < out.length; i++) out[i] += row[i] / members.length;
  }
  return out;
}

/**
 * The positions a row puts most weight on, most first.
 * @param {ArrayLike<number>} row weights on positions first..
 * @param {number} first
 * @param {number} k
 * @returns {{ pos: number, w: number }[]}
 */
export function topPositions(row, first, k) {
  const idx = Array.from({ length: row.length }, (_, i) => i);
  idx.sort((a, b) => row[b] - row[a] || a - b);
  return idx.slice(0, k).map((i) => ({ pos: first + i, w: row[i] }));
}

/**
 * The grid's columns: every position from `start` (the oldest cached) to
 * `query`, one per column, or several per column past MAX_COLS.
 * @param {number} start
 * @param {number} query
 * @returns {{ start: number, query: number, per: number, count: number }}
 */
export function columnsOf(start, query) {
  const n = query - start + 1;
  const per = Math.max(1, Math.ceil(n / MAX_COLS));
  return { start, query, per, count: Math.ceil(n / per) };
}

/**
 * The positions a column covers.
 * @param {{ start: number, query: number, per: number }} cols
 * @param {number} c
 * @returns {[number, number]} first and last transcript position
 */
export function columnSpan(cols, c) {
  const a = cols.start + c * cols.per;
  return [a, Math.min(cols.query, a + cols.per - 1)];
}

/**
 * The grid's geometry, also read back by the pointer (controls/inside.js).
 * @param {number} nRows
 * @param {number} nCols
 * @param {number} maxHeight
 */
function geometry(nRows, nCols, maxHeight) {
  const cell = Math.max(3, Math.min(18, Math.floor(480 / nCols)));
  const row = Math.max(4, Math.min(16, Math.floor(maxHeight / Math.max(1, nRows))));
  return { cell, row };
}

/**
 * Draw heat rows over the columns: each cell shaded by its weight (the sum
 * over the positions it covers), cells before a row's first read position
 * hatched ("not read": outside a sliding window), the chosen row outlined.
 * The SVG carries its geometry (data-*) for the pointer.
 * @param {SVGSVGElement} svg made by makeHeatSvg
 * @param {HeatRow[]} rows
 * @param {{ start: number, query: number, per: number, count: number }} cols
 * @param {{ selected: number, maxHeight: number, aria: string, axis: string }} opts
 */
export function drawHeat(svg, rows, cols, opts) {
  const { cell, row } = geometry(rows.length, cols.count, opts.maxHeight);
  const width = LABEL_W + cols.count * cell + 4;
  const height = TOP + rows.length * row + 18;
  setAttr(svg, "viewBox", `0 0 ${Math.max(width, 300)} ${height}`);
  setAttr(svg, "width", Math.max(width, 300));
  setAttr(svg, "aria-label", opts.aria);
  svg.dataset.cell = String(cell);
  svg.dataset.row = String(row);
  svg.dataset.labelW = String(LABEL_W);
  svg.dataset.top = String(TOP);
  svg.dataset.rows = String(rows.length);
  svg.dataset.cols = String(cols.count);

  const levels = Array.from({ length: LEVELS }, () => "");
  let hatch = "";
  let read = "";
  rows.forEach((r, i) => {
    const y = TOP + i * row;
    const h = row - 1;
    for (let c = 0; c < cols.count; c++) {
      const [a, b] = columnSpan(cols, c);
      const x = LABEL_W + c * cell;
      const rect = `M${x},${y}h${cell - (cell > 4 ? 1 : 0)}v${h}h${-(cell - (cell > 4 ? 1 : 0))}z`;
      if (b < r.first) { hatch += rect; continue; }
      read += rect;
      let w = 0;
      for (let p = Math.max(a, r.first); p <= b; p++) w += r.values[p - r.first];
      const level = Math.min(LEVELS, Math.ceil(Math.sqrt(Math.max(0, w)) * LEVELS - 1e-9));
      if (level > 0) levels[level - 1] += rect;
    }
  });
  setAttr(svg.querySelector(".read"), "d", read);
  setAttr(svg.querySelector(".not-read"), "d", hatch);
  const paths = syncChildren(svg.querySelector(".levels"), LEVELS, (i) =>
    makeSvg("path", { fill: OKABE_ITO.blue, "fill-opacity": ((i + 1) / LEVELS).toFixed(3) }));
  paths.forEach((p, i) => setAttr(p, "d", levels[i]));

  const sel = svg.querySelector(".selected");
  const shown = opts.selected >= 0 && opts.selected < rows.length;
  setAttr(sel, "x", LABEL_W - 1.5); setAttr(sel, "y", shown ? TOP + opts.selected * row - 1 : 0);
  setAttr(sel, "width", cols.count * cell + 2); setAttr(sel, "height", shown ? row + 1 : 0);

  // A label where there is room for it (8 px below the last), and the chosen row's always.
  const labels = syncChildren(svg.querySelector(".labels"), rows.length + 1, () => makeSvg("text", { "font-size": 8 }));
  let lastY = -Infinity;
  rows.forEach((r, i) => {
    const t = labels[i];
    const y = TOP + i * row + row - 2;
    setAttr(t, "x", LABEL_W - 4); setAttr(t, "y", y); setAttr(t, "text-anchor", "end");
    const room = r.label !== "" && y - lastY >= 8;
    if (room) lastY = y;
    t.textContent = room || i === opts.selected ? r.label || r.title : "";
    t.classList.toggle("selected-label", i === opts.selected);
  });
  const axis = labels[rows.length];
  setAttr(axis, "x", LABEL_W); setAttr(axis, "y", TOP + rows.length * row + 13); setAttr(axis, "font-size", 10);
  axis.textContent = opts.axis;
}

/**
 * An empty heat grid: the read background, the hatched not-read cells, the
 * shades, the chosen row's outline and the labels.
 * @param {string} cls
 * @returns {SVGSVGElement}
 */
export function makeHeatSvg(cls) {
  const svg = /** @type {SVGSVGElement} */ (makeSvg("svg", { class: `chart heat ${cls}`, role: "img" }));
  const defs = makeSvg("defs");
  const id = `hatch-${cls}`;
  const pattern = makeSvg("pattern", { id, width: 4, height: 4, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" });
  pattern.append(makeSvg("rect", { width: 4, height: 4, fill: "#f3f3f3" }), makeSvg("line", { x1: 0, y1: 0, x2: 0, y2: 4, stroke: "#9aa3ad", "stroke-width": 1.5 }));
  defs.append(pattern);
  svg.append(defs, makeSvg("path", { class: "read", fill: "#ffffff", stroke: "#e0e3e7", "stroke-width": 0.5 }),
    makeSvg("path", { class: "not-read", fill: `url(#${id})` }), makeSvg("g", { class: "levels" }),
    makeSvg("rect", { class: "selected", fill: "none", stroke: OKABE_ITO.orange, "stroke-width": 2 }), makeSvg("g", { class: "labels" }));
  return svg;
}
