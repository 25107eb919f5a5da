// Panel "Inside the step": what the model did to produce the distribution
// shown. Its attention over the KV cache (every layer's KV-head groups, then
// the chosen layer's query heads; the chosen head's weights over the text,
// the positions it reads most, each head's entropy and its share on the first
// token) and the logit lens (lens.js). One layer is chosen at a time (a
// stepper, arrow keys on the grids, a click), so a phone shows one layer.

import { makeEl, setText, setAttr, syncChildren, ensureSlot } from "./dom.js";
import { formatProb, formatProbShort } from "./format.js";
import { headRow, headsOfGroup, groupOf, groupMean, topPositions, columnsOf, drawHeat, makeHeatSvg, tintFor } from "./attention.js";
import { renderLens } from "./lens.js";

/**
 * @typedef {Object} InsideView
 * @property {any} inside      the InsideReport of the distribution shown, or null
 * @property {any} [lens]      the latest InsideReport with a logit lens (during a run, maybe an earlier position's); default: inside
 * @property {any} info        ModelInfo, or null before a model
 * @property {{ display: string }[]} tokens   the transcript: prompt tokens, then generated ones
 * @property {{ layer: number, head: number }} focus   the chosen layer and query head
 * @property {{ layer: number, head: number, pos?: number }|null} hover   under the pointer
 */

/** The text around the chosen head drawn as tinted tokens: at most this many positions before the query. */
const MAX_CHIPS = 1024;

/**
 * The chosen layer and head, kept inside the report's ranges.
 * @param {any} inside
 * @param {{ layer: number, head: number }} at
 * @returns {{ layer: number, head: number }}
 */
export function clampFocus(inside, at) {
  const clamp = (/** @type {number} */ v, /** @type {number} */ n) => Math.max(0, Math.min(n - 1, v));
  return { layer: clamp(at.layer, inside.layers), head: clamp(at.head, inside.heads) };
}

/**
 * Paint the inside panel.
 * @param {HTMLElement} root
 * @param {InsideView} view
 */
export function renderInside(root, view) {
  const note = ensureSlot(root, "note", () => makeEl("p", { class: "inside-note" }));
  const box = ensureSlot(root, "content", () => makeContent());
  const { inside, info } = view;
  const layered = !!info && info.kind === "transformer" && info.layers > 0;
  /** @type {HTMLElement} */ (box).hidden = !inside;
  root.dataset.state = !info ? "no-model" : !layered ? "no-layers" : inside ? "shown" : "waiting";
  if (!info) { setText(note, "No model yet."); return; }
  if (!layered) {
    setText(note, `${info.name} has no layers: its next-token distribution is a table (${info.kind === "bigram" ? "one row per previous token" : "ten fixed logits"}), ` +
      "so there is nothing inside to show. Pick kv-demo, bard or a real model to look inside a transformer's step.");
    return;
  }
  if (!inside) { setText(note, "Computing the inside of this step…"); return; }

  const focus = clampFocus(inside, view.focus);
  const shown = view.hover ? clampFocus(inside, view.hover) : focus;
  root.dataset.layer = String(focus.layer);
  root.dataset.head = String(focus.head);
  const a = inside.attention[shown.layer];
  const kind = a.window ? `local: reads the last ${a.window} positions` : "global: reads every position";
  setText(note, `The query of position ${inside.query} (${tokenName(view.tokens, inside.query)}, the last token fed) reads ` +
    `the ${inside.query - inside.cache_start + 1} cached positions, in ${inside.layers} layers of ${inside.heads} query heads ` +
    `sharing ${inside.kv_heads} KV ${inside.kv_heads === 1 ? "head" : "heads"}.`);

  paintStepper(box, inside, focus);
  const cols = columnsOf(inside.cache_start, inside.query);
  const axis = `positions ${inside.cache_start}…${inside.query} →${cols.per > 1 ? ` (${cols.per} per column, weights summed)` : ""}`;
  const g = inside.heads / inside.kv_heads;

  // Every layer: one row per (layer, KV head), the mean of the query heads sharing it.
  /** @type {import("./attention.js").HeatRow[]} */
  const overview = [];
  inside.attention.forEach((/** @type {any} */ layer, /** @type {number} */ l) => {
    const tag = inside.attention.some((/** @type {any} */ x) => x.window) ? (layer.window ? " local" : " global") : "";
    for (let k = 0; k < inside.kv_heads; k++) {
      // A layer's first row carries its number; its other KV heads are named when chosen.
      overview.push({ label: k === 0 ? `${inside.kv_heads > 1 ? "" : "layer "}${l}${tag}` : "", title: `${l} kv${k}`,
        first: layer.first, values: groupMean(layer, k, inside.heads, inside.kv_heads, inside.query) });
    }
  });
  drawHeat(/** @type {any} */ (box.querySelector(".heat.overview")), overview, cols, {
    selected: focus.layer * inside.kv_heads + groupOf(focus.head, inside.heads, inside.kv_heads), maxHeight: 360,
    aria: `attention of every layer (rows: layer × KV head, the mean of its ${g} query ${g === 1 ? "head" : "heads"}) over positions ${inside.cache_start} to ${inside.query}`,
    axis: `${axis}${inside.kv_heads > 1 ? ` (rows: layer × ${inside.kv_heads} KV heads)` : ""}`,
  });

  // The chosen layer: one row per query head.
  const heads = Array.from({ length: inside.heads }, (_, h) => {
    const label = `h${h}${inside.kv_heads < inside.heads ? ` kv${groupOf(h, inside.heads, inside.kv_heads)}` : ""}`;
    return { label, title: label, first: a.first, values: headRow(a, h, inside.query) };
  });
  setText(box.querySelector("[data-slot=layer-title]"), `Layer ${shown.layer} (${kind}): each query head`);
  drawHeat(/** @type {any} */ (box.querySelector(".heat.layer-heads")), heads, cols, {
    selected: shown.head, maxHeight: 16 * inside.heads,
    aria: `layer ${shown.layer}'s ${inside.heads} query heads over positions ${inside.cache_start} to ${inside.query}`, axis,
  });

  paintReadout(box, inside, view, shown);
  paintHeadText(box, inside, view.tokens, shown);
  paintLayerTable(box, inside, view.tokens, shown);
  renderLens(/** @type {HTMLElement} */ (box.querySelector("[data-slot=lens]")), view.lens ?? inside, shown.layer + 1, inside.query);
}

