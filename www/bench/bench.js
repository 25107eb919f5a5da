// Bench-only bookkeeping, loaded by main.js only when the page is opened with
// ?bench=1 (pkg-scripts/bench-page.mjs and bench-load.mjs do): the page a
// student opens carries none of it. It listens to the page's lifecycle events
// (state/events.js) and keeps the records the benchmarks read:
//
//   window.__ntpPerf        slider input (the event's timeStamp) → the first
//                           animation-frame callback after the DOM holds the
//                           new numbers (the start of the frame that paints them)
//   window.__ntpPerfPainted → the first task after that frame's rendering
//   window.__ntpLoad        page-load milestones (performance.now() ms) and the
//                           worker's own stage durations
//   window.__ntpSteps       the worker's ms for each generated token (decode step + report)
//   window.__ntpStepsEngine the engine call's ms of each (Playground.step alone)
//   window.__ntpBeams       each beam search, request to reply, ms
//
// and withSyntheticVocabulary(), which gives the page's Previewer a synthetic
// vocabulary so slider moves are measured at a real model's vocabulary size.

import { on } from "../state/events.js";
import { local } from "../engine/link.js";

const load = { boot: performance.now(), origin: performance.timeOrigin };
window.__ntpLoad = load;
window.__ntpPerf = [];
window.__ntpPerfPainted = [];
window.__ntpSteps = [];
window.__ntpStepsEngine = [];
window.__ntpBeams = [];

/** Input timeStamps of moves whose preview is not painted yet. @type {number[]} */
let waiting = [];

/** Record the first time a milestone happens. */
const first = (name, extra) => on(name, (d) => {
  if (!(name in marks)) { marks[name] = true; extra(d); }
});
const marks = {};
first("controls-built", () => { load.controls = performance.now(); });
first("catalogue-read", () => { load.catalogue = performance.now(); });
first("load-sent", () => { load.load_sent = performance.now(); });
first("model-ready", (d) => { load.ready = performance.now(); load.worker = d.timings; });
first("replay-start", (d) => { load.first_report = performance.now(); load.prefill_ms = d.ms; });

on("decode-step", (d) => { window.__ntpSteps.push(d.ms); window.__ntpStepsEngine.push(d.engineMs); });
on("beam-done", (d) => window.__ntpBeams.push(d.ms));
on("preview-wanted", (d) => waiting.push(d.startedAt));
on("painted", (d) => {
  if (d.ready) load.first_render ??= performance.now();
  if (!d.preview || !waiting.length) return;
  // The DOM holds the new numbers now; the next animation frame paints them.
  // Its style, layout and paint run right after its rAF callbacks, so a
  // message posted from one is handled once that frame is painted.
  const starts = waiting;
  waiting = [];
  requestAnimationFrame(() => {
    const frameStart = performance.now();
    for (const t of starts) window.__ntpPerf.push(frameStart - t);
    afterThisFrame(() => {
      const now = performance.now();
      for (const t of starts) window.__ntpPerfPainted.push(now - t);
    });
  });
});

/**
 * Run `fn` in the first task after the current frame's rendering (call it
 * from a requestAnimationFrame callback).
 * @param {() => void} fn
 */
function afterThisFrame(fn) {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => { channel.port1.close(); fn(); };
  channel.port2.postMessage(null);
}

/**
 * Give this thread's Previewer a synthetic vocabulary and logits, so slider
 * moves are measured through the real panels at a real model's vocabulary
 * size. The worker's model is untouched; reloading the page undoes it.
 * @param {string[]} text
 * @param {string[]} display
 * @param {{ logits: Float64Array, history: Uint32Array, position: number }} pending
 */
export async function withSyntheticVocabulary(text, display, pending) {
  await local.setVocab(packVocab(text, display));
  local.setState(pending);
  if (!local.ready) throw new Error("the synthetic state was refused");
}

/**
 * A vocabulary in the worker's wire form (`Playground.vocab_packed`): every
 * token's text, then every visible form, as UTF-8, with each one's end offset.
 * @param {string[]} text
 * @param {string[]} display
 * @returns {{ bytes: Uint8Array, ends: Uint32Array }}
 */
function packVocab(text, display) {
  const encoder = new TextEncoder();
  const pieces = [...text, ...display].map((t) => encoder.encode(t));
  const ends = new Uint32Array(pieces.length);
  let end = 0;
  pieces.forEach((p, i) => { end += p.length; ends[i] = end; });
  const bytes = new Uint8Array(end);
  pieces.forEach((p, i) => bytes.set(p, i === 0 ? 0 : ends[i - 1]));
  return { bytes, ends };
}
