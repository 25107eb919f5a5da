// While the page's thread answers an input (a slider moved, a key pressed, a
// click), the engine's helper threads take no new band of a product, until
// the frame that shows the answer is painted. Where the engine's threads are
// as many as the cores, the page's thread, its compositor and its raster
// threads would otherwise queue behind them. On 2 cores, 120 slider moves
// during a Run (bench-page-busy.mjs, builds alternating): on 2 threads a p95
// to the frame of 32.9-37.6 ms (median of five runs 35.3) without the
// pause, 29.2-35.2 ms (30.1) with it; on one thread 29.1-30.5 ms. The Run
// meanwhile went from 25.8-27.8 to 27.4-29.0 tokens/s. The engine's own
// thread goes on alone during a pause, with the same numbers.

import { pauseHelpers } from "../worker/engine-worker.js";

/** Inputs the page answers on its own thread. */
const INPUTS = ["input", "keydown", "pointerdown"];
/** The longest a pause lasts if no frame comes (a hidden tab draws none). */
const MAX_PAUSE_MS = 100;

/**
 * Pause the current engine worker's helpers on every input, until the next
 * frame has been painted.
 * @param {() => Worker | null} currentWorker
 */
export function pauseHelpersOnInput(currentWorker) {
  let latest = 0;
  let safety = 0;
  const release = (/** @type {number} */ which) => {
    if (which !== latest) return; // a later input's own release ends the pause
    clearTimeout(safety);
    pauseHelpers(currentWorker(), false);
  };
  const hold = () => {
    const which = ++latest;
    pauseHelpers(currentWorker(), true);
    // A task after the next frame: that frame is painted by then.
    requestAnimationFrame(() => setTimeout(() => release(which), 0));
    clearTimeout(safety);
    safety = setTimeout(() => release(latest), MAX_PAUSE_MS);
  };
  for (const type of INPUTS) addEventListener(type, hold, { capture: true, passive: true });
}
