// What the page itself costs a generation: in one headless Chromium, rounds
// that alternate between
//   - the page: the playground with its default panels (every panel a
//     student sees live), greedy, no stop string and the end token banned,
//     Reset, then one Run of T tokens, timed
//     from the click to the T-th token shown and the Run button back;
//   - the engine alone: the same wasm engine and model in a bare page of the
//     same origin, `Playground.start` on the same prompt with the page's own
//     engine settings, then T `Playground.step` calls back to back (each the
//     model call and the step's report, as the worker makes them), timed
//     around the steps.
// The figure is the ratio page / engine of the median tokens/s (the goal:
// at least 0.9); the page's worker's time per token (bench/bench.js's
// __ntpSteps) and the engine call's part of it come beside, to tell the
// worker's extra work from the page's. Speed is measured here, never asserted.
// With --threads=N the page asks its engine for N threads (URL `threads`)
// and the figures say how many it got; the engine alone stays on one (it
// runs on the bare page's own thread, where a thread pool cannot wait).
//
// Usage: node pkg-scripts/bench-page-run.mjs [model] [tokens] [--rounds=N] [--threads=N] [--json]
//   model: default smollm2-135m; tokens: per run (default 64); rounds (default 3); threads (default 1)
//   (after pkg-scripts/build)

import { startServer, launchBrowser, openPage, waitForReady, waitForView } from "../tests/e2e/harness.mjs";
import { positionals, intOption, say, emitJson, describeMs, median, timedRun } from "./bench-common.mjs";

const [model = "smollm2-135m", tokensArg = "64"] = positionals();
const tokens = Number(tokensArg);
const rounds = intOption("rounds", 3, 1);
const threads = intOption("threads", 1, 1);
if (!Number.isInteger(tokens) || tokens < 2) {
  console.error("usage: node pkg-scripts/bench-page-run.mjs [model] [tokens >= 2] [--rounds=N] [--threads=N] [--json]");
  process.exit(2);
}
/** One prompt for both, short enough to leave the run most of the time. */
const PROMPT = "The capital of France is";

const figures = { model, tokens, rounds, threads, threads_in_force: null, prompt: PROMPT, page_tok_s: [], engine_tok_s: [], worker_step_ms: [], worker_engine_ms: [], ratio: null, problems: [] };
const server = await startServer();
const browser = await launchBrowser();
try {
  const bare = await browser.newPage();
  await bare.goto(`${server.url}models/index.json`);
  const eos = await bare.evaluate(loadEngine, { model });
  // No stop string and the end token banned: every run makes all its tokens.
  const query = new URLSearchParams({ model, prompt: PROMPT, temperature: "0", nostop: "1", max_new: String(tokens), tour: "0", bench: "1" });
  if (eos !== null && eos !== undefined) query.set("banned", String(eos));
  query.set("threads", String(threads));
  const { page, errors } = await openPage(browser, new URL(`index.html?${query}`, server.url).href);
  await waitForReady(page, 300000);
  await waitForView(page, (view) => view.threads !== null);
  figures.threads_in_force = await page.evaluate(async () => (await import("./state/store.js")).view.threads);
  if (figures.threads_in_force.threads !== threads) figures.problems.push(`asked for ${threads} threads, the engine uses ${figures.threads_in_force.threads}: ${figures.threads_in_force.reason}`);
  // The page's own settings (greedy, its default rules, the end token banned
  // by nostop): both do the same engine work, and the difference is the page's.
  const settings = await page.evaluate(async () => (await import("./state/store.js")).engineSettings());
  figures.settings = settings;
  // Warm-ups, not counted: compiled code, caches and the first run's allocations.
  await timedRun(page, tokens);
  await bare.evaluate(decodeAlone, { prompt: PROMPT, tokens, settings });
  for (let round = 1; round <= rounds; round++) {
    const alone = await bare.evaluate(decodeAlone, { prompt: PROMPT, tokens, settings });
    const run = await timedRun(page, tokens);
    figures.engine_tok_s.push(alone);
    figures.page_tok_s.push(run.perSecond);
    figures.worker_step_ms.push(...run.step);
    figures.worker_engine_ms.push(...run.engine);
    say(`round ${round}: engine alone ${alone.toFixed(1)} tokens/s; the page's Run ${run.perSecond.toFixed(1)} tokens/s (${(run.perSecond / alone).toFixed(3)}×); ` +
      `worker's time per token ${describeMs(run.step)}, of which the engine call ${describeMs(run.engine)}`);
  }
  figures.problems.push(...errors);
  await bare.close();
  await page.close();
} finally {
  await browser.close();
  await server.close();
}
figures.page_tok_s_median = median(figures.page_tok_s);
figures.engine_tok_s_median = median(figures.engine_tok_s);
figures.ratio = figures.page_tok_s_median / figures.engine_tok_s_median;
say(`${model}: the page's Run on ${figures.threads_in_force?.threads ?? "?"} thread(s) ${figures.page_tok_s_median.toFixed(1)} tokens/s against the engine alone ${figures.engine_tok_s_median.toFixed(1)}: ` +
  `${figures.ratio.toFixed(3)}× (goal: at least 0.9)`);
emitJson(figures);


/**
 * Runs in the bare page: the engine and the model into window.__pg, built
 * from the catalogue's file as the worker builds it.
 * @param {{ model: string }} arg
 * @returns {number|null} the model's end token
 */
async function loadEngine({ model }) {
  const mod = await import("/pkg/nexttoken.js");
  await mod.default();
  const index = await (await fetch("/models/index.json")).json();
  const entry = index.models.find((m) => m.name === model);
  if (!entry) throw new Error(`no model "${model}" in models/index.json`);
  if (entry.gguf) {
    const bytes = new Uint8Array(await (await fetch(`/models/${entry.gguf}`)).arrayBuffer());
    const file = new mod.FileBuffer(bytes.length);
    file.push(bytes);
    window.__pg = mod.Playground.from_gguf_buffer(file, entry.gguf.split("/").pop());
  } else {
    const base = `/models/${entry.path.replace(/[^/]+$/, "")}`;
    const manifestText = await (await fetch(`${base}model.json`)).text();
    const manifest = JSON.parse(manifestText);
    const weights = new Uint8Array(await (await fetch(`${base}${manifest.weights}`)).arrayBuffer());
    const tokenizer = await (await fetch(`${base}${manifest.tokenizer}`)).text();
    window.__pg = mod.Playground.from_files(manifestText, weights, tokenizer);
  }
  return window.__pg.info().eos_id;
}

/**
 * Runs in the bare page: `tokens` steps after the prompt with the page's
 * settings; returns tokens/s of the steps.
 * @param {{ prompt: string, tokens: number, settings: object }} arg
 */
function decodeAlone({ prompt, tokens, settings }) {
  const pg = window.__pg;
  pg.start(prompt, settings);
  const t0 = performance.now();
  for (let i = 0; i < tokens; i++) pg.step(settings);
  return tokens / ((performance.now() - t0) / 1000);
}
