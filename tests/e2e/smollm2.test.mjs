// SmolLM2-135M-Instruct in the page, from its GGUF file (www/models/smollm2/,
// made by pkg-scripts/fetch-smollm2): the picker shows its size before
// loading, the download's progress reaches 100 %, every panel draws from its
// 49,152-token vocabulary and its 30-layer, 3-KV-head cache, steps, chat mode
// with the template's special tokens dimmed, a scored text, and a second
// visit served from the Cache API without fetching the file again.
// Without the file the tests are skipped, saying so (they fail instead with
// NEXTTOKEN_REQUIRE_SMOLLM2=1, as pkg-scripts/test sets it).
//
// Run: pkg-scripts/build, pkg-scripts/fetch-smollm2, then
//      node --test tests/e2e/smollm2.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { SMOLLM2_FILE, needSmollm2, startSuite, stopSuite, waitForReady, screenshot, searchThreeBeams } from "./harness.mjs";

const HAVE = existsSync(SMOLLM2_FILE);
/** Loading takes seconds (a 98 MB download, and the model built in wasm from its blocks). */
const LOAD_MS = 240000;

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;
/** One browser context for the whole file: its Cache API carries over from page to page. */
/** @type {import("playwright-core").BrowserContext} */
let context;

before(async () => {
  if (!HAVE) return;
  ({ server, browser } = await startSuite());
  context = await browser.newContext({ viewport: { width: 1300, height: 900 } });
});
after(async () => {
  await context?.close();
  await stopSuite({ server, browser });
});

/**
 * A page of the shared context that records problems and the requests for
 * the model file.
 * @param {string} query
 */
async function openSmol(query) {
  const page = await context.newPage();
  /** @type {string[]} */
  const errors = [];
  /** @type {string[]} */
  const fileRequests = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.on("request", (r) => { if (r.url().includes("SmolLM2-135M-Instruct")) fileRequests.push(`${r.method()} ${r.url()}`); });
  page.setDefaultTimeout(LOAD_MS);
  await page.goto(new URL(`index.html${query}`, server.url).href);
  return { page, errors, fileRequests };
}

/** Two animation frames and the URL written. */
async function settle(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.waitForFunction(() => document.body.dataset.urlPending !== "true");
}

