//# allFunctionsCalledOnLoad
// Panel 3: which tokens each rule keeps. One column per rule applied alone on
// the raw logits, then one per stage of the chain in force, in its order. The
// samplers beyond the course's (typical, ε, η, top-n-σ, XTC, mirostat, DRY,
// ...) get a column once a setting turns them on; the note names the stages
// of the chain that are off.

import { makeEl, setText, setAttr, syncChildren, ensureSlot } from "./dom.js";
import { formatProb, formatProbShort, labelStage } from "./format.js";
import { chainInForce, stageIsOn, stageDrawn, CHAIN } from "../state/settings.js";

/** More columns than this (the course's twelve) and the table goes dense: compact headers and numbers. */
const DENSE_AFTER = 12;

/**
 * A dense table's column headers: short, breaking onto a second line where
 * a hyphen or a space allows; the full name stays in the header's title and
 * its accessible name. Names not listed here are short already.
 */
const SHORT_LABELS = {
  temperature: "τ", penalties: "pen.", bias_bans: "bias/ bans", sequence_bias: "seq. bias",
  no_repeat_ngram: "n-gram", typical_p: "typ. HF", typical_p_llama: "typ. llama", epsilon_cutoff: "ε-cut",
  eta_cutoff: "η-cut", mirostat: "miro.",
};

/**
 * A probability in a dense table's cell: three decimals without the leading
 * zero (".146", "1.00"); the exact value is in the cell's title.
 * @param {number} p
 */
function formatProbDense(p) {
  if (p === 0) return "0";
  if (p < 0.0005) return "<.001";
  const t = p.toFixed(3);
  return t === "1.000" ? "1.00" : t.replace(/^0\./, ".");
}

/**
 * A count in a dense table's cell: thousands shortened past four digits ("49k").
 * @param {number} n
 */
function formatCountDense(n) {
  return n < 10000 ? String(n) : `${Math.round(n / 1000)}k`;
}

/**
 * A column's header: its label, or in a dense table the short one, in an
 * <abbr> whose title (and the header's accessible name) is the full name.
 * @param {HTMLElement} th
 * @param {string} name the stage's name
 * @param {boolean} dense
 */
function setHeader(th, name, dense) {
  const full = labelStage(name);
  const short = dense ? SHORT_LABELS[name] ?? full : full;
  const key = `${short}|${full}`;
  if (th.dataset.label === key) return;
  th.dataset.label = key;
  if (short === full) {
    th.replaceChildren(full);
    th.removeAttribute("aria-label");
  } else {
    th.replaceChildren(makeEl("abbr", { title: full }, short));
    th.setAttribute("aria-label", full);
  }
}

/**
 * @typedef {Object} RulesView
 * @property {any} distribution the engine's Distribution
 * @property {Record<string, any>} settings the settings in force (the chain, which samplers are on)
 * @property {any[]} [generated] the generated tokens, the store's transcript (each with the μ mirostat drew it at)
 * @property {number|null} [vocabSize] the model's vocabulary (a top-k past it is said to keep everything)
 */

/**
 * Paint the rules table.
 * @param {HTMLElement} root
 * @param {RulesView} view
 */
