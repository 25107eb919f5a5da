// Gemma 3 270M, the second real model (www/models/gemma3/, made by
// pkg-scripts/fetch-gemma3), in the browser:
// - the wasm engine (its simd128 kernels for Q4_K, Q5_0, Q6_K and Q8_0, the
//   SentencePiece tokenizer with BOS, the gemma3 decoder) against llama.cpp
//   on every prompt of tests/fixtures/gemma3-llamacpp.json (written by
//   pkg-scripts/make-family-fixtures): llama.cpp's token ids, the same top
//   token wherever llama.cpp's margin is wider than the tolerance, and the
//   logits of llama.cpp's top 10 within the fixture's tolerance (1.5 times
//   llama.cpp's own 8-bit activation rounding on this file; the native
//   crate/tests/gemma3_gguf.rs uses the same);
// - the page: the picker offers it, it loads, every panel draws from its
//   262,144-token vocabulary, greedy steps write llama.cpp's greedy text,
//   a step back, a scored text, beam search, the URL and the KV panel's
//   local and global layers work, and an embed shows its chosen panels.
// Without the file the tests are skipped, saying so (they fail instead with
// NEXTTOKEN_REQUIRE_GEMMA3=1, as pkg-scripts/test sets it).
//
// Run: pkg-scripts/build, pkg-scripts/fetch-gemma3, then
//      node --test tests/e2e/gemma3.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { GEMMA3_FILE, REPO_ROOT, checkAgainstLlamaCpp, needGemma3, originPage, screenshot, searchThreeBeams, startSuite, stopSuite, waitForReady, wasmPromptLogits } from "./harness.mjs";

const FIXTURE = JSON.parse(readFileSync(path.join(REPO_ROOT, "tests", "fixtures", "gemma3-llamacpp.json"), "utf8"));
const TOLERANCE = FIXTURE.tolerance;
/** A 253 MB file read into wasm memory, and a 262,144-piece vocabulary built. */
const LOAD_MS = 300000;

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => {
  if (existsSync(GEMMA3_FILE)) ({ server, browser } = await startSuite());
});
after(() => stopSuite({ server, browser }));

test("the wasm engine's Gemma 3 logits agree with llama.cpp's on every fixture prompt and after the long text", { timeout: LOAD_MS }, async (t) => {
  if (!needGemma3(t)) return;
  const { page, problems } = await originPage(browser, server);
  // The long text is the fixture's teacher-forced one, read from the start
  // in one prefill: its last position is past the local layers' window of
  // 512 and past the 768 positions of their ring, so its logits are right
  // only if the ring dropped and reused pages as the window moved.
  const tf = FIXTURE.teacher_forced;
  const ours = await wasmPromptLogits(page, GEMMA3_FILE, [...FIXTURE.prompts.map((p) => p.text), tf.text]);

  FIXTURE.prompts.forEach((p, i) => {
    const what = `prompt "${p.name}"`;
    assert.deepEqual(ours[i].ids, p.ids, `${what}: llama.cpp's token ids (BOS first)`);
    checkAgainstLlamaCpp(t, what, ours[i].top, p.top10, TOLERANCE);
  });
  const long = ours[FIXTURE.prompts.length];
  const n = tf.ids.length;
  assert.ok(n > 768 && tf.positions.at(-1) === n - 1, `the fixture's text (${n} tokens) is longer than the ring`);
  assert.deepEqual(long.ids, tf.ids, "the long text's token ids are llama.cpp's");
  checkAgainstLlamaCpp(t, `the ${n}-token text's last position`, long.top, tf.top10.at(-1), TOLERANCE);
  assert.deepEqual(problems, []);
  await page.close();
});

