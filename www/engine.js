// The engine state machine: the page's side of every engine request (load,
// replay, step, run, rewind, reset, preview, beam) and the recovery when the
// wasm instance dies. The worker holds the model; this module keeps `view`
// in step with its replies and asks for repaints.

import { EngineClient, EngineError } from "./client.js";
import { LocalPreviewer } from "./local-preview.js";
import { COURSE_LOGITS, checkAvailability } from "./models.js";
import { state, view, catalogue, currentModel, currentPrompt, engineSettings } from "./app-state.js";
import { toEngineSettings } from "./state/settings.js";
import { say, unsay, sayEngineError, showProgress, hideProgress } from "./messages.js";
import { updateUrl } from "./url-sync.js";
import { scheduleRender, paintPreviewNow, onBeforePaint } from "./paint.js";
import { emit } from "./events.js";

/**
 * What the page wires in (main.js): the parts of the page outside the engine
 * that follow its state.
 */
export const engineHooks = {
  /** A model is loaded (before its prompt is replayed); `info` is its ModelInfo. @type {(info: any) => void} */
  loaded: () => {},
  /** A GGUF file from the user's disk is loaded: it becomes the current model. @type {(name: string, info: any) => void} */
  fileLoaded: () => {},
  /** A load ended, well or not (the model panel shows the current model). @type {() => void} */
  loadSettled: () => {},
  /** A replay ended: token names for bans and biases from the URL are known now. @type {() => void} */
  replayed: () => {},
};

/**
 * The rules on this thread, fed by the worker's reports.
 * <body data-local-preview> says whether slider moves are answered here
 * (tests wait for it; the worker answers until then).
 */
export const local = new LocalPreviewer((ready) => { document.body.dataset.localPreview = String(ready); });

export const client = new EngineClient(new URL("./worker.js", import.meta.url), {
  onProgress: showProgress,
  onFatal: recoverFromCrash,
  onEngineState: (msg) => {
    if (msg.vocab) local.setVocab(msg.vocab.text, msg.vocab.display, msg.module);
    if (msg.pending) local.setState(msg.pending);
  },
});

/** Times of recent crashes (a crash while restoring gives up sooner). @type {number[]} */
let crashes = [];

/** Load the current model, then replay prompt, settings and steps. */
export async function loadModel() {
  const entry = currentModel();
  client.dropStale(); // an unfinished replay for the old model stops here
  local.invalidate(); // until the new model's vocabulary comes, previews go to the worker
  view.ready = false;
  forgetModelViews();
  view.loading = true;
  // Not ready from now on, at once (not at the next frame): a click in
  // between must not look like it was taken.
  document.body.dataset.ready = "false";
  setBusy(true);
  scheduleRender();
  let filesFailed = false;
  let why = "";
  try {
    await checkSource(entry);
    emit("load-sent");
    const msg = await client.request("load", { model: entry.source });
    emit("model-ready", { timings: msg.timings });
    view.info = msg.info;
    view.ready = true;
    engineHooks.loaded(msg.info);
    unsay("engine");
    await replay();
  } catch (err) {
    // A model whose files are missing or rejected: fall back to another so
    // the page stays usable (the fallback's message says why).
    const engineGone = err instanceof EngineError && (err.fatal || err.superseded); // the crash recovery or a newer load carries on
    filesFailed = !view.ready && !engineGone && entry !== undefined && !("builtin" in entry.source);
    if (filesFailed) why = err instanceof Error ? err.message : String(err);
    else sayEngineError(err);
  } finally {
    hideProgress();
    view.loading = false;
    setBusy(false);
    engineHooks.loadSettled();
    scheduleRender();
  }
  if (filesFailed) {
    // The catalogue's default, unless that is what failed: then the course's ten logits.
    const fallback = entry.name !== catalogue.defaultName && catalogue.models.some((m) => m.name === catalogue.defaultName)
      ? catalogue.models.find((m) => m.name === catalogue.defaultName) : catalogue.models.find((m) => m.name === "logits10");
    const instead = fallback.name === "logits10" ? "the course's ten-logit model" : `“${fallback.title}”`;
    say(`Could not load “${entry.title}”: ${why.replace(/\.$/, "")}. Showing ${instead} instead; pick another model in the Model panel.`, "error", "fallback");
    state.model = fallback.name;
    state.prompt = null;
    state.file = null;
    engineHooks.loadSettled();
    updateUrl();
    await loadModel();
  }
}

/**
 * Refuse, with a message saying what to do, a model whose file is not there:
 * a GGUF the server does not have, or a file from the user's disk that is
 * gone (the engine restarted after a crash).
 * @param {import("./models.js").ModelEntry} entry
 */
async function checkSource(entry) {
  const src = /** @type {any} */ (entry.source);
  if (src.file) throw new Error(`The GGUF file you opened (${src.file}) went with the engine's restart; open it again.`);
  if (!src.gguf) return;
  if (entry.availability === "unknown" || entry.availability === undefined) await checkAvailability(entry);
  if (entry.availability === "absent") {
    throw new Error(`${entry.title}: its file (${entry.bytes ? `${(entry.bytes / 1e6).toFixed(1)} MB, ` : ""}${src.gguf.split("/").pop()}) is not on this server. ` +
      `Run ${entry.fetch ?? "the model's fetch script"} in the repository, then reload.`);
  }
  if (entry.availability === "wrong-size") {
    throw new Error(`${entry.title}: the file on this server is not the expected ${entry.bytes} bytes. Run ${entry.fetch ?? "the model's fetch script"} again.`);
  }
}