/** The panel's parts, made once. */
function makeContent() {
  const box = makeEl("div", { class: "inside-content" });
  const stepper = makeEl("div", { class: "inside-stepper buttons", "data-slot": "stepper" });
  for (const [what, name] of [["layer", "inside-layer-name"], ["head", "inside-head-name"]]) {
    const group = makeEl("span", { class: "stepper", role: "group", "aria-label": `choose the ${what}` });
    group.append(
      makeEl("button", { type: "button", class: "mini", "data-action": `inside-${what}`, "data-delta": -1, "aria-label": `previous ${what}` }, "◀"),
      makeEl("span", { class: name, "aria-live": "polite" }),
      makeEl("button", { type: "button", class: "mini", "data-action": `inside-${what}`, "data-delta": 1, "aria-label": `next ${what}` }, "▶"));
    stepper.append(group);
  }
  const grids = makeEl("div", { class: "inside-grids" });
  const all = makeEl("div", { class: "inside-overview" });
  all.append(makeEl("h3", {}, "Attention over the cache: every layer"),
    focusable(makeHeatSvg("overview"), "every layer's attention: up and down choose the layer, left and right the head"),
    makeEl("p", { class: "help" }, "The KV panel's grid, each cell shaded by the weight the newest position's query puts on that position (darker = more; " +
      "rows: the mean of the query heads sharing a KV head). Hatched: outside a local layer's window, not read."));
  const one = makeEl("div", { class: "inside-layer" });
  one.append(makeEl("h3", { "data-slot": "layer-title" }),
    focusable(makeHeatSvg("layer-heads"), "the chosen layer's heads: up and down choose the head, left and right the layer"));
  grids.append(all, one);
  box.append(stepper, grids,
    makeEl("h3", {}, "The chosen head over the text"),
    makeEl("p", { class: "inside-readout", "aria-live": "polite", "data-slot": "readout" }),
    makeEl("div", { class: "inside-head", "data-slot": "head" }),
    // Boxes that scroll take the keyboard too.
    makeEl("div", { class: "inside-table", "data-slot": "layer-table", tabindex: 0, role: "group", "aria-label": "the chosen layer's heads" }),
    makeEl("h3", {}, "Logit lens: the next token, read after each layer"),
    makeEl("div", { class: "inside-lens", "data-slot": "lens" }));
  return box;
}

