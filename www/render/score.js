// The "score a text" panel: every token of a text coloured by the rank the
// model gave it when reading the text (teacher-forced), as GLTR does: top-1,
// top-10, top-100, the rest. Colour is never alone: each bucket also has its
// own underline, and every token carries its probability, rank and surprisal
// in its title and accessible name (focus or click one to read them below).

import { makeEl, setText, ensureSlot } from "./dom.js";
import { formatProb } from "./format.js";

/**
 * @typedef {Object} ScoreView
 * @property {any|null} score    the engine's ScoreReport
 * @property {boolean} busy
 * @property {number|null} selected index of the token whose details are shown
 */

/** Which report each text box shows (a repaint for another reason keeps the spans). */
const drawn = new WeakMap();

/** The rank buckets, best first: key in rank_buckets, label, CSS class. */
export const BUCKETS = [
  { key: "top1", label: "top-1", cls: "sb-1", max: 1 },
  { key: "top10", label: "top-10", cls: "sb-10", max: 10 },
  { key: "top100", label: "top-100", cls: "sb-100", max: 100 },
  { key: "rest", label: "rest", cls: "sb-rest", max: Infinity },
];

/**
 * @param {number|null} rank
 * @returns {typeof BUCKETS[number]|null}
 */
export function bucketOf(rank) {
  if (rank === null || rank === undefined) return null;
  return BUCKETS.find((b) => rank <= b.max) ?? null;
}

/**
 * One token's details, as read aloud and shown on hover.
 * @param {any} t a ScoreReport token
 * @param {number} i its index
 * @returns {string}
 */
export function describeToken(t, i) {
  const name = `token ${i + 1} ${t.special ? "(special) " : ""}${t.template ? "(the chat template's, not counted) " : ""}${t.display}`;
  if (t.rank === null || t.rank === undefined) return `${name}: the first token, nothing predicts it`;
  const top = t.top.map((x) => `“${x.display}” ${formatProb(x.prob)}`).join(", ");
  return `${name}: rank ${t.rank}, p = ${formatProb(t.prob)}, ${t.surprisal_bits.toFixed(2)} bits; the model expected ${top}`;
}

/**
 * Paint the score panel.
 * @param {HTMLElement} root
 * @param {ScoreView} view
 */
export function renderScore(root, view) {
  const summary = ensureSlot(root, "summary", () => makeEl("p", { class: "score-summary" }));
  const legend = ensureSlot(root, "legend", () => makeLegend());
  const text = ensureSlot(root, "text", () => makeEl("div", { class: "score-text", "aria-label": "the scored text, token by token" }));
  const detail = ensureSlot(root, "detail", () => makeEl("p", { class: "score-detail", "aria-live": "polite" }));
  const listHead = ensureSlot(root, "list-head", () => makeEl("h3", { class: "score-list-head" }, "Most surprising tokens"));
  const list = ensureSlot(root, "list", () => makeEl("ol", { class: "score-list" }));
  const s = view.score;
  if (!s) {
    setText(summary, view.busy ? "Scoring…" : "Paste a text above and press Score.");
    legend.hidden = true;
    text.replaceChildren();
    setText(detail, "");
    listHead.hidden = true;
    list.replaceChildren();
    return;
  }
  legend.hidden = false;
  listHead.hidden = false;
  const n = s.tokens.length;
  setText(summary, `${n} tokens, ${s.scored} predicted · mean surprisal ${fmt(s.mean_surprisal_bits, 3)} bits per token · ` +
    `perplexity ${fmt(s.perplexity, 2)}${view.busy ? " · scoring again…" : ""}`);
  const counts = s.rank_buckets ?? {};
  for (const b of BUCKETS) {
    const el = legend.querySelector(`[data-bucket="${b.key}"] .count`);
    const c = counts[b.key] ?? 0;
    setText(el, `${c} (${s.scored ? Math.round((100 * c) / s.scored) : 0}%)`);
  }

  if (drawn.get(text) !== s) {
    drawn.set(text, s);
    text.replaceChildren(...s.tokens.map((t, i) => {
      const b = bucketOf(t.rank);
      const label = describeToken(t, i);
      return makeEl("span", {
        class: `stok ${b && !t.template ? b.cls : "sb-none"}${t.special ? " special" : ""}${t.template ? " template" : ""}`, tabindex: "0", "data-i": i,
        // a button: clicking or focusing it shows the token's details below
        role: "button", "data-rank": t.rank ?? "", title: label, "aria-label": label,
      }, t.text);
    }));
  }
  for (const el of text.querySelectorAll(".stok.selected")) el.classList.remove("selected");
  if (view.selected !== null && view.selected < n) {
    text.children[view.selected]?.classList.add("selected");
    setText(detail, describeToken(s.tokens[view.selected], view.selected));
  } else {
    setText(detail, "Hover, focus or click a token for its probability, rank and what the model expected instead.");
  }

  list.replaceChildren(...s.most_surprising.map((i) => {
    const t = s.tokens[i];
    const li = makeEl("li", { "data-i": i });
    li.append(makeEl("span", { class: `stok ${bucketOf(t.rank)?.cls ?? "sb-none"}` }, t.display),
      ` at token ${i + 1}: ${t.surprisal_bits.toFixed(2)} bits (p = ${formatProb(t.prob)}, rank ${t.rank}); expected ` +
      t.top.map((x) => `“${x.display}” (${formatProb(x.prob)})`).join(", "));
    return li;
  }));
}

/** The legend: one swatch per bucket, with its count. */
function makeLegend() {
  const el = makeEl("div", { class: "legend score-legend" });
  el.append(makeEl("span", {}, "rank the model gave each token:"));
  for (const b of BUCKETS) {
    const item = makeEl("span", { class: "score-key", "data-bucket": b.key });
    item.append(makeEl("span", { class: `stok ${b.cls}` }, b.label), " ", makeEl("span", { class: "count" }));
    el.append(item);
  }
  return el;
}

/**
 * @param {number|null|undefined} x
 * @param {number} digits
 */
function fmt(x, digits) {
  return typeof x === "number" && Number.isFinite(x) ? x.toFixed(digits) : "–";
}
