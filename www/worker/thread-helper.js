// One helper thread of the engine, started by the page (engine-worker.js): a
// worker that instantiates the engine's module on the engine worker's shared
// memory and then takes part in every split product
// (crate/src/threads/wasm_pool.rs) until the page ends it with the engine's
// worker. It answers only a failure to start: from then on its thread is the pool's.

import { initSync, thread_helper, thread_helper_stopped } from "../pkg/nexttoken.js";

self.onmessage = (/** @type {MessageEvent<{ module: WebAssembly.Module, memory: WebAssembly.Memory, id: number }>} */ event) => {
  const { module, memory, id } = event.data;
  try {
    initSync({ module, memory });
  } catch (err) {
    self.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
    return;
  }
  try {
    thread_helper(id); // returns only by throwing: a build without threads, or a panic in a band
  } catch (err) {
    // The band this thread had claimed never finishes: the engine's thread
    // must not wait for it (it panics, and the page restarts the engine).
    thread_helper_stopped(id);
    throw err;
  }
};