/**
 * A grid the keyboard can reach (controls/inside.js takes its arrow keys).
 * @param {SVGSVGElement} svg
 * @param {string} label
 */
function focusable(svg, label) {
  const wrap = makeEl("div", { class: "heat-wrap", tabindex: 0, role: "group", "aria-label": label, "data-action": "inside-grid" });
  wrap.dataset.grid = svg.classList.contains("overview") ? "overview" : "layer";
  wrap.append(svg);
  return wrap;
}

/**
 * @param {Element} box
 * @param {any} inside
 * @param {{ layer: number, head: number }} focus
 */
function paintStepper(box, inside, focus) {
  const a = inside.attention[focus.layer];
  const k = groupOf(focus.head, inside.heads, inside.kv_heads);
  setText(box.querySelector(".inside-layer-name"), `layer ${focus.layer} (0–${inside.layers - 1})${a.window ? ` (local, window ${a.window})` : ""}`);
  setText(box.querySelector(".inside-head-name"), `head ${focus.head} (0–${inside.heads - 1})` + (inside.kv_heads < inside.heads ? ` (KV head ${k})` : ""));
  const [lp, ln, hp, hn] = box.querySelectorAll(".inside-stepper button");
  /** @type {HTMLButtonElement} */ (lp).disabled = focus.layer === 0;
  /** @type {HTMLButtonElement} */ (ln).disabled = focus.layer === inside.layers - 1;
  /** @type {HTMLButtonElement} */ (hp).disabled = focus.head === 0;
  /** @type {HTMLButtonElement} */ (hn).disabled = focus.head === inside.heads - 1;
}

/**
 * The numbers under the pointer (a cell: every head of its group on that
 * position) or, without one, the chosen head's.
 * @param {Element} box
 * @param {any} inside
 * @param {InsideView} view
 * @param {{ layer: number, head: number }} shown
 */
function paintReadout(box, inside, view, shown) {
  const out = box.querySelector("[data-slot=readout]");
  const a = inside.attention[shown.layer];
  const k = groupOf(shown.head, inside.heads, inside.kv_heads);
  const members = headsOfGroup(k, inside.heads, inside.kv_heads);
  const pos = view.hover?.pos;
  if (pos !== undefined && pos >= inside.cache_start && pos <= inside.query) {
    const where = `layer ${shown.layer}, position ${pos} ${tokenName(view.tokens, pos)}`;
    if (pos < a.first) { setText(out, `${where}: outside the window (the layer reads from position ${a.first}), not read.`); return; }
    const per = members.map((h) => `head ${h}: ${formatProbShort(headRow(a, h, inside.query)[pos - a.first])}`);
    const mean = members.reduce((s, h) => s + headRow(a, h, inside.query)[pos - a.first], 0) / members.length;
    setText(out, `${where}: KV head ${k}'s heads put ${formatProb(mean)} on it on average (${per.join(", ")}).`);
    return;
  }
  const others = members.filter((h) => h !== shown.head);
  setText(out, `Layer ${shown.layer}, head ${shown.head} reads KV head ${k}` + (others.length ? ` (with heads ${others.join(", ")})` : "") +
    `: entropy ${a.entropy[shown.head].toFixed(3)} nats, ${formatProbShort(a.sink[shown.head])} on the first token.`);
}

/**
 * The chosen head's weights laid over the text, and the positions it reads most.
 * @param {Element} box
 * @param {any} inside
 * @param {{ display: string }[]} tokens
 * @param {{ layer: number, head: number }} shown
 */
