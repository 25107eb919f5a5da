// What the benchmark scripts share: their command-line options, the
// statistics they report, the one JSON line each prints for pkg-scripts/bench
// (with --json), the prefill and decode lengths of a model, and one timed
// Run of the playground page.
// Speed is measured, never asserted: nothing here fails on a slow figure.

import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** SmolLM2's GGUF under www/ (pkg-scripts/fetch-smollm2 puts it there), as the page's URL path. */
export const SMOLLM2_URL_PATH = "models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
/** The built-in models (crate/src/builtin.rs), which need no files. */
export const BUILTINS = ["logits10", "bigram-abc", "kv-demo"];

/**
 * `--name=value` from argv, or the default; `--name` alone is "true".
 * @param {string} name
 * @param {string} [fallback]
 * @returns {string|undefined}
 */
export function option(name, fallback) {
  const hit = process.argv.slice(2).find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (hit === undefined) return fallback;
  return hit.includes("=") ? hit.slice(hit.indexOf("=") + 1) : "true";
}

/**
 * A whole-number option, checked.
 * @param {string} name
 * @param {number} fallback
 * @param {number} [min]
 */
export function intOption(name, fallback, min = 0) {
  const raw = option(name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) {
    console.error(`--${name}=${raw}: want a whole number >= ${min}`);
    process.exit(2);
  }
  return n;
}

/** The arguments that are not --options. */
export function positionals() {
  return process.argv.slice(2).filter((a) => !a.startsWith("--"));
}

/** Whether --json was given: the figures go to stdout as one JSON line, the readable lines to stderr. */
export const JSON_MODE = process.argv.includes("--json");

/** A readable line: stdout normally, stderr in --json mode (stdout then carries only the JSON). */
export function say(...parts) {
  (JSON_MODE ? console.error : console.log)(...parts);
}

/**
 * Print the figures for pkg-scripts/bench (--json mode only): one line of JSON, the last on stdout.
 * @param {object} figures
 */
export function emitJson(figures) {
  if (JSON_MODE) console.log(JSON.stringify(figures));
}

/**
 * The q-quantile of a list (nearest rank), or null for an empty one.
 * @param {number[]} xs
 * @param {number} q in [0, 1]
 */
