// The logit lens, from the engine's InsideReport: the residual stream after
// the embedding and after each layer, read through the final norm and the
// unembedding as if the model ended there. A table (each layer's top 5, the
// followed token's rank and probability, the entropy) and a chart across
// layers (the final top-1's and the followed token's probability, the
// entropy), marking the layer from which the final top-1 stays on top.

import { makeEl, makeSvg, setText, setAttr, syncChildren, ensureSlot } from "./dom.js";
import { formatProb, formatProbShort, OKABE_ITO } from "./format.js";

/**
 * @typedef {Object} LensLayer     one entry of InsideReport.lens
 * @property {number} layer        0 = after the embedding, l = after block l (1-based)
 * @property {{ id: number, display: string, prob: number }[]} top
 * @property {number} entropy      nats
 * @property {number} token_rank
 * @property {number} token_prob
 * @property {number} raw_top_rank
 * @property {number} raw_top_prob
 */

/**
 * A lens entry's name in the page's layer numbers (0-based, as the KV panel's).
 * @param {number} l lens index: 0 = the embedding, l = after block l
 * @returns {string}
 */
export function lensLayerName(l) {
  return l === 0 ? "embedding" : `after layer ${l - 1}`;
}

/**
 * Paint the lens: the sentence that says what it follows and where the
 * answer forms, the chart, and the table (the chosen layer's row marked).
 * @param {HTMLElement} root
 * @param {any} inside the InsideReport with the lens: the step's, or during a
 *   run (whose reports carry a lens a few times a second) an earlier one
 * @param {number} selected the lens row of the chosen layer (layer + 1)
 * @param {number} query the query of the step shown (the attention's)
 */
export function renderLens(root, inside, selected, query) {
  const stale = ensureSlot(root, "lens-stale", () => makeEl("p", { class: "help lens-stale" }));
  const head = ensureSlot(root, "lens-head", () => makeEl("p", { class: "lens-head" }));
  const chart = ensureSlot(root, "lens-chart", () => makeLensChart());
  const caption = ensureSlot(root, "lens-caption", () => makeEl("p", { class: "help" }));
  const table = /** @type {HTMLTableElement} */ (ensureSlot(root, "lens-table", () => makeLensTable()).querySelector("table"));
  const lens = /** @type {LensLayer[]} */ (inside.lens);
  const behind = inside.query !== query || !lens.length;
  setText(stale, !behind ? "" : lens.length ? `During a run the lens is read a few times a second: this one is of position ${inside.query}'s query, ` +
    `${query - inside.query} ${query - inside.query === 1 ? "step" : "steps"} back.` : "During a run the lens is read a few times a second: the first is on its way.");
  /** @type {HTMLElement} */ (stale).hidden = !behind;
  for (const el of [head, chart, root.querySelector("[data-slot=lens-caption]"), root.querySelector("[data-slot=lens-table]")]) {
    if (el) /** @type {HTMLElement} */ (el).hidden = !lens.length;
  }
  root.dataset.lensQuery = String(inside.query);
  if (!lens.length) return;
  const last = lens[lens.length - 1];
  const tok = `“${inside.token.display}”`;
  const top1 = `“${inside.raw_top.display}”`;
  const follows = inside.token_is_chosen ? `the chosen token ${tok}` : `the raw top-1 ${tok} (no token chosen yet)`;
  // null: even the last layer's rounding puts another token first.
  const from = /** @type {number|null} */ (inside.top1_from);
  const forms = from === null ? `no layer keeps the final top-1, ${top1}, on top to the end (a near tie)`
    : `the final top-1, ${top1}, is the top token from ${lensLayerName(from)} on ` +
      `(${from === 0 ? "already after the embedding" : `layer ${from - 1} is where it forms`})`;
  setText(head, `Read as if the model ended at each layer. Following ${follows}; ${forms}. ` +
    `Last row = the distribution panel's raw column: p(${tok}) = ${formatProb(inside.raw_prob)}.`);
  setAttr(head, "data-top1-from", from ?? "none");
  setAttr(head, "data-raw-prob", inside.raw_prob);
  drawLensChart(/** @type {SVGSVGElement} */ (chart), inside, selected);

  const body = table.tBodies[0];
  const rows = syncChildren(body, lens.length, () => makeLensRow());
  const sameToken = inside.token.id === inside.raw_top.id;
  lens.forEach((e, i) => {
    const row = /** @type {HTMLTableRowElement} */ (rows[i]);
    row.classList.toggle("selected", i === selected);
    row.classList.toggle("top1-from", i === from);
    setAttr(row, "data-lens", e.layer);
    const [name, top, rank, prob, ent] = row.cells;
    setText(name, lensLayerName(e.layer) + (i === from ? " ★" : ""));
    setAttr(name, "title", i === from ? `from here on the final top-1 (${top1}) stays the top token` : `lens layer ${e.layer}`);
    const chips = syncChildren(top, e.top.length, () => makeEl("span", { class: "lens-chip" }));
    e.top.forEach((t, k) => {
      setText(chips[k], `${t.display} ${formatProbShort(t.prob)}`);
      setAttr(chips[k], "title", `${t.display} (id ${t.id}): p = ${formatProb(t.prob)}, rank ${k + 1}`);
      setAttr(chips[k], "data-id", t.id);
      setAttr(chips[k], "data-prob", t.prob);
      chips[k].classList.toggle("followed", t.id === inside.token.id);
    });
    setText(rank, String(e.token_rank));
    setText(prob, formatProbShort(e.token_prob));
    setAttr(prob, "title", `p(${tok}) = ${formatProb(e.token_prob)}` + (sameToken ? "" : `; the final top-1 ${top1}: rank ${e.raw_top_rank}, p = ${formatProb(e.raw_top_prob)}`));
    setAttr(prob, "data-prob", e.token_prob);
    setText(ent, e.entropy.toFixed(3));
    setAttr(ent, "title", `entropy ${e.entropy.toFixed(4)} nats = ${(e.entropy / Math.LN2).toFixed(4)} bits`);
  });
  setText(caption, `Each layer's 5 most likely tokens, the rank and probability of ${tok}` +
    ` (${inside.token_is_chosen ? "the chosen token" : "the raw top-1"}), and the entropy in nats. ` +
    `The raw distribution gives ${tok} p = ${formatProb(inside.raw_prob)}; the last row is that distribution (p = ${formatProb(last.token_prob)}).`);
}