function paintHeadText(box, inside, tokens, shown) {
  const root = box.querySelector("[data-slot=head]");
  const top = ensureSlot(root, "top5", () => makeEl("ol", { class: "inside-top5", "aria-label": "the positions this head reads most" }));
  const text = ensureSlot(root, "text", () => makeEl("p", { class: "inside-text", tabindex: 0, "aria-label": "the text, each token tinted by the chosen head's weight on it (hover a token for its weight)" }));
  const a = inside.attention[shown.layer];
  const row = headRow(a, shown.head, inside.query);
  const best = topPositions(row, a.first, 5);
  const items = syncChildren(top, best.length, () => makeEl("li"));
  best.forEach((b, i) => {
    setText(items[i], `position ${b.pos} ${tokenName(tokens, b.pos)}: ${formatProbShort(b.w)}`);
    setAttr(items[i], "title", `weight ${formatProb(b.w)}`);
    setAttr(items[i], "data-pos", b.pos);
    setAttr(items[i], "data-w", b.w);
  });
  const from = Math.max(inside.cache_start, inside.query - MAX_CHIPS + 1);
  const chips = syncChildren(text, inside.query - from + 2, () => makeEl("span"));
  const lead = /** @type {HTMLElement} */ (chips[0]);
  lead.className = "inside-more";
  setText(lead, from > inside.cache_start ? `(positions ${inside.cache_start}–${from - 1} not shown) ` : "");
  for (let p = from; p <= inside.query; p++) {
    const el = /** @type {HTMLElement} */ (chips[p - from + 1]);
    const read = p >= a.first;
    const w = read ? row[p - a.first] : 0;
    el.className = read ? "att-tok" : "att-tok not-read";
    setText(el, (tokens[p]?.display ?? `#${p}`));
    const tint = read ? tintFor(w) : { bg: "", fg: "" };
    if (el.style.backgroundColor !== tint.bg) el.style.backgroundColor = tint.bg;
    if (el.style.color !== tint.fg) el.style.color = tint.fg;
    setAttr(el, "title", read ? `position ${p}: weight ${formatProb(w)}` : `position ${p}: outside the window, not read`);
  }
}

/**
 * The chosen layer's heads side by side: entropy, share on the first token,
 * the position each reads most. A head's button chooses it.
 * @param {Element} box
 * @param {any} inside
 * @param {{ display: string }[]} tokens
 * @param {{ layer: number, head: number }} shown
 */
function paintLayerTable(box, inside, tokens, shown) {
  const root = box.querySelector("[data-slot=layer-table]");
  const caption = ensureSlot(root, "caption", () => makeEl("p", { class: "help" }));
  const table = /** @type {HTMLTableElement} */ (ensureSlot(root, "table", () => {
    const t = /** @type {HTMLTableElement} */ (makeEl("table", { class: "inside-heads", "aria-label": "the chosen layer's heads" }));
    const h = t.createTHead().insertRow();
    for (const c of ["head", "KV head", "entropy (nats)", "on the first token", "reads most"]) h.append(makeEl("th", { scope: "col" }, c));
    t.createTBody();
    return t;
  }));
  const a = inside.attention[shown.layer];
  setText(caption, `Layer ${shown.layer}: each head's entropy over the positions it reads (0 = one position; ` +
    `ln ${a.weights.length / inside.heads} = ${Math.log(a.weights.length / inside.heads).toFixed(2)} = evenly spread) and its weight on the first token (the attention sink).`);
  const rows = syncChildren(table.tBodies[0], inside.heads, (h) => {
    const r = /** @type {HTMLTableRowElement} */ (makeEl("tr"));
    const th = makeEl("th", { scope: "row" });
    th.append(makeEl("button", { type: "button", class: "mini", "data-action": "inside-pick-head", "data-head": h }));
    r.append(th, makeEl("td", { class: "num" }), makeEl("td", { class: "num" }), makeEl("td", { class: "num" }), makeEl("td"));
    return r;
  });
  rows.forEach((r, h) => {
    const row = /** @type {HTMLTableRowElement} */ (r);
    row.classList.toggle("selected", h === shown.head);
    const b = row.cells[0].firstElementChild;
    setText(b, `head ${h}`);
    setAttr(b, "aria-pressed", String(h === shown.head));
    setText(row.cells[1], String(groupOf(h, inside.heads, inside.kv_heads)));
    setText(row.cells[2], a.entropy[h].toFixed(3));
    setText(row.cells[3], formatProbShort(a.sink[h]));
    setAttr(row.cells[3], "title", formatProb(a.sink[h]));
    const [best] = topPositions(headRow(a, h, inside.query), a.first, 1);
    setText(row.cells[4], `${best.pos} ${tokenName(tokens, best.pos)} ${formatProbShort(best.w)}`);
  });
}

/**
 * A transcript position's token, quoted.
 * @param {{ display: string }[]} tokens
 * @param {number} pos
 */
function tokenName(tokens, pos) {
  const t = tokens[pos];
  return t ? `“${t.display}”` : `#${pos}`;
}
