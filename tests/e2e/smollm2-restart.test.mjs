// A panic inside the wasm engine while it runs the real model (SmolLM2 from
// its GGUF file): the worker boundary turns it into a message, a fresh worker
// loads the model again (from the Cache API) and restores the session from
// the token history, and generation goes on exactly where it was: greedy
// decoding after the restart draws the tokens an uninterrupted page draws,
// whose first is llama.cpp's greedy token (" Paris", id 7042 in
// tests/fixtures/smollm2-llamacpp.json). The same check on the default model
// is in page-playground.test.mjs.
// Without the model file the test is skipped (fails with NEXTTOKEN_REQUIRE_SMOLLM2=1).
//
// Run: pkg-scripts/build, pkg-scripts/fetch-smollm2, then
//      node --test tests/e2e/smollm2-restart.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT, SMOLLM2_FILE, needSmollm2, startSuite, stopSuite, waitForReady, screenshot, engineWorker, nextEngineWorker, serveEngineThatPanicsOnce } from "./harness.mjs";

const HAVE = existsSync(SMOLLM2_FILE);
const LOAD_MS = 240000;
const PROMPT = "The capital of France is";

let server;
let browser;
/** One context: the second page and the restarted worker read the file from its Cache API. */
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

/** A page of the shared context whose engine's step() can be made to panic once. */
async function openSmol() {
  const page = await context.newPage();
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.setDefaultTimeout(LOAD_MS);
  await serveEngineThatPanicsOnce(page);
  const query = new URLSearchParams({ model: "smollm2-135m", prompt: PROMPT, temperature: "0", nostop: "1" });
  await page.goto(new URL(`index.html?${query}`, server.url).href);
  await waitForReady(page, LOAD_MS);
  return { page, errors };
}

/** Clicks Step and waits for the n-th generated token. */
async function stepTo(page, n) {
  await page.click("#btn-step");
  await page.waitForFunction((want) => document.querySelectorAll("#p-output .tok").length === want && document.body.dataset.ready === "true", n);
}

const tokens = (page) => page.$$eval("#p-output .tok", (els) => els.map((e) => e.textContent));

test("a panic in the engine on SmolLM2 is reported, the worker restarts and the session goes on where it was", { timeout: 900000 }, async (t) => {
  if (!needSmollm2(t)) return;
  const fixture = JSON.parse(readFileSync(path.join(REPO_ROOT, "tests", "fixtures", "smollm2-llamacpp.json"), "utf8"));
  const greedy = fixture.prompts.find((p) => p.text === PROMPT).greedy;
  assert.equal(greedy[0], 7042, "the fixture's greedy token after the prompt");

  // Uninterrupted: four greedy tokens.
  const plain = await openSmol();
  for (let n = 1; n <= 4; n++) await stepTo(plain.page, n);
  const want = await tokens(plain.page);
  assert.equal(want[0].trim(), "Paris", `llama.cpp's greedy token 7042 is " Paris"; the page drew ${JSON.stringify(want)}`);
  await plain.page.close();

  // Interrupted: two tokens, a panic on the third step, then two more.
  const { page, errors } = await openSmol();
  await stepTo(page, 1);
  await stepTo(page, 2);
  const worker = engineWorker(page);
  await worker.evaluate(() => { self.__ntpPanicOnce = true; });
  const t0 = Date.now();
  await page.click("#btn-step");
  await page.waitForFunction(() => /internal error \(unreachable\)/.test(document.querySelector("#messages").textContent));
  await page.waitForFunction(() => document.body.dataset.ready === "true" && document.querySelectorAll("#p-output .tok").length === 2);
  t.diagnostic(`restart (model from the Cache API, session replayed): ${Date.now() - t0} ms`);
  assert.ok(await nextEngineWorker(page, worker), "a fresh worker");
  assert.equal(new URL(page.url()).searchParams.get("model"), "smollm2-135m", "still the real model");
  assert.match(await page.textContent("#model-facts"), /49152 tokens · 30 layers/);
  assert.equal(await page.inputValue("#prompt"), PROMPT);
  assert.deepEqual(await tokens(page), want.slice(0, 2), "the tokens before the panic are kept");
  await stepTo(page, 3);
  await stepTo(page, 4);
  assert.deepEqual(await tokens(page), want, "after the restart greedy decoding draws what the uninterrupted page drew");
  await screenshot(page, "smollm2-after-panic");
  assert.deepEqual(errors, []);
  await page.close();
});
