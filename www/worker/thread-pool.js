// The engine's threads in the browser: helper workers on the engine's shared
// memory, which the engine's worker asks the page to start (a `start_helpers`
// message, www/worker/engine-worker.js) when it is asked for more than one
// thread. Every product splits the same way whatever the count, so the
// answers never depend on it (crate/src/threads.rs).
//
// Threads need a page that is cross-origin isolated (a shared memory cannot
// reach another worker otherwise) and an engine built with shared memory
// (pkg-scripts/build); without either the engine runs on this worker alone,
// exactly as a single-thread build, and the reply says why.

import { max_threads, set_threads, threads_supported, thread_helpers, thread_helper_tasks, thread_pause_word } from "../pkg/nexttoken.js";
import { autoThreads, NOT_ISOLATED } from "./thread-count.js";

/** How long the helpers asked for may take to enter the pool before they count as failed. */
const HELPER_START_MS = 20_000;

/** Helpers asked of the page so far (never stopped: one the page no longer wants sleeps). */
let helpersAsked = 0;
/** Why a helper failed to start, once one has: no more are asked for. */
let helperFailure = null;

/**
 * The page says a helper failed (www/worker/engine-worker.js).
 * @param {number} id
 * @param {string} message
 */
export function helperFailed(id, message) {
  helperFailure ??= `helper ${id}: ${message}`;
}

/**
 * @typedef {Object} ThreadsInForce
 * @property {number} threads   threads the engine uses from now on
 * @property {number} wanted    the number asked for, "auto" resolved
 * @property {number} max       the most this page can use now
 * @property {boolean} isolated whether the page is cross-origin isolated
 * @property {string|null} reason why fewer than wanted, in the page's words
 * @property {number} helper_tasks product bands the helpers have computed so far
 */

/**
 * Use `want` threads from now on, starting helpers as needed.
 * @param {"auto"|number} want
 * @param {WebAssembly.Module} module the engine's compiled module
 * @param {WebAssembly.Memory} memory the engine's memory (shared in a threads build)
 * @returns {Promise<ThreadsInForce>}
 */
export async function useThreads(want, module, memory) {
  const cores = Math.max(1, navigator.hardwareConcurrency || 1);
  const wanted = want === "auto" ? autoThreads(cores) : Number(want);
  if (!Number.isInteger(wanted) || wanted < 1) throw new Error(`threads: want "auto" or a whole number from 1, not ${JSON.stringify(want)}`);
  const isolated = self.crossOriginIsolated === true;
  const supported = threads_supported();
  const max = supported && isolated ? max_threads() : 1;
  const target = Math.min(wanted, max);
  if (target > 1 && !helperFailure) await startHelpers(target - 1, module, memory);
  const threads = set_threads(target);
  let reason = null;
  if (threads < wanted) {
    if (!supported) reason = "this engine build has no threads";
    else if (!isolated) reason = NOT_ISOLATED;
    else if (helperFailure) reason = `a helper thread failed to start (${helperFailure})`;
    else reason = `at most ${max} threads`;
  }
  return { threads, wanted, max, isolated, reason, helper_tasks: thread_helper_tasks() };
}

/**
 * Ask the page for helpers until there are `count` (www/worker/engine-worker.js
 * starts them), and wait until each is in the pool or one failed.
 * @param {number} count
 * @param {WebAssembly.Module} module
 * @param {WebAssembly.Memory} memory
 */
async function startHelpers(count, module, memory) {
  if (helpersAsked < count) {
    self.postMessage({ type: "start_helpers", count, module, memory, pause: thread_pause_word() });
    helpersAsked = count;
  }
  const deadline = performance.now() + HELPER_START_MS;
  while (thread_helpers() < count && !helperFailure && performance.now() < deadline) await new Promise((r) => setTimeout(r, 1));
  if (thread_helpers() < count && !helperFailure) {
    helperFailure = `${count - thread_helpers()} of ${count} not in the pool after ${HELPER_START_MS / 1000} s; the page starts them (www/worker/engine-worker.js)`;
  }
}
