// The compare panel: two configurations, A and B, side by side. Each side
// says what it is (the page's settings, a snapshot of them, or a pasted
// configuration as its engine read it: what its defaults filled in, its
// notes, or why it was refused) and its settings that are on. For the next
// token, from the same raw logits: both kept sets, the tokens kept by one and
// dropped by the other marked (in words and colour), the probability each
// gives the tokens, their entropies and the token each draws with the same
// coin. For runs of continuations: the progress, a table and a chart of
// their statistics, and the texts, collapsed. A is blue and B vermillion
// (Okabe–Ito), always with its letter.
// (Over 400 lines: one panel's drawing, its step table, runs table, chart and continuations, which share the side colours and formatters; its controls and engine side are their own files.)

import { makeEl, makeSvg, setText, setAttr, syncChildren, ensureSlot } from "./dom.js";
import { formatProb, formatProbShort, formatBits, formatCount, labelStage, OKABE_ITO } from "./format.js";
import { ENGINE, chainInForce } from "../state/settings.js";

/** The sides' colours and names. */
export const SIDE_COLOURS = { a: OKABE_ITO.blue, b: OKABE_ITO.vermillion };
const SIDES = /** @type {const} */ (["a", "b"]);
const NAME = { a: "A", b: "B" };

/**
 * @typedef {Object} CompareView
 * @property {any} compare    the store's view.compare: sides (as read), step, stepProblem, run
 * @property {{ a: { dialect: string|null, text: string }, b: { dialect: string|null, text: string } }} sides the sides as the link holds them
 * @property {boolean} ready  the engine holds a model
 * @property {boolean} running a generation run is in progress (runs of continuations wait)
 */

/**
 * Paint the compare panel.
 * @param {HTMLElement} panel the panel (#p-compare): its side boxes, body and runs
 * @param {CompareView} v
 */
export function renderCompare(panel, v) {
  for (const key of SIDES) {
    const box = panel.querySelector(`[data-side-info=${key}]`);
    if (box) renderSideInfo(box, key, v.compare.sides[key], v.sides[key]);
  }
  renderStep(/** @type {HTMLElement} */ (panel.querySelector(".body")), v.compare.step, v.compare.stepProblem);
  renderRunControls(panel, v);
  const results = panel.querySelector("[data-slot=cmp-results]");
  if (results) renderRun(/** @type {HTMLElement} */ (results), v.compare.run, v.compare.sidesKey);
}

// ---- a side ----

/** Settings that are about the run, not the rules: left out of a side's summary. */
const NOT_RULES = new Set(["seed", "max_new", "top_n", "beams", "alpha", "use_cache", "chat", "context_policy", "stop", "order", "chain"]);

/**
 * The settings of a side that differ from the engine's defaults (the rules
 * in force), as "key value" pieces, then the chain.
 * @param {Record<string, any>} s engine settings
 * @returns {string}
 */
export function summarise(s) {
  const parts = [];
  for (const [key, def] of Object.entries(ENGINE.defaults)) {
    if (NOT_RULES.has(key) || !(key in s)) continue;
    const v = s[key];
    if (key === "temperature" || JSON.stringify(v) !== JSON.stringify(def)) parts.push(`${key} ${Array.isArray(v) ? JSON.stringify(v) : v}`);
  }
  const chain = chainInForce(s);
  return `${parts.join(" · ")}; chain: ${s.chain?.length ? chain.map(labelStage).join(" → ") : `${s.order} (${chain.map(labelStage).join(" → ")})`}`;
}

/**
 * What an import filled in and noted, as the engine said it.
 * @param {{ key: string, engine_key: string, value: string, engine: string }[]} filled
 * @param {{ line: number, key: string, message: string }[]} notes
 * @returns {HTMLElement[]}
 */
