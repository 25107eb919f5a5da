// The page's controller: it owns the view state (mirrored in the URL), talks
// to the engine worker, and repaints the panels once per animation frame, or
// at once when a slider move is answered on this thread (local-preview.js).

import { EngineClient, EngineError } from "./client.js";
import { LocalPreviewer } from "./local-preview.js";
import { buildControls } from "./controls.js";
import { loadCatalogue } from "./models.js";
import { parseQuery, formatQuery, PANEL_KEYS } from "./state/url.js";
import { toEngineSettings } from "./state/settings.js";
import { renderOutput } from "./render/output.js";
import { renderDist } from "./render/dist.js";
import { renderRules } from "./render/rules.js";
import { renderEntropy } from "./render/entropy.js";
import { renderKv } from "./render/kv.js";
import { renderBeam } from "./render/beam.js";
import { renderTrain } from "./render/train.js";
import { makeEl, setText } from "./render/dom.js";
import { savePanelSvg, savePanelPng } from "./figure.js";

/**
 * Input-to-paint times of slider moves, in ms (read by the browser benchmark):
 * __ntpPerf from the input event's timeStamp to the first animation-frame
 * callback after the DOM holds the new numbers (the start of the frame that
 * paints them), __ntpPerfPainted to the first task after that frame's rendering.
 */
window.__ntpPerf = window.__ntpPerf || [];
window.__ntpPerfPainted = window.__ntpPerfPainted || [];
/** Page-load milestones (performance.now() ms) and the worker's own stage durations, for pkg-scripts/bench-load.mjs. */
window.__ntpLoad = { boot: performance.now(), origin: performance.timeOrigin };

const COURSE_LOGITS = [3.0, 2.5, 2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0, -1.5];
const $ = (sel) => /** @type {HTMLElement} */ (document.querySelector(sel));

const parsed = parseQuery(location.search);
const state = parsed.state;

/** What the panels draw; only the engine's replies write here. */
const view = {
  info: null,
  report: null,          // last StepReport
  distribution: null,    // what the distribution panels show (report's or a preview)
  chosen: null,          // the token drawn from `distribution`, if any
  beam: null, beamBusy: false,
  train: null, trainBusy: false,
  logitsEdited: false,   // the engine holds a vector other than the course's
  running: false,
  loading: false,
  ready: false,
};

let catalogue = { models: [], defaultName: "logits10", problem: null };
let controls = null;
let crashes = [];
/** Preview start times waiting for their paint (for __ntpPerf). */
let perfWaiting = [];

/** The rules on this thread, fed by the worker's reports. */
// <body data-local-preview> says whether slider moves are answered here
// (tests wait for it; the worker answers until then).
const local = new LocalPreviewer((ready) => { document.body.dataset.localPreview = String(ready); });

const client = new EngineClient(new URL("./worker.js", import.meta.url), {
  onProgress: showProgress,
  onFatal: recoverFromCrash,
  onEngineState: (msg) => {
    if (msg.vocab) local.setVocab(msg.vocab.text, msg.vocab.display, msg.module);
    if (msg.pending) local.setState(msg.pending);
  },
});

// ---------------------------------------------------------------- messages

/**
 * Show a message in the page's message area (never a dialog).
 * @param {string} text
 * @param {"error"|"info"} [kind]
 * @param {string} [key] replace the earlier message with the same key
 */
function say(text, kind = "error", key) {
  const box = $("#messages");
  let el = key ? box.querySelector(`[data-key="${key}"]`) : null;
  if (!el) {
    el = makeEl("div", { class: `message ${kind}`, role: kind === "error" ? "alert" : "status" });
    if (key) el.setAttribute("data-key", key);
    const close = makeEl("button", { type: "button", class: "mini", "aria-label": "dismiss" }, "×");
    close.addEventListener("click", () => el.remove());
    el.append(makeEl("span"), close);
    box.append(el);
  }
  el.className = `message ${kind}`;
  setText(el.firstElementChild, text);
}

/** @param {string} key */
function unsay(key) {
  $("#messages").querySelector(`[data-key="${key}"]`)?.remove();
}

/**
 * Report an engine error unless it only means "superseded".
 * @param {unknown} err
 */
