//# allFunctionsCalledOnLoad
// The speed readout under the Step/Run buttons: prefill and decode tokens per
// second and the last step's time, as the engine's worker measured them, and
// the threads it computed them on, as it said them.

import { makeEl, setText, setAttr, ensureSlot } from "./dom.js";
import { formatCount } from "./format.js";
import { speedFigures, DECODE_WINDOW } from "../state/speed.js";

/**
 * A rate or a time with three significant digits or so: 20.7, 143, 1,240.
 * @param {number} x
 */
function short(x) {
  if (x >= 100) return formatCount(x);
  return x >= 10 ? x.toFixed(1) : x.toFixed(2);
}

/**
 * @param {number} ms
 * @returns {string} "447 ms", "48.3 ms", "under 0.1 ms"
 */
function formatMs(ms) {
  return ms > 0 ? `${ms >= 100 ? formatCount(ms) : ms.toFixed(1)} ms` : "under 0.1 ms";
}

/**
 * One figure: a label, the number in bold, the detail after it.
 * @param {Element} root
 * @param {string} slot
 * @param {string} label
 * @param {string} value
 * @param {string} detail
 * @returns {HTMLElement} the figure
 */
function paintFigure(root, slot, label, value, detail) {
  const el = ensureSlot(root, slot, () => {
    const span = makeEl("span", { class: "speed-fig" });
    span.append(makeEl("span"), makeEl("b"), makeEl("span"));
    return span;
  });
  const [a, b, c] = el.children;
  setText(a, label);
  setText(b, value);
  setText(c, detail);
  return /** @type {HTMLElement} */ (el);
}

/**
 * @typedef {{ threads: number, wanted: number, max: number, isolated: boolean, reason: string|null }} ThreadsInForce
 *   the engine worker's `threads` reply (www/PROTOCOL.md)
 */

/**
 * The threads in force in words: "2 threads", or with fewer than asked
 * for, "1 thread: " and the worker's reason. Always the worker's count,
 * never the page's wish.
 * @param {ThreadsInForce} t
 * @returns {{ count: string, why: string }} why: "" when all that was asked for is in force
 */
export function threadsWords(t) {
  return { count: `${t.threads} ${t.threads === 1 ? "thread" : "threads"}`, why: t.reason ? `: ${t.reason}` : "" };
}

/**
 * Paint the readout; hidden until the first prefill was timed.
 * data-* attributes carry the unrounded figures (the browser tests read them;
 * empty when a time was too short for the clock).
 * @param {HTMLElement} root
 * @param {import("../state/speed.js").Speed} speed
 * @param {ThreadsInForce|null} threads what the worker last said of its threads (null: nothing yet)
 */
export function renderSpeed(root, speed, threads) {
  const f = speedFigures(speed);
  root.hidden = !f;
  if (!f) return;
  const rate = (/** @type {number|null} */ r) => (r === null ? "" : String(r));
  setAttr(root, "data-prefill-tokens", f.prefillTokens);
  setAttr(root, "data-prefill-tok-s", rate(f.prefillTokS));
  setAttr(root, "data-decode-tokens", f.decodeTokens);
  setAttr(root, "data-decode-tok-s", rate(f.decodeTokS));
  setAttr(root, "data-last-step-ms", f.lastStepMs === null ? "" : String(f.lastStepMs));

  const prefillRate = f.prefillTokS === null ? "too fast to time" : `${short(f.prefillTokS)} tok/s`;
  paintFigure(root, "prefill", "prefill ", prefillRate, ` (${f.prefillTokens} tokens, ${formatMs(f.prefillMs)})`);
  let decodeDetail = ` (${f.decodeTokens} ${f.decodeTokens === 1 ? "token" : "tokens"}`;
  if (f.decodeTokens > f.windowTokens) decodeDetail += `; rate of the last ${DECODE_WINDOW}`;
  decodeDetail += ")";
  const decodeRate = f.decodeTokens === 0 ? "–" : f.decodeTokS === null ? "too fast to time" : `${short(f.decodeTokS)} tok/s`;
  paintFigure(root, "decode", "decode ", decodeRate, f.decodeTokens === 0 ? " (no token yet)" : decodeDetail);
  paintFigure(root, "last", "last step ", f.lastStepMs === null ? "–" : formatMs(f.lastStepMs), "");
  paintThreads(root, threads);
}

/**
 * The threads figure, after the speeds: the count in bold, the reason for
 * fewer after it (class speed-why: a phone keeps it for screen readers and
 * the tooltip only, so the readout keeps its lines); data-threads,
 * data-wanted and data-max carry the reply's numbers.
 * @param {Element} root
 * @param {ThreadsInForce|null} threads
 */
function paintThreads(root, threads) {
  if (!threads) {
    const shown = /** @type {HTMLElement|null} */ (root.querySelector('[data-slot="threads"]'));
    if (shown) shown.hidden = true;
    return;
  }
  const { count, why } = threadsWords(threads);
  const fig = paintFigure(root, "threads", "", count, why);
  fig.hidden = false;
  fig.lastElementChild?.classList.add("speed-why");
  setAttr(fig, "title", `${count}${why}`);
  setAttr(fig, "data-threads", threads.threads);
  setAttr(fig, "data-wanted", threads.wanted);
  setAttr(fig, "data-max", threads.max);
}
