//# allFunctionsCalledOnLoad
// What "auto" threads means, and why a page gets one thread: a leaf both the
// engine's worker (thread-pool.js, which resolves them) and the page
// (state/threads.js, engine/threads.js) read.
//
// One core is left to the page's own thread: it paints every panel while a
// run goes on, and on a 2-core machine a page Run of SmolLM2 on 2 threads
// was slower than on one (39-44 against 53 tokens/s in the same session,
// pkg-scripts/bench-page-run.mjs), while the engine alone in a worker gained
// about 1.2x. A person can still choose every core in the Threads control.

/** "auto" stands for at most this many threads. */
export const AUTO_THREADS_MAX = 8;

/**
 * The threads "auto" stands for on a device with `cores` logical cores.
 * @param {number} cores
 * @returns {number}
 */
export function autoThreads(cores) {
  return Math.min(Math.max(cores - 1, 1), AUTO_THREADS_MAX);
}

/** Why a page gets one thread whatever it asks: its memory cannot reach a helper worker. */
export const NOT_ISOLATED = "this page is not cross-origin isolated";
