//# allFunctionsCalledOnLoad
// The engine's speed, from the timings the worker sends with its reports
// (measured there, around the engine call alone: see PROTOCOL.md): the
// prompt's prefill, and the decode steps since it. The output panel's speed
// readout draws from this (render/speed.js).

/** The decode rate is the mean over this many of the latest steps. */
export const DECODE_WINDOW = 16;

/**
 * @typedef {Object} Speed
 * @property {{ tokens: number, ms: number }|null} prefill  the last prompt's prefill
 * @property {number} decoded      decode steps timed since that prefill
 * @property {number[]} recent     their times (ms), the latest DECODE_WINDOW
 */

/** @returns {Speed} nothing measured yet */
export function makeSpeed() {
  return { prefill: null, decoded: 0, recent: [] };
}

/**
 * Take a report's timing: a prefill starts a new count, a decode step adds to it.
 * @param {Speed} speed
 * @param {{ phase: "prefill"|"decode", tokens: number, ms: number }|undefined} timing
 */
export function takeTiming(speed, timing) {
  if (!timing) return;
  if (timing.phase === "prefill") {
    speed.prefill = { tokens: timing.tokens, ms: timing.ms };
    speed.decoded = 0;
    speed.recent = [];
  } else if (timing.phase === "decode") {
    speed.decoded += timing.tokens;
    speed.recent.push(timing.ms);
    if (speed.recent.length > DECODE_WINDOW) speed.recent.shift();
  }
}

/**
 * The figures the readout shows. A rate is null when its time is zero: the
 * worker's clock ticks in 0.1 ms steps (browsers coarsen performance.now()),
 * and a toy model's step can take less than one tick.
 * @param {Speed} speed
 * @returns {{ prefillTokens: number, prefillMs: number, prefillTokS: number|null,
 *   decodeTokens: number, windowTokens: number, windowMs: number, decodeTokS: number|null,
 *   lastStepMs: number|null }|null} null before any prefill
 */
export function speedFigures(speed) {
  if (!speed.prefill) return null;
  const { tokens, ms } = speed.prefill;
  const windowMs = speed.recent.reduce((a, b) => a + b, 0);
  return {
    prefillTokens: tokens, prefillMs: ms, prefillTokS: ms > 0 ? (tokens * 1000) / ms : null,
    decodeTokens: speed.decoded, windowTokens: speed.recent.length, windowMs,
    decodeTokS: windowMs > 0 ? (speed.recent.length * 1000) / windowMs : null,
    lastStepMs: speed.recent.length ? speed.recent[speed.recent.length - 1] : null,
  };
}
