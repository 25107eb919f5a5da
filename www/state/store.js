//# allFunctionsCalledOnLoad
// What the page knows, and the one place it changes: the view state
// (mirrored in the URL), what the panels draw (from the engine's replies),
// and the model catalogue. Other modules read `state`, `view` and
// `catalogue` and change them only through the functions below
// (tests/e2e/page-structure.test.mjs checks that no other module writes
// them). The few parts of the page drawn outside the panels' frame (the model
// panel, the form's fields) follow a change by `subscribe`, called by
// themselves; nothing is wired in from outside.
// Over 400 lines because it is the one writer: each change the page makes is
// a small named function here, and splitting them would spread the writers.

import { parseQuery } from "./url.js";
import { toEngineSettings } from "./settings.js";
import { makeSpeed, takeTiming } from "./speed.js";

/** The URL as opened: the view state and what was wrong with it. */
export const parsed = parseQuery(location.search);
/** The view state (model, prompt, settings, panels, steps...): what a link reproduces. */
export const state = parsed.state;

/** What the panels draw; the engine's replies decide it. */
export const view = {
  info: null,
  report: null,          // last StepReport (what its request changed: a step's token, or the whole transcript)
  transcript: emptyTranscript(),   // every token so far and their text, kept from the reports (takeTranscript)
  distribution: null,    // what the distribution panels show (report's or a preview)
  chosen: null,          // the token drawn from `distribution`, if any
  previewShown: false,   // `distribution` is a preview not painted yet
  beam: null, beamBusy: false, beamProgress: null,
  beamEstimateMs: null,  // set when a search would take this long: the panel offers a button instead of searching
  stepMs: null,          // the worker's time for the last decode step
  speed: makeSpeed(),    // the engine's prefill and decode timings since the last prompt (state/speed.js)
  train: null, trainBusy: false,
  score: null, scoreBusy: false, scoreSelected: null,   // the score panel's report, and the token whose details show
  logitsEdited: false,   // the engine holds a vector other than the course's
  inside: null,          // the InsideReport of the distribution shown (null while the inside panel is closed)
  insideLens: null,      // the latest InsideReport with a logit lens: inside itself, or during a run an earlier one
  insideFocus: { layer: 0, head: 0 },   // the inside panel's chosen layer and query head
  insideHover: null,     // { layer, head } under the pointer, shown instead of the focus while there
  compare: emptyCompare(),   // the compare panel: its sides read, the next token under both, the runs
  threads: null,         // the threads in force, as the engine's worker last said: { threads, wanted, max, isolated, reason }
                         // (PROTOCOL.md's `threads` reply); null until it has
  running: false,
  userStopped: false,
  loading: false,
  ready: false,
};

/**
 * The page's copy of the engine's tokens and text: a report's `full`
 * replaces it, a step's token and `text_delta` extend it.
 * @returns {{ promptTokens: any[], generated: any[], text: string }}
 */
function emptyTranscript() {
  return { promptTokens: [], generated: [], text: "" };
}

/**
 * The compare panel's view: each side as read (its settings, how the engine
 * read its text, what its defaults filled in, its notes, or why it was
 * refused), the next token under both configurations (Previewer.compare),
 * and the runs of continuations in the worker.
 */
function emptyCompare() {
  return {
    sides: { a: null, b: null },
    sidesKey: "",      // what runs of the sides as they are now would be computed from (a run's asked.key)
    step: null,        // Previewer.compare's report for the pending position
    stepProblem: null, // why there is none: a side refused, or the engine on this thread not ready
    run: { busy: false, progress: null, result: null, ended: null, asked: null },
  };
}

/** The model catalogue (models/index.json and the built-in models), filled at boot. */
export const catalogue = { models: [], defaultName: "logits10", problem: null };

/** The name a model opened from disk has in the picker (never in a link). */
export const FILE_MODEL = "file";

/** Settings for the engine from the view state. */
export function engineSettings() {
  return toEngineSettings(state.settings);
}

/** The catalogue entry of the current model. */
export function currentModel() {
  return catalogue.models.find((m) => m.name === state.model);
}

/** The prompt in force (the model's default when the URL gave none; in chat mode its chat prompt). */
export function currentPrompt() {
  const entry = currentModel();
  return state.prompt ?? (state.settings.chat ? entry?.chatPrompt : undefined) ?? entry?.prompt ?? "";
}

// ---- Who follows a change drawn outside the panels' frame ----

