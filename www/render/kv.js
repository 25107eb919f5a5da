//# allFunctionsCalledOnLoad
// Panel 5: the KV cache as a grid of (layer, KV head) rows × positions that
// grows one column per token, its size in bytes, and the work it saves. A
// model with sliding-window layers (Gemma 3) has two kinds of rows: global
// layers hold every position, local ones only their newest (a ring of pages
// around their window), and the bytes of each kind are told apart.

import { makeEl, makeSvg, setText, setAttr, syncChildren, ensureSlot } from "./dom.js";
import { formatBytes, formatCount, OKABE_ITO } from "./format.js";

/**
 * @typedef {Object} KvView
 * @property {{ len: number, capacity: number, layers: number, kv_heads: number, head_dim: number, bytes: number, bytes_per_number: number,
 *   global_bytes?: number, local_bytes?: number, local_positions?: number }|null} kv
 * @property {{ size: number, local_layers: number[], ring: number }|null} [window] the model's sliding-window layers (ModelInfo.sliding_window)
 * @property {{ cached: { kv_rows: number, scores: number }, naive: { kv_rows: number, scores: number } }|null} counters
 * @property {{ max_abs_diff: number, argmax_agree: boolean }|null} cacheCheck
 * @property {boolean} useCache
 */

const MAX_COLS = 96;   // wider contexts show their last 96 positions
const MAX_ROWS = 48;   // more rows than this: one row per layer

/**
 * Paint the KV panel.
 * @param {HTMLElement} root
 * @param {KvView} view
 */
export function renderKv(root, view) {
  const facts = ensureSlot(root, "facts", () => makeEl("p", { class: "kv-facts" }));
  const kinds = ensureSlot(root, "kinds", () => makeEl("p", { class: "kv-facts kv-kinds" }));
  const svg = ensureSlot(root, "grid", () => {
    const s = makeSvg("svg", { class: "chart kv-grid", role: "img" });
    s.append(makeSvg("g", { class: "labels" }), makeSvg("g", { class: "rows" }),
      makeSvg("path", { class: "cols", stroke: "#fff", "stroke-width": 1 }),
      makeSvg("rect", { class: "newest", fill: OKABE_ITO.orange }));
    return s;
  });
  const table = ensureSlot(root, "work", () => makeWorkTable());
  const check = ensureSlot(root, "check", () => makeEl("p", { class: "kv-check" }));
  const kv = view.kv;
  const win = view.window && view.window.local_layers.length ? view.window : null;
  kinds.style.display = win ? "" : "none";
  if (!kv) { setText(facts, "No cache yet."); setText(kinds, ""); return; }
  const hasCache = kv.layers > 0 && kv.kv_heads > 0;
  svg.style.display = hasCache ? "" : "none";
  table.style.display = hasCache ? "" : "none";
  if (!hasCache) {
    setText(facts, "This model has no attention layers, so there is nothing to cache: each step reads only the last token. Pick kv-demo or a transformer to watch the cache grow.");
    setText(check, "");
    return;
  }

  const perToken = 2 * kv.layers * kv.kv_heads * kv.head_dim * kv.bytes_per_number;
  const off = view.useCache ? "" : " · cache OFF: every step recomputes the whole prefix";
  if (win) {
    const perLayer = 2 * kv.kv_heads * kv.head_dim * kv.bytes_per_number;
    setText(facts, `${kv.len} of ${kv.capacity} positions · ${formatBytes(kv.bytes)} ` +
      `(2 · ${kv.kv_heads} KV heads · ${kv.head_dim} dims · ${kv.bytes_per_number} B = ${formatBytes(perLayer)} per position of a layer)${off}`);
    const global = kv.layers - win.local_layers.length;
    const localHeld = kv.local_positions ?? 0;
    const local = win.local_layers.length;
    setText(kinds, `${global} global ${global === 1 ? "layer" : "layers"} (${layerList(globalLayers(kv.layers, win.local_layers))}) ` +
      `${global === 1 ? "holds" : "hold"} all ${kv.len} positions: ${formatBytes(kv.global_bytes ?? 0)}. ` +
      `${local} local ${local === 1 ? "layer" : "layers"} (${layerList(win.local_layers)}) ${local === 1 ? "sees" : "see"} a window ` +
      `of ${win.size} and ${local === 1 ? "holds" : "hold"} only the newest ${localHeld} positions, a ring of at most ${win.ring} ` +
      `(the window, the page being written and a page to step back into): ${formatBytes(kv.local_bytes ?? 0)}.`);
  } else {
    setText(facts, `${kv.len} of ${kv.capacity} positions · ${formatBytes(kv.bytes)} ` +
      `(2 · ${kv.layers} layers · ${kv.kv_heads} KV heads · ${kv.len} positions · ${kv.head_dim} dims · ${kv.bytes_per_number} B; ` +
      `${formatBytes(perToken)} per token)${off}`);
    setText(kinds, "");
  }
  setAttr(facts, "data-len", kv.len);

  drawGrid(svg, kv, win);

  const c = view.counters;
  if (c) {
    const body = table.tBodies[0].rows;
    fillWorkRow(body[0], c.cached.kv_rows, c.naive.kv_rows);
    fillWorkRow(body[1], c.cached.scores, c.naive.scores);
  }
  if (view.cacheCheck) {
    const cc = view.cacheCheck;
    // The engine reports NaN (null once serialised) when either path gave NaN logits.
    if (typeof cc.max_abs_diff !== "number" || Number.isNaN(cc.max_abs_diff)) {
      setText(check, "No-cache check: the cached path's logits are not numbers (NaN): the model or its cache is broken.");
    } else {
      setText(check, `No-cache check: the full recompute gives the same logits as the cache up to ` +
        `${cc.max_abs_diff.toExponential(2)} (max |difference|); most likely token ${cc.argmax_agree ? "agrees" : "DIFFERS"}.`);
    }
  } else {
    setText(check, view.useCache ? "Turn the cache off to compare the logits with a full recompute." : "");
  }
}

