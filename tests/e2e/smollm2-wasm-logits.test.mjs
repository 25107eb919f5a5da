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
import { REPO_ROOT, SMOLLM2_FILE, needSmollm2, startSuite, stopSuite } from "./harness.mjs";

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
  const url = "/" + path.relative(path.join(REPO_ROOT, "www"), SMOLLM2_FILE);
  const ours = await page.evaluate(async ({ url, prompts }) => {
    const mod = await import("/pkg/nexttoken.js");
    await mod.default();
    const res = await fetch(url);
    const file = new mod.FileBuffer(Number(res.headers.get("content-length")));
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      file.push(value);
    }
    const pg = mod.Playground.from_gguf_buffer(file, url.split("/").pop());
    // Fifty raw rows: llama.cpp's top 10 are among them whenever the logits agree.
    const settings = { temperature: 0, top_n: 50, stop: [] };
    return prompts.map(({ text }) => {
      const rep = pg.start(text, settings);
      return { ids: rep.full.prompt_tokens.map((p) => p.id), top: rep.distribution.raw_top.map((r) => [r.id, r.logit]) };
    });
  }, { url, prompts: FIXTURE.prompts.map((p) => ({ text: p.text })) });

  FIXTURE.prompts.forEach((p, i) => {
    const what = `prompt "${p.name}"`;
    assert.deepEqual(ours[i].ids, p.ids, `${what}: llama.cpp's token ids`);
    const logit = new Map(ours[i].top);
    const ourTop10 = ours[i].top.slice(0, 10).map(([id]) => id);
    const ref = p.top10;
    const overlap = ref.filter(([id]) => ourTop10.includes(id)).length;
    assert.ok(overlap >= 9, `${what}: top-10 overlap ${overlap}/10 (ours ${ourTop10}, llama.cpp ${ref.map(([id]) => id)})`);
    if (ref[0][1] - ref[1][1] > TOLERANCE.centred) assert.equal(ourTop10[0], ref[0][0], `${what}: the top token`);
    for (const [id] of ref) assert.ok(logit.has(id), `${what}: llama.cpp's token ${id} is not in our top 50`);
    const ourMean = ref.reduce((s, [id]) => s + logit.get(id), 0) / ref.length;
    const refMean = ref.reduce((s, [, l]) => s + l, 0) / ref.length;
    let abs = 0, centred = 0;
    for (const [id, l] of ref) {
      const d = logit.get(id) - l;
      abs = Math.max(abs, Math.abs(d));
      centred = Math.max(centred, Math.abs(d - (ourMean - refMean)));
    }
    t.diagnostic(`${what}: max gap ${abs.toFixed(3)}, centred ${centred.toFixed(3)}`);
    assert.ok(abs <= TOLERANCE.abs && centred <= TOLERANCE.centred, `${what}: logits differ from llama.cpp's by ${abs} (centred ${centred})`);
  });
  assert.deepEqual(problems, []);
  await page.close();
});
