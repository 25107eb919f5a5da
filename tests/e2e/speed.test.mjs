// The speed readout under the Step/Run buttons: prefill and decode tokens per
// second and the last step's time, timed by the engine's worker and sent with
// each step report (www/PROTOCOL.md, "timing"). Real headless Chromium, the
// real wasm engine. No speed is asserted, only that the figures are there,
// positive and finite, and that they count the tokens that were generated.
//
// Run alone: node --test tests/e2e/speed.test.mjs   (after pkg-scripts/build)

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startSuite, stopSuite, openPage, waitForReady } from "./harness.mjs";

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => ({ server, browser } = await startSuite()));
after(() => stopSuite({ server, browser }));

/**
 * Open the page at 1280×800 and wait until the engine has painted.
 * @param {string} query
 */
async function openPlayground(query) {
  const { page, errors } = await openPage(browser, new URL(`index.html${query}`, server.url).href,
    { viewport: { width: 1280, height: 800 } });
  await waitForReady(page);
  return { page, errors };
}

/**
 * The readout as shown: its text and the unrounded figures in its data-*
 * attributes (a rate or time is "" when it was under one tick of the clock).
 * @param {import("playwright-core").Page} page
 */
async function readout(page) {
  return page.$eval("#speed", (el) => ({
    hidden: el.hidden,
    text: el.textContent,
    prefillTokens: Number(el.dataset.prefillTokens),
    prefillTokS: el.dataset.prefillTokS,
    decodeTokens: Number(el.dataset.decodeTokens),
    decodeTokS: el.dataset.decodeTokS,
    lastStepMs: el.dataset.lastStepMs,
  }));
}

/** The prompt's token count and the generated count, from the output panel's status line. */
async function counts(page) {
  const status = await page.textContent("#p-output [data-slot=status]");
  const m = /^(\d+) prompt tokens, (\d+) generated/.exec(status);
  assert.ok(m, `status line: ${status}`);
  return { prompt: Number(m[1]), generated: Number(m[2]) };
}

/**
 * Click Step and wait for the readout to count one more decode step.
 * @param {import("playwright-core").Page} page
 * @param {number} n the count expected after the click
 */
async function step(page, n) {
  await page.click("#btn-step");
  await page.waitForFunction((k) => document.querySelector("#speed").dataset.decodeTokens === String(k), n);
}

/**
 * A figure that must be measured: a positive, finite number.
 * @param {string} value
 * @param {string} what
 */
function assertPositive(value, what) {
  const x = Number(value);
  assert.ok(value !== "" && Number.isFinite(x) && x > 0, `${what}: ${JSON.stringify(value)}`);
}

test("bard: the readout shows prefill and decode tokens/s and the last step's time, counting the steps run", async () => {
  const { page, errors } = await openPlayground("?model=bard&nostop=1&max_new=9&seed=3");
  // After the load the prompt is prefilled: the readout is there, with no decode step yet.
  let r = await readout(page);
  const { prompt } = await counts(page);
  assert.equal(r.hidden, false);
  assert.equal(r.prefillTokens, prompt, "the prefill counts the prompt's tokens");
  assertPositive(r.prefillTokS, "prefill tok/s");
  assert.equal(r.decodeTokens, 0);
  assert.match(r.text, /prefill [\d,.]+ tok\/s/);

  for (let n = 1; n <= 3; n++) await step(page, n);
  r = await readout(page);
  assert.equal(r.decodeTokens, 3, "three Step clicks, three decode steps");
  assert.equal((await counts(page)).generated, 3);
  assertPositive(r.decodeTokS, "decode tok/s");
  assertPositive(r.lastStepMs, "last step ms");
  assert.match(r.text, /decode [\d,.]+ tok\/s \(3 tokens\)/);
  assert.match(r.text, /last step [\d,.]+ ms/);
  // The rate is the step count over the steps' total time, so one step's time
  // is at most the whole: 1 / rate (s) >= last step / 3.
  assert.ok(3000 / Number(r.decodeTokS) >= Number(r.lastStepMs) - 1e-9);

  // Run goes on to max_new = 9: six more steps, each timed.
  await page.click("#btn-run");
  await page.waitForFunction(() => /max new tokens/.test(document.querySelector("#p-output [data-slot=status]").textContent));
  r = await readout(page);
  assert.equal((await counts(page)).generated, 9);
  assert.equal(r.decodeTokens, 9, "the readout counts the run's tokens after the steps'");
  assertPositive(r.decodeTokS, "decode tok/s after the run");

  // Reset prefills the prompt again: a new count starts.
  await page.click("#btn-reset");
  await page.waitForFunction(() => document.querySelector("#speed").dataset.decodeTokens === "0");
  r = await readout(page);
  assert.equal(r.prefillTokens, prompt);
  assertPositive(r.prefillTokS, "prefill tok/s after Reset");
  assert.match(r.text, /decode – \(no token yet\)/);

  // Visible with the Step button, without scrolling, at 1280×800.
  const box = await page.locator("#speed").boundingBox();
  assert.ok(box && box.y >= 0 && box.y + box.height <= 800, `readout at ${JSON.stringify(box)}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test("kv-demo (built in): the readout counts each step; a time under the clock's tick reads as such, never as a number", async () => {
  const { page, errors } = await openPlayground("?model=kv-demo&nostop=1");
  const { prompt } = await counts(page);
  for (let n = 1; n <= 3; n++) await step(page, n);
  const r = await readout(page);
  assert.equal(r.prefillTokens, prompt);
  assert.equal(r.decodeTokens, 3);
  assert.equal((await counts(page)).generated, 3);
  // A toy model's step can take less than the 0.1 ms the browser's clock
  // resolves: then the figure is empty and the text says so; when a time
  // was measured, it is a positive, finite number.
  for (const [value, what] of [[r.prefillTokS, "prefill tok/s"], [r.decodeTokS, "decode tok/s"], [r.lastStepMs, "last step ms"]]) {
    if (value !== "") assertPositive(value, what);
  }
  if (r.decodeTokS === "") assert.match(r.text, /decode too fast to time/);
  else assert.match(r.text, /decode [\d,.]+ tok\/s \(3 tokens\)/);
  assert.deepEqual(errors, []);
  await page.close();
});