test("SmolLM2 loads in the page and every panel draws from it", { timeout: 600000 }, async (t) => {
  if (!needSmollm2(t)) return;
  const { page, errors } = await openSmol("?model=bard");
  await waitForReady(page, LOAD_MS);
  // The picker shows the file's size before anything is downloaded.
  await page.waitForFunction(() => /98\.4 MB/.test(document.querySelector("#model-select option[value=smollm2-135m]")?.textContent ?? ""));
  const t0 = Date.now();
  await page.selectOption("#model-select", "smollm2-135m");
  await page.waitForFunction(() => document.body.dataset.ready === "false");
  await waitForReady(page, LOAD_MS);
  t.diagnostic(`load (download from localhost + build + first report): ${Date.now() - t0} ms`);
  const loading = await page.$eval("#loading", (e) => ({ ...e.dataset }));
  assert.equal(loading.percent, "100", `the progress bar reached 100 %: ${JSON.stringify(loading)}`);
  assert.equal(loading.total, "98362432");
  assert.equal(new URL(page.url()).searchParams.get("model"), "smollm2-135m");
  assert.match(await page.textContent("#model-facts"), /49152 tokens · 30 layers · 9 heads \(3 KV\)/);

  // The distribution: ten rows over the full vocabulary, finite, at most 1 in all.
  const probs = await page.$$eval("#p-dist .dist-row .num[data-prob]", (els) => els.map((e) => Number(e.getAttribute("data-prob"))));
  assert.equal(probs.length, 10);
  assert.ok(probs.every((p) => Number.isFinite(p) && p >= 0 && p <= 1), `probabilities: ${probs}`);
  assert.ok(probs.reduce((a, b) => a + b, 0) <= 1 + 1e-9);
  // The KV cache: 30 layers, 3 KV heads.
  const kv = await page.textContent("#p-kv [data-slot=facts]");
  assert.match(kv, /2 · 30 layers · 3 KV heads · \d+ positions · 64 dims/, kv);

  // No stop strings: the default "\n\n" may well be what this prompt
  // produces next, and a stopped generation refuses Step (by design).
  await page.fill("#ctl-stop", "");
  await page.press("#ctl-stop", "Tab"); // the stop strings commit on change
  await page.waitForFunction(() => new URLSearchParams(location.search).has("nostop"));

  // A few steps, each one more token and one more cached position.
  const len0 = Number(await page.getAttribute("#p-kv [data-slot=facts]", "data-len"));
  const stepTimes = [];
  for (let i = 1; i <= 3; i++) {
    const s0 = Date.now();
    await page.click("#btn-step");
    await page.waitForFunction((n) => document.querySelectorAll("#p-output .tok").length === n, i);
    stepTimes.push(Date.now() - s0);
  }
  t.diagnostic(`step click -> token shown: ${stepTimes.join(", ")} ms`);
  await settle(page);
  assert.equal(Number(await page.getAttribute("#p-kv [data-slot=facts]", "data-len")), len0 + 3);
  assert.equal(new URL(page.url()).searchParams.get("steps"), "3");
  await screenshot(page, "smollm2-steps");

  // Beam search, by itself or on Search.
  await searchThreeBeams(page);
  assert.match(await page.textContent("#p-beam [data-slot=note]"), /^3 beams/);

  // Step back: one token fewer, one cached position fewer.
  await page.click("#btn-back");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 2);
  await settle(page);
  assert.equal(Number(await page.getAttribute("#p-kv [data-slot=facts]", "data-len")), len0 + 2);

  // 16 beams of 64 tokens are over the estimate on any machine: the search waits for Search.
  await page.fill("#ctl-beams", "16");
  await page.fill("#ctl-beam_len", "64");
  await page.waitForFunction(() => !document.querySelector("#p-beam [data-action=beam-search]")?.hidden);
  assert.match(await page.textContent("#p-beam [data-slot=note]"), /On this model a search takes about \d/);

  // A search in progress reports its depth, and the next Step cancels it:
  // the step's token comes without waiting for the search to end.
  await page.click("#p-beam [data-action=beam-search]");
  await page.waitForFunction(() => /Searching… depth \d+ of \d+/.test(document.querySelector("#p-beam [data-slot=note]")?.textContent ?? ""));
  const c0 = Date.now();
  await page.click("#btn-step");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 3);
  await page.waitForFunction(() => !/Searching/.test(document.querySelector("#p-beam [data-slot=note]")?.textContent ?? ""));
  t.diagnostic(`step during a beam search -> token shown, search cancelled: ${Date.now() - c0} ms`);
  await settle(page);
  assert.equal(Number(await page.getAttribute("#p-kv [data-slot=facts]", "data-len")), len0 + 3);
  await page.click("#btn-back");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 2);
  await settle(page);
  await page.fill("#ctl-beams", "3");
  await page.fill("#ctl-beam_len", "8");

  // A run never blocks the page: while it runs, a slider move is painted at
  // once on this thread, and Stop settles.
  await page.fill("#ctl-max_new", "200");
  await page.click("#btn-run");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length >= 4);
  const during = await page.evaluate(() => {
    const range = /** @type {HTMLInputElement} */ (document.querySelector("#ctl-temperature-range"));
    const before = document.querySelector("#p-dist [data-slot=head]").textContent;
    const t0 = performance.now();
    range.value = "0.5";
    range.dispatchEvent(new Event("input", { bubbles: true }));
    return { ms: performance.now() - t0, before, after: document.querySelector("#p-dist [data-slot=head]").textContent,
      running: document.querySelector("#btn-run").textContent };
  });
  assert.equal(during.running, "Stop");
  assert.notEqual(during.after, during.before, "the move was painted in its own task");
  assert.ok(during.ms < 200, `the move took ${during.ms} ms on the page's thread`);
  await page.click("#btn-run"); // Stop
  await page.waitForFunction(() => document.querySelector("#btn-run").textContent === "Run");
  assert.match(await page.textContent("#p-output [data-slot=status]"), /stopped by you/);
  // The next change of the prompt stops a run too.
  await page.click("#btn-run");
  await page.waitForFunction(() => document.querySelector("#btn-run").textContent === "Stop");
  await page.fill("#prompt", "The three primary colours are red,");
  await page.waitForFunction(() => document.querySelector("#btn-run").textContent === "Run" &&
    document.body.dataset.ready === "true" && document.querySelectorAll("#p-output .tok").length === 0);
  await page.fill("#ctl-temperature", "1");
  await page.fill("#ctl-max_new", "64");

  // Chat: the prompt is wrapped in the template; its special tokens are dimmed tokens.
  assert.equal(await page.isVisible("#chat-switch"), true, "the chat switch is offered");
  await page.check("#ctl-chat");
  await page.waitForFunction(() => [...document.querySelectorAll("#p-output .tok-special")].some((e) => e.textContent === "<|im_start|>"));
  await waitForReady(page, LOAD_MS);
  await settle(page);
  assert.equal(new URL(page.url()).searchParams.get("chat"), "1");
  const specials = await page.$$eval("#p-output .tok-special", (els) => els.map((e) => [e.textContent, getComputedStyle(e).opacity]));
  assert.ok(specials.length >= 3, `special tokens: ${JSON.stringify(specials)}`);
  assert.ok(specials.every(([, o]) => Number(o) < 1), "dimmed");
  await page.click("#btn-step");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 1);
  await screenshot(page, "smollm2-chat");

  // Score a short text: a rank for every token but the first.
  await page.fill("#score-text", "The cat sat on the mat.");
  await page.click("#btn-score");
  await page.waitForFunction(() => document.querySelectorAll("#p-score .score-text .stok").length > 3);
  const ranks = await page.$$eval("#p-score .score-text .stok", (els) => els.map((e) => e.getAttribute("data-rank")));
  assert.equal(ranks[0], "", "nothing predicts the first token");
  assert.ok(ranks.slice(1).every((r) => Number.isInteger(Number(r)) && Number(r) >= 1), `ranks: ${ranks}`);
  assert.match(await page.textContent("#p-score [data-slot=summary]"), /mean surprisal \d+\.\d{3} bits per token · perplexity \d/);
  await screenshot(page, "smollm2-score");
  assert.deepEqual(errors, []);
  await page.close();
});

