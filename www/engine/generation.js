// The engine state machine for generation: the page's side of replay, step,
// run, rewind, preview, beam and score (loading a model, Reset and the crash
// recovery are in model-load.js). The worker holds the model; this module
// keeps `view` in step with its replies and asks for repaints.

import { EngineError } from "./client.js";
import { client, local, engineHooks } from "./link.js";
import { COURSE_LOGITS } from "../state/catalogue.js";
import { state, view, currentPrompt, engineSettings } from "../state/store.js";
import { toEngineSettings } from "../state/settings.js";
import { say, unsay, sayEngineError } from "../panels/messages.js";
import { updateUrl } from "../state/url-sync.js";
import { scheduleRender, scheduleBeamPaint, paintPreviewNow, paintNow, onBeforePaint } from "../panels/frame.js";
import { emit } from "../state/events.js";
import { takeTiming } from "../state/speed.js";

/**
 * Start from the prompt and regenerate state.steps tokens with the current
 * settings and seed (same seed, same text).
 */
export async function replay() {
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
    // A prompt longer than the context starts from its newest part (what the
    // sliding window keeps: three quarters of the context) instead of being
    // refused, so the distribution and Step stay usable; the page says so.
    const settings = { ...engineSettings(), context_policy: "sliding" };
    msg = await client.request("reset", { prompt: currentPrompt(), settings });
  } catch (err) {
    view.report = null;
    view.distribution = null;
    unsay("prompt-window");
    throw err;
  }
  takeReport(msg);
  sayPromptWindow(msg.report);
  emit("replay-start", { ms: msg.ms });
  for (let i = 0; i < state.steps; i++) {
    msg = await client.request("step", { settings: engineSettings() });
    takeReport(msg);
    if (msg.report.stop) break;
  }
  state.steps = view.report.generated.length;
  // The link said the panels showed the next token's distribution.
  if (wantNext && view.chosen) await doPreview();
  updateUrl();
  engineHooks.replayed();
  scheduleBeam(BEAM_DELAY_MS.replay);
}

/**
 * Says how much of a prompt too long for the context the model reads (the
 * reset's report: kv.dropped prompt tokens left out), or clears the note.
 * @param {any} report
 */
function sayPromptWindow(report) {
  const dropped = report.kv.dropped;
  if (!dropped) { unsay("prompt-window"); return; }
  const total = report.prompt_tokens.length;
  say(`The prompt has ${total} tokens, more than the model's context holds: it reads only the last ${total - dropped} ` +
    `(the first ${dropped} are left out). Generation stops when the context is full.`, "info", "prompt-window");
}

/** Replay, saying what went wrong instead of throwing. */
export async function replayOrSay() {
  try { await replay(); unsay("engine"); } catch (err) { sayEngineError(err); }
}

/**
 * Adopt a step reply's StepReport as the current view, and its timing as the
 * speed readout's.
 * @param {{ report: any, ms?: number, timing?: { phase: "prefill"|"decode", tokens: number, ms: number } }} msg
 *   ms: the worker's time for the request; timing: the engine call's alone
 */
function takeReport(msg) {
  const report = msg.report;
  if (msg.ms !== undefined && report.chosen) { view.stepMs = msg.ms; emit("decode-step", { ms: msg.ms }); }
  takeTiming(view.speed, msg.timing);
  localPreviewWanted = false; // the report is newer than a preview still waiting for its frame
  view.userStopped = false;
  state.next = !report.chosen;
  view.report = report;
  view.distribution = report.distribution;
  view.chosen = report.chosen ? { ...report.chosen } : null;
  view.previewShown = false;
  scheduleRender();
}

/** One token. */
export async function doStep() {
  if (!view.ready || view.running) return;
  try {
    const msg = await client.request("step", { settings: engineSettings() });
    takeReport(msg);
    paintNow(); // the token shows in the next frame, not the one after
    state.steps = msg.report.generated.length;
    updateUrl();
    scheduleBeam();
  } catch (err) { sayEngineError(err); }
}

/** Run until a stop condition or the Stop button (pressed again: stop). */
export async function doRun() {
  if (!view.ready) return;
  if (view.running) { await stopRun(); return; }
  view.running = true;
  view.userStopped = false;
  scheduleRender();
  try {
    const end = await client.request("run", { settings: engineSettings() }, (msg) => {
      takeReport(msg);
      state.steps = msg.report.generated.length;
    });
    view.userStopped = end.why === "stopped";
  } catch (err) { sayEngineError(err); }
  view.running = false;
  updateUrl();
  scheduleRender();
  scheduleBeam();
}

/** Stop a run; settles once the worker's loop has ended (at once when none runs). */
export async function stopRun() {
  if (!view.running) return;
  try { await client.request("stop"); } catch (err) { sayEngineError(err); }
}

/**
 * Keep only the first n generated tokens; the distribution shown is the one
 * token n was drawn from.
 * @param {number} n
 */
