// A corrupted model on the page: bard's weights served with one NaN
// embedding row (tied, so also one NaN logit in 2,048 at every position).
// The engine refuses those logits with the position and the count, the page
// shows that message, draws nothing, does not crash, and another model still
// works. (crate/tests/broken_logits.rs is the engine's side.)
//
// Run: pkg-scripts/build, then node --test tests/e2e/broken-model.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { readFile } from "node:fs/promises";
import { startSuite, stopSuite, openPage, waitForReady, forgiveAbsentIndex, WWW_ROOT } from "./harness.mjs";

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => ({ server, browser } = await startSuite()));
after(() => stopSuite({ server, browser }));

/** bard's SafeTensors file with embedding row `row` set to NaN. */
async function poisonedBard(row) {
  const bytes = await readFile(path.join(WWW_ROOT, "models", "bard", "model.safetensors"));
  const headerLen = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLen).toString("utf8"));
  const emb = header["tok_emb.weight"];
  assert.equal(emb.dtype, "F32");
  assert.deepEqual(emb.shape, [2048, 192]);
  const start = 8 + headerLen + emb.data_offsets[0] + row * 192 * 4;
  for (let i = 0; i < 192; i++) bytes.writeFloatLE(NaN, start + 4 * i);
  return bytes;
}

