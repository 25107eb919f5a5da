// The wasm engine alone on 1 to N threads in headless Chromium: a worker of
// its own (www/worker/bench-engine.js), started with its helper threads on
// its shared memory as the page starts its engine (www/worker/engine-worker.js), stepping a model greedily, with no page beside it painting
// each token. Beside the page's Run on the same thread counts
// (pkg-scripts/bench-page-run.mjs --threads=N), it tells how far the engine
// itself scales from what the page's own work takes of the cores. Rounds
// alternate the thread counts; the figure is each count's median step time
// (the step's report over the whole vocabulary included, as the page's
// worker calls it). A look for engineers: speed is measured, never asserted.
//
// Usage: node pkg-scripts/bench-engine-threads.mjs [model] [--threads=1,2] [--steps=32] [--rounds=2] [--json]
//   model: a name from www/models/index.json with a GGUF file (default smollm2-135m)
//   (after pkg-scripts/build and the model's fetch script)

import { startServer, launchBrowser } from "../tests/e2e/harness.mjs";
import { positionals, intOption, option, say, emitJson } from "./bench-common.mjs";

const [model = "smollm2-135m"] = positionals();
const threads = String(option("threads", "1,2")).split(",").map(Number);
const steps = intOption("steps", 32, 1);
const rounds = intOption("rounds", 2, 1);
if (threads.some((t) => !Number.isInteger(t) || t < 1 || t > 16)) {
  console.error("usage: node pkg-scripts/bench-engine-threads.mjs [model] [--threads=1,2] [--steps=32] [--rounds=2] [--json]");
  process.exit(2);
}
const PROMPT = "The capital of France is";

const server = await startServer();
const browser = await launchBrowser();
try {
  const page = await browser.newPage();
  await page.goto(`${server.url}models/index.json`);
  const out = await page.evaluate(async ({ model, threads, steps, rounds, prompt }) => {
    if (!self.crossOriginIsolated) return { error: "the page is not cross-origin isolated: no threads" };
    const entry = (await (await fetch("/models/index.json")).json()).models.find((m) => m.name === model);
    if (!entry?.gguf) return { error: `no model ${model} with a GGUF file in models/index.json` };
    const { startEngineWorker } = await import("/worker/engine-worker.js");
    const worker = startEngineWorker(new URL("/worker/bench-engine.js", location.href));
    return await new Promise((resolve) => {
      // Its other messages (`start_helpers`) are engine-worker.js's.
      worker.addEventListener("message", (e) => { if (e.data?.results || e.data?.error) resolve(e.data); });
      worker.onerror = (e) => resolve({ error: e.message });
      worker.postMessage({ gguf: `/models/${entry.gguf}`, prompt, steps, threads, rounds });
    });
  }, { model, threads, steps, rounds, prompt: PROMPT });
  if (out.error) throw new Error(out.error);
  const one = out.results.find((r) => r.threads === 1);
  const base = one ? Math.min(...one.step_ms) : null;
  for (const r of out.results) {
    const best = Math.min(...r.step_ms);
    say(`${model}: ${r.threads} thread(s) asked, ${r.in_force} in force: step ${r.step_ms.map((m) => m.toFixed(1)).join(", ")} ms (medians of ${steps} steps, each round), ${(1000 / best).toFixed(1)} tok/s at best${base ? `, ${(base / best).toFixed(2)}x one thread's` : ""}`);
  }
  emitJson({ model, steps, rounds, prompt: PROMPT, results: out.results });
} finally {
  await browser.close();
  await server.close();
}