/**
 *   model     the current model, its info or the catalogue changed (the picker,
 *             the model panel, top-k's range, the score box follow)
 *   settings  settings changed by something other than the form (the form shows them)
 *   inside    a new InsideReport (the "where the answer forms" lesson reads its lens)
 *   threads   the engine said how many threads it uses (the threads control says it too)
 * @typedef {"model"|"settings"|"inside"|"threads"} Topic
 */
/** @type {Map<Topic, (() => void)[]>} */
const followers = new Map();

/**
 * @param {Topic} topic
 * @param {() => void} fn called after each change of that kind
 */
export function subscribe(topic, fn) {
  if (!followers.has(topic)) followers.set(topic, []);
  followers.get(topic).push(fn);
}

/** @param {Topic} topic */
function changed(topic) {
  for (const fn of followers.get(topic) ?? []) fn();
}

// ---- The view state: what the user changes (controls/) ----

/**
 * A setting the form changed (the form shows it already).
 * @param {string} key @param {any} value
 */
export function setSetting(key, value) {
  state.settings[key] = value;
}

/**
 * Settings changed from outside the form (chat mode clearing the stop
 * string): the form is told.
 * @param {Record<string, any>} values
 */
export function replaceSettings(values) {
  Object.assign(state.settings, values);
  changed("settings");
}

/** @param {string} text a new prompt: generation starts again from it */
export function setPrompt(text) {
  state.prompt = text;
  state.steps = 0;
}

/** @param {number} n how many tokens a replay regenerates */
export function setSteps(n) {
  state.steps = n;
}

/** @param {string[]} panels the panels shown */
export function setPanels(panels) {
  state.panels = panels;
}

/**
 * One side of the compare panel becomes this configuration (the link says it).
 * @param {"a"|"b"} which
 * @param {import("./url.js").CompareSide} side
 */
export function setCompareSide(which, side) {
  state.compare[which] = { dialect: side.dialect, text: side.text };
}

/** @param {number[]|null} logits lesson 21's vector as edited (null: the course's) */
export function setLogits(logits) {
  state.logits = logits;
}

/** @param {string|null} kv the KV cache's number type (null: the model's default) */
export function setKv(kv) {
  state.kv = kv;
}

/** @param {"auto"|number} want the engine's threads asked for (state/threads.js) */
export function setThreads(want) {
  state.threads = want;
}

/** Forget the model opened from disk (another model was picked). */
function dropFileModel() {
  const i = catalogue.models.findIndex((m) => m.name === FILE_MODEL);
  if (i >= 0) catalogue.models.splice(i, 1);
  state.file = null;
}

/**
 * Another model, with its own default prompt, from no generated token.
 * @param {string} name
 */
export function pickModel(name) {
  if (name !== FILE_MODEL && state.file) dropFileModel();
  state.model = name;
  state.prompt = null;
  state.steps = 0;
  state.logits = null;
  changed("model");
}

/**
 * A model that could not be loaded gives way to `name`.
 * @param {string} name
 */
export function fallBackTo(name) {
  state.model = name;
  state.prompt = null;
  state.file = null;
  changed("model");
}

/**
 * A GGUF file from the user's disk is loaded: it becomes the current model,
 * with an entry of its own in the picker (until another model is picked).
 * @param {string} name the file's name
 * @param {any} info ModelInfo
 */
export function adoptFileModel(name, info) {
  dropFileModel();
  catalogue.models.push({
    name: FILE_MODEL, title: `Your file: ${name}`,
    blurb: `Opened from your disk: it never leaves this browser, and a link to this page does not include it.${info.quant ? ` Weights: ${info.quant}.` : ""}`,
    prompt: "Once upon a time", chatPrompt: "Tell me a short story about a robot.", chat: !!info.chat,
    source: { file: name },
  });
  state.model = FILE_MODEL;
  state.file = { name };
  state.prompt = null;
  state.steps = 0;
  state.logits = null;
  changed("model");
}

/**
 * The catalogue is read: the model to start with is the link's when the
 * catalogue has it, else the default.
 * @param {{ models: any[], defaultName: string, problem: string|null }} read
 * @returns {string|null} the link's model when it is not available (the page says so)
 */
export function takeCatalogue(read) {
  Object.assign(catalogue, read);
  let unavailable = null;
  if (state.model !== null && !catalogue.models.some((m) => m.name === state.model)) {
    unavailable = state.model;
    state.model = null;
  }
  state.model ??= catalogue.defaultName;
  if (state.logits && state.model !== "logits10") state.logits = null;
  changed("model");
  return unavailable;
}