/** @returns {HTMLTableElement} */
function makeWorkTable() {
  const t = /** @type {HTMLTableElement} */ (makeEl("table", { class: "kv-work" }));
  const head = t.createTHead().insertRow();
  for (const h of ["work so far", "cached", "no cache", "ratio"]) head.append(makeEl("th", { scope: "col" }, h));
  const body = t.createTBody();
  for (const label of ["K/V rows projected", "attention scores"]) {
    const r = body.insertRow();
    r.append(makeEl("th", { scope: "row" }, label), makeEl("td"), makeEl("td"), makeEl("td"));
  }
  return t;
}

/**
 * @param {HTMLTableRowElement} row
 * @param {number} cached
 * @param {number} naive
 */
function fillWorkRow(row, cached, naive) {
  setText(row.cells[1], formatCount(cached));
  setText(row.cells[2], formatCount(naive));
  setText(row.cells[3], cached > 0 ? (naive / cached).toFixed(2) : "–");
}

/**
 * The layers that are not local, in order.
 * @param {number} layers
 * @param {number[]} local
 * @returns {number[]}
 */
function globalLayers(layers, local) {
  const isLocal = new Set(local);
  return Array.from({ length: layers }, (_, l) => l).filter((l) => !isLocal.has(l));
}

/**
 * Layer numbers with runs joined: [0,1,2,3,4,6] → "0–4, 6".
 * @param {number[]} layers
 * @returns {string}
 */
function layerList(layers) {
  /** @type {string[]} */
  const parts = [];
  for (let i = 0; i < layers.length; i++) {
    let j = i;
    while (j + 1 < layers.length && layers[j + 1] === layers[j] + 1) j++;
    parts.push(j > i ? `${layers[i]}–${layers[j]}` : `${layers[i]}`);
    i = j;
  }
  return parts.join(", ");
}

/**
 * @param {SVGElement} svg
 * @param {KvView["kv"]} kv
 * @param {KvView["window"]} win
 */