export function importReport(filled, notes) {
  const out = [];
  if (filled.length) {
    const engines = [...new Set(filled.map((f) => f.engine))].join(" and ");
    out.push(makeEl("p", { class: "cfg-head" }, `Filled in by ${engines}'s defaults (${filled.length}):`));
    const ul = makeEl("ul", { class: "cfg-list cfg-filled" });
    for (const f of filled) {
      ul.append(makeEl("li", { "data-key": f.key }, `${f.key} = ${f.value}${f.engine_key && f.engine_key !== f.key ? ` (${f.engine_key})` : ""}`));
    }
    out.push(ul);
  }
  if (notes.length) {
    out.push(makeEl("p", { class: "cfg-head" }, `Notes (${notes.length}):`));
    const ul = makeEl("ul", { class: "cfg-list cfg-notes" });
    for (const n of notes) ul.append(makeEl("li", { "data-line": n.line, "data-key": n.key }, noteText(n)));
    out.push(ul);
  }
  return out;
}

/**
 * @param {{ line: number, key: string, message: string }} n
 * @returns {string} "line 3, top_k: …" (line 0 is the whole text)
 */
export function noteText(n) {
  const where = [n.line > 0 ? `line ${n.line}` : "", n.key].filter(Boolean).join(", ");
  return where ? `${where}: ${n.message}` : n.message;
}

/** What a side's box showed last, so a repaint with the same read does nothing. @type {WeakMap<Element, any>} */
const sideShown = new WeakMap();

/**
 * @param {Element} box
 * @param {"a"|"b"} key
 * @param {any} read the side as read (engine/configs.js SideRead), or null before the first read
 * @param {{ dialect: string|null, text: string }} side
 */
function renderSideInfo(box, key, read, side) {
  if (sideShown.get(box) === read) return;
  sideShown.set(box, read);
  const source = ensureSlot(box, "source", () => makeEl("p", { class: "cmp-source" }));
  const summary = ensureSlot(box, "summary", () => makeEl("p", { class: "cmp-summary" }));
  const problem = ensureSlot(box, "problem", () => makeEl("p", { class: "msg", role: "alert" }));
  const more = ensureSlot(box, "more", () => {
    const d = makeEl("details", { class: "cmp-filled" });
    d.append(makeEl("summary"), makeEl("div"));
    return d;
  });
  setText(source, read ? read.label : side.dialect === null ? "the page's settings" : `${side.dialect} configuration`);
  setText(summary, read?.settings ? summarise(read.settings) : read?.pending ? "reading…" : "");
  setText(problem, read?.problem ?? "");
  const filled = read?.filled ?? [], notes = read?.notes ?? [];
  more.hidden = !filled.length && !notes.length;
  setText(more.firstElementChild, `${filled.length} filled in by its engine's defaults, ${notes.length} note${notes.length === 1 ? "" : "s"}`);
  more.lastElementChild.replaceChildren(...importReport(filled, notes));
  box.closest(".cmp-side")?.setAttribute("data-state", read?.problem ? "refused" : read?.settings ? "read" : "waiting");
}

// ---- the next token under both ----

/**
 * @param {HTMLElement} root the panel's body
 * @param {any} step Previewer.compare's report, or null
 * @param {string|null} problem why there is none
 */
function renderStep(root, step, problem) {
  const note = ensureSlot(root, "step-note", () => makeEl("p", { class: "cmp-caption", role: "status" }));
  const facts = ensureSlot(root, "facts", () => makeFactsTable());
  const overlap = ensureSlot(root, "overlap", () => makeEl("p", { class: "cmp-overlap" }));
  const tokens = ensureSlot(root, "tokens", () => makeTokensTable());
  root.dataset.state = step ? "shown" : "empty";
  facts.hidden = tokens.hidden = overlap.hidden = !step;
  if (!step) { setText(note, problem ?? ""); return; }
  const coin = step.a.coin === step.b.coin ? `the same coin, ${step.a.coin.toFixed(4)}` : `coins ${step.a.coin.toFixed(4)} and ${step.b.coin.toFixed(4)}`;
  setText(note, `The next token, from the same raw logits: what each configuration keeps, and what it draws with ${coin}.`);

  const body = facts.querySelector("tbody");
  const rows = body.children;
  for (const key of SIDES) {
    const s = step[key];
    const col = key === "a" ? 1 : 2;
    setCell(rows[0].children[col], formatCount(s.kept), `${s.kept} tokens kept by ${NAME[key]}`);
    setCell(rows[1].children[col], formatBits(s.entropy_bits), `${s.entropy_bits.toFixed(6)} bits (${(s.entropy_bits * Math.LN2).toFixed(6)} nats)`);
    const drawn = rows[2].children[col];
    const p = drawnProb(key, s.drawn);
    setText(drawn.firstElementChild, s.drawn.display);
    setText(drawn.lastElementChild, ` ${formatProbShort(p)}`);
    setAttr(drawn, "title", `${NAME[key]} draws token ${s.drawn.id} (${JSON.stringify(s.drawn.text)}), probability ${formatProb(p)} under ${NAME[key]}, coin ${s.coin}`);
  }
  setText(overlap, `Over the whole vocabulary: ${formatCount(step.shared)} kept by both, ${formatCount(step.a_only)} by A only, ${formatCount(step.b_only)} by B only.`);

  const tbody = tokens.querySelector("tbody");
  const trs = syncChildren(tbody, step.rows.length, () => makeTokenRow());
  step.rows.forEach((/** @type {any} */ r, i) => paintTokenRow(trs[i], r, step));
}