function sayEngineError(err) {
  if (err instanceof EngineError && err.superseded) return;
  if (err instanceof EngineError && err.fatal) return; // recoverFromCrash says it
  say(err instanceof Error ? err.message : String(err), "error", "engine");
}

/**
 * @param {number} loaded
 * @param {number} total
 * @param {string} what
 */
function showProgress(loaded, total, what) {
  const bar = /** @type {HTMLProgressElement} */ ($("#load-progress"));
  bar.hidden = false;
  if (total) { bar.max = total; bar.value = loaded; } else bar.removeAttribute("value");
  setText($("#load-label"), `Loading ${what.split("/").pop()}: ${(loaded / 1e6).toFixed(1)}${total ? ` of ${(total / 1e6).toFixed(1)}` : ""} MB`);
}

function hideProgress() {
  $("#load-progress").hidden = true;
  setText($("#load-label"), "");
}

// ---------------------------------------------------------------- engine calls

/** Settings for the engine from the view state. */
function engineSettings() {
  return toEngineSettings(state.settings);
}

/** The catalogue entry of the current model. */
function currentModel() {
  return catalogue.models.find((m) => m.name === state.model);
}

/** The prompt in force (the model's default when the URL gave none). */
function currentPrompt() {
  return state.prompt ?? currentModel()?.prompt ?? "";
}

/** Load the current model, then replay prompt, settings and steps. */
async function loadModel() {
  const entry = currentModel();
  client.dropStale(); // an unfinished replay for the old model stops here
  local.invalidate(); // until the new model's vocabulary comes, previews go to the worker
  view.ready = false;
  view.beam = null;
  view.train = null;
  view.logitsEdited = false;
  view.loading = true;
  // Not ready from now on, at once (not at the next frame): a click in
  // between must not look like it was taken.
  document.body.dataset.ready = "false";
  setBusy(true);
  scheduleRender();
  let filesFailed = false;
  try {
    window.__ntpLoad.load_sent ??= performance.now();
    const msg = await client.request("load", { model: entry.source });
    window.__ntpLoad.ready ??= performance.now();
    window.__ntpLoad.worker ??= msg.timings;
    view.info = msg.info;
    view.ready = true;
    controls.setVocab(msg.info.vocab_size);
    unsay("engine");
    await replay();
  } catch (err) {
    sayEngineError(err);
    // A trained model whose files are missing or rejected: fall back to a
    // built-in model so the page stays usable (the message above says why).
    filesFailed = !view.ready && entry !== undefined && !("builtin" in entry.source);
  } finally {
    hideProgress();
    view.loading = false;
    setBusy(false);
    showModelPanel();
    scheduleRender();
  }
  if (filesFailed) {
    say(`Could not load “${entry.title}”; showing the course's ten-logit model instead. Pick another model in the Model panel.`, "error", "fallback");
    state.model = "logits10";
    state.prompt = null;
    showModelPanel();
    updateUrl();
    await loadModel();
  }
}

/**
 * Start from the prompt and regenerate state.steps tokens with the current
 * settings and seed (same seed, same text).
 */
async function replay() {
  client.dropStale();
  const wantNext = state.next; // takeReport below overwrites it
  view.beam = null;
  // The engine keeps an edited vector until told otherwise, so going back to
  // the course's values must be sent too.
  if (state.model === "logits10" && (state.logits || view.logitsEdited)) {
    await client.request("set_logits", { logits: state.logits ?? COURSE_LOGITS, prompt: currentPrompt(), settings: engineSettings() });
    view.logitsEdited = state.logits !== null;
  }
  let msg;
  try {
    msg = await client.request("reset", { prompt: currentPrompt(), settings: engineSettings() });
  } catch (err) {
    view.report = null;
    view.distribution = null;
    throw err;
  }
  takeReport(msg.report);
  window.__ntpLoad.first_report ??= performance.now();
  window.__ntpLoad.prefill_ms ??= msg.ms;
  for (let i = 0; i < state.steps; i++) {
    msg = await client.request("step", { settings: engineSettings() });
    takeReport(msg.report);
    if (msg.report.stop) break;
  }
  state.steps = view.report.generated.length;
  // The link said the panels showed the next token's distribution.
  if (wantNext && view.chosen) await doPreview();
  updateUrl();
  renderChips(); // token names for bans/biases from the URL are known now
  scheduleBeam();
}

