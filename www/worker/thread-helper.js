// One helper thread of the engine, started by the page (engine-worker.js): a
// worker that instantiates the engine's module on the engine worker's shared
// memory and then takes part in every split product
// (crate/src/threads/wasm_pool.rs) until the page ends it with the engine's
// worker. It answers only a failure to start: from then on its thread is the pool's.

import { initSync, thread_helper } from "../pkg/nexttoken.js";

self.onmessage = (/** @type {MessageEvent<{ module: WebAssembly.Module, memory: WebAssembly.Memory, id: number }>} */ event) => {
  const { module, memory, id } = event.data;
  try {
    initSync({ module, memory });
  } catch (err) {
    self.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
    return;
  }
  thread_helper(id); // returns only by throwing, in a build without threads
};