/**
 * The probability a side gives the token it draws (the drawn token is a
 * row: each side's probability and the raw one).
 * @param {"a"|"b"} key
 * @param {{ a_prob?: number, b_prob?: number, prob?: number }} drawn
 */
function drawnProb(key, drawn) {
  return drawn.prob ?? drawn[`${key}_prob`];
}

/** @param {Element} td @param {string} text @param {string} title */
function setCell(td, text, title) {
  setText(td, text);
  setAttr(td, "title", title);
}

function makeFactsTable() {
  const wrap = makeEl("div", { class: "table-wrap", tabindex: "0", role: "group", "aria-label": "A and B at the next token" });
  const t = makeEl("table", { class: "cmp-facts" });
  const head = makeEl("thead");
  const hr = makeEl("tr");
  hr.append(makeEl("td"), ...SIDES.map((k) => { const th = makeEl("th", { scope: "col" }); th.append(badge(k)); return th; }));
  head.append(hr);
  const body = makeEl("tbody");
  for (const name of ["tokens kept", "entropy", "would draw"]) {
    const tr = makeEl("tr");
    tr.append(makeEl("th", { scope: "row" }, name));
    for (const _k of SIDES) {
      const td = makeEl("td", { class: name === "would draw" ? "cmp-drawn" : "num" });
      if (name === "would draw") td.append(makeEl("span", { class: "tokname cmp-tok" }), makeEl("span", { class: "num" }));
      tr.append(td);
    }
    body.append(tr);
  }
  t.append(head, body);
  wrap.append(t);
  return wrap;
}

/** @param {"a"|"b"} k @returns {HTMLElement} the side's letter on its colour */
function badge(k) {
  return makeEl("span", { class: `cmp-badge ${k}` }, NAME[k]);
}

function makeTokensTable() {
  const wrap = makeEl("div", { class: "table-wrap", tabindex: "0", role: "group", "aria-label": "the tokens A and B keep" });
  const t = makeEl("table", { class: "cmp-tokens" });
  t.append(makeEl("caption", { class: "sr-only" }, "The tokens either configuration keeps, most likely first: the raw probability, A's and B's, and which keeps it"));
  const head = makeEl("thead");
  const hr = makeEl("tr");
  hr.append(makeEl("th", { scope: "col" }, "token"), makeEl("th", { scope: "col", title: "the model's own probability (no rule)" }, "raw"));
  for (const k of SIDES) { const th = makeEl("th", { scope: "col" }); th.append(badge(k)); hr.append(th); }
  hr.append(makeEl("th", { scope: "col" }, "kept by"));
  head.append(hr);
  t.append(head, makeEl("tbody"));
  wrap.append(t);
  return wrap;
}

function makeTokenRow() {
  const tr = makeEl("tr");
  tr.append(makeEl("th", { scope: "row", class: "tokname" }), makeEl("td", { class: "num" }));
  for (const k of SIDES) {
    const td = makeEl("td", { class: `cmp-p ${k}` });
    const bar = makeEl("span", { class: "cmp-bar", "aria-hidden": "true" });
    bar.append(makeEl("span", { class: `fill ${k}` }));
    td.append(bar, makeEl("span", { class: "num" }));
    tr.append(td);
  }
  tr.append(makeEl("td", { class: "cmp-kept" }));
  return tr;
}