/**
 * Adopt a StepReport as the current view.
 * @param {any} report
 */
function takeReport(report) {
  localPreviewWanted = false; // the report is newer than a preview still waiting for its frame
  view.userStopped = false;
  state.next = !report.chosen;
  view.report = report;
  view.distribution = report.distribution;
  view.chosen = report.chosen ? { ...report.chosen } : null;
  scheduleRender();
}

/** One token. */
async function doStep() {
  if (!view.ready || view.running) return;
  try {
    const msg = await client.request("step", { settings: engineSettings() });
    takeReport(msg.report);
    state.steps = msg.report.generated.length;
    updateUrl();
    scheduleBeam();
  } catch (err) { sayEngineError(err); }
}

/** Run until a stop condition or the Stop button. */
async function doRun() {
  if (!view.ready) return;
  if (view.running) {
    // A stop always settles: the worker answers when the loop has ended.
    try { await client.request("stop"); } catch (err) { sayEngineError(err); }
    return;
  }
  view.running = true;
  view.userStopped = false;
  scheduleRender();
  try {
    const end = await client.request("run", { settings: engineSettings() }, (msg) => {
      takeReport(msg.report);
      state.steps = msg.report.generated.length;
    });
    view.userStopped = end.why === "stopped";
  } catch (err) { sayEngineError(err); }
  view.running = false;
  updateUrl();
  scheduleRender();
  scheduleBeam();
}

/**
 * Keep only the first n generated tokens; the distribution shown is the one
 * token n was drawn from.
 * @param {number} n
 */
async function doRewind(n) {
  if (!view.ready || view.running || n < 0) return;
  try {
    const msg = await client.request("rewind", { n, settings: engineSettings() });
    takeReport(msg.report);
    state.steps = msg.report.generated.length;
    updateUrl();
    scheduleBeam();
  } catch (err) { sayEngineError(err); }
}

/** Back to the prompt. */
async function doReset() {
  if (!view.ready) { crashes = []; state.steps = 0; loadModel(); return; }
  if (view.running) await client.request("stop").catch(() => {});
  state.steps = 0;
  try { await replay(); } catch (err) { sayEngineError(err); }
}

/**
 * Re-run the rules on the pending logits (no model call) and repaint: on this
 * thread when the local Previewer holds the worker's state, else in the worker.
 * @param {number} [startedAt] the input event's timeStamp
 */
async function doPreview(startedAt) {
  if (!view.ready || !view.report) return;
  if (local.ready) {
    // A run draws its next tokens with the new rules: the worker must hear of them.
    if (view.running) client.preview(engineSettings()).catch(() => {});
    previewHere(startedAt);
    return;
  }
  try {
    const msg = await client.preview(engineSettings());
    if (!msg) return; // superseded by a newer preview
    showPreview(msg.distribution, "worker");
    if (startedAt !== undefined) perfWaiting.push(startedAt);
    scheduleRender();
  } catch (err) { sayEngineError(err); }
}

/**
 * A preview's Distribution becomes the view.
 * @param {any} distribution
 * @param {"local"|"worker"} source
 */
function showPreview(distribution, source) {
  // <body data-preview-source>: which thread computed the numbers shown (tests read it).
  document.body.dataset.previewSource = source;
  view.distribution = distribution;
  view.chosen = null;
  if (!state.next) { state.next = true; updateUrl(); }
}

/** A local preview waits for renderAll (set when the paint is coalesced into a frame). */
let localPreviewWanted = false;
/** Milliseconds of synchronous preview painting in the current frame. */
let frameWorkMs = 0;
let frameWorkResetQueued = false;
/**
 * Past this much synchronous painting in one frame, further moves in that
 * frame are coalesced into one paint at the next frame (a keyboard repeat or
 * a dragged slider can fire several inputs per frame on a large vocabulary).
 */
const SYNC_PAINT_BUDGET_MS = 8;

/**
 * Preview on this thread: paint in this input task, unless this frame has
 * already spent its budget on earlier moves.
 * @param {number} [startedAt]
 */