test("a model giving NaN logits is reported with the position and count, nothing is drawn, and the page goes on", async () => {
  const body = await poisonedBard(2047);
  const { page, errors } = await openPage(browser, "about:blank");
  /** @type {string[]} */
  const asked = [];
  page.on("request", (req) => asked.push(new URL(req.url()).pathname));
  await page.route("**/models/bard/model.safetensors", (route) => route.fulfill({ body, contentType: "application/octet-stream" }));
  await page.goto(new URL("index.html?model=bard&tour=0", server.url).href);
  await page.waitForFunction(() => [...document.querySelectorAll("#messages .message span")]
    .some((e) => /the model's logits at position \d+ are broken/.test(e.textContent)), null, { timeout: 60000 });
  const message = await page.$$eval("#messages .message span", (els) =>
    els.map((e) => e.textContent).find((t) => /are broken/.test(t)));
  // The worker's downloads are seen here (what the next test relies on).
  assert.ok(asked.includes("/models/bard/tokenizer.json"), asked.join(" "));
  assert.match(message, /^the model's logits at position \d+ are broken: 1 NaN of 2048 values \(the first at token id 2047\); nothing is sampled from them/);
  // Nothing was drawn, and Step draws nothing either.
  assert.equal(await page.$$eval("#p-output .tok", (els) => els.length), 0);
  if (await page.isEnabled("#btn-step")) {
    await page.click("#btn-step");
    await page.waitForTimeout(500);
    assert.equal(await page.$$eval("#p-output .tok", (els) => els.length), 0);
  }
  // The page goes on: another model loads and steps.
  await page.selectOption("#model-select", "logits10");
  await page.waitForFunction(() => new URLSearchParams(location.search).get("model") === "logits10");
  await waitForReady(page);
  await page.click("#btn-step");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 1, null, { timeout: 60000 });
  // No crash, no uncaught error, no console error: the refusal is a message.
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});

test("a manifest naming a file outside its folder is refused before anything is fetched, and the page falls back", async () => {
  const manifest = JSON.parse(await readFile(path.join(WWW_ROOT, "models", "bard", "model.json"), "utf8"));
  manifest.weights = "../../index.html";
  const { page, errors } = await openPage(browser, "about:blank");
  /** @type {string[]} */
  const asked = [];
  page.on("request", (req) => asked.push(new URL(req.url()).pathname));
  await page.route("**/models/bard/model.json", (route) => route.fulfill({ json: manifest }));
  await page.goto(new URL("index.html?model=bard&tour=0", server.url).href);
  await page.waitForFunction(() => [...document.querySelectorAll("#messages .message span")]
    .some((e) => /must be a file name beside model\.json/.test(e.textContent)), null, { timeout: 60000 });
  const message = await page.$$eval("#messages .message span", (els) => els.map((e) => e.textContent).find((t) => /beside model/.test(t)));
  assert.match(message, /"weights" must be a file name beside model\.json, not "\.\.\/\.\.\/index\.html"/);
  // The fallback (the course's ten logits, since bard is the default) is usable.
  await page.waitForFunction(() => new URLSearchParams(location.search).get("model") === "logits10", null, { timeout: 60000 });
  await waitForReady(page);
  assert.equal(asked.filter((p) => p === "/index.html").length, 1, `only the page itself: ${asked.join(" ")}`);
  assert.equal(asked.some((p) => p.endsWith("/model.safetensors") || p.endsWith("/tokenizer.json")), false, "no model file was fetched");
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});

/** The Cache API's keys for bard's weights, as the worker stored them. */
const cachedWeights = (page) => page.evaluate(async () =>
  (await (await caches.open("nexttoken-models-v1")).keys()).map((r) => r.url).filter((u) => u.includes("/models/bard/model.safetensors")));

test("a download cut short is refused by name, never kept in the cache, and the next try loads the model", async () => {
  const whole = await readFile(path.join(WWW_ROOT, "models", "bard", "model.safetensors"));
  const half = whole.subarray(0, Math.floor(whole.length / 2));
  const { page, errors } = await openPage(browser, "about:blank");
  // The server stops half-way but ends the response cleanly: it looks complete to the browser.
  await page.route("**/models/bard/model.safetensors", (route) => route.fulfill({ body: half, contentType: "application/octet-stream" }));
  await page.goto(new URL("index.html?model=bard&tour=0", server.url).href);
  await page.waitForFunction(() => [...document.querySelectorAll("#messages .message span")]
    .some((e) => /Could not load/.test(e.textContent)), null, { timeout: 60000 });
  const message = await page.$$eval("#messages .message span", (els) => els.map((e) => e.textContent).find((t) => /Could not load/.test(t)));
  assert.match(message, /SafeTensors error: incomplete metadata/);
  await page.waitForFunction(() => new URLSearchParams(location.search).get("model") === "logits10", null, { timeout: 60000 });
  await waitForReady(page);
  assert.deepEqual(await cachedWeights(page), [], "the refused bytes are not kept");

  // The next try (the server whole again) downloads and loads bard.
  await page.unroute("**/models/bard/model.safetensors");
  await page.selectOption("#model-select", "bard");
  await page.waitForFunction(() => new URLSearchParams(location.search).get("model") === "bard");
  await waitForReady(page);
  await page.click("#btn-step");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 1, null, { timeout: 60000 });
  assert.equal((await cachedWeights(page)).length, 1, "a whole download is kept");
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});

test("a download whose connection drops says so, keeps nothing, and can be retried", async () => {
  const { page, errors } = await openPage(browser, "about:blank");
  await page.route("**/models/bard/model.safetensors", (route) => route.abort("connectionreset"));
  await page.goto(new URL("index.html?model=bard&tour=0", server.url).href);
  await page.waitForFunction(() => [...document.querySelectorAll("#messages .message span")]
    .some((e) => /Could not load/.test(e.textContent)), null, { timeout: 60000 });
  await waitForReady(page);
  assert.deepEqual(await cachedWeights(page), []);
  await page.unroute("**/models/bard/model.safetensors");
  await page.selectOption("#model-select", "bard");
  await page.waitForFunction(() => new URLSearchParams(location.search).get("model") === "bard");
  await waitForReady(page);
  // The aborted request is the one failure this test causes on purpose.
  assert.deepEqual(forgiveAbsentIndex(errors).filter((e) => !/model\.safetensors/.test(e)), []);
  await page.close();
});

test("the KV panel says a NaN cache comparison is broken instead of printing a number or throwing", async () => {
  const { page, errors } = await openPage(browser, new URL("index.html?model=logits10&tour=0", server.url).href);
  await waitForReady(page);
  const texts = await page.evaluate(async () => {
    const { renderKv } = await import("./render/kv.js");
    const kv = { len: 3, capacity: 16, layers: 1, kv_heads: 1, head_dim: 4, bytes: 96, bytes_per_number: 4 };
    const counters = { cached: { kv_rows: 3, scores: 6 }, naive: { kv_rows: 6, scores: 10 } };
    return [0.5e-6, Number.NaN, null].map((d) => {
      const root = document.createElement("div");
      renderKv(root, { kv, counters, cacheCheck: { max_abs_diff: d, argmax_agree: true }, useCache: false });
      return root.querySelector(".kv-check").textContent;
    });
  });
  assert.match(texts[0], /up to 5\.00e-7 \(max \|difference\|\); most likely token agrees/);
  for (const t of texts.slice(1)) assert.match(t, /the cached path's logits are not numbers \(NaN\)/);
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});