export function renderRules(root, view) {
  const d = view.distribution;
  const note = ensureSlot(root, "note", () => makeEl("p", { class: "note", id: "rules-note" }));
  // It scrolls sideways on a narrow screen: focusable, so the keyboard can scroll it.
  const wrap = ensureSlot(root, "wrap", () => makeEl("div", { class: "table-wrap", tabindex: "0", role: "group", "aria-label": "rules table" }));
  const table = wrap.firstElementChild ?? wrap.appendChild(makeEl("table", { class: "rules", "aria-describedby": "rules-note" }));
  const muBox = ensureSlot(root, "mu", () => makeEl("div", { class: "mu-steps" }));
  if (!d) { setText(note, "No distribution yet."); table.replaceChildren(); muBox.replaceChildren(); return; }
  const settings = view.settings;
  const drawn = (/** @type {string} */ name) => stageDrawn(d, name);
  const chain = chainInForce(settings);
  const preset = settings.chain.length ? null : CHAIN.presets.find((p) => p.key === settings.order);
  const off = chain.filter((n) => !drawn(n)).map(labelStage);
  // A top-k past the vocabulary is taken (a link written for a larger model
  // still opens) and keeps every token: said here, where its column shows it.
  const wide = view.vocabSize && settings.top_k > view.vocabSize
    ? ` Top-k = ${settings.top_k} is more than this model's ${view.vocabSize} tokens: it keeps every token.` : "";
  setText(note, `Left: each rule alone on the raw logits. Right: the chain${preset ? ` (${preset.label})` : " you built"}, in order` +
    `${off.length ? `; off, not drawn: ${off.join(", ")}` : ""}. Number: kept (p after the rule); ✗: cut.${wide}`);

  const rules = d.rules.filter((s) => drawn(s.name));
  const stages = d.stages.filter((s) => s.name !== "raw" && drawn(s.name));
  const columns = [...rules.map((s) => ({ s, group: "alone" })), ...stages.map((s) => ({ s, group: "pipeline" }))];
  // More columns than the course's twelve: tighter cells, short headers and
  // numbers, so a long chain fits a laptop's width without scrolling sideways.
  const dense = columns.length > DENSE_AFTER;
  table.classList.toggle("dense", dense);
  const prob = dense ? formatProbDense : formatProbShort;
  const count = dense ? formatCountDense : String;

  const thead = table.tHead ?? table.createTHead();
  const [groupRow, nameRow] = syncChildren(thead, 2, () => makeEl("tr"));
  const groupCells = syncChildren(groupRow, 3, (i) => makeEl("th", { scope: "colgroup" }));
  setText(groupCells[0], "");
  setText(groupCells[1], "each rule alone");
  setAttr(groupCells[1], "colspan", rules.length);
  setText(groupCells[2], "pipeline →");
  setAttr(groupCells[2], "colspan", stages.length);
  setAttr(groupCells[2], "class", "pipe");
  const nameCells = syncChildren(nameRow, columns.length + 1, () => makeEl("th", { scope: "col" }));
  setText(nameCells[0], "token");
  columns.forEach(({ s, group }, j) => {
    setHeader(nameCells[j + 1], s.name, dense);
    setAttr(nameCells[j + 1], "data-stage", s.name);
    setAttr(nameCells[j + 1], "data-group", group);
    setAttr(nameCells[j + 1], "class", group === "pipeline" && columns[j - 1]?.group === "alone" ? "pipe" : "");
  });

  const tbody = table.tBodies[0] ?? table.createTBody();
  const rows = syncChildren(tbody, d.raw_top.length, () => makeEl("tr"));
  d.raw_top.forEach((tok, i) => {
    const cells = syncChildren(rows[i], columns.length + 1, (k) => makeEl(k === 0 ? "th" : "td", k === 0 ? { scope: "row" } : {}));
    setText(cells[0], tok.display);
    setAttr(cells[0], "title", tok.display); // a dense table cuts a long token short
    columns.forEach(({ s, group }, j) => {
      const t = s.top[i];
      const cell = cells[j + 1];
      // kept cells carry their probability, cut ones a ✗: readable without colour
      setText(cell, t.kept ? prob(t.prob) : "✗");
      setAttr(cell, "title", `${labelStage(s.name)}: ${t.kept ? "kept" : "cut"}, p = ${formatProb(t.prob)}`);
      setAttr(cell, "class", `${t.kept ? "kept" : "cut"}${group === "pipeline" && columns[j - 1]?.group === "alone" ? " pipe" : ""}`);
    });
  });

  const tfoot = table.tFoot ?? table.createTFoot();
  const footRows = syncChildren(tfoot, 3, () => makeEl("tr"));
  const foot = [
    ["kept mass", (s) => prob(s.kept_mass), (s) => `raw probability mass of the kept set: ${formatProb(s.kept_mass)}`],
    ["set size", (s) => count(s.kept_count), (s) => `${s.kept_count} tokens keep non-zero probability`],
    // dense: no "+", the row's name says it
    ["beyond top 10", (s) => (s.kept_beyond_top && !dense ? `+${s.kept_beyond_top}` : count(s.kept_beyond_top)), (s) => `${s.kept_beyond_top} kept tokens are not in the list above`],
  ];
  foot.forEach(([label, value, title], r) => {
    const cells = syncChildren(footRows[r], columns.length + 1, (k) => makeEl(k === 0 ? "th" : "td", k === 0 ? { scope: "row" } : {}));
    setText(cells[0], label);
    columns.forEach(({ s, group }, j) => {
      setText(cells[j + 1], value(s));
      setAttr(cells[j + 1], "title", title(s));
      setAttr(cells[j + 1], "class", group === "pipeline" && columns[j - 1]?.group === "alone" ? "pipe" : "");
      setAttr(cells[j + 1], "data-stage", s.name);
      setAttr(cells[j + 1], "data-group", group);
    });
  });
  renderMu(muBox, view);
}

/** The most μ values listed (the latest ones). */
const MU_SHOWN = 12;

/**
 * Mirostat's μ step by step: the value each generated token was drawn at
 * (each generated token's `mirostat_mu`, where the engine reports it), and
 * the one this distribution is cut at (its `step_inputs`: the worker's, or
 * the page's own Previewer's, which holds the worker's sampler state).
 * @param {Element} box
 * @param {RulesView} view
 */
function renderMu(box, view) {
  if (!stageIsOn(view.distribution, "mirostat")) { box.replaceChildren(); return; }
  const d = view.distribution;
  const steps = (view.generated ?? []).filter((t) => typeof t.mirostat_mu === "number")
    .map((t) => ({ mu: t.mirostat_mu, what: `before ${t.display}` }));
  const now = d?.step_inputs?.mirostat_mu;
  if (typeof now === "number" && !steps.some((x) => x.mu === now)) steps.push({ mu: now, what: `at position ${d.position}` });
  const head = box.firstElementChild ?? box.appendChild(makeEl("p", { class: "note" }));
  const list = head.nextElementSibling ?? box.appendChild(makeEl("ol", { class: "mu-list", "aria-label": "mirostat μ at each step" }));
  const shown = steps.slice(-MU_SHOWN);
  const skipped = steps.length - shown.length;
  setText(head, steps.length
    ? `Mirostat μ (bits): it starts at 2τ and after each token moves by η × (τ − that token's surprise)${skipped ? `; the last ${MU_SHOWN} of ${steps.length}` : ""}.`
    : "Mirostat μ: not reported with this view; Step shows the session's μ.");
  setAttr(list, "start", skipped + 1);
  const items = syncChildren(list, shown.length, () => makeEl("li"));
  shown.forEach(({ mu, what }, i) => {
    setText(items[i], `${what}: μ = ${mu.toFixed(3)}`);
    setAttr(items[i], "data-mu", mu);
  });
}