test("Gemma 3 loads in the page, draws from its 262,144-token vocabulary and steps as llama.cpp", { timeout: 600000 }, async (t) => {
  if (!needGemma3(t)) return;
  // The prompt whose greedy run has the widest margins in llama.cpp (3 and
  // more over its first eight steps), so the greedy tokens are the same
  // within the tolerance.
  const p = FIXTURE.prompts.find((q) => q.name === "numbers");
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.setDefaultTimeout(LOAD_MS);
  const query = new URLSearchParams({ model: "gemma3-270m", prompt: p.text, temperature: "0", nostop: "1" });
  const t0 = Date.now();
  await page.goto(new URL(`index.html?${query}`, server.url).href);
  await waitForReady(page, LOAD_MS);
  t.diagnostic(`open to first distribution (download from localhost + build + first report): ${Date.now() - t0} ms`);
  assert.match(await page.textContent("#model-facts"), /262144 tokens · 18 layers · 4 heads \(1 KV\)/);

  const probs = await page.$$eval("#p-dist .dist-row .num[data-prob]", (els) => els.map((e) => Number(e.getAttribute("data-prob"))));
  assert.equal(probs.length, 10);
  assert.ok(probs.every((x) => Number.isFinite(x) && x >= 0 && x <= 1), `probabilities: ${probs}`);
  assert.ok(probs.reduce((a, b) => a + b, 0) <= 1 + 1e-9);

  // Greedy steps write llama.cpp's greedy tokens.
  const steps = 6;
  for (let i = 1; i <= steps; i++) {
    await page.click("#btn-step");
    await page.waitForFunction((n) => document.querySelectorAll("#p-output .tok").length === n, i);
  }
  const text = await page.$$eval("#p-output .tok", (els) => els.map((e) => e.textContent).join(""));
  assert.ok(text.trim().length > 0 && p.greedy_text.startsWith(text),
    `greedy text ${JSON.stringify(text)} is not how llama.cpp's greedy run ${JSON.stringify(p.greedy_text)} starts`);
  await screenshot(page, "gemma3-steps-1280x800");

  // The URL keeps the model and the steps, so a link reopens this view.
  const url = new URL(page.url());
  assert.equal(url.searchParams.get("model"), "gemma3-270m");
  assert.equal(url.searchParams.get("steps"), String(steps));

  // The KV panel names Gemma's three global layers (5, 11 and 17, every
  // sixth) and its fifteen local ones with their 512-token window.
  const kinds = await page.textContent("#p-kv [data-slot=kinds]");
  assert.match(kinds, /^3 global layers \(5, 11, 17\) hold all \d+ positions/);
  assert.match(kinds, /15 local layers \([^)]*\) see a window of 512/);

  // Beam search runs on Gemma too.
  await searchThreeBeams(page);
  assert.match(await page.textContent("#p-beam [data-slot=note]"), /^3 beams/);

  // Step back: one token fewer.
  await page.click("#btn-back");
  await page.waitForFunction((n) => document.querySelectorAll("#p-output .tok").length === n, steps - 1);

  // Score a text: a rank for every token the model predicts, and the summary.
  await page.fill("#score-text", "The cat sat on the mat.");
  await page.click("#btn-score");
  await page.waitForFunction(() => document.querySelectorAll("#p-score .score-text .stok").length > 3);
  const ranks = await page.$$eval("#p-score .score-text .stok", (els) => els.map((e) => e.getAttribute("data-rank")));
  assert.ok(ranks.slice(1).every((r) => Number.isInteger(Number(r)) && Number(r) >= 1), `ranks: ${ranks}`);
  assert.match(await page.textContent("#p-score [data-slot=summary]"), /mean surprisal \d+\.\d{3} bits per token · perplexity \d/);
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, "gemma3-steps-390x844");
  assert.deepEqual(errors, []);
  await context.close();
});

test("a course author's embed of Gemma 3 shows only its chosen panels, over the whole vocabulary", { timeout: LOAD_MS }, async (t) => {
  if (!needGemma3(t)) return;
  const context = await browser.newContext({ viewport: { width: 720, height: 800 } });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.setDefaultTimeout(LOAD_MS);
  const p = FIXTURE.prompts.find((q) => q.name === "numbers");
  const query = new URLSearchParams({ model: "gemma3-270m", embed: "1", panels: "dist,kv", prompt: p.text, temperature: "0" });
  await page.goto(new URL(`index.html?${query}`, server.url).href);
  await waitForReady(page, LOAD_MS);
  const visible = await page.$$eval("section.panel", (els) => els.filter((e) => e.offsetParent !== null).map((e) => e.id));
  assert.deepEqual(visible, ["p-dist", "p-kv"]);
  assert.equal(await page.isVisible("header.top"), false);
  // The top row is llama.cpp's top token after this prompt.
  const top = await page.getAttribute("#p-dist .dist-row [data-action=ban]", "data-id");
  assert.equal(Number(top), p.top10[0][0], "the embed's top token is llama.cpp's");
  await screenshot(page, "gemma3-embed-720");
  assert.deepEqual(errors, []);
  await context.close();
});
