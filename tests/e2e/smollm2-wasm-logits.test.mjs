// SmolLM2 in the wasm engine (its block kernels, as the page runs them, in
// both of its modules: simd128, and relaxed-simd, which must give the same
// numbers bit for bit) against llama.cpp itself: for each prompt of the llama.cpp fixture
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
import { REPO_ROOT, SMOLLM2_FILE, checkAgainstLlamaCpp, needSmollm2, originPage, startSuite, stopSuite, wasmPromptLogits } from "./harness.mjs";
import { ENGINE_MODULES } from "../../www/worker/engine-wasm.js";

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

test("the wasm engine's SmolLM2 logits agree with llama.cpp's on every fixture prompt, in both of its modules, which agree bit for bit", { timeout: 300000 }, async (t) => {
  if (!needSmollm2(t)) return;
  const { page, problems } = await originPage(browser, server);
  const prompts = FIXTURE.prompts.map((p) => p.text);
  const ours = await wasmPromptLogits(page, SMOLLM2_FILE, prompts, ENGINE_MODULES.simd128);
  assert.equal(await page.evaluate(async () => (await import("/worker/engine-wasm.js")).hasRelaxedSimd()), true,
    "this Chromium has relaxed SIMD");
  const relaxed = await wasmPromptLogits(page, SMOLLM2_FILE, prompts, ENGINE_MODULES.relaxed);
  // Exactly: the relaxed byte dot product sums the same integers.
  assert.deepEqual(relaxed, ours, "the relaxed-simd module's ids and logits are the simd128 module's");

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

test("the packed vocabulary the page's Previewer gets names SmolLM2's tokens as the engine does", { timeout: 300000 }, async (t) => {
  if (!needSmollm2(t)) return;
  const { page, problems } = await originPage(browser, server);
  const url = "/" + path.relative(path.join(REPO_ROOT, "www"), SMOLLM2_FILE);
  const out = await page.evaluate(async (url) => {
    const mod = await import("/pkg/nexttoken.js");
    await mod.default();
    const pg = mod.Playground.from_gguf(new Uint8Array(await (await fetch(url)).arrayBuffer()), "smollm2.gguf");
    // A prompt whose next tokens include spaces, newlines and punctuation.
    const settings = { temperature: 1.3, top_n: 50, stop: [] };
    pg.start("Lists:\n1. apples,\n2. pears;\n3.", settings);
    // Written into the JS arrays tens of KB at a time (vocab_packed): a
    // slip at a flush would shift every entry after it.
    const [bytes, ends] = pg.vocab_packed();
    const previewer = mod.Previewer.from_packed(bytes, ends);
    previewer.set_state(pg.pending_logits(), pg.history(), pg.pending_position());
    const rows = (d) => d.raw_top.map((r) => [r.id, r.text, r.display]);
    const decoder = new TextDecoder("utf-8", { fatal: true });
    const entry = (i) => decoder.decode(bytes.subarray(i === 0 ? 0 : ends[i - 1], ends[i]));
    const n = pg.info().vocab_size;
    const engine = rows(pg.preview(settings));
    return {
      n, ends: ends.length, bytes: bytes.length, last: ends[ends.length - 1], textBytes: ends[n - 1],
      engine, page: rows(previewer.preview(settings)),
      // The same tokens' entries, read off the wire by hand.
      wire: engine.map(([id]) => [id, entry(id), entry(n + id)]),
    };
  }, url);
  assert.equal(out.n, 49152);
  assert.equal(out.ends, 2 * out.n, "two offsets a token");
  assert.equal(out.last, out.bytes, "the offsets end at the bytes' end");
  assert.equal(out.engine.length, 50);
  assert.deepEqual(out.page, out.engine, "the page's top 50 (ids, texts, visible forms) are the engine's");
  // A visible form is on the wire only where it is not the text's own (an
  // empty entry: the Previewer derives it, as the comparison above checks).
  out.engine.forEach(([id, text, display], i) => {
    const [, wireText, wireDisplay] = out.wire[i];
    assert.equal(wireText, text, `token ${id}'s text on the wire`);
    assert.ok(wireDisplay === "" || wireDisplay === display, `token ${id}'s visible form on the wire: ${JSON.stringify(wireDisplay)}`);
  });
  assert.ok(out.wire.some(([, , d]) => d === ""), "the derivable visible forms are left off the wire");
  const displayBytes = out.bytes - out.textBytes;
  assert.ok(displayBytes < out.textBytes / 10, `the visible forms written take ${displayBytes} bytes beside the texts' ${out.textBytes}`);
  assert.deepEqual(problems, []);
  await page.close();
});
