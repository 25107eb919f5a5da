// Panel 3: which tokens each rule keeps. One column per rule applied alone on
// the raw logits, then one per stage of the chain in force, in its order. The
// samplers beyond the course's (typical, ε, η, top-n-σ, XTC, mirostat, DRY,
// ...) get a column once a setting turns them on; the note names the stages
// of the chain that are off.

import { makeEl, setText, setAttr, syncChildren, ensureSlot } from "./dom.js";
import { formatProb, formatProbShort, labelStage } from "./format.js";
import { chainInForce, stageIsOn, stageDrawn, CHAIN } from "../state/settings.js";

/**
 * @typedef {Object} RulesView
 * @property {any} distribution the engine's Distribution
 * @property {Record<string, any>} settings the settings in force (the chain, which samplers are on)
 * @property {any[]} [generated] the report's generated tokens (each with the μ mirostat drew it at)
 * @property {number|null} [vocabSize] the model's vocabulary (a top-k past it is said to keep everything)
 */

/**
 * Paint the rules table.
 * @param {HTMLElement} root
 * @param {RulesView} view
 */
export function renderRules(root, view) {
  const d = view.distribution;
  const note = ensureSlot(root, "note", () => makeEl("p", { class: "note" }));
  // It scrolls sideways on a narrow screen: focusable, so the keyboard can scroll it.
  const wrap = ensureSlot(root, "wrap", () => makeEl("div", { class: "table-wrap", tabindex: "0", role: "group", "aria-label": "rules table" }));
  const table = wrap.firstElementChild ?? wrap.appendChild(makeEl("table", { class: "rules", "aria-describedby": "rules-note" }));
  note.id = "rules-note";
  const muBox = ensureSlot(root, "mu", () => makeEl("div", { class: "mu-steps" }));
  if (!d) { setText(note, "No distribution yet."); table.replaceChildren(); muBox.replaceChildren(); return; }
  const settings = view.settings;
  const drawn = (/** @type {string} */ name) => stageDrawn(settings, name);
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
  // More columns than the course's twelve: tighter cells, so more of them fit before it scrolls.
  table.classList.toggle("dense", columns.length > 12);

  const thead = table.tHead ?? table.createTHead();
  const [groupRow, nameRow] = syncChildren(thead, 2, () => makeEl("tr"));
  const groupCells = syncChildren(groupRow, 3, (i) => makeEl("th", { scope: "colgroup" }));
  setText(groupCells[0], "");
  setText(groupCells[1], "each rule alone");
  setAttr(groupCells[1], "colspan", rules.length);
  setText(groupCells[2], "pipeline →");
  setAttr(groupCells[2], "colspan", stages.length);
  groupCells[2].className = "pipe";
  const nameCells = syncChildren(nameRow, columns.length + 1, () => makeEl("th", { scope: "col" }));
  setText(nameCells[0], "token");
  columns.forEach(({ s, group }, j) => {
    setText(nameCells[j + 1], labelStage(s.name));
    setAttr(nameCells[j + 1], "data-stage", s.name);
    setAttr(nameCells[j + 1], "data-group", group);
    nameCells[j + 1].className = group === "pipeline" && columns[j - 1]?.group === "alone" ? "pipe" : "";
  });

  const tbody = table.tBodies[0] ?? table.createTBody();
  const rows = syncChildren(tbody, d.raw_top.length, () => makeEl("tr"));
  d.raw_top.forEach((tok, i) => {
    const cells = syncChildren(rows[i], columns.length + 1, (k) => makeEl(k === 0 ? "th" : "td", k === 0 ? { scope: "row" } : {}));
    setText(cells[0], tok.display);
    columns.forEach(({ s, group }, j) => {
      const t = s.top[i];
      const cell = cells[j + 1];
      // kept cells carry their probability, cut ones a ✗: readable without colour
      setText(cell, t.kept ? formatProbShort(t.prob) : "✗");
      setAttr(cell, "title", `${labelStage(s.name)}: ${t.kept ? "kept" : "cut"}, p = ${formatProb(t.prob)}`);
      cell.className = `${t.kept ? "kept" : "cut"}${group === "pipeline" && columns[j - 1]?.group === "alone" ? " pipe" : ""}`;
    });
  });

  const tfoot = table.tFoot ?? table.createTFoot();
  const footRows = syncChildren(tfoot, 3, () => makeEl("tr"));
  const foot = [
    ["kept mass", (s) => formatProbShort(s.kept_mass), (s) => `raw probability mass of the kept set: ${formatProb(s.kept_mass)}`],
    ["set size", (s) => String(s.kept_count), (s) => `${s.kept_count} tokens keep non-zero probability`],
    ["beyond top 10", (s) => (s.kept_beyond_top ? `+${s.kept_beyond_top}` : "0"), (s) => `${s.kept_beyond_top} kept tokens are not in the list above`],
  ];
  foot.forEach(([label, value, title], r) => {
    const cells = syncChildren(footRows[r], columns.length + 1, (k) => makeEl(k === 0 ? "th" : "td", k === 0 ? { scope: "row" } : {}));
    setText(cells[0], label);
    columns.forEach(({ s, group }, j) => {
      setText(cells[j + 1], value(s));
      setAttr(cells[j + 1], "title", title(s));
      cells[j + 1].className = group === "pipeline" && columns[j - 1]?.group === "alone" ? "pipe" : "";
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
  if (!stageIsOn(view.settings, "mirostat")) { box.replaceChildren(); return; }
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
