//# allFunctionsCalledOnLoad
// Where the engine's threads take every core, its helper threads stand aside
// (take no new band of a product) while the page's thread answers an input
// (a slider moved, a key pressed, a click) or paints the panels, until that
// frame is painted. Otherwise the page's thread, its compositor and its
// raster threads queue behind them. The engine's own thread goes on alone
// meanwhile, with the same numbers (a band is computed the same way by
// whichever thread takes it). Fewer threads than cores (the default, `auto`)
// leave the page a core of its own, and the helpers never stand aside.
//
// Measured on 2 cores with 2 threads, builds alternating (Chromium,
// SmolLM2):
// - 120 slider moves during a Run (bench-page-busy.mjs): p95 to the frame
//   32.9-37.6 ms (median of five runs 35.3) without standing aside on
//   input, 29.2-35.2 ms (30.1) with it; on one thread 29.1-30.5 ms. The Run
//   meanwhile went from 25.8-27.8 to 27.4-29.0 tokens/s.
// - A 64-token Run (bench-page-run.mjs --threads=2, 3 rounds): 46.1, 49.8
//   and 49.7 tokens/s without standing aside for its paints, 53.8, 54.0 and
//   56.3 with it.

import { pauseHelpers } from "../worker/engine-worker.js";
import { view } from "../state/store.js";
import { takesEveryCore } from "../state/threads.js";
import { beforeEachPaint } from "../panels/frame.js";

/** Inputs the page answers on its own thread. */
const INPUTS = ["input", "keydown", "pointerdown"];
/** The longest a pause lasts if no frame comes (a hidden tab draws none). */
const MAX_PAUSE_MS = 100;

/**
 * Stand the current engine worker's helpers aside on every input and every
 * paint of the panels, until the next frame has been painted, while the
 * engine's threads are as many as the cores.
 * @param {() => Worker | null} currentWorker
 */
export function wireStandAside(currentWorker) {
  let latest = 0;
  let safety = 0;
  const release = (/** @type {number} */ which) => {
    if (which !== latest) return; // a later hold's own release ends the pause
    clearTimeout(safety);
    pauseHelpers(currentWorker(), false);
  };
  const hold = () => {
    if (!takesEveryCore(view.threads)) return;
    const which = ++latest;
    pauseHelpers(currentWorker(), true);
    // A task after the next frame: that frame is painted by then.
    requestAnimationFrame(() => setTimeout(() => release(which), 0));
    clearTimeout(safety);
    safety = setTimeout(() => release(latest), MAX_PAUSE_MS);
  };
  for (const type of INPUTS) addEventListener(type, hold, { capture: true, passive: true });
  beforeEachPaint(hold);
}