function previewHere(startedAt) {
  if (startedAt !== undefined) perfWaiting.push(startedAt);
  localPreviewWanted = true;
  if (frameWorkMs > SYNC_PAINT_BUDGET_MS) { scheduleRender(); return; }
  const t0 = performance.now();
  // Only the panels a preview changes, unless a full repaint is due anyway.
  renderAll({ previewOnly: !renderQueued });
  frameWorkMs += performance.now() - t0;
  if (!frameWorkResetQueued) {
    frameWorkResetQueued = true;
    requestAnimationFrame(() => { frameWorkMs = 0; frameWorkResetQueued = false; });
  }
}

/** Run the waiting local preview into the view (a bad setting is said, the old numbers stay). */
function takeLocalPreview() {
  localPreviewWanted = false;
  if (!local.ready) return;
  try {
    showPreview(local.preview(engineSettings()), "local");
  } catch (err) { sayEngineError(err); }
}

let beamTimer = 0;
/** Beam search from the current state, when its panel is shown. */
function scheduleBeam() {
  if (!state.panels.includes("beam") || view.running) return;
  clearTimeout(beamTimer);
  beamTimer = setTimeout(doBeam, 150);
}

async function doBeam() {
  if (!view.ready || view.running) return;
  view.beamBusy = true;
  scheduleRender();
  try {
    const msg = await client.request("beam", { settings: toEngineSettings(state.settings, { beam: true }) });
    view.beam = msg.beam;
  } catch (err) { sayEngineError(err); }
  view.beamBusy = false;
  scheduleRender();
}

/**
 * The engine died (a Rust panic). The client has started a fresh worker:
 * reload the model and replay; the prompt and settings live in `state`, so
 * nothing the user typed is lost.
 * @param {string} message
 * @param {boolean} crashed false when the engine could not start at all
 */
function recoverFromCrash(message, crashed) {
  if (!crashed) {
    view.running = false;
    view.ready = false;
    say(message, "error", "crash");
    scheduleRender();
    return;
  }
  const now = Date.now();
  crashes = crashes.filter((t) => now - t < 30000);
  crashes.push(now);
  view.running = false;
  view.ready = false;
  local.invalidate(); // the new worker sends its vocabulary again
  const text = `The engine hit an internal error (${message})`;
  if (crashes.length > 2) {
    say(`${text} again while restoring. Your prompt and settings are kept: change a setting and press Reset, or pick another model.`, "error", "crash");
    scheduleRender();
    return;
  }
  if (crashes.length === 2) {
    // Replaying the same tokens crashed again: restore the prompt only.
    state.steps = 0;
    say(`${text}. The engine was restarted with your prompt and settings (the generated tokens were dropped).`, "error", "crash");
  } else {
    say(`${text}. The engine was restarted with your prompt and settings.`, "error", "crash");
  }
  loadModel();
}

// ---------------------------------------------------------------- state changes

let urlQueued = false;
let lastUrlWrite = -Infinity;
/**
 * history.replaceState costs milliseconds in Chromium (a CPU profile of slider
 * moves showed it inside the frame that should paint the move), so the URL is
 * written after the frame's paint and at most this often while a slider is
 * dragged; the last state is always written.
 */
const URL_INTERVAL_MS = 100;
/** Mirror the state in the URL. <body data-url-pending> is set until it is written (tests wait for it). */
function updateUrl() {
  if (urlQueued) return;
  urlQueued = true;
  document.body.dataset.urlPending = "true";
  requestAnimationFrame(() => {
    const wait = Math.max(0, lastUrlWrite + URL_INTERVAL_MS - performance.now());
    setTimeout(() => {
      urlQueued = false;
      lastUrlWrite = performance.now();
      history.replaceState(null, "", `${location.pathname}${formatQuery(state)}${location.hash}`);
      delete document.body.dataset.urlPending;
      const code = /** @type {HTMLTextAreaElement} */ ($("#embed-code"));
      if (code && !code.hidden) code.value = embedCode();
    }, wait);
  });
}

/** Keys whose change needs the model to run again, not just the rules. */
const REPLAY_KEYS = new Set(["use_cache", "seed"]);
const BEAM_KEYS = new Set(["beams", "alpha", "beam_len"]);
const NO_PREVIEW_KEYS = new Set(["max_new", "stop", "bias_amount", ...BEAM_KEYS]);

