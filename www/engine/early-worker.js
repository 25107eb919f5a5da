//# allFunctionsCalledOnLoad
// The engine's worker, started by index.html's first script as soon as this
// module and its one import have arrived, and not only once the page's own
// modules have all loaded and run (main.js's boot). The worker's start-up, its
// imports and the engine's compile then overlap the page's module graph, on
// another core, instead of following it. The page's client takes this worker
// over on its first start (link.js); every later start (after a crash) is
// an ordinary one.
//
// Nothing the worker says is lost meanwhile: it speaks only when asked, and a
// failure to start (www/pkg/ not built) is kept here for the client to report
// as it would its own.

import { startEngineWorker } from "../worker/engine-worker.js";

/** The engine worker's script: the page's client starts this one. */
export const ENGINE_WORKER_URL = new URL("../worker/worker.js", import.meta.url);

/**
 * @typedef {Object} EarlyWorker
 * @property {Worker} worker
 * @property {unknown[]} messages  what it posted before the client took it (in order)
 * @property {string|null} error   why it failed to start, if it did
 */

/** @type {EarlyWorker|null} */
let early = null;

/**
 * Start the engine's worker now, once per page. A page that cannot start
 * workers here leaves it to the client, which reports what goes wrong.
 */
export function startEarly() {
  if (early) return;
  let worker;
  try {
    worker = startEngineWorker(ENGINE_WORKER_URL);
  } catch {
    return;
  }
  const taken = /** @type {EarlyWorker} */ ({ worker, messages: [], error: null });
  worker.onmessage = (e) => taken.messages.push(e.data);
  worker.onerror = (e) => {
    e.preventDefault?.();
    taken.error ??= e.message || "the engine's worker failed to start";
  };
  early = taken;
}

/**
 * The early worker, handed over once; null once taken or if none started.
 * @returns {EarlyWorker|null}
 */
export function takeEarlyWorker() {
  const taken = early;
  early = null;
  return taken;
}

startEarly();