export function quantile(xs, q) {
  const s = xs.filter((x) => typeof x === "number" && Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return null;
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

/** @param {number[]} xs */
export const median = (xs) => quantile(xs, 0.5);

/**
 * Wait until the machine's processors are nearly idle (under 10% busy over
 * 100 ms, from /proc/stat), at most `maxMs`; where /proc/stat cannot be
 * read, a second. A load timed after it does not share the processors with
 * the browser's own start-up work.
 * @param {number} [maxMs]
 */
export async function machineIdle(maxMs = 3000) {
  const { readFile } = await import("node:fs/promises");
  const busy = async () => {
    const fields = (await readFile("/proc/stat", "utf8")).split("\n", 1)[0].trim().split(/\s+/).slice(1).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    return { busy: total - fields[3] - (fields[4] ?? 0), total };
  };
  const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const start = Date.now();
  try {
    let before = await busy();
    while (Date.now() - start < maxMs) {
      await pause(100);
      const now = await busy();
      if ((now.busy - before.busy) < 0.1 * Math.max(1, now.total - before.total)) return;
      before = now;
    }
  } catch {
    await pause(1000);
  }
}

/**
 * Median, 95th percentile, extremes and count of a list of milliseconds.
 * @param {number[]} ms
 * @returns {{ p50: number|null, p95: number|null, min: number|null, max: number|null, n: number }}
 */
export function stats(ms) {
  const v = ms.filter((x) => typeof x === "number" && Number.isFinite(x));
  return { p50: quantile(v, 0.5), p95: quantile(v, 0.95), min: quantile(v, 0), max: quantile(v, 1), n: v.length };
}

/**
 * "median 13.6 ms, p95 14.3 ms, n = 300"
 * @param {number[]} ms
 */
export function describeMs(ms) {
  const s = stats(ms);
  if (!s.n) return "no samples";
  return `median ${s.p50.toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms, n = ${s.n}`;
}

/**
 * The prompt and decode lengths every engine is timed with on a model of
 * this context: a 64-token prompt and 128 decode steps after it, shortened
 * to fit (bard: 64 + 64 of 128; kv-demo: 4 + 4 of 8). The native CLI, the
 * browser and llama.cpp all use the same lengths.
 * @param {number} context
 * @returns {{ prefill: number, decode: number }}
 */
export function benchLengths(context) {
  const prefill = Math.max(1, Math.min(64, Math.floor(context / 2)));
  return { prefill, decode: Math.max(1, Math.min(128, context - prefill)) };
}

/**
 * On a playground page opened with `bench=1` and max_new = `tokens`: Reset,
 * then one Run of `tokens` tokens, timed from the click to the last token
 * shown and the Run button back; with the worker's time per token
 * (bench/bench.js's __ntpSteps) and the engine call's part of it.
 * @param {import("playwright-core").Page} page
 * @param {number} tokens
 * @returns {Promise<{ step: number[], engine: number[], perSecond: number }>}
 */
export async function timedRun(page, tokens) {
  await page.click("#btn-reset");
  await page.waitForFunction(() => document.body.dataset.ready === "true" && document.querySelectorAll("#p-output .tok").length === 0, null, { timeout: 60000 });
  await page.evaluate(() => { window.__ntpSteps.length = 0; window.__ntpStepsEngine.length = 0; });
  // Clicked and watched from inside the page, by a MutationObserver, on the
  // page's clock. A `waitForFunction` polls on every animation frame, so the
  // page drew a frame at every vsync of the run (5.4 a token on Gemma 3,
  // traced), work a student's page does not do, which on 2 cores took CPU
  // from the engine's threads.
  const ms = await page.evaluate((n) => new Promise((resolve, reject) => {
    const run = /** @type {HTMLButtonElement} */ (document.querySelector("#btn-run"));
    const done = () => document.querySelectorAll("#p-output .tok").length >= n && run.textContent === "Run";
    const observer = new MutationObserver(() => {
      if (!done()) return;
      observer.disconnect();
      clearTimeout(timer);
      resolve(performance.now() - t0);
    });
    const timer = setTimeout(() => { observer.disconnect(); reject(new Error(`the Run did not show ${n} tokens in 300 s`)); }, 300000);
    observer.observe(document.body, { childList: true, subtree: true, characterData: true });
    const t0 = performance.now();
    run.click();
  }), tokens);
  return { step: await page.evaluate(() => window.__ntpSteps.slice()), engine: await page.evaluate(() => window.__ntpStepsEngine.slice()), perSecond: tokens / (ms / 1000) };
}

/**
 * Up to `n` Step clicks on the page, each timed from the click to the
 * output panel showing one more token. Stops early, saying why, when Step
 * is disabled (the generation stopped) or no token comes.
 * @param {import("playwright-core").Page} page
 * @param {number} n
 * @returns {Promise<{ times: number[], stopped: string|null }>}
 */
export async function timedSteps(page, n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const shown = await page.evaluate(() => document.querySelectorAll("#p-output .tok").length);
    if (await page.isDisabled("#btn-step")) {
      const why = await page.textContent("#p-output .stop, #messages").catch(() => "");
      return { times, stopped: `step ${i + 1}: Step is disabled (${why || "the generation stopped"})` };
    }
    const t0 = performance.now();
    await page.click("#btn-step");
    try {
      await page.waitForFunction((k) => document.querySelectorAll("#p-output .tok").length > k, shown, { timeout: 60000 });
    } catch {
      return { times, stopped: `step ${i + 1}: no new token (a stop condition?)` };
    }
    times.push(performance.now() - t0);
  }
  return { times, stopped: null };
}