/**
 * @param {HTMLElement} tr
 * @param {{ id: number, text: string, display: string, raw_prob: number, a_prob: number, b_prob: number }} r
 * @param {any} step
 */
function paintTokenRow(tr, r, step) {
  const [name, raw, a, b, kept] = tr.children;
  const inA = r.a_prob > 0, inB = r.b_prob > 0;
  const cls = inA && inB ? "both" : inA ? "only-a" : "only-b";
  if (tr.className !== cls) tr.className = cls;
  setAttr(tr, "data-id", r.id);
  setText(name, r.display);
  setAttr(name, "title", `token ${r.id}: ${JSON.stringify(r.text)}`);
  setCell(raw, formatProbShort(r.raw_prob), `raw probability ${formatProb(r.raw_prob)}`);
  for (const [td, p, k] of /** @type {const} */ ([[a, r.a_prob, "a"], [b, r.b_prob, "b"]])) {
    const fill = /** @type {HTMLElement} */ (td.firstElementChild.firstElementChild);
    const w = `${(p * 100).toFixed(1)}%`;
    if (fill.style.width !== w) fill.style.width = w;
    setText(td.lastElementChild, p > 0 ? formatProbShort(p) : "dropped");
    setAttr(td, "title", p > 0 ? `${NAME[k]}: probability ${formatProb(p)}` : `${NAME[k]} drops this token`);
    td.classList.toggle("dropped", p === 0);
  }
  const words = [inA && inB ? "both" : inA ? "A only" : "B only"];
  if (step.a.drawn.id === r.id) words.push("A draws");
  if (step.b.drawn.id === r.id) words.push("B draws");
  setText(kept, words.join(" · "));
}

// ---- runs of continuations ----

/**
 * The Run and Cancel buttons and the Run button's words.
 * @param {HTMLElement} panel
 * @param {CompareView} v
 */
function renderRunControls(panel, v) {
  const run = /** @type {HTMLButtonElement|null} */ (panel.querySelector("#btn-cmp-run"));
  const cancel = /** @type {HTMLButtonElement|null} */ (panel.querySelector("#btn-cmp-cancel"));
  const n = /** @type {HTMLInputElement|null} */ (panel.querySelector("#cmp-runs"));
  if (!run || !cancel) return;
  const busy = v.compare.run.busy;
  run.disabled = busy || !v.ready || v.running;
  setAttr(run, "title", v.running ? "wait for the Run to end" : "generate continuations of the prompt with each configuration, the same seeds for both");
  const runs = Number(n?.value);
  setText(run, Number.isInteger(runs) && runs >= 1 ? `Run ${runs} continuation${runs > 1 ? "s" : ""} of each` : "Run continuations of each");
  cancel.hidden = !busy;
}

/** The result last drawn in a results box, so progress repaints leave the tables alone. @type {WeakMap<Element, any>} */
const runShown = new WeakMap();

/**
 * @param {HTMLElement} root
 * @param {{ busy: boolean, progress: any, result: any, ended: string|null, asked: any }} run
 * @param {string} sidesKey what runs of the sides as they are now would be computed from
 */
function renderRun(root, run, sidesKey) {
  const status = ensureSlot(root, "run-status", () => {
    const p = makeEl("p", { class: "cmp-run-status", role: "status" });
    p.append(makeEl("progress", { hidden: "" }), makeEl("span"));
    return p;
  });
  const bar = /** @type {HTMLProgressElement} */ (status.firstElementChild);
  const words = status.lastElementChild;
  root.dataset.state = run.busy ? "running" : run.result ? "done" : run.ended ? "ended" : "idle";
  if (run.busy) {
    const p = run.progress;
    bar.hidden = !p;
    if (p) { bar.max = p.total_runs; bar.value = p.done_runs; }
    setText(words, p ? ` ${p.done_runs} of ${p.total_runs} continuations done, ${formatCount(p.tokens)} tokens` : " starting…");
  } else {
    bar.hidden = true;
    const stale = run.result && run.asked?.key !== sidesKey
      ? " A, B or the prompt has changed since: these figures are for the configurations as they were; run again for the ones in force." : "";
    setText(words, run.ended ? `No result: ${run.ended}.` : run.result ? describeRuns(run) + stale : "");
    root.classList.toggle("stale", !!stale);
  }
  if (runShown.get(root) === run.result) return;
  runShown.set(root, run.result);
  const out = ensureSlot(root, "run-result", () => makeEl("div", { class: "cmp-run-result" }));
  out.replaceChildren(...(run.result ? runResult(run.result) : []));
}