/** @returns {HTMLElement} the table in a box that scrolls */
function makeLensTable() {
  const t = /** @type {HTMLTableElement} */ (makeEl("table", { class: "lens-table", "aria-label": "the logit lens, layer by layer" }));
  const head = t.createTHead().insertRow();
  for (const h of ["layer", "top 5", "rank", "p", "H (nats)"]) head.append(makeEl("th", { scope: "col" }, h));
  t.createTBody();
  const wrap = makeEl("div", { class: "lens-scroll", tabindex: 0, role: "group", "aria-label": "the logit lens, layer by layer" });
  wrap.append(t);
  return wrap;
}

/** @returns {HTMLTableRowElement} */
function makeLensRow() {
  const r = /** @type {HTMLTableRowElement} */ (makeEl("tr"));
  r.append(makeEl("th", { scope: "row" }), makeEl("td", { class: "lens-top" }), makeEl("td", { class: "num" }),
    makeEl("td", { class: "num" }), makeEl("td", { class: "num" }));
  return r;
}

const CHART = { width: 400, height: 190, left: 30, right: 44, top: 8, bottom: 50 };

/** @returns {SVGSVGElement} */
function makeLensChart() {
  const svg = /** @type {SVGSVGElement} */ (makeSvg("svg", { class: "chart lens-chart", role: "img",
    viewBox: `0 0 ${CHART.width} ${CHART.height}` }));
  svg.append(makeSvg("rect", { class: "sel" }), makeSvg("g", { class: "axes" }),
    makeSvg("line", { class: "from", stroke: OKABE_ITO.vermillion, "stroke-dasharray": "3 2" }),
    makeSvg("path", { class: "ent", fill: "none", stroke: OKABE_ITO.green, "stroke-width": 1.5, "stroke-dasharray": "1 2" }),
    makeSvg("path", { class: "tok", fill: "none", stroke: OKABE_ITO.orange, "stroke-width": 2, "stroke-dasharray": "5 3" }),
    makeSvg("path", { class: "top", fill: "none", stroke: OKABE_ITO.blue, "stroke-width": 2 }),
    makeSvg("g", { class: "legend" }));
  return svg;
}

/**
 * @param {SVGSVGElement} svg
 * @param {any} inside
 * @param {number} selected
 */