/**
 * A control moved to a valid value.
 * @param {string} key
 * @param {any} value
 * @param {number} startedAt
 */
function onSetting(key, value, startedAt) {
  state.settings[key] = value;
  updateUrl();
  // A move previewed on this thread paints at once; anything else paints next frame.
  if (!(local.ready && view.ready && view.report) || NO_PREVIEW_KEYS.has(key) || REPLAY_KEYS.has(key)) scheduleRender();
  if (REPLAY_KEYS.has(key)) { if (!view.running) replay().catch(sayEngineError); return; }
  if (BEAM_KEYS.has(key)) { scheduleBeam(); return; }
  if (NO_PREVIEW_KEYS.has(key)) return;
  doPreview(startedAt);
}

/**
 * Ban or unban a token from the distribution panel.
 * @param {number} id
 */
function toggleBan(id) {
  const s = state.settings;
  s.banned = s.banned.includes(id) ? s.banned.filter((x) => x !== id) : [...s.banned, id];
  afterListChange();
}

/**
 * Add (or remove) the chosen bias on a token.
 * @param {number} id
 */
function toggleBias(id) {
  const s = state.settings;
  s.logit_bias = s.logit_bias.some(([i]) => i === id)
    ? s.logit_bias.filter(([i]) => i !== id)
    : [...s.logit_bias, [id, s.bias_amount]];
  afterListChange();
}

function afterListChange() {
  updateUrl();
  renderChips();
  doPreview(performance.now());
}

/** Token text for an id, from whatever the reports have shown. */
function displayOf(id) {
  const lists = [view.distribution?.raw_top ?? [], view.report?.generated ?? [], view.report?.prompt_tokens ?? []];
  for (const list of lists) { const t = list.find((x) => x.id === id); if (t) return t.display; }
  return `#${id}`;
}

/** The chips of banned and biased tokens (each removable). */
function renderChips() {
  const box = $("#ctl-chips");
  if (!box) return;
  const chips = [
    ...state.settings.banned.map((id) => ({ id, text: `banned ${displayOf(id)}`, remove: () => toggleBan(id) })),
    ...state.settings.logit_bias.map(([id, b]) => ({ id, text: `${displayOf(id)} ${b > 0 ? "+" : ""}${b}`, remove: () => toggleBias(id) })),
  ];
  box.replaceChildren(...chips.map((c) => {
    const b = makeEl("button", { type: "button", class: "chip", "aria-label": `remove: ${c.text}` }, `${c.text} ×`);
    b.addEventListener("click", c.remove);
    return b;
  }));
  if (!chips.length) box.append(makeEl("span", { class: "help" }, "none"));
}

// ---------------------------------------------------------------- painting

let renderQueued = false;
/** Repaint on the next animation frame (many updates, one paint). */
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  // A synchronous renderAll in between has done this frame's work already.
  requestAnimationFrame(() => { if (renderQueued) renderAll(); });
}

/**
 * Paint every visible panel from `view`.
 * @param {{ previewOnly?: boolean }} [opts] previewOnly: only the panels a
 *   preview changes (distribution, rules, entropy); the output, KV cache and
 *   beam panels draw from the report and the beam search, which it leaves alone
 */