export async function doRewind(n) {
  if (!view.ready || view.running || n < 0) return;
  try {
    const msg = await client.request("rewind", { n, settings: engineSettings() });
    takeReport(msg);
    paintNow();
    state.steps = msg.report.generated.length;
    updateUrl();
    scheduleBeam();
  } catch (err) { sayEngineError(err); }
}

/**
 * The rules changed: re-run them on the pending logits (no model call) and
 * repaint, on this thread when the local Previewer holds the worker's state,
 * else in the worker. A run in progress draws its next tokens with the new
 * rules: the worker is told with its own message (nothing is computed for it).
 * @param {number} [startedAt] the input event's timeStamp
 */
export async function doPreview(startedAt) {
  if (!view.ready || !view.report) return;
  if (view.running) client.request("run_settings", { settings: engineSettings() }).catch(sayEngineError);
  if (startedAt !== undefined) emit("preview-wanted", { startedAt });
  if (local.ready) {
    localPreviewWanted = true;
    paintPreviewNow();
    return;
  }
  try {
    const msg = await client.preview(engineSettings());
    if (!msg) return; // superseded by a newer preview
    showPreview(msg.distribution, "worker");
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
  view.previewShown = true;
  if (!state.next) { state.next = true; updateUrl(); }
}

/** A local preview waits for the next paint (set when its paint is coalesced into a frame). */
let localPreviewWanted = false;

// Each paint first runs the waiting local preview into the view (a bad
// setting is said, the old numbers stay).
onBeforePaint(() => {
  if (!localPreviewWanted) return;
  localPreviewWanted = false;
  if (!local.ready) return;
  try {
    showPreview(local.preview(engineSettings()), "local");
  } catch (err) { sayEngineError(err); }
});

let beamTimer = 0;
/**
 * Past this estimated time a beam search is not started after every step:
 * the engine's worker runs one request at a time and a search cannot be
 * interrupted, so the next Step would wait for it. The beam panel offers a
 * button instead, with the estimate.
 */
const AUTO_BEAM_MS = 500;

/**
 * How long after a report the beam search starts by itself: soon after a
 * step, later after a replay (a load, a new prompt), when the page has just
 * done a lot and the first interactions come. On the 2-core test machine a
 * search started 150 ms after a load ran beside the first slider move and
 * delayed its frame (bard: first moves 4-119 ms to their frame, median 20.9,
 * five loads, against 4.9-13.2 ms with the beam panel hidden).
 */
const BEAM_DELAY_MS = { step: 150, replay: 1000 };

/**
 * Beam search from the current state, when its panel is shown: by itself on
 * a fast model (after `delayMs`), on request (the panel's Search button) on a slow one.
 * @param {number} [delayMs]
 */
export function scheduleBeam(delayMs = BEAM_DELAY_MS.step) {
  if (!state.panels.includes("beam") || view.running) return;
  clearTimeout(beamTimer);
  const estimate = beamEstimateMs();
  view.beamEstimateMs = estimate > AUTO_BEAM_MS ? estimate : null;
  if (view.beamEstimateMs !== null) { view.beam = null; scheduleRender(); return; }
  beamTimer = setTimeout(doBeam, delayMs);
}

/**
 * About how long a search takes: B beams × L tokens model calls of the last
 * decode step's time (before any step, a guess from the model's size).
 * @returns {number} ms
 */
function beamEstimateMs() {
  const perCall = view.stepMs ?? (view.info?.params ?? 0) / 1e6;
  return perCall * state.settings.beams * state.settings.beam_len;
}

/** Run the beam search now (the panel's Search button, or after a step on a fast model). */
export async function doBeam() {
  if (!view.ready || view.running || view.beamBusy) return;
  view.beamBusy = true;
  scheduleBeamPaint();
  try {
    const t0 = performance.now();
    view.beamProgress = null;
    const onProgress = (/** @type {any} */ p) => { view.beamProgress = { depth: p.depth, of: p.of }; scheduleBeamPaint(); };
    const msg = await client.request("beam", { settings: toEngineSettings(state.settings, { beam: true }) }, onProgress);
    if (!msg.cancelled) {
      emit("beam-done", { ms: performance.now() - t0 });
      view.beam = msg.beam;
      view.beamEstimateMs = null;
    }
  } catch (err) { sayEngineError(err); }
  view.beamBusy = false;
  view.beamProgress = null;
  scheduleBeamPaint();
}

/**
 * Score a text: every token's probability and rank under the model, in the
 * worker (one teacher-forced pass; the generation state is left alone).
 * @param {string} text
 * @param {boolean} chat inside the model's chat template
 */
export async function doScore(text, chat) {
  if (!view.ready) return;
  view.scoreBusy = true;
  scheduleRender();
  try {
    const msg = await client.request("score", { text, chat });
    view.score = msg.score;
    view.scoreSelected = null;
    unsay("score");
  } catch (err) {
    if (!(err instanceof EngineError && (err.superseded || err.fatal))) say(err instanceof Error ? err.message : String(err), "error", "score");
  }
  view.scoreBusy = false;
  scheduleRender();
}