function drawLensChart(svg, inside, selected) {
  const lens = /** @type {LensLayer[]} */ (inside.lens);
  const n = lens.length;
  const w = CHART.width - CHART.left - CHART.right;
  const h = CHART.height - CHART.top - CHART.bottom;
  const x = (/** @type {number} */ i) => CHART.left + (n > 1 ? (i / (n - 1)) * w : w / 2);
  const y = (/** @type {number} */ p) => CHART.top + (1 - p) * h;
  const hMax = Math.max(1e-9, ...lens.map((e) => e.entropy));
  const path = (/** @type {(e: LensLayer) => number} */ f) => lens.map((e, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(f(e)).toFixed(1)}`).join("");
  setAttr(svg.querySelector(".top"), "d", path((e) => e.raw_top_prob));
  const same = inside.token.id === inside.raw_top.id;
  setAttr(svg.querySelector(".tok"), "d", same ? "" : path((e) => e.token_prob));
  setAttr(svg.querySelector(".ent"), "d", path((e) => e.entropy / hMax));
  const from = svg.querySelector(".from");
  const at = inside.top1_from ?? -1;
  setAttr(from, "x1", x(at)); setAttr(from, "x2", x(at));
  setAttr(from, "y1", CHART.top); setAttr(from, "y2", at < 0 ? CHART.top : CHART.top + h);
  const sel = svg.querySelector(".sel");
  const half = n > 1 ? w / (n - 1) / 2 : 6;
  setAttr(sel, "x", x(selected) - half); setAttr(sel, "y", CHART.top); setAttr(sel, "width", 2 * half); setAttr(sel, "height", h);
  setAttr(svg, "aria-label", `logit lens across ${n} layers: p(${inside.raw_top.display}) from ${formatProbShort(lens[0].raw_top_prob)} ` +
    `to ${formatProbShort(lens[n - 1].raw_top_prob)}` + (at < 0 ? "" : `; top-1 from ${lensLayerName(at)}`));

  const axes = svg.querySelector(".axes");
  const key = `${n}|${hMax.toFixed(3)}`;
  if (axes.getAttribute("data-key") !== key) {
    axes.setAttribute("data-key", key);
    axes.replaceChildren();
    const text = (/** @type {number} */ tx, /** @type {number} */ ty, /** @type {string} */ s, anchor = "middle", fill = "currentColor") => {
      const t = makeSvg("text", { x: tx, y: ty, "font-size": 9, "text-anchor": anchor, fill });
      t.textContent = s;
      axes.append(t);
    };
    axes.append(makeSvg("path", { d: `M${CHART.left},${CHART.top}V${CHART.top + h}H${CHART.left + w}V${CHART.top}`, fill: "none", stroke: "#9aa3ad" }));
    for (const p of [0, 0.5, 1]) text(CHART.left - 4, y(p) + 3, String(p), "end");
    text(CHART.left + w + 4, y(1) + 3, `${hMax.toFixed(1)} nats`, "start", OKABE_ITO.green);
    text(CHART.left + w + 4, y(0) + 3, "0", "start", OKABE_ITO.green);
    const step = Math.max(1, Math.ceil(n / 12));
    for (let i = 0; i < n; i += step) text(x(i), CHART.top + h + 11, i === 0 ? "emb" : String(i - 1));
    text(CHART.left + w / 2, CHART.top + h + 23, "after layer → (emb = the embedding)");
  }
  const legend = svg.querySelector(".legend");
  const lkey = `${inside.raw_top.display}|${inside.token.display}|${same}`;
  if (legend.getAttribute("data-key") !== lkey) {
    legend.setAttribute("data-key", lkey);
    legend.replaceChildren();
    const items = [[OKABE_ITO.blue, `p(${inside.raw_top.display}), the final top-1`], ...(same ? [] : [[OKABE_ITO.orange, `p(${inside.token.display}), chosen`]]),
      [OKABE_ITO.green, "entropy"], [OKABE_ITO.vermillion, "top-1 from here"]];
    // Two columns under the axis, out of the curves' way.
    items.forEach(([c, s], i) => {
      const t = makeSvg("text", { x: CHART.left + (i % 2) * (w / 2), y: CHART.height - 12 + Math.floor(i / 2) * 11, "font-size": 9, fill: c });
      t.textContent = `— ${s}`;
      legend.append(t);
    });
  }
}
