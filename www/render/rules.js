// Panel 3: which tokens each rule keeps. One column per rule applied alone on
// the raw logits, then one per stage of the combined pipeline in the chosen order.

import { makeEl, setText, setAttr, syncChildren, ensureSlot } from "./dom.js";
import { formatProb, formatProbShort, labelStage } from "./format.js";

/**
 * @typedef {Object} RulesView
 * @property {any} distribution the engine's Distribution
 * @property {string} order     "hf" | "llama"
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
  if (!d) { setText(note, "No distribution yet."); table.replaceChildren(); return; }
  const orderName = view.order === "llama" ? "llama.cpp order (temperature last)" : "Hugging Face order (temperature first)";
  setText(note, `Left: each rule alone on the raw logits. Right: the pipeline, ${orderName}. Number: kept (p after the rule); ✗: cut.`);

  const stages = d.stages.filter((s) => s.name !== "raw");
  const columns = [...d.rules.map((s) => ({ s, group: "alone" })), ...stages.map((s) => ({ s, group: "pipeline" }))];

  const thead = table.tHead ?? table.createTHead();
  const [groupRow, nameRow] = syncChildren(thead, 2, () => makeEl("tr"));
  const groupCells = syncChildren(groupRow, 3, (i) => makeEl("th", { scope: "colgroup" }));
  setText(groupCells[0], "");
  setText(groupCells[1], "each rule alone");
  setAttr(groupCells[1], "colspan", d.rules.length);
  setText(groupCells[2], "pipeline →");
  setAttr(groupCells[2], "colspan", stages.length);
  groupCells[2].className = "pipe";
  const nameCells = syncChildren(nameRow, columns.length + 1, () => makeEl("th", { scope: "col" }));
  setText(nameCells[0], "token");
  columns.forEach(({ s, group }, j) => {
    setText(nameCells[j + 1], labelStage(s.name));
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
    });
  });
}
