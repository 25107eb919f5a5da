//# allFunctionsCalledOnLoad
// The page's lifecycle, as events anyone may listen to: the load stages, each
// report, each paint. They exist so a tool (bench/bench.js, loaded only with
// ?bench=1) can time the page from outside without bookkeeping of its own in
// the page; the page itself listens to one, the first ready `painted`, to load
// its later parts (main.js, later.js).
//
//   controls-built, catalogue-read, load-sent       {}
//   model-ready   { timings }    the worker's ready message (wasm_ms, files_ms, build_ms, sent)
//   replay-start  { ms }         the prompt prefilled (the worker's time for it)
//   decode-step   { ms, engineMs }  a generated token's report (ms: the worker's time for the step;
//                                 engineMs: the engine call's alone)
//   beam-done     { ms }         a beam search's report (ms: from request to reply)
//   preview-wanted { startedAt } a setting moved (startedAt: the input event's timeStamp)
//   painted       { preview, ready }  the DOM holds new numbers; preview: a preview's
//
// Dispatching to no listener costs next to nothing.

const target = new EventTarget();

/**
 * @param {string} name
 * @param {object} [detail]
 */
export function emit(name, detail = {}) {
  target.dispatchEvent(new CustomEvent(name, { detail }));
}

/**
 * @param {string} name
 * @param {(detail: any) => void} fn
 */
export function on(name, fn) {
  target.addEventListener(name, (e) => fn(/** @type {CustomEvent} */ (e).detail));
}
