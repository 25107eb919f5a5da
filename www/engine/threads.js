//# allFunctionsCalledOnLoad
// The engine's threads: the page's choice (state.threads) told to each new
// worker before anything else and again on every change, and the worker's
// answer (how many it uses, and why fewer) put in the store for the readout.
// Telling it reloads nothing and cancels nothing (PROTOCOL.md).

import * as store from "../state/store.js";
import { state } from "../state/store.js";
import { AUTO_THREADS, autoThreadCount } from "../state/threads.js";
import { NOT_ISOLATED } from "../worker/thread-count.js";
import { scheduleRender } from "../panels/frame.js";

/**
 * Tell the engine's worker how many threads the page asks for; what it
 * answers goes to the store.
 * @param {import("./client.js").EngineClient} client
 */
export async function tellThreads(client) {
  const want = state.threads;
  let reply;
  try {
    reply = await client.tell("threads", { want });
  } catch (err) {
    // A dead worker's successor is told when it starts.
    if (err?.fatal) return;
    reply = oneThread(want);
  }
  store.takeThreads(reply);
  scheduleRender();
}

/**
 * What a worker that could not answer (its thread pool failed) runs on: one
 * thread. Not being isolated is said first, since no engine build could use
 * more on such a page.
 * @param {"auto"|number} want
 */
function oneThread(want) {
  const wanted = want === AUTO_THREADS ? autoThreadCount() : want;
  const isolated = globalThis.crossOriginIsolated === true;
  const why = isolated ? "the engine could not start its threads" : NOT_ISOLATED;
  return { threads: 1, wanted, max: 1, isolated, reason: wanted > 1 ? why : null };
}
