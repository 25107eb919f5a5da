//# allFunctionsCalledOnLoad
// The page's link to the engine: the worker client (each new worker told its
// threads first), the rules on this thread (local-preview.js) fed by the
// worker's reports, and how an engine error is said. What the engine's
// replies change goes to the store (generation.js, model-load.js); the rest
// of the page follows the store.

import { EngineClient, EngineError } from "./client.js";
import { ENGINE_WORKER_URL, takeEarlyWorker } from "./early-worker.js";
import { LocalPreviewer } from "./local-preview.js";
import { tellThreads } from "./threads.js";
import { say, showProgress } from "../panels/messages.js";
import { state, engineSettings, takeTranscript } from "../state/store.js";
import { scheduleRender } from "../panels/frame.js";

/** Told when the worker dies (model-load.js restores the model). @type {(message: string, crashed: boolean) => void} */
let diedHandler = () => {};

/** @param {(message: string, crashed: boolean) => void} fn */
export function onEngineDied(fn) {
  diedHandler = fn;
}

/**
 * The rules on this thread, fed by the worker's reports.
 * <body data-local-preview> says whether slider moves are answered here
 * (tests wait for it; the worker answers until then).
 */
export const local = new LocalPreviewer((ready) => {
  document.body.dataset.localPreview = String(ready);
  // The compare panel reads the rules on this thread only: it is drawn again once they answer.
  if (ready && state.panels.includes("compare")) scheduleRender();
}, engineSettings, (spent) => client.recycle(spent));

export const client = new EngineClient(ENGINE_WORKER_URL, {
  takeStarted: takeEarlyWorker,
  onStart: () => { tellThreads(client); },
  onProgress: showProgress,
  onFatal: (message, crashed) => diedHandler(message, crashed),
  onEngineState: (msg) => {
    if (msg.vocab) local.setVocab(msg.vocab, msg.module);
    // Each step reply changed the engine's tokens, stale or not; a step's
    // carries only its own token, so the store takes every one, in order.
    if (msg.kind === "step") takeTranscript(msg.report);
    // A logits array the page's Previewer is done with goes back to be refilled.
    // A run's report (final: false) is copied in when the page needs it.
    if (msg.pending) {
      const spent = local.setState(msg.pending, { later: msg.final === false });
      if (spent) client.recycle(spent);
    }
  },
});

/**
 * Report an engine error unless it only means "superseded".
 * @param {unknown} err
 */
export function sayEngineError(err) {
  if (err instanceof EngineError && err.superseded) return;
  if (err instanceof EngineError && err.fatal) return; // the crash recovery says it
  say(err instanceof Error ? err.message : String(err), "error", "engine");
}
