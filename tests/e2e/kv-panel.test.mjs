// The KV panel on a model with sliding-window layers: the tiny Gemma 3 file
// of the llama.cpp fixtures (8 layers, layer 5 global, the others local with
// a window of 8; context 256) opened from disk shows which layers are local
// and which global, and the bytes each kind holds, as the engine reports
// them; a model without windows shows the panel as before; and the painter
// leaves a local row empty where its ring no longer holds the positions.
//
// Run: pkg-scripts/build, then node --test tests/e2e/kv-panel.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { REPO_ROOT, startSuite, stopSuite, openPage, waitForReady } from "./harness.mjs";

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => ({ server, browser } = await startSuite()));
after(() => stopSuite({ server, browser }));

const TINY_GEMMA = path.join(REPO_ROOT, "tests", "fixtures", "families", "gemma3.gguf");

/** What the worker's last report said of the cache, and the panel's text and rows. */
async function panel(page) {
  return page.evaluate(() => {
    const root = document.querySelector("#p-kv");
    const kinds = root.querySelector("[data-slot=kinds]");
    return {
      len: Number(root.querySelector("[data-slot=facts]").getAttribute("data-len")),
      facts: root.querySelector("[data-slot=facts]").textContent,
      kinds: kinds.textContent,
      kindsShown: /** @type {HTMLElement} */ (kinds).style.display !== "none",
      local: root.querySelectorAll(".rows rect[data-kind=local]").length,
      global: root.querySelectorAll(".rows rect[data-kind=global]").length,
    };
  });
}

test("a Gemma 3 file's KV panel names its local and global layers and the bytes each kind holds", { timeout: 120000 }, async () => {
  const { page, errors } = await openPage(browser, new URL("index.html?model=kv-demo&tour=0", server.url).href);
  await waitForReady(page);
  await page.setInputFiles("#gguf-file", TINY_GEMMA);
  await page.waitForFunction(() => document.body.dataset.ready === "false");
  await waitForReady(page, 90000);
  assert.match(await page.textContent("#model-facts"), / · 8 layers/);
  for (let i = 0; i < 3; i++) {
    const before = (await panel(page)).len;
    await page.click("#btn-step");
    await page.waitForFunction((n) => Number(document.querySelector("#p-kv [data-slot=facts]").getAttribute("data-len")) > n, before);
  }
  const p = await panel(page);
  assert.ok(p.kindsShown, "the kinds are told apart");
  // 1 KV head of 32 dims in f16: 128 B per position of a layer, K and V.
  const perPosition = 2 * 1 * 32 * 2;
  assert.match(p.facts, new RegExp(`^${p.len} of 256 positions · .* = 128 B per position of a layer\\)`));
  assert.ok(p.len > 8, `${p.len} positions: past the window`);
  // Far inside the ring (256, the context), the local layers still hold every position.
  const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
  assert.equal(p.kinds,
    `1 global layer (5) holds all ${p.len} positions: ${kib(p.len * perPosition)}. ` +
    `7 local layers (0–4, 6–7) see a window of 8 and hold only the newest ${p.len} positions, a ring of at most 256 ` +
    `(the window, the page being written and a page to step back into): ${kib(7 * p.len * perPosition)}.`);
  assert.deepEqual([p.local, p.global], [7, 1], "one row per layer and KV head, local ones marked");
  assert.deepEqual(errors, []);
  await page.close();
});

test("a model without windows shows the KV panel as before", async () => {
  const { page, errors } = await openPage(browser, new URL("index.html?model=kv-demo&prompt=abc&seed=3&steps=2&tour=0", server.url).href);
  await waitForReady(page);
  await page.waitForFunction(() => Number(document.querySelector("#p-kv [data-slot=facts]").getAttribute("data-len")) >= 4);
  const p = await panel(page);
  assert.equal(p.kindsShown, false);
  assert.equal(p.kinds, "");
  assert.match(p.facts, /^\d+ of 8 positions · .*\(2 · 1 layers · 1 KV heads · \d+ positions · 4 dims · 4 B; /);
  assert.deepEqual([p.local, p.global], [0, 0]);
  assert.deepEqual(errors, []);
  await page.close();
});

test("the painter fills a local row only from the oldest position its ring holds", async () => {
  const { page, errors } = await openPage(browser, new URL("index.html?model=logits10&tour=0", server.url).href);
  await waitForReady(page);
  const rows = await page.evaluate(async () => {
    const { renderKv } = await import("./render/kv.js");
    // 3 layers, layer 1 global; 90 positions, the local layers hold the newest 40.
    const kv = { len: 90, capacity: 1000, layers: 3, kv_heads: 1, head_dim: 4, bytes_per_number: 4, dropped: 0,
      bytes: 2 * 4 * 4 * (90 + 2 * 40), global_bytes: 2 * 4 * 4 * 90, local_bytes: 2 * 4 * 4 * 2 * 40, local_positions: 40 };
    const root = document.createElement("div");
    renderKv(root, { kv, counters: null, cacheCheck: null, useCache: true, window: { size: 32, local_layers: [0, 2], ring: 256 } });
    return [...root.querySelectorAll(".rows rect[data-kind]")].map((r) => ({
      kind: r.getAttribute("data-kind"), x: Number(r.getAttribute("x")), width: Number(r.getAttribute("width")) }));
  });
  assert.deepEqual(rows.map((r) => r.kind), ["local", "global", "local"]);
  const [local, global] = rows;
  // The global row spans all 90 columns; a local one its newest 40 of them, ending where the global one ends.
  const cell = global.width / 90;
  assert.equal(local.width, 40 * cell);
  assert.equal(local.x + local.width, global.x + global.width);
  assert.deepEqual(errors, []);
  await page.close();
});