function drawGrid(svg, kv, win) {
  const perHead = kv.layers * kv.kv_heads <= MAX_ROWS;
  const nRows = perHead ? kv.layers * kv.kv_heads : kv.layers;
  const cols = Math.min(Math.max(kv.len, 1), MAX_COLS);
  const shownCap = Math.min(kv.capacity, MAX_COLS);
  const first = Math.max(0, kv.len - MAX_COLS);
  // Small caches get big cells, long contexts small ones (400 px of grid).
  const CELL = Math.max(6, Math.min(24, Math.floor(400 / shownCap)));
  // Every row of a short grid is labelled: rows as tall as the label's text.
  const ROW = nRows <= 24 ? Math.max(CELL, 10) : CELL;
  const labelW = 56;
  const width = Math.max(labelW + shownCap * CELL + 4, 340); // room for the axis label
  const height = nRows * ROW + 26;
  setAttr(svg, "viewBox", `0 0 ${width} ${height}`);
  setAttr(svg, "width", width);
  setAttr(svg, "aria-label", `KV cache: ${kv.layers} layers × ${kv.kv_heads} KV heads × ${kv.len} positions`);

  const rows = syncChildren(svg.querySelector(".rows"), nRows * 2, (i) =>
    makeSvg("rect", i % 2 ? { fill: OKABE_ITO.blue } : { fill: "#e4e4e4" }));
  const isLocal = new Set(win ? win.local_layers : []);
  // A local layer's row is filled from the oldest position it still holds.
  const localFrom = Math.max(first, kv.len - (kv.local_positions ?? kv.len));
  for (let r = 0; r < nRows; r++) {
    const y = r * ROW;
    const local = isLocal.has(perHead ? Math.floor(r / kv.kv_heads) : r);
    const from = local ? localFrom - first : 0;
    // empty capacity behind, then the filled part
    setAttr(rows[2 * r], "x", labelW); setAttr(rows[2 * r], "y", y);
    setAttr(rows[2 * r], "width", shownCap * CELL); setAttr(rows[2 * r], "height", ROW - 1);
    setAttr(rows[2 * r + 1], "x", labelW + from * CELL); setAttr(rows[2 * r + 1], "y", y);
    setAttr(rows[2 * r + 1], "width", kv.len ? (cols - from) * CELL : 0); setAttr(rows[2 * r + 1], "height", ROW - 1);
    setAttr(rows[2 * r + 1], "fill", local ? OKABE_ITO.sky : OKABE_ITO.blue);
    if (win) setAttr(rows[2 * r + 1], "data-kind", local ? "local" : "global");
    else rows[2 * r + 1].removeAttribute("data-kind");
    // a layer boundary is easier to see with a lighter first head
    setAttr(rows[2 * r + 1], "fill-opacity", perHead && kv.kv_heads > 1 && r % kv.kv_heads ? 0.75 : 1);
  }
  let d = "";
  for (let c = 1; c < cols; c++) d += `M${labelW + c * CELL - 0.5},0v${nRows * ROW}`;
  setAttr(svg.querySelector(".cols"), "d", d);
  const newest = svg.querySelector(".newest");
  setAttr(newest, "x", labelW + (cols - 1) * CELL); setAttr(newest, "y", 0);
  setAttr(newest, "width", kv.len ? CELL : 0); setAttr(newest, "height", nRows * ROW - 1);

  // The layer labels are redrawn only when the rows move; the axis label,
  // which names the positions shown, changes its text every token.
  const labels = svg.querySelector(".labels");
  const key = `${nRows}|${perHead}|${ROW}|${win ? win.local_layers.join(",") : ""}`;
  if (labels.getAttribute("data-key") !== key) {
    labels.setAttribute("data-key", key);
    labels.replaceChildren();
    for (let l = 0; l < kv.layers; l++) {
      const r = perHead ? l * kv.kv_heads : l;
      const t = makeSvg("text", { x: labelW - 4, y: r * ROW + ROW - 2, "text-anchor": "end", "font-size": 8 });
      t.textContent = win ? `${l} ${isLocal.has(l) ? "local" : "global"}` : `layer ${l}`;
      if (nRows <= 24 || l % Math.ceil(kv.layers / 12) === 0) labels.append(t);
    }
    labels.append(makeSvg("text", { class: "axis", x: labelW, "font-size": 10 }));
  }
  const axis = labels.querySelector(".axis");
  setAttr(axis, "y", nRows * ROW + 14);
  setText(axis, `positions ${first}…${first + cols - 1} →${perHead ? ` (rows: layer × ${kv.kv_heads} KV heads)` : " (rows: layers)"}` +
    (win ? `; light: local layers (window ${win.size})` : ""));
}