/** @param {{ result: any, asked: any }} run */
function describeRuns(run) {
  const r = run.result;
  const prompt = run.asked?.prompt ?? "";
  const shown = prompt.length > 60 ? `${prompt.slice(0, 60)}…` : prompt;
  const seeds = typeof r.first_seed === "number" ? `seeds ${r.first_seed}…${r.first_seed + r.runs - 1}, the same for A and B` : "the same seeds for A and B";
  return `${r.runs} continuation${r.runs > 1 ? "s" : ""} of each, up to ${r.max_new} new tokens, from the prompt ${JSON.stringify(shown)}, with ${seeds}.`;
}

/** @param {{ tokens: number|number[] }} c a continuation @returns {number} how many tokens it has */
const tokenCount = (c) => (Array.isArray(c.tokens) ? c.tokens.length : c.tokens);

/**
 * The statistics the table and the chart show, in order: key, words, how
 * they are written, and whether the value is a share of 1 (its bar's scale).
 */
const METRICS = [
  { key: "distinct_1", name: "distinct-1", help: "different tokens / tokens, over all the continuations", share: true },
  { key: "distinct_2", name: "distinct-2", help: "different pairs of adjacent tokens / pairs, over all the continuations (no pair spans two)", share: true },
  { key: "mean_logprob", name: "mean log-probability", help: "ln p of each token drawn under the model's own distribution (no temperature, no rule), averaged over every token, in nats", share: false },
  { key: "repetition_rate", name: "repetition rate", help: "seq-rep-4 (Welleck et al. 2019): 1 − distinct 4-grams / 4-grams within a continuation, averaged over the continuations", share: true },
  { key: "stopped_early", name: "stopped early", help: "share of continuations ended by the end-of-text token or a stop string before the token limit", share: true },
];

/** @param {number} v @param {boolean} share */
const formatMetric = (v, share) => (share ? v.toFixed(3) : `${v.toFixed(3)} nats`);

/** @param {any} result compare_finish's report @returns {HTMLElement[]} */
function runResult(result) {
  const wrap = makeEl("div", { class: "table-wrap", tabindex: "0", role: "group", "aria-label": "statistics of the continuations" });
  const t = makeEl("table", { class: "cmp-stats" });
  t.append(makeEl("caption", { class: "sr-only" }, "Statistics of the continuations, A against B"));
  const hr = makeEl("tr");
  hr.append(makeEl("th", { scope: "col" }, "statistic"), ...SIDES.map((k) => { const th = makeEl("th", { scope: "col" }); th.append(badge(k)); return th; }));
  const head = makeEl("thead");
  head.append(hr);
  const body = makeEl("tbody");
  const row = (name, help, values, attrs = {}) => {
    const tr = makeEl("tr", attrs);
    const th = makeEl("th", { scope: "row", title: help }, name);
    tr.append(th, ...values.map(([text, title]) => makeEl("td", { class: "num", title }, text)));
    body.append(tr);
  };
  row("continuations", "runs of each configuration", SIDES.map((k) => [String(result[k].stats.runs), ""]));
  row("tokens", "tokens generated in all", SIDES.map((k) => [formatCount(result[k].stats.tokens), ""]));
  for (const m of METRICS) {
    row(m.name, m.help, SIDES.map((k) => [formatMetric(result[k].stats[m.key], m.share), `${NAME[k]}: ${m.name} ${result[k].stats[m.key]}`]), { "data-metric": m.key });
  }
  t.append(head, body);
  wrap.append(t);
  const chartBox = makeEl("div", { class: "cmp-chart" });
  chartBox.append(statsChart(result));
  return [wrap, chartBox, ...SIDES.map((k) => continuations(k, result[k].continuations))];
}

