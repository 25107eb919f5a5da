// The inside panel's choices: which layer and which query head it shows.
// The stepper's buttons and the heads' buttons (Tab reaches each), arrow keys
// on either grid (overview: up/down the layer, left/right the head; the
// layer's grid: up/down the head, left/right the layer), a click on a row,
// and the pointer over a cell (its numbers in the readout, not chosen).

import { view, focusInside, hoverInside } from "../state/store.js";
import { groupOf, headsOfGroup, columnsOf, columnSpan } from "../render/attention.js";
import { clampFocus } from "../render/inside.js";
import { paintInside } from "../panels/paint.js";
import { $ } from "../render/dom.js";

/**
 * Move the chosen layer and head by whole steps, within the report's ranges.
 * @param {number} dLayer
 * @param {number} dHead
 */
function move(dLayer, dHead) {
  const inside = view.inside;
  if (!inside) return;
  const at = clampFocus(inside, view.insideFocus);
  focusInside(Math.max(0, Math.min(inside.layers - 1, at.layer + dLayer)), Math.max(0, Math.min(inside.heads - 1, at.head + dHead)));
  paintInside();
}

/**
 * The layer and head a grid row stands for, and the position under the pointer.
 * @param {HTMLElement} wrap the grid's focusable box
 * @param {PointerEvent|MouseEvent} e
 * @returns {{ layer: number, head: number, pos?: number }|null}
 */
function cellAt(wrap, e) {
  const inside = view.inside;
  const svg = wrap.querySelector("svg");
  if (!inside || !svg) return null;
  const box = svg.getBoundingClientRect();
  const vb = svg.viewBox.baseVal;
  const scale = vb.width / box.width;
  const x = (e.clientX - box.left) * scale - Number(svg.dataset.labelW);
  const r = Math.floor(((e.clientY - box.top) * scale - Number(svg.dataset.top)) / Number(svg.dataset.row));
  if (r < 0 || r >= Number(svg.dataset.rows)) return null;
  const c = Math.floor(x / Number(svg.dataset.cell));
  const cols = columnsOf(inside.cache_start, inside.query);
  const pos = x >= 0 && c < cols.count ? columnSpan(cols, c)[0] : undefined;
  if (wrap.dataset.grid === "overview") {
    const layer = Math.floor(r / inside.kv_heads);
    const k = r % inside.kv_heads;
    const focus = clampFocus(inside, view.insideFocus);
    // The chosen head when it is in the group, else the group's first.
    const head = groupOf(focus.head, inside.heads, inside.kv_heads) === k ? focus.head : headsOfGroup(k, inside.heads, inside.kv_heads)[0];
    return { layer, head, pos };
  }
  return { layer: clampFocus(inside, view.insideFocus).layer, head: r, pos };
}

/** Listen on the panel (its content is drawn again on each paint; the listeners stay). */
export function wireInside() {
  const panel = $("#p-inside");
  if (!panel) return;
  panel.addEventListener("click", (e) => {
    const t = /** @type {HTMLElement} */ (e.target);
    const btn = /** @type {HTMLElement|null} */ (t.closest("[data-action]"));
    if (!btn) return;
    const action = btn.dataset.action;
    if (action === "inside-layer") move(Number(btn.dataset.delta), 0);
    else if (action === "inside-head") move(0, Number(btn.dataset.delta));
    else if (action === "inside-pick-head") { focusInside(view.insideFocus.layer, Number(btn.dataset.head)); paintInside(); }
    else if (action === "inside-grid") {
      const at = cellAt(btn, /** @type {MouseEvent} */ (e));
      if (at) { focusInside(at.layer, at.head); paintInside(); }
    }
  });
  panel.addEventListener("keydown", (e) => {
    const wrap = /** @type {HTMLElement} */ (e.target).closest?.("[data-action=inside-grid]");
    if (!wrap) return;
    const overview = /** @type {HTMLElement} */ (wrap).dataset.grid === "overview";
    const keys = overview
      ? { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] }
      : { ArrowUp: [0, -1], ArrowDown: [0, 1], ArrowLeft: [-1, 0], ArrowRight: [1, 0] };
    const d = keys[/** @type {keyof typeof keys} */ (e.key)];
    if (!d) return;
    e.preventDefault();
    move(d[0], d[1]);
  });
  panel.addEventListener("pointermove", (e) => {
    const wrap = /** @type {HTMLElement} */ (e.target).closest?.("[data-action=inside-grid]");
    const at = wrap ? cellAt(/** @type {HTMLElement} */ (wrap), e) : null;
    const was = view.insideHover;
    if (at?.layer === was?.layer && at?.head === was?.head && at?.pos === was?.pos) return;
    hoverInside(at);
    paintInside();
  });
  panel.addEventListener("pointerleave", () => {
    if (!view.insideHover) return;
    hoverInside(null);
    paintInside();
  });
}