test("a second visit reads SmolLM2 from the Cache API, not the network", { timeout: 600000 }, async (t) => {
  if (!needSmollm2(t)) return;
  const { page, errors, fileRequests } = await openSmol("?model=smollm2-135m");
  await waitForReady(page, LOAD_MS);
  assert.deepEqual(fileRequests, [], "no request for SmolLM2's .gguf at all (the picker may ask other catalogue files for their size)");
  assert.match(await page.textContent("#model-select option[value=smollm2-135m]"), /in your browser's cache/);
  assert.match(await page.textContent("#model-facts"), / · 49152 tokens · 30 layers/);
  // The cache's copy, written from views of the engine's memory while the
  // first visit downloaded, is the file byte for byte.
  const digests = await page.evaluate(async () => {
    const sha = async (/** @type {Response} */ res) => {
      const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", await res.arrayBuffer()));
      return Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("");
    };
    const cache = await caches.open("nexttoken-models-v1");
    const keys = (await cache.keys()).filter((r) => r.url.includes("SmolLM2-135M-Instruct"));
    const cached = keys.length === 1 ? await sha(await cache.match(keys[0])) : `${keys.length} entries`;
    const served = await sha(await fetch("/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", { cache: "no-store" }));
    return { cached, served };
  });
  assert.equal(digests.cached, digests.served, "the cached file's SHA-256 is the served file's");
  assert.deepEqual(errors, []);
  await page.close();
});