/** What was drawn for the previous model (beam tree, bigram training, score report). */
function forgetModelViews() {
  view.beam = null;
  view.beamEstimateMs = null;
  view.stepMs = null;
  view.train = null;
  view.score = null;
  view.scoreSelected = null;
  view.logitsEdited = false;
}

/**
 * Open a GGUF file from the user's disk: the bytes go to the worker
 * (transferred, not copied), which builds the model. Until it has, the model
 * loaded before stays in the worker; a file the engine refuses leaves it
 * there and usable, with a message saying why.
 * @param {ArrayBuffer} buffer the whole file
 * @param {string} name its name
 */
export async function loadFile(buffer, name) {
  await stopRun();
  client.dropStale();
  const wasReady = view.ready;
  view.ready = false;
  view.loading = true;
  document.body.dataset.ready = "false";
  setBusy(true);
  showProgress({ loaded: buffer.byteLength, total: buffer.byteLength, what: name, stage: "build" });
  scheduleRender();
  let loaded = false;
  try {
    const msg = await client.request("load", { model: { file: buffer, name } }, undefined, [buffer]);
    loaded = true;
    local.invalidate(); // the new model's vocabulary follows its first report
    forgetModelViews();
    unsay("open-file");
    unsay("engine");
    engineHooks.fileLoaded(name, msg.info);
    view.info = msg.info;
    view.ready = true;
    engineHooks.loaded(msg.info);
    await replay();
  } catch (err) {
    if (!loaded) {
      const why = err instanceof Error ? err.message : String(err);
      say(`Could not open ${name}: ${why}. ${wasReady ? "The model loaded before is still here." : ""}`.trim(), "error", "open-file");
      // The worker still holds the model it had, in the state it had.
      view.ready = wasReady && !(err instanceof EngineError && err.fatal);
    } else sayEngineError(err);
  } finally {
    hideProgress();
    view.loading = false;
    setBusy(false);
    engineHooks.loadSettled();
    scheduleRender();
  }
}

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
    msg = await client.request("reset", { prompt: currentPrompt(), settings: engineSettings() });
  } catch (err) {
    view.report = null;
    view.distribution = null;
    throw err;
  }
  takeReport(msg.report);
  emit("replay-start", { ms: msg.ms });
  for (let i = 0; i < state.steps; i++) {
    msg = await client.request("step", { settings: engineSettings() });
    takeReport(msg.report, msg.ms);
    if (msg.report.stop) break;
  }
  state.steps = view.report.generated.length;
  // The link said the panels showed the next token's distribution.
  if (wantNext && view.chosen) await doPreview();
  updateUrl();
  engineHooks.replayed();
  scheduleBeam();
}

/** Replay, saying what went wrong instead of throwing. */
export async function replayOrSay() {
  try { await replay(); unsay("engine"); } catch (err) { sayEngineError(err); }
}

/**
 * Adopt a StepReport as the current view.
 * @param {any} report
 * @param {number} [stepMs] the worker's time for the decode step that made it
 */
function takeReport(report, stepMs) {
  if (stepMs !== undefined && report.chosen) { view.stepMs = stepMs; emit("decode-step", { ms: stepMs }); }
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
    takeReport(msg.report, msg.ms);
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
      takeReport(msg.report, msg.ms);
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
    takeReport(msg.report);
    state.steps = msg.report.generated.length;
    updateUrl();
    scheduleBeam();
  } catch (err) { sayEngineError(err); }
}

/** Back to the prompt (after a crash: reload the model). */
export async function doReset() {
  if (!view.ready) { crashes = []; state.steps = 0; loadModel(); return; }
  await stopRun();
  state.steps = 0;
  try { await replay(); } catch (err) { sayEngineError(err); }
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
 * Beam search from the current state, when its panel is shown: at once on a
 * fast model, on request (the panel's Search button) on a slow one.
 */
export function scheduleBeam() {
  if (!state.panels.includes("beam") || view.running) return;
  clearTimeout(beamTimer);
  const estimate = beamEstimateMs();
  view.beamEstimateMs = estimate > AUTO_BEAM_MS ? estimate : null;
  if (view.beamEstimateMs !== null) { view.beam = null; scheduleRender(); return; }
  beamTimer = setTimeout(doBeam, 150);
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
  scheduleRender();
  try {
    const t0 = performance.now();
    const msg = await client.request("beam", { settings: toEngineSettings(state.settings, { beam: true }) });
    emit("beam-done", { ms: performance.now() - t0 });
    view.beam = msg.beam;
    view.beamEstimateMs = null;
  } catch (err) { sayEngineError(err); }
  view.beamBusy = false;
  scheduleRender();
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

/**
 * The engine died (a Rust panic). The client has started a fresh worker:
 * reload the model and replay; the prompt and settings live in `state`, so
 * nothing the user typed is lost.
 * @param {string} message
 * @param {boolean} crashed false when the engine could not start at all
 */
function recoverFromCrash(message, crashed) {
  view.running = false;
  view.ready = false;
  if (!crashed) {
    say(message, "error", "crash");
    scheduleRender();
    return;
  }
  const now = Date.now();
  crashes = crashes.filter((t) => now - t < 30000);
  crashes.push(now);
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

/** @param {boolean} busy */
function setBusy(busy) {
  document.body.classList.toggle("busy", busy);
}
