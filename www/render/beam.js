//# allFunctionsCalledOnLoad
// Panel 6: beam search as a tree. Each node is one token; the nodes on a final
// beam are drawn solid, the pruned ones light and dashed.

import { makeEl, makeSvg, setText, syncChildren, ensureSlot } from "./dom.js";
import { OKABE_ITO } from "./format.js";

/**
 * @typedef {Object} BeamView
 * @property {any|null} beam  the engine's BeamReport
 * @property {boolean} busy
 * @property {{ depth: number, of: number }|null} [progress] how far the search in progress has gone
 * @property {number|null} [estimateMs] set on a slow model: the search waits for the
 *   Search button (a button[data-action=beam-search]), and this is how long it may take
 */

// Sized for the labels' type: the tables' monospace at 0.85rem (13.6 px; about
// 8.2 px a character), set in style.css (.beam-tree text).
const COL = 112, ROW = 22, PAD = 6, CHAR = 8.2;

/**
 * "depth 3 of 8 " while a search reports its progress, else "".
 * @param {{ depth: number, of: number }|null|undefined} p
 */
function searchProgress(p) {
  return p ? `depth ${p.depth} of ${p.of} ` : "";
}

/**
 * Paint the beam panel.
 * @param {HTMLElement} root
 * @param {BeamView} view
 */
export function renderBeam(root, view) {
  const note = ensureSlot(root, "note", () => makeEl("p", { class: "note" }));
  // It scrolls sideways when the tree is wide: focusable, so the keyboard can scroll it.
  const wrap = ensureSlot(root, "tree", () => makeEl("div", { class: "table-wrap", tabindex: "0", role: "group", "aria-label": "beam search tree" }));
  const list = ensureSlot(root, "list", () => makeEl("ol", { class: "beam-list" }));
  const b = view.beam;
  const button = ensureSlot(root, "search", () => makeEl("button", { type: "button", "data-action": "beam-search" }, "Search"));
  button.hidden = !(view.estimateMs && !view.busy && !b);
  if (!b) {
    let text = "Beam search runs from the current text after each step.";
    if (view.busy) text = `Searching… ${searchProgress(view.progress)}(Step, Run or any change cancels the search)`;
    else if (view.estimateMs) {
      text = `On this model a search takes about ${(view.estimateMs / 1000).toFixed(view.estimateMs < 10000 ? 1 : 0)} s (beams × beam length model calls), ` +
        "so it waits for you: press Search (Step, Run or any change cancels it).";
    }
    setText(note, text);
    wrap.replaceChildren();
    syncChildren(list, 0, () => makeEl("li"));
    return;
  }
  if (!b.nodes.length) {
    setText(note, "No beam to show: generation cannot go on from here (a stop condition or a full context).");
    wrap.replaceChildren();
    syncChildren(list, 0, () => makeEl("li"));
    return;
  }
  setText(note, `${b.beams.length} beams, score = log p / length^α with α = ${b.alpha}${view.busy ? ` · searching… ${searchProgress(view.progress)}` : ""}`);
  wrap.replaceChildren(drawTree(b));
  const items = syncChildren(list, b.beams.length, () => makeEl("li"));
  b.beams.forEach((beam, i) => {
    setText(items[i], `score ${beam.score.toFixed(4)} · log p ${beam.logprob.toFixed(4)} · ${beam.length} tokens` +
      `${beam.finished ? " · finished" : ""} · “${beam.text}”`);
  });
}

/**
 * Lay the search tree out left to right: x = step, y = order of the leaves.
 * @param {any} b BeamReport
 * @returns {SVGElement}
 */
function drawTree(b) {
  // The first tokens have no parent: hang them under one "prompt" node.
  const minStep = Math.min(...b.nodes.map((n) => n.step));
  const root = { id: "root", parent: null, display: "prompt ▸", step: minStep - 1, in_final_beam: true, kids: [], isRoot: true };
  const byId = new Map(b.nodes.map((n) => [n.id, { ...n, kids: [] }]));
  for (const n of byId.values()) {
    const parent = n.parent === null || n.parent === undefined ? root : byId.get(n.parent) ?? root;
    n.parentNode = parent;
    parent.kids.push(n);
  }
  let nextRow = 0;
  const place = (n) => {
    if (n.kids.length === 0) n.row = nextRow++;
    else { n.kids.forEach(place); n.row = (n.kids[0].row + n.kids[n.kids.length - 1].row) / 2; }
  };
  place(root);
  const all = [root, ...byId.values()];
  const maxStep = Math.max(...all.map((n) => n.step));
  const width = (maxStep - root.step + 1) * COL + PAD * 2;
  const height = Math.max(1, nextRow) * ROW + PAD * 2;
  const svg = makeSvg("svg", { viewBox: `0 0 ${width} ${height}`, width, class: "chart beam-tree", role: "img",
    "aria-label": `beam search tree with ${b.nodes.length} nodes` });
  const px = (n) => PAD + (n.step - root.step) * COL;
  const py = (n) => PAD + n.row * ROW + ROW / 2;
  const edges = makeSvg("g", { fill: "none" });
  const nodes = makeSvg("g");
  for (const n of all) {
    const parent = n.parentNode;
    const colour = n.in_final_beam ? OKABE_ITO.blue : "#aaa";
    if (parent) {
      // from just after the parent's label to the child's label
      const x0 = px(parent) + Math.min(COL - 16, 6 + CHAR * (parent.display ?? "").length);
      const y0 = py(parent), x1 = px(n) - 2, y1 = py(n), mid = (x0 + x1) / 2;
      edges.append(makeSvg("path", {
        d: `M${x0},${y0}C${mid},${y0} ${mid},${y1} ${x1},${y1}`,
        stroke: colour, "stroke-width": n.in_final_beam ? 2 : 1, "stroke-dasharray": n.in_final_beam ? "" : "3 2" }));
    }
    // Final beams stand out by colour and solid edges, not by a bold face: a
    // face the page has not drawn yet costs Chromium a font lookup in the
    // browser process, measured at 100-160 ms for each new face and size
    // (the tree's bold and regular 11 px: a 150-300 ms frame just after
    // load, in the way of the first slider move), so the labels use the
    // rules table's (style.css).
    const t = makeSvg("text", { x: px(n) + 2, y: py(n) + 5, fill: n.in_final_beam ? "#111" : "#777" });
    t.textContent = n.display ?? "";
    if (!n.isRoot) {
      const title = makeSvg("title");
      const total = n.total_logprob !== undefined ? `, total ${Number(n.total_logprob).toFixed(4)}` : "";
      title.textContent = `${n.display ?? ""}: ln q ${Number(n.logprob).toFixed(4)}${total} (step ${n.step})`;
      t.append(title);
    }
    nodes.append(t);
  }
  svg.append(edges, nodes);
  return svg;
}
