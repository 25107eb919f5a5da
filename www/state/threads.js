//# allFunctionsCalledOnLoad
// How many threads the page asks the engine for: "auto" or a count from 1 to
// this device's cores. The one place the choice's default and range are
// written; the URL parser (url.js), the control (controls/threads.js) and the
// request to the worker (engine/threads.js) read them here. It changes how
// fast the engine computes, never what (the text is the same at any count),
// so it is a view field like the KV cache's numbers, not one of the engine's
// decoding settings (engine-settings.js).

/** Let the engine's worker choose (www/PROTOCOL.md, the `threads` request). */
export const AUTO_THREADS = "auto";
/** What a link that names no threads asks for. */
export const DEFAULT_THREADS = AUTO_THREADS;
// What "auto" stands for is the worker's rule (worker/thread-count.js): the
// page names the figure only in the control's label, and the readout shows
// what the worker says.
import { autoThreads } from "../worker/thread-count.js";
export { AUTO_THREADS_MAX } from "../worker/thread-count.js";

/**
 * This device's logical cores, as the browser says (1 where it does not:
 * node, which runs url.js in the tests, has no navigator before version 21).
 * @returns {number}
 */
export function deviceCores() {
  const n = globalThis.navigator?.hardwareConcurrency;
  return Number.isInteger(n) && n >= 1 ? n : 1;
}

/**
 * Whether the engine's threads in force (view.threads, as its worker says)
 * take every core of this device, so that the page's own work (its
 * thread's scripts and layout, the browser's raster and compositing) comes
 * out of the engine's time.
 * @param {{ threads: number } | null | undefined} inForce
 * @returns {boolean}
 */
export function takesEveryCore(inForce) {
  return (inForce?.threads ?? 1) >= deviceCores();
}

/** @returns {number} the count "auto" stands for on this device */
export function autoThreadCount() {
  return autoThreads(deviceCores());
}

/** @returns {("auto"|number)[]} every choice, in the control's order: auto, then 1 … the cores */
export function threadChoices() {
  return [AUTO_THREADS, ...Array.from({ length: deviceCores() }, (_, i) => i + 1)];
}

/**
 * A choice from its text (a link's value, a select's): "auto" or a whole
 * number from 1 to the cores. More than the device has is refused, not
 * clamped, so a link from a bigger machine gets this one's "auto".
 * @param {string} raw
 * @returns {{ value: "auto"|number } | { problem: string }}
 */
export function parseThreads(raw) {
  if (raw === AUTO_THREADS) return { value: AUTO_THREADS };
  const cores = deviceCores();
  const n = /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (n >= 1 && n <= cores) return { value: n };
  return { problem: `must be auto or a whole number from 1 to ${cores} (this device's cores)` };
}
