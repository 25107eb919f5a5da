// Bench-only: the wasm engine alone, in a worker of its own, on 1 to N
// threads (pkg-scripts/bench-engine-threads.mjs starts it, through
// worker/engine-worker.js as the page starts its engine). It does what the
// page's engine worker does for a Run, `Playground.step` back to back, with
// its helpers asked for the same way (worker/thread-pool.js), but with no
// page beside it that paints each token: so the page's Run on N threads,
// against this, tells the engine's own scaling from the page's share of the
// cores. The student's page never loads it.

import init, { Playground } from "../pkg/nexttoken.js";
import { helperFailed, useThreads } from "../worker/thread-pool.js";
import { engineModuleUrl } from "../worker/engine-wasm.js";

self.onmessage = async (/** @type {MessageEvent<Request>} */ event) => {
  if (event.data?.type === "helper_failed") return helperFailed(event.data.id, event.data.message);
  try {
    self.postMessage({ results: await measure(event.data) });
  } catch (err) {
    self.postMessage({ error: err instanceof Error ? `${err.message}\n${err.stack}` : String(err) });
  }
};

/**
 * @typedef {Object} Request
 * @property {string} gguf     the model file's URL
 * @property {string} prompt
 * @property {number} steps    decode steps timed per round
 * @property {number[]} threads the thread counts, measured in this order each round
 * @property {number} rounds
 */

/** @param {Request} req */
async function measure(req) {
  const module = await WebAssembly.compileStreaming(fetch(engineModuleUrl(self.location.search)));
  const { memory } = await init({ module_or_path: module });
  // Every helper first, so that none starts in the middle of a round.
  const most = await useThreads(Math.max(...req.threads), module, memory);
  if (most.reason) throw new Error(`${most.threads} of ${most.wanted} threads: ${most.reason}`);
  const res = await fetch(req.gguf);
  if (!res.ok) throw new Error(`GET ${req.gguf}: HTTP ${res.status}`);
  const pg = Playground.from_gguf(new Uint8Array(await res.arrayBuffer()), req.gguf.split("/").pop());
  // Greedy with the end token banned (as pkg-scripts/bench-engine-wasm.mjs):
  // every step makes a token.
  const eos = pg.info().eos_id;
  const settings = { temperature: 0, max_new: 4096, stop: [], banned: eos === null || eos === undefined ? [] : [eos] };
  /** @type {{ threads: number, in_force: number, step_ms: number[] }[]} */
  const results = req.threads.map((threads) => ({ threads, in_force: 0, step_ms: [] }));
  for (let round = 0; round < req.rounds; round++) {
    for (const r of results) {
      r.in_force = (await useThreads(r.threads, module, memory)).threads;
      pg.start(req.prompt, settings);
      pg.step(settings); // a warm-up step, not counted
      const times = [];
      for (let i = 0; i < req.steps; i++) {
        const t0 = performance.now();
        pg.step(settings);
        times.push(performance.now() - t0);
      }
      r.step_ms.push(median(times));
    }
  }
  return results;
}

/** @param {number[]} xs */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
