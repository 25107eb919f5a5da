//# allFunctionsCalledOnLoad
// Loading models: a catalogue model (built in, a model folder, a GGUF the
// server has), a GGUF file from the user's disk, the fallback when a model
// cannot be loaded, Reset (which reloads after a crash), and the recovery
// when the wasm instance dies.

import { EngineError } from "./client.js";
import { client, local, onEngineDied, sayEngineError } from "./link.js";
import { replay, stopRun, insideWanted, cancelScheduledBeam } from "./generation.js";
import { checkAvailability } from "../state/catalogue.js";
import * as store from "../state/store.js";
import { state, view, catalogue, currentModel } from "../state/store.js";
import { say, unsay, showProgress, hideProgress } from "../panels/messages.js";
import { updateUrl } from "../panels/url-sync.js";
import { scheduleRender } from "../panels/frame.js";
import { emit } from "../state/events.js";

onEngineDied(recoverFromCrash);

/** Times of recent crashes (a crash while restoring gives up sooner). @type {number[]} */
let crashes = [];

/** Load the current model, then replay prompt, settings and steps. */
export async function loadModel() {
  const entry = currentModel();
  client.dropStale(); // an unfinished replay for the old model stops here
  local.invalidate(); // until the new model's vocabulary comes, previews go to the worker
  store.loadStarted();
  cancelScheduledBeam();
  store.forgetModelViews();
  // Not ready from now on, at once (not at the next frame): a click in
  // between must not look like it was taken.
  document.body.dataset.ready = "false";
  setBusy(true);
  scheduleRender();
  let filesFailed = false;
  let why = "";
  try {
    // Synchronous where nothing needs asking (a model folder, a built-in
    // model), so that at the page's start the request goes out before the
    // controls are built, not after (main.js's boot).
    const asking = checkSource(entry);
    if (asking) await asking;
    emit("load-sent");
    const msg = await client.request("load", { model: entry.source, kv_type: state.kv ?? undefined, inside: insideWanted() });
    emit("model-ready", { timings: msg.timings });
    takeModel(msg.info);
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
    loadSettled();
  }
  if (filesFailed) {
    // The catalogue's default, unless that is what failed: then the course's ten logits.
    const fallback = entry.name !== catalogue.defaultName && catalogue.models.some((m) => m.name === catalogue.defaultName)
      ? catalogue.models.find((m) => m.name === catalogue.defaultName) : catalogue.models.find((m) => m.name === "logits10");
    const instead = fallback.name === "logits10" ? "the course's ten-logit model" : `“${fallback.title}”`;
    say(`Could not load “${entry.title}”: ${why.replace(/\.$/, "")}. Showing ${instead} instead; pick another model in the Model panel.`, "error", "fallback");
    store.fallBackTo(fallback.name);
    updateUrl();
    await loadModel();
  }
}

/**
 * Refuse, with a message saying what to do, a model whose file is not there:
 * a GGUF the server does not have, or a file from the user's disk that is
 * gone (the engine restarted after a crash). Throws at once where it knows;
 * returns a promise only where the server must be asked first.
 * @param {import("../state/catalogue.js").ModelEntry} entry
 * @returns {Promise<void> | null}
 */
function checkSource(entry) {
  const src = /** @type {any} */ (entry.source);
  if (src.file) throw new Error(`The GGUF file you opened (${src.file}) went with the engine's restart; open it again.`);
  if (!src.gguf) return null;
  if (entry.availability === "unknown" || entry.availability === undefined) return checkAvailability(entry).then(() => refuseMissing(entry));
  refuseMissing(entry);
  return null;
}

/**
 * Refuse a GGUF whose file the server does not have, or not at its size.
 * @param {import("../state/catalogue.js").ModelEntry} entry
 */
function refuseMissing(entry) {
  const src = /** @type {any} */ (entry.source);
  if (entry.availability === "absent") {
    throw new Error(`${entry.title}: its file (${entry.bytes ? `${(entry.bytes / 1e6).toFixed(1)} MB, ` : ""}${src.gguf.split("/").pop()}) is not on this server. ` +
      `Run ${entry.fetch ?? "the model's fetch script"} in the repository, then reload.`);
  }
  if (entry.availability === "wrong-size") {
    throw new Error(`${entry.title}: the file on this server is not the expected ${entry.bytes} bytes. Run ${entry.fetch ?? "the model's fetch script"} again.`);
  }
}

/**
 * The engine holds a new model: it goes in the store (a chat link on a model
 * without a chat template falls back to plain continuation, said here).
 * @param {any} info ModelInfo
 */
function takeModel(info) {
  if (store.modelReady(info)) {
    say(`chat=1: ${info.name} has no chat template, so the prompt is continued as plain text.`, "info", "chat");
    updateUrl();
  }
}

/**
 * Open a GGUF file from the user's disk: the worker gets the File (a handle,
 * not its bytes), reads it piece by piece into the engine's memory and
 * builds the model, so the file's bytes are held once. Until it has, the
 * model loaded before stays in the worker; a file the engine refuses leaves
 * it there and usable, with a message saying why.
 * @param {Blob} file
 * @param {string} name its name
 */
export async function loadFile(file, name) {
  await stopRun();
  client.dropStale();
  const wasReady = view.ready;
  store.loadStarted();
  cancelScheduledBeam();
  document.body.dataset.ready = "false";
  setBusy(true);
  showProgress({ loaded: 0, total: file.size, what: name, stage: "read" });
  scheduleRender();
  let loaded = false;
  try {
    const msg = await client.request("load", { model: { file, name }, kv_type: state.kv ?? undefined, inside: insideWanted() });
    loaded = true;
    local.invalidate(); // the new model's vocabulary follows its first report
    store.forgetModelViews();
    unsay("open-file");
    unsay("engine");
    store.adoptFileModel(name, msg.info);
    updateUrl();
    takeModel(msg.info);
    await replay();
  } catch (err) {
    if (!loaded) {
      const why = err instanceof Error ? err.message : String(err);
      say(`Could not open ${name}: ${why}. ${wasReady ? "The model loaded before is still here." : ""}`.trim(), "error", "open-file");
      // The worker still holds the model it had, in the state it had.
      store.setReady(wasReady && !(err instanceof EngineError && err.fatal));
    } else sayEngineError(err);
  } finally {
    loadSettled();
  }
}

/** Back to the prompt (after a crash: reload the model). */
export async function doReset() {
  if (!view.ready) { crashes = []; store.setSteps(0); loadModel(); return; }
  await stopRun();
  store.setSteps(0);
  try { await replay(); } catch (err) { sayEngineError(err); }
}

/**
 * The engine died (a Rust panic). The client has started a fresh worker:
 * reload the model and replay; the prompt and settings live in `state`, so
 * nothing the user typed is lost.
 * @param {string} message
 * @param {boolean} crashed false when the engine could not start at all
 */
function recoverFromCrash(message, crashed) {
  store.engineDied();
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
    store.setSteps(0);
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

/** A load (of a catalogue model or a file) has ended, either way. */
function loadSettled() {
  hideProgress();
  store.loadSettled();
  setBusy(false);
  scheduleRender();
}