function renderAll({ previewOnly = false } = {}) {
  renderQueued = false;
  if (localPreviewWanted) takeLocalPreview();
  const shown = new Set(state.panels);
  const d = view.distribution;
  const r = view.report;
  if (shown.has("output") && !previewOnly) {
    renderOutput($("#p-output .body"), {
      promptTokens: r?.prompt_tokens ?? [], generated: r?.generated ?? [],
      shownStep: null, stop: r?.stop ?? (view.userStopped ? "user" : null), running: view.running,
    });
  }
  if (shown.has("dist")) {
    renderDist($("#p-dist .body"), {
      distribution: d, chosen: view.chosen,
      banned: new Set(state.settings.banned), bias: new Map(state.settings.logit_bias),
    });
  }
  if (shown.has("rules")) renderRules($("#p-rules .body"), { distribution: d, order: state.settings.order });
  if (shown.has("entropy")) {
    renderEntropy($("#p-entropy .body"), { distribution: d, temperature: state.settings.temperature,
      vocabSize: view.info?.vocab_size ?? 2 });
  }
  if (shown.has("kv") && !previewOnly) {
    renderKv($("#p-kv .body"), { kv: r?.kv ?? null, counters: r?.counters ?? null,
      cacheCheck: r?.cache_check ?? null, useCache: state.settings.use_cache });
  }
  if (shown.has("beam") && !previewOnly) renderBeam($("#p-beam .body"), { beam: view.beam, busy: view.beamBusy });
  if (state.model === "bigram-abc" && !previewOnly) renderTrain($("#train-result"), { result: view.train, busy: view.trainBusy });

  setText($("#btn-run"), view.running ? "Stop" : "Run");
  $("#btn-run").setAttribute("aria-pressed", String(view.running));
  for (const id of ["#btn-step", "#btn-back"]) {
    /** @type {HTMLButtonElement} */ ($(id)).disabled = !view.ready || view.running;
  }
  // After a stop condition the engine refuses to go on: only Step back
  // (or clicking a token) and Reset make sense.
  const stopped = !!r?.stop;
  if (stopped) /** @type {HTMLButtonElement} */ ($("#btn-step")).disabled = true;
  /** @type {HTMLButtonElement} */ ($("#btn-run")).disabled = (!view.ready || stopped) && !view.running;

  // Reset stays available after a crash: it reloads the model.
  /** @type {HTMLButtonElement} */ ($("#btn-reset")).disabled = view.loading || view.running;
  /** @type {HTMLButtonElement} */ ($("#btn-back")).disabled ||= !(r?.generated?.length);
  setText($("#model-facts"), view.info ? describeModel(view.info) : "");

  // The DOM holds the new numbers now; the next animation frame paints them.
  // Its style, layout and paint run right after its rAF callbacks, so a
  // message posted from one is handled once that frame is painted.
  if (perfWaiting.length) {
    const starts = perfWaiting;
    perfWaiting = [];
    requestAnimationFrame(() => {
      const frameStart = performance.now();
      for (const t of starts) window.__ntpPerf.push(frameStart - t);
      afterThisFrame(() => {
        const now = performance.now();
        for (const t of starts) window.__ntpPerfPainted.push(now - t);
      });
    });
  }
  document.body.dataset.ready = String(view.ready && !!view.report);
  if (view.ready && view.report) window.__ntpLoad.first_render ??= performance.now();
}

/**
 * Run `fn` in the first task after the current frame's rendering (call it
 * from a requestAnimationFrame callback).
 * @param {() => void} fn
 */
function afterThisFrame(fn) {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => { channel.port1.close(); fn(); };
  channel.port2.postMessage(null);
}

/**
 * @param {any} info ModelInfo
 * @returns {string}
 */
function describeModel(info) {
  const parts = [`${info.name}`, `${info.vocab_size} tokens`];
  if (info.kind === "transformer" || info.kind === "kv-demo") {
    parts.push(`${info.layers} layers`, `${info.heads} heads (${info.kv_heads} KV)`, `d = ${info.d_model}`,
      `context ${info.context}`);
  }
  if (info.params) parts.push(`${info.params.toLocaleString("en-US")} parameters`);
  if (info.backend && info.backend !== "none") parts.push(`backend ${info.backend}`);
  return parts.join(" · ");
}

/** Show the editors that belong to the current model. */
function showModelPanel() {
  const entry = currentModel();
  setText($("#model-blurb"), entry?.blurb ?? "");
  $("#logits-editor").hidden = state.model !== "logits10";
  $("#bigram-tools").hidden = state.model !== "bigram-abc";
  if (state.model === "logits10") fillLogitsEditor();
  /** @type {HTMLSelectElement} */ ($("#model-select")).value = state.model;
  /** @type {HTMLTextAreaElement} */ const prompt = $("#prompt");
  if (document.activeElement !== prompt) prompt.value = currentPrompt();
}

/** @param {boolean} busy */
function setBusy(busy) {
  document.body.classList.toggle("busy", busy);
}

// ---------------------------------------------------------------- the logits editor