/**
 * A lesson's preset view (lessons/), before the page boots.
 * @param {object} fresh a whole view state (parseQuery's)
 */
export function applyLessonView(fresh) {
  Object.assign(state, fresh);
}

/** ?lesson= named no lesson. */
export function forgetLesson() {
  state.lesson = null;
}

// ---- What the panels draw: the engine's replies (engine/) ----

/** A model starts loading: nothing of the old one is ready. */
export function loadStarted() {
  view.ready = false;
  view.loading = true;
}

/**
 * The engine holds a new model. A chat link opened on a model without a chat
 * template falls back to plain continuation.
 * @param {any} info ModelInfo
 * @returns {boolean} chat mode was turned off
 */
export function modelReady(info) {
  view.info = info;
  view.ready = true;
  const chatDropped = state.settings.chat && !info.chat;
  if (chatDropped) state.settings.chat = false;
  changed("model");
  if (chatDropped) changed("settings");
  return chatDropped;
}

/** A load (of a catalogue model or a file) has ended, either way. */
export function loadSettled() {
  view.loading = false;
  changed("model");
}

/** @param {boolean} ready whether the engine takes requests (a file it refused leaves the old model) */
export function setReady(ready) {
  view.ready = ready;
}

/** The engine died: nothing runs, nothing is ready until the model is back, and its threads are its successor's to say. */
export function engineDied() {
  view.running = false;
  view.ready = false;
  view.threads = null;
  changed("threads");
}

/**
 * What the engine's worker said of its threads (a `threads` reply).
 * @param {{ threads: number, wanted: number, max: number, isolated: boolean, reason: string|null }} reply
 */
export function takeThreads(reply) {
  const { threads, wanted, max, isolated, reason } = reply;
  view.threads = { threads, wanted, max, isolated, reason };
  changed("threads");
}

/** What was drawn for the previous model (beam tree, bigram training, score report, speed, the inside). */
export function forgetModelViews() {
  view.beam = null;
  view.beamEstimateMs = null;
  view.stepMs = null;
  view.speed = makeSpeed();
  view.train = null;
  view.score = null;
  view.scoreSelected = null;
  view.logitsEdited = false;
  view.inside = null;
  view.insideLens = null;
  view.insideFocus = { layer: 0, head: 0 };
  view.insideHover = null;
  view.compare = emptyCompare();
}

/** @param {boolean} edited the engine holds a vector other than the course's */
export function setLogitsEdited(edited) {
  view.logitsEdited = edited;
}

/** A replay starts: the old beam tree no longer belongs to the text. */
export function replayStarted() {
  view.beam = null;
}

/** The engine refused the prompt: nothing to draw. */
export function clearReport() {
  view.report = null;
  view.distribution = null;
  view.transcript = emptyTranscript();
}

/**
 * What a step reply changed in the engine's tokens, taken from every step
 * reply in the order the worker sent them, stale or not (engine/link.js):
 * the engine's tokens changed either way, and a step carries only its own
 * token. A `full` transcript (a prompt, a rewind) replaces the copy.
 * @param {any} report a StepReport
 */
export function takeTranscript(report) {
  const t = view.transcript;
  if (report.full) {
    view.transcript = { promptTokens: report.full.prompt_tokens, generated: report.full.generated, text: report.full.text };
  } else if (report.chosen) {
    t.generated.push(report.chosen);
    t.text += report.text_delta;
  }
}

/**
 * A step reply's StepReport becomes the view, and its timing the speed readout's.
 * @param {{ report: any, ms?: number, timing?: { phase: "prefill"|"decode", tokens: number, ms: number } }} msg
 *   ms: the worker's time for the request; timing: the engine call's alone
 */
export function takeReport(msg) {
  const report = msg.report;
  if (msg.ms !== undefined && report.chosen) view.stepMs = msg.ms;
  takeTiming(view.speed, msg.timing);
  view.userStopped = false;
  state.next = !report.chosen;
  view.report = report;
  view.distribution = report.distribution;
  view.chosen = report.chosen ? { ...report.chosen } : null;
  view.previewShown = false;
  // A report without the field comes from an engine built before it.
  takeInside(report.inside ?? null);
}

