// The engine's threads in the browser give the same answers as one thread.
// Each case drives the engine's own worker (www/worker/worker.js) from a
// bare page of the test server: a fresh worker is asked for N threads, loads
// SmolLM2 from its GGUF file, starts a prompt and makes 12 steps with a
// seeded sampler (temperature 0.8, top-k 40, top-p 0.95), and every reply
// is kept: the step reports (distribution, rules, chosen token, text, KV
// cache) and the pending raw logits as bytes. With 2 and 4 threads they
// must equal the one-thread run bit for bit, in Chromium and in Firefox
// ESR. (Bands of output columns: crate/src/threads.rs; the pool:
// crate/src/threads/wasm_pool.rs; natively crate/tests/threads_identical.rs.)
//
// The worker's `threads` reply is checked too: with the test server's
// cross-origin isolation headers it grants what was asked (2 and 4, also on
// fewer cores: the pool then shares them) and its helpers compute bands
// (`helper_tasks`, so the comparison cannot pass with idle helpers); from a
// server without the headers it grants one thread and says why.
//
// Run: pkg-scripts/build, pkg-scripts/fetch-smollm2, then
//      node --test tests/e2e/threads-identical.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, launchBrowser, launchFirefox, needSmollm2 } from "./harness.mjs";

const SETTINGS = { temperature: 0.8, top_k: 40, top_p: 0.95, seed: 1234 };
const PROMPT = "The three primary colours are";
const STEPS = 12;

let server;
let unisolated;
/** @type {Record<string, import("playwright-core").Browser>} */
const browsers = {};

before(async () => {
  server = await startServer();
  unisolated = await startServer({ isolation: false });
  browsers.chromium = await launchBrowser();
  browsers.firefox = await launchFirefox();
});

after(async () => {
  for (const b of Object.values(browsers)) await b?.close();
  await server?.close();
  await unisolated?.close();
});

/**
 * In a bare page: a fresh engine worker on `threads` threads, the model
 * loaded, the prompt started and `steps` steps made; every reply's content.
 * Runs in the browser.
 * @param {{ threads: number, model: string, prompt: string, settings: object, steps: number }} arg
 */
async function runInWorker({ threads, model, prompt, settings, steps }) {
  const index = await (await fetch("/models/index.json")).json();
  const entry = index.models.find((m) => m.name === model);
  // As the page starts it: the helpers come from this thread (engine-worker.js says why).
  const { startEngineWorker } = await import("/worker/engine-worker.js");
  const worker = startEngineWorker("/worker/worker.js");
  let next = 1;
  const waiting = new Map();
  worker.onmessage = ({ data }) => {
    if (data.id === undefined || !waiting.has(data.id)) return; // progress without a waiter, the vocab message
    if (data.type === "progress") return;
    const { resolve, reject } = waiting.get(data.id);
    waiting.delete(data.id);
    if (data.type === "error") reject(new Error(data.message)); else resolve(data);
  };
  const ask = (msg) => new Promise((resolve, reject) => {
    const id = next++;
    waiting.set(id, { resolve, reject });
    worker.postMessage({ id, ...msg });
  });
  const hex = (/** @type {ArrayBufferView} */ a) => Array.from(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), (b) => b.toString(16).padStart(2, "0")).join("");
  const kept = (/** @type {any} */ r) => ({ report: JSON.stringify(r.report), logits: hex(r.pending.logits), history: Array.from(r.pending.history), position: r.pending.position });
  try {
    const granted = await ask({ type: "threads", want: threads });
    await ask({ type: "load", model: { gguf: `/models/${entry.gguf}`, bytes: entry.bytes, version: "test" } });
    const replies = [kept(await ask({ type: "reset", prompt, settings }))];
    for (let i = 0; i < steps; i++) replies.push(kept(await ask({ type: "step", settings })));
    const { id: _id, type: _type, ...threadsReply } = granted;
    // Asked again: the bands the helpers computed meanwhile.
    const { helper_tasks: helperTasks } = await ask({ type: "threads", want: threads });
    return { threads: threadsReply, replies, helperTasks };
  } finally {
    worker.terminate();
  }
}

/**
 * @param {import("playwright-core").Browser} browser
 * @param {string} origin the server's URL
 * @param {number} threads
 */
async function run(browser, origin, threads) {
  const page = await browser.newPage();
  try {
    await page.goto(`${origin}models/index.json`);
    return await page.evaluate(runInWorker, { threads, model: "smollm2-135m", prompt: PROMPT, settings: SETTINGS, steps: STEPS });
  } finally {
    await page.close();
  }
}

for (const name of ["chromium", "firefox"]) {
  test(`${name}: SmolLM2 on 2 and 4 threads gives the one-thread run's reports and logits bit for bit`, { timeout: 600_000 }, async (t) => {
    if (!needSmollm2(t)) return;
    const one = await run(browsers[name], server.url, 1);
    assert.equal(one.threads.threads, 1);
    assert.equal(one.threads.isolated, true, "the test server's page is cross-origin isolated");
    assert.equal(one.replies.length, STEPS + 1);
    assert.equal(one.helperTasks, 0, "one thread: no helper ran");
    for (const threads of [2, 4]) {
      const many = await run(browsers[name], server.url, threads);
      assert.equal(many.threads.threads, threads, `granted ${threads} threads (${many.threads.reason})`);
      assert.equal(many.threads.reason, null);
      // Helpers that never ran a band would pass the comparison trivially.
      assert.ok(many.helperTasks > 0, `${threads} threads: the helpers computed bands (${many.helperTasks})`);
      for (let i = 0; i < one.replies.length; i++) {
        const [a, b] = [one.replies[i], many.replies[i]];
        assert.equal(b.logits, a.logits, `${threads} threads, reply ${i}: the pending logits, byte for byte`);
        assert.equal(b.report, a.report, `${threads} threads, reply ${i}: the step report`);
        assert.deepEqual(b.history, a.history, `${threads} threads, reply ${i}: the tokens`);
      }
    }
  });

  test(`${name}: a page that is not cross-origin isolated runs one thread and says why`, { timeout: 600_000 }, async (t) => {
    if (!needSmollm2(t)) return;
    const page = await browsers[name].newPage();
    try {
      await page.goto(`${unisolated.url}models/index.json`);
      const result = await page.evaluate(runInWorker, { threads: 2, model: "smollm2-135m", prompt: PROMPT, settings: SETTINGS, steps: 1 });
      assert.deepEqual(result.threads, { kind: "threads", threads: 1, wanted: 2, max: 1, isolated: false, reason: "this page is not cross-origin isolated", helper_tasks: 0 });
      assert.equal(result.replies.length, 2, "the engine works on its one thread");
    } finally {
      await page.close();
    }
  });
}
