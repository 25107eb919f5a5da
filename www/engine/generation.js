//# allFunctionsCalledOnLoad
// The engine state machine for generation: the page's side of replay, step,
// run, rewind, preview, beam and score (loading a model, Reset and the crash
// recovery are in model-load.js). The worker holds the model; this module
// puts its replies, and the previews computed on this thread, in the store
// and asks for repaints: settings in, numbers out, never the other way.

import { EngineError } from "./client.js";
import { client, local, sayEngineError } from "./link.js";
import { COURSE_LOGITS } from "../state/catalogue.js";
import * as store from "../state/store.js";
import { state, view, currentPrompt, engineSettings } from "../state/store.js";
import { toEngineSettings } from "../state/settings.js";
import { say, unsay } from "../panels/messages.js";
import { updateUrl } from "../panels/url-sync.js";
import { scheduleRender, scheduleBeamPaint, paintPreviewNow, paintNow, dropWaitingPreview } from "../panels/frame.js";
import { paintChips } from "../panels/paint.js";
import { emit } from "../state/events.js";

/**
 * Start from the prompt and regenerate state.steps tokens with the current
 * settings and seed (same seed, same text).
 */
export async function replay() {
  client.dropStale();
  const wantNext = state.next; // takeReport below overwrites it
  store.replayStarted();
  // The engine keeps an edited vector until told otherwise, so going back to
  // the course's values must be sent too.
  if (state.model === "logits10" && (state.logits || view.logitsEdited)) {
    await client.request("set_logits", { logits: state.logits ?? COURSE_LOGITS, prompt: currentPrompt(), settings: engineSettings() });
    store.setLogitsEdited(state.logits !== null);
  }
  let msg;
  try {
    // A prompt longer than the context starts from its newest part (what the
    // sliding window keeps: three quarters of the context) instead of being
    // refused, so the distribution and Step stay usable; the page says so.
    const settings = { ...engineSettings(), context_policy: "sliding" };
    msg = await client.request("reset", { prompt: currentPrompt(), settings });
  } catch (err) {
    store.clearReport();
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
  store.setSteps(view.transcript.generated.length);
  // The link said the panels showed the next token's distribution.
  if (wantNext && view.chosen) await doPreview();
  updateUrl();
  paintChips(); // token names for bans and biases from the URL are known now
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
  const total = view.transcript.promptTokens.length;
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
  store.takeReport(msg);
  if (msg.ms !== undefined && msg.report.chosen) emit("decode-step", { ms: msg.ms, engineMs: msg.timing?.ms });
  dropWaitingPreview(); // the report is newer than a preview still waiting for its frame
  scheduleRender();
}

/** One token. */
export async function doStep() {
  if (!view.ready || view.running) return;
  try {
    const msg = await client.request("step", { settings: engineSettings() });
    takeReport(msg);
    paintNow(); // the token shows in the next frame, not the one after
    store.setSteps(view.transcript.generated.length);
    updateUrl();
    scheduleBeam();
  } catch (err) { sayEngineError(err); }
}

/** Run until a stop condition or the Stop button (pressed again: stop). */
export async function doRun() {
  if (!view.ready) return;
  if (view.running) { await stopRun(); return; }
  store.setRunning(true);
  scheduleRender();
  try {
    const end = await client.request("run", { settings: engineSettings() }, (msg) => {
      takeReport(msg);
      store.setSteps(view.transcript.generated.length);
    });
    store.setUserStopped(end.why === "stopped");
  } catch (err) { sayEngineError(err); }
  store.setRunning(false);
  updateUrl();
  scheduleRender();
  scheduleBeam();
  // The run's last report may have left the lens out (a stop the worker
  // could not see coming): the panels move on to the next token, whose
  // inside comes whole.
  if (insideWanted() && view.inside && view.insideLens !== view.inside) await syncInside();
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
    store.setSteps(view.transcript.generated.length);
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
    // Computed just before the paint: at once, or at the next frame with the
    // moves after it (frame.js), so a frame computes one preview.
    paintPreviewNow(previewHere);
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
  if (!store.showPreview(distribution)) return;
  updateUrl();
  // The panels moved on to the next token, whose inside no report carried.
  if (insideWanted()) syncInside();
}

/** The rules on this thread, with the settings in force (a bad setting is said, the old numbers stay). */
function previewHere() {
  if (!local.ready) return;
  try {
    showPreview(local.preview(engineSettings()), "local");
  } catch (err) { sayEngineError(err); }
}

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
  cancelScheduledBeam();
  const estimate = beamEstimateMs();
  store.setBeamEstimate(estimate > AUTO_BEAM_MS ? estimate : null);
  if (view.beamEstimateMs !== null) { scheduleRender(); return; }
  // Checked again when the timer fires: a setting or the model may have
  // changed the estimate since.
  beamTimer = setTimeout(() => { if (beamEstimateMs() <= AUTO_BEAM_MS) doBeam(); }, delayMs);
}

