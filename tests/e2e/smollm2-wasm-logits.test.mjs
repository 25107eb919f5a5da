// SmolLM2 in the wasm engine (its simd128 block kernels, as the page runs
// them) against llama.cpp itself: for each prompt of the llama.cpp fixture
// (tests/fixtures/smollm2-llamacpp.json, made by pkg-scripts/make-llama-fixture),
// the engine in headless Chromium tokenises the text to llama.cpp's ids, and
// its raw logits at the last position agree with llama.cpp's top 10 within
// the tolerance the native tests use (crate/tests/smollm2_gguf.rs: 1.5 apart,
// 0.75 after removing each side's mean, which is the error in log p_i/p_j):
// the top-10 sets share 9 tokens and the top token is the same wherever
// llama.cpp's margin is wider than that. The native tests check the AVX2 and
// scalar kernels; this is the one check of the wasm kernels against an
// outside reference.
//
// Run: pkg-scripts/build, pkg-scripts/fetch-smollm2, then
//      node --test tests/e2e/smollm2-wasm-logits.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT, SMOLLM2_FILE, checkAgainstLlamaCpp, needSmollm2, startSuite, stopSuite, wasmPromptLogits } from "./harness.mjs";

const FIXTURE = JSON.parse(readFileSync(path.join(REPO_ROOT, "tests", "fixtures", "smollm2-llamacpp.json"), "utf8"));
/** The native tests' tolerance (crate/tests/smollm2_gguf.rs LOGIT_TOLERANCE). */
const TOLERANCE = { abs: 1.5, centred: 0.75 };

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => {
  if (existsSync(SMOLLM2_FILE)) ({ server, browser } = await startSuite());
});
after(() => stopSuite({ server, browser }));

test("the wasm engine's SmolLM2 logits agree with llama.cpp's on every fixture prompt", { timeout: 300000 }, async (t) => {
  if (!needSmollm2(t)) return;
  const page = await browser.newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push(e.message));
  await page.goto(new URL("models/index.json", server.url).href);
  const ours = await wasmPromptLogits(page, SMOLLM2_FILE, FIXTURE.prompts.map((p) => p.text));

  FIXTURE.prompts.forEach((p, i) => {
    const what = `prompt "${p.name}"`;
    assert.deepEqual(ours[i].ids, p.ids, `${what}: llama.cpp's token ids`);
    const ourTop10 = ours[i].top.slice(0, 10).map(([id]) => id);
    const ref = p.top10;
    const overlap = ref.filter(([id]) => ourTop10.includes(id)).length;
    assert.ok(overlap >= 9, `${what}: top-10 overlap ${overlap}/10 (ours ${ourTop10}, llama.cpp ${ref.map(([id]) => id)})`);
    checkAgainstLlamaCpp(t, what, ours[i].top, ref, TOLERANCE);
  });
  assert.deepEqual(problems, []);
  await page.close();
});