function fillLogitsEditor() {
  const box = $("#logits-inputs");
  const values = state.logits ?? COURSE_LOGITS;
  if (box.children.length !== 10) {
    box.replaceChildren();
    for (let i = 0; i < 10; i++) {
      const id = `logit-${i}`;
      const cell = makeEl("div", { class: "logit" });
      const input = makeEl("input", { type: "number", id, step: "0.1", min: "-1000", max: "1000" });
      cell.append(makeEl("label", { for: id }, `z${i + 1}`), input);
      box.append(cell);
    }
  }
  box.querySelectorAll("input").forEach((input, i) => {
    if (document.activeElement !== input) /** @type {HTMLInputElement} */ (input).value = String(values[i]);
  });
}

async function applyLogits() {
  const inputs = [...$("#logits-inputs").querySelectorAll("input")];
  const values = inputs.map((el) => Number(/** @type {HTMLInputElement} */ (el).value));
  const bad = values.findIndex((v, i) => !Number.isFinite(v) || Math.abs(v) > 1000 || /** @type {HTMLInputElement} */ (inputs[i]).value.trim() === "");
  if (bad >= 0) { setText($("#logits-msg"), `z${bad + 1} must be a number between −1000 and 1000; not applied`); return; }
  setText($("#logits-msg"), "");
  state.logits = values.every((v, i) => v === COURSE_LOGITS[i]) ? null : values;
  updateUrl();
  try { await replay(); } catch (err) { sayEngineError(err); }
}

async function retrainBigram() {
  view.trainBusy = true;
  scheduleRender();
  try {
    // Seed 18, as lesson 18, so the curve matches the course.
    const msg = await client.request("train", { steps: 600, seed: 18 });
    view.train = msg.result;
    await replay();
  } catch (err) { sayEngineError(err); }
  view.trainBusy = false;
  scheduleRender();
}

// ---------------------------------------------------------------- embedding

/** The iframe snippet for the current view. */
function embedCode() {
  const src = `${location.origin}${location.pathname}${formatQuery({ ...state, embed: true })}`;
  const attr = src.replace(/&/g, "&amp;").replace(/"/g, "&quot;");
  return `<iframe src="${attr}" width="720" height="640" style="border:0" title="Next-token playground" loading="lazy"></iframe>`;
}

async function copyEmbed() {
  const code = /** @type {HTMLTextAreaElement} */ ($("#embed-code"));
  code.hidden = false;
  code.value = embedCode();
  code.select();
  try {
    await navigator.clipboard.writeText(code.value);
    setText($("#embed-msg"), "Copied to the clipboard.");
  } catch {
    setText($("#embed-msg"), "Select the code above and copy it (the clipboard is not available here).");
  }
}

// ---------------------------------------------------------------- wiring

/** Apply the panel list to the page. */
function showPanels() {
  for (const key of PANEL_KEYS) {
    const el = document.getElementById(`p-${key}`);
    // Outside embed mode the model panel stays: it holds the panel switches.
    if (el) el.hidden = !state.panels.includes(key) && !(key === "model" && !state.embed);
    const cb = /** @type {HTMLInputElement|null} */ (document.getElementById(`show-${key}`));
    if (cb) cb.checked = state.panels.includes(key);
  }
}

function wire() {
  $("#btn-step").addEventListener("click", doStep);
  $("#btn-run").addEventListener("click", doRun);
  $("#btn-reset").addEventListener("click", doReset);
  $("#btn-back").addEventListener("click", () => doRewind((view.report?.generated.length ?? 0) - 1));

  // Clicking (or Enter on) a generated token rewinds to the step that drew it.
  const out = $("#p-output .body");
  const rewindFrom = (target) => {
    const tok = /** @type {HTMLElement} */ (target).closest?.("[data-action=rewind]");
    if (tok) doRewind(Number(tok.getAttribute("data-step")));
  };
  out.addEventListener("click", (e) => rewindFrom(e.target));
  out.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); rewindFrom(e.target); } });

  $("#p-dist .body").addEventListener("click", (e) => {
    const b = /** @type {HTMLElement} */ (e.target).closest?.("button[data-action]");
    if (!b) return;
    const id = Number(b.getAttribute("data-id"));
    if (b.getAttribute("data-action") === "ban") toggleBan(id); else toggleBias(id);
  });

  let promptTimer = 0;
  $("#prompt").addEventListener("input", () => {
    clearTimeout(promptTimer);
    promptTimer = setTimeout(async () => {
      state.prompt = /** @type {HTMLTextAreaElement} */ ($("#prompt")).value;
      state.steps = 0;
      updateUrl();
      if (view.running) await client.request("stop").catch(() => {});
      try { await replay(); unsay("engine"); } catch (err) { sayEngineError(err); }
    }, 300);
  });

  $("#model-select").addEventListener("change", () => {
    state.model = /** @type {HTMLSelectElement} */ ($("#model-select")).value;
    state.prompt = null;
    state.steps = 0;
    state.logits = null;
    updateUrl();
    showModelPanel();
    loadModel();
  });
  $("#logits-apply").addEventListener("click", applyLogits);
  $("#logits-course").addEventListener("click", () => { state.logits = null; fillLogitsEditor(); applyLogits(); });
  $("#bigram-retrain").addEventListener("click", retrainBigram);
  const cacheBox = /** @type {HTMLInputElement} */ ($("#ctl-use_cache"));
  cacheBox.checked = state.settings.use_cache;
  cacheBox.addEventListener("change", () => onSetting("use_cache", cacheBox.checked, performance.now()));
  $("#btn-embed").addEventListener("click", copyEmbed);

  for (const key of PANEL_KEYS) {
    const cb = document.getElementById(`show-${key}`);
    cb?.addEventListener("change", () => {
      state.panels = PANEL_KEYS.filter((k) => /** @type {HTMLInputElement} */ (document.getElementById(`show-${k}`))?.checked);
      showPanels();
      updateUrl();
      scheduleRender();
      scheduleBeam();
    });
  }

  for (const panel of document.querySelectorAll("section.panel")) {
    const name = panel.id.replace(/^p-/, "");
    const bar = panel.querySelector(".fig-buttons");
    if (!bar) continue;
    const svg = makeEl("button", { type: "button", class: "mini", "aria-label": `save the ${name} panel as SVG` }, "SVG");
    const png = makeEl("button", { type: "button", class: "mini", "aria-label": `save the ${name} panel as PNG` }, "PNG");
    svg.addEventListener("click", () => savePanelSvg(/** @type {HTMLElement} */ (panel), `next-token-${name}`));
    png.addEventListener("click", () => savePanelPng(/** @type {HTMLElement} */ (panel), `next-token-${name}`).catch((e) => say(`PNG: ${e.message}`)));
    bar.append(svg, png);
  }
}