/**
 * Forget a beam search scheduled on the model being replaced. Its timer
 * would otherwise start a search on the next model if it fired once that
 * one was ready and its replay still ran, whatever that model's estimate:
 * an F16 copy of SmolLM2 opened from disk started a 3-second search that
 * way, in every run of the tab memory bench.
 */
export function cancelScheduledBeam() {
  clearTimeout(beamTimer);
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
  store.beamStarted();
  scheduleBeamPaint();
  try {
    const t0 = performance.now();
    const onProgress = (/** @type {any} */ p) => { store.beamProgressed(p); scheduleBeamPaint(); };
    const msg = await client.request("beam", { settings: toEngineSettings(state.settings, { beam: true }) }, onProgress);
    if (!msg.cancelled) {
      emit("beam-done", { ms: performance.now() - t0 });
      store.beamDone(msg.beam);
    }
  } catch (err) { sayEngineError(err); }
  store.beamEnded();
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
  store.setScoreBusy(true);
  scheduleRender();
  try {
    const msg = await client.request("score", { text, chat });
    store.scoreDone(msg.score);
    unsay("score");
  } catch (err) {
    if (!(err instanceof EngineError && (err.superseded || err.fatal))) say(err instanceof Error ? err.message : String(err), "error", "score");
  }
  store.setScoreBusy(false);
  scheduleRender();
}


/** @returns {boolean} the inside panel is shown */
export function insideWanted() {
  return state.panels.includes("inside");
}

/**
 * Tell the worker whether the inside panel is open (closed, the engine
 * computes no attention weights and no logit lens); open, the inside of the
 * pending position (`inside_now`) goes into the store. Called when the
 * panel's switch moves and when the panels move on to the next token's
 * distribution (a preview after a step), whose inside no report carried.
 * Opened while the panels show the distribution a token was drawn from
 * (computed with the panel closed), the panels move on to the next token's
 * first, so both show the same position.
 */
export async function syncInside() {
  const on = insideWanted();
  if (!on) store.takeInside(null);
  if (!view.ready) return; // the load's own request tells the worker (model-load.js)
  if (on && view.chosen && view.report) { await doPreview(); return; } // showPreview calls back
  // The reply is the inside of the position pending when the worker reads
  // the request. A report that comes in meanwhile (a Step sent before this
  // request, answered before it) moved the panels to a later position and
  // carries that position's own inside: the reply is then stale.
  const asked = view.report;
  try {
    const msg = await client.request("inside", { on });
    if (!msg.supported && on) say("This engine build has no inside report: rebuild www/pkg (pkg-scripts/build).", "error", "inside");
    else unsay("inside");
    // Only while the panel is still open (a close in between wins) and the
    // panels still show the position asked about.
    if (insideWanted() && view.report === asked) store.takeInside(msg.inside);
    // A report made while the panel was closed has none: ask again, for the
    // position it shows.
    else if (insideWanted() && !view.inside) { syncInside(); return; }
    scheduleRender();
  } catch (err) { sayEngineError(err); }
}