/**
 * The inside of the distribution shown: a report's, or the engine's
 * `inside_now` when the panel opens or the view moves to the next token.
 * @param {any} inside an InsideReport, or null
 */
export function takeInside(inside) {
  view.inside = inside;
  // A run's report may leave the lens out (the worker computes it a few
  // times a second): the last one with a lens stays on show.
  if (!inside || inside.lens.length || view.insideLens?.layers !== inside.layers) view.insideLens = inside;
  changed("inside");
}

/**
 * The inside panel's chosen layer and query head.
 * @param {number} layer @param {number} head
 */
export function focusInside(layer, head) {
  view.insideFocus = { layer, head };
}

/** @param {{ layer: number, head: number }|null} at the layer and head under the pointer, or none */
export function hoverInside(at) {
  view.insideHover = at;
}

/**
 * A preview's Distribution becomes the view (the panels show the next
 * token's distribution, which the link says).
 * @param {any} distribution
 * @returns {boolean} the link changed (it shows the next token now)
 */
export function showPreview(distribution) {
  view.distribution = distribution;
  view.chosen = null;
  view.previewShown = true;
  if (state.next) return false;
  state.next = true;
  return true;
}

/** A preview was painted. */
export function previewPainted() {
  view.previewShown = false;
}

/** @param {boolean} running */
export function setRunning(running) {
  view.running = running;
  if (running) view.userStopped = false;
}

/** @param {boolean} stopped the user stopped the last run */
export function setUserStopped(stopped) {
  view.userStopped = stopped;
}

/**
 * @param {number|null} ms a search's estimated time when it is too long to
 *   start by itself (the panel offers a button; the old tree goes), else null
 */
export function setBeamEstimate(ms) {
  view.beamEstimateMs = ms;
  if (ms !== null) view.beam = null;
}

/** A beam search starts. */
export function beamStarted() {
  view.beamBusy = true;
  view.beamProgress = null;
}

/** @param {{ depth: number, of: number }} p how deep a search has gone */
export function beamProgressed(p) {
  view.beamProgress = { depth: p.depth, of: p.of };
}

/** @param {any} beam a finished search's tree */
export function beamDone(beam) {
  view.beam = beam;
  view.beamEstimateMs = null;
}

/** A search ended, either way. */
export function beamEnded() {
  view.beamBusy = false;
  view.beamProgress = null;
}

/** @param {boolean} busy a text is being scored */
export function setScoreBusy(busy) {
  view.scoreBusy = busy;
}

/** @param {any} score a scored text's report */
export function scoreDone(score) {
  view.score = score;
  view.scoreSelected = null;
}

/** @param {number} i the scored token whose details show */
export function selectScoreToken(i) {
  view.scoreSelected = i;
}

/** @param {boolean} busy the bigram is being retrained */
export function setTrainBusy(busy) {
  view.trainBusy = busy;
}

/** @param {any} result the retraining's curve */
export function trainDone(result) {
  view.train = result;
}

// ---- The compare panel (engine/compare.js) ----

/**
 * How each side was read against the page's settings in force.
 * @param {{ a: any, b: any }} sides each { settings, label, dialect, filled, notes, problem, pending }
 * @param {string} key what runs of them would be computed from (their settings and the prompt)
 */
export function takeCompareSides(sides, key) {
  view.compare.sides = sides;
  view.compare.sidesKey = key;
}

/**
 * The next token under both configurations, or why there is none.
 * @param {any} step Previewer.compare's report, or null
 * @param {string|null} problem
 */
export function takeCompareStep(step, problem) {
  view.compare.step = step;
  view.compare.stepProblem = problem;
}

/**
 * Runs of continuations start in the worker.
 * @param {{ runs: number, maxNew: number, labels: { a: string, b: string }, prompt: string, key: string }} asked
 */
export function compareRunStarted(asked) {
  view.compare.run = { busy: true, progress: null, result: null, ended: null, asked };
}

/** @param {{ done_runs: number, total_runs: number, tokens: number }} p how far the runs have got */
export function compareRunProgressed(p) {
  view.compare.run.progress = { done_runs: p.done_runs, total_runs: p.total_runs, tokens: p.tokens };
}

/**
 * The runs ended: their statistics and texts, or why there are none.
 * @param {any} result compare_finish's report, or null
 * @param {string|null} ended null when they finished, else what ended them (a cancel, an error)
 */
export function compareRunEnded(result, ended) {
  view.compare.run = { ...view.compare.run, busy: false, result, ended };
}