/**
 * A and B's statistics as bars, one row per statistic (each on its own
 * scale: a share from 0 to 1, the log-probability from 0 down to the lower
 * of the two), the values written at the bars' ends.
 * @param {any} result
 * @returns {SVGElement}
 */
export function statsChart(result) {
  // Narrow enough that a phone shows it near its own size (it scales with the panel's width).
  const W = 380, rowH = 40, top = 22, labelW = 130, barW = W - labelW - 86, H = top + METRICS.length * rowH + 6;
  const svg = makeSvg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "chart cmp-stats-chart", role: "img",
    "aria-label": `A against B: ${METRICS.map((m) => `${m.name} ${formatMetric(result.a.stats[m.key], m.share)} against ${formatMetric(result.b.stats[m.key], m.share)}`).join("; ")}` });
  svg.append(makeSvg("rect", { x: 0, y: 0, width: W, height: H, fill: "var(--panel, #fff)" }));
  const text = (x, y, s, attrs = {}) => { const el = makeSvg("text", { x, y, "font-size": 11, fill: "currentColor", ...attrs }); el.textContent = s; svg.append(el); return el; };
  // the legend
  SIDES.forEach((k, i) => {
    svg.append(makeSvg("rect", { x: labelW + i * 70, y: 6, width: 12, height: 10, fill: SIDE_COLOURS[k] }));
    text(labelW + i * 70 + 16, 15, NAME[k]);
  });
  METRICS.forEach((m, i) => {
    const y0 = top + i * rowH;
    text(0, y0 + 14, m.name, { "font-size": 11.5 });
    text(0, y0 + 28, m.share ? "share, 0 to 1" : "nats per token", { "font-size": 10, fill: "var(--muted, #5b6470)" });
    const values = SIDES.map((k) => result[k].stats[m.key]);
    const scale = m.share ? 1 : Math.max(1e-9, ...values.map((v) => Math.abs(v)));
    svg.append(makeSvg("path", { d: `M${labelW},${y0 + 2}v32`, stroke: "currentColor", "stroke-width": 1 }));
    SIDES.forEach((k, j) => {
      const v = values[j];
      const w = Math.max(0, Math.min(1, Math.abs(v) / scale)) * barW;
      const y = y0 + 4 + j * 15;
      const rect = makeSvg("rect", { x: labelW, y, width: w.toFixed(1), height: 12, fill: SIDE_COLOURS[k], "data-side": k, "data-metric": m.key });
      const title = makeSvg("title");
      title.textContent = `${NAME[k]}: ${m.name} ${v}`;
      rect.append(title);
      svg.append(rect);
      text(labelW + w + 4, y + 10, `${NAME[k]} ${formatMetric(v, m.share)}`, { "font-size": 10.5 });
    });
  });
  return svg;
}

/** What ended a continuation, in words. */
const STOPS = { eos: "end of text", max_new: "token limit", stop_string: "stop string", context_full: "context full" };

/**
 * A side's continuations, collapsed.
 * @param {"a"|"b"} k
 * @param {{ text: string, tokens: number|number[], stop: string, mean_logprob: number }[]} list
 */
function continuations(k, list) {
  const d = makeEl("details", { class: `cmp-texts ${k}` });
  const summary = makeEl("summary");
  summary.append(badge(k), ` ${list.length} continuation${list.length === 1 ? "" : "s"}`);
  const ol = makeEl("ol", { class: "cmp-text-list" });
  for (const c of list) {
    const li = makeEl("li");
    const n = tokenCount(c);
    li.append(makeEl("span", { class: "cmp-text" }, c.text),
      makeEl("small", { class: "help" }, `${n} token${n === 1 ? "" : "s"}, ended by ${STOPS[c.stop] ?? c.stop}, mean log-probability ${c.mean_logprob.toFixed(3)} nats`));
    ol.append(li);
  }
  d.append(summary, ol);
  return d;
}
