//# allFunctionsCalledOnLoad
// The engine's worker as the page starts it, with the helper threads it asks
// for. A leaf of the page (engine/client.js) that tests and benchmarks use
// too, so that every engine worker gets its helpers the same way.
//
// The helpers are started here, on the page's thread, and not by the engine's
// worker itself: in Firefox 153 ESR a `new Worker` called inside a worker now
// and then never returns (a page whose worker started three nested workers
// froze once in about 16 pages, and the whole tab with it; three workers
// started from the page's thread never froze in 80 pages). The engine's
// worker says how many helpers it wants (`start_helpers`, with its compiled
// module and shared memory) and counts them in the pool itself; a helper that
// fails is reported back to it (`helper_failed`). The same message names the
// word in that memory through which the page's thread asks the helpers to
// stand aside while it answers an input or paints (`pauseHelpers`).

/** @type {WeakMap<Worker, Int32Array>} each engine worker's pause word, once it has helpers */
const pauseWords = new WeakMap();

/**
 * Start the engine's worker. Its `terminate` also ends its helpers: they share
 * the worker's memory and would otherwise sleep on it for as long as the page lives.
 * @param {string|URL} [url] the engine worker's script
 * @returns {Worker}
 */
export function startEngineWorker(url = new URL("./worker.js", import.meta.url)) {
  const worker = new Worker(url, { type: "module" });
  /** @type {Worker[]} */
  const helpers = [];
  worker.addEventListener("message", ({ data }) => {
    if (data?.type !== "start_helpers") return;
    if (data.pause > 0 && data.memory.buffer instanceof SharedArrayBuffer) pauseWords.set(worker, new Int32Array(data.memory.buffer, data.pause, 1));
    while (helpers.length < data.count) helpers.push(startHelper(worker, helpers.length + 1, data.module, data.memory));
  });
  const terminate = worker.terminate.bind(worker);
  worker.terminate = () => {
    for (const helper of helpers.splice(0)) helper.terminate();
    terminate();
  };
  return worker;
}

/**
 * Who asks the helpers to stand aside. Each holds a bit of the pause word of
 * its own, so that one's release does not end another's pause: the page
 * stands them aside for each input and paint (stand-aside.js), a caller that
 * measures the engine's own thread alone holds them aside across its steps,
 * which paint and take inputs meanwhile.
 */
export const PAUSED_BY = Object.freeze({ page: 1, caller: 2 });

/**
 * Ask the helpers of an engine worker to take no new band (`on`), or to take
 * bands again; a worker without helpers has nothing to pause.
 * @param {Worker | null} worker
 * @param {boolean} on
 * @param {number} [by] who holds the pause (`PAUSED_BY`)
 */
export function pauseHelpers(worker, on, by = PAUSED_BY.page) {
  const word = worker && pauseWords.get(worker);
  if (!word) return;
  if (on) Atomics.or(word, 0, by);
  else {
    Atomics.and(word, 0, ~by);
    Atomics.notify(word, 0);
  }
}

/**
 * Whether an engine worker's helpers are asked to stand aside now.
 * @param {Worker | null} worker
 * @param {number} [by] by whom (`PAUSED_BY`); anyone when left out
 */
export function helpersPaused(worker, by = ~0) {
  const word = worker && pauseWords.get(worker);
  return word ? (Atomics.load(word, 0) & by) !== 0 : false;
}

/**
 * One helper: it instantiates the engine's module on the worker's memory and
 * enters the pool (thread-helper.js); only a failure is ever reported.
 * @param {Worker} worker the engine's worker, told of a failure
 * @param {number} id counts from 1
 * @param {WebAssembly.Module} module
 * @param {WebAssembly.Memory} memory
 * @returns {Worker}
 */
function startHelper(worker, id, module, memory) {
  const helper = new Worker(new URL("./thread-helper.js", import.meta.url), { type: "module", name: `engine helper ${id}` });
  const failed = (/** @type {string} */ message) => worker.postMessage({ type: "helper_failed", id, message });
  helper.onmessage = ({ data }) => { if (data?.error) failed(data.error); };
  helper.onerror = (event) => {
    event.preventDefault();
    failed(event.message || `helper ${id} failed`);
  };
  helper.postMessage({ module, memory, id });
  return helper;
}