/**
 * For pkg-scripts/bench-page.mjs only (the page never calls it): give this
 * thread's Previewer a synthetic vocabulary and logits, so slider moves are
 * measured through the real panels at a real model's vocabulary size. The
 * worker's model is untouched; reloading the page undoes it.
 * @param {string[]} text
 * @param {string[]} display
 * @param {{ logits: Float64Array, history: Uint32Array, position: number }} pending
 */
export async function benchWithSyntheticVocabulary(text, display, pending) {
  await local.setVocab(text, display);
  local.setState(pending);
  if (!local.ready) throw new Error("the synthetic state was refused");
}

async function boot() {
  // The worker compiles the engine while this thread reads the catalogue.
  client.startWorker();
  const cataloguePromise = loadCatalogue(new URL("./models/", import.meta.url).href); // read while the controls are built
  document.body.classList.toggle("embed", state.embed);
  for (const p of parsed.problems) say(p, "error");
  controls = buildControls($("#p-controls .body"), state.settings, onSetting);
  wire();
  showPanels();
  renderChips();

  window.__ntpLoad.controls = performance.now();
  catalogue = await cataloguePromise;
  window.__ntpLoad.catalogue = performance.now();
  if (catalogue.problem && (state.model === null || !catalogue.models.some((m) => m.name === state.model))) {
    say(catalogue.problem, "info", "catalogue");
  }
  const select = /** @type {HTMLSelectElement} */ ($("#model-select"));
  select.replaceChildren(...catalogue.models.map((m) => makeEl("option", { value: m.name }, m.title)));
  if (state.model !== null && !catalogue.models.some((m) => m.name === state.model)) {
    say(`model=${state.model} is not available; using ${catalogue.defaultName}`, "error");
    state.model = null;
  }
  state.model ??= catalogue.defaultName;
  if (state.logits && state.model !== "logits10") state.logits = null;
  showModelPanel();
  updateUrl();
  await loadModel();
}

boot();
