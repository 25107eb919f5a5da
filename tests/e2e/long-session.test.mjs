// A long session in the page on the default model (bard, context 128): Run
// to the context limit, rewind (clicking a generated token) to points near the
// end, the middle and the start, and Run again, a few hundred tokens in all.
// Every re-run must draw the tokens the first run drew (the seed and the
// rewind restore the draw), the page must stay usable, and the tab's memory
// must stay flat. Then the same with the sliding window (context_policy=
// sliding): a run across the limit several times, with the cache off so
// every step compares the cache with a recompute of the window, a rewind to
// before a slide and a re-run. crate/tests/long_session.rs runs both
// policies natively, and pkg-scripts/long-session the 10,000 tokens.
//
// Run: pkg-scripts/build, then node --test tests/e2e/long-session.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startSuite, stopSuite, openPage, waitForReady, forgiveAbsentIndex, rendererMemory, watchRendererMemory, engineWorker } from "./harness.mjs";

let server;
let browser;
before(async () => { ({ server, browser } = await startSuite()); });
after(async () => { await stopSuite({ server, browser }); });

const tokens = (page) => page.$$eval("#p-output .tok", (els) => els.map((e) => e.textContent));

/**
 * A full garbage collection in the page and in its workers (CDP), so that
 * what is measured is what is kept, not garbage not yet collected (the
 * worker's heap holds every report it sent until its collector runs).
 */
async function collectGarbage(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("HeapProfiler.collectGarbage");
  await cdp.detach();
  const browserCdp = await browser.newBrowserCDPSession();
  const { targetInfos } = await browserCdp.send("Target.getTargets");
  for (const { targetId } of targetInfos.filter((x) => x.type === "worker")) {
    const { sessionId } = await browserCdp.send("Target.attachToTarget", { targetId, flatten: false });
    await browserCdp.send("Target.sendMessageToTarget", { sessionId, message: JSON.stringify({ id: 1, method: "HeapProfiler.collectGarbage" }) });
    await new Promise((r) => setTimeout(r, 300));
    await browserCdp.send("Target.detachFromTarget", { sessionId }).catch(() => {});
  }
  await browserCdp.detach();
}

/** Runs until the page stops by itself (the context is full); the tokens then. */
async function runToTheLimit(page) {
  await page.click("#btn-run");
  await page.waitForFunction(() => document.querySelector("#btn-run").textContent === "Run" &&
    document.body.dataset.ready === "true" &&
    /context is full/.test(document.querySelector("#p-output [data-slot=status]").textContent), null, { timeout: 60000 });
  return tokens(page);
}

/** Clicks the generated token at `n`: the tokens before it stay. */
async function rewindTo(page, n) {
  await page.click(`#p-output .tok[data-step="${n}"]`);
  await page.waitForFunction((want) => document.querySelectorAll("#p-output .tok").length === want &&
    document.body.dataset.ready === "true", n);
}

test("run to the context limit, rewind and re-run many times: the same tokens, a usable page, flat memory", { timeout: 120000 }, async (t) => {
  const { page, errors } = await openPage(browser, "about:blank");
  // The engine as served, plus a way to read its wasm memory's size from the worker.
  await page.route("**/pkg/nexttoken.js", async (route) => {
    const res = await route.fetch();
    await route.fulfill({ response: res, body: `${await res.text()}\nself.__ntpWasmBytes = () => wasm.memory.buffer.byteLength;` });
  });
  await page.goto(new URL("index.html?model=bard&prompt=ROMEO:&temperature=0.9&top_k=50&seed=5&max_new=4096&nostop=1", server.url).href);
  await waitForReady(page);
  const wasmBytes = () => engineWorker(page).evaluate(() => self.__ntpWasmBytes());
  const t0 = Date.now();
  const first = await runToTheLimit(page);
  const n = first.length;
  assert.ok(n > 100, `bard's 128 positions hold the prompt and ${n} tokens`);
  let drawn = n;
  // One rewind and re-run to warm up (the worker's and the renderer's pools).
  await rewindTo(page, n - 20);
  assert.deepEqual(await runToTheLimit(page), first);
  drawn += 20;
  await collectGarbage(page);
  const before = await rendererMemory(browser);
  const wasmBefore = await wasmBytes();
  const watch = watchRendererMemory(browser);
  const points = [n - 1, Math.floor(n / 2), 1, n - 40, Math.floor(n / 3), 0, n - 2, Math.floor((2 * n) / 3)];
  for (const m of points) {
    await rewindTo(page, m);
    assert.deepEqual(await tokens(page), first.slice(0, m), `rewound to ${m}`);
    assert.equal(await page.isDisabled("#btn-step"), false, "Step works after a rewind");
    assert.deepEqual(await runToTheLimit(page), first, `re-run from ${m}`);
    drawn += n - m;
  }
  const peak = await watch.stop();
  await collectGarbage(page);
  const after = await rendererMemory(browser);
  const wasmAfter = await wasmBytes();
  t.diagnostic(`${drawn} tokens drawn, ${points.length + 1} rewinds in ${Date.now() - t0} ms; ` +
    `tab private ${before.anon.toFixed(1)} -> ${after.anon.toFixed(1)} MiB (peak ${peak.anon.toFixed(1)}), ` +
    `resident ${before.rss.toFixed(1)} -> ${after.rss.toFixed(1)} MiB; wasm memory ${wasmBefore} -> ${wasmAfter} bytes`);
  assert.ok(drawn >= 500, `${drawn} tokens`);
  // Flat. The engine's wasm memory (which never shrinks, so any leak of the
  // engine's stays in it) must not have grown at all: bard's KV cache (256 KB
  // at full context) and weights were in it before the first measurement.
  // The tab's private memory, garbage collected, within 8 MB: a leaked report
  // per token on the page (2,048 probabilities, ~16 KB) would be ~10 MB here.
  assert.equal(wasmAfter, wasmBefore, "the engine's wasm memory grew");
  assert.ok(after.anon - before.anon < 8, `the tab's private memory grew by ${(after.anon - before.anon).toFixed(1)} MiB`);
  // And the page is usable: Step draws the next token from a rewound position.
  await rewindTo(page, 5);
  await page.click("#btn-step");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 6 && document.body.dataset.ready === "true");
  assert.deepEqual(await tokens(page), first.slice(0, 6));
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});

test("the sliding window in the page: a run across the limit three times, the cache equal to a recompute, a rewind to before a slide re-runs the same tokens", { timeout: 120000 }, async () => {
  const total = 340;
  const { page, errors } = await openPage(browser, new URL(
    `index.html?model=bard&prompt=ROMEO:&temperature=0.9&top_k=50&seed=11&max_new=${total}&nostop=1&context_policy=sliding&use_cache=0`, server.url).href);
  await waitForReady(page);
  assert.equal(await page.inputValue("#ctl-context_policy"), "sliding", "the control shows the URL's policy");
  const runToTheEnd = async () => {
    await page.click("#btn-run");
    await page.waitForFunction((want) => document.querySelector("#btn-run").textContent === "Run" &&
      document.body.dataset.ready === "true" && document.querySelectorAll("#p-output .tok").length === want, total, { timeout: 90000 });
    return tokens(page);
  };
  const first = await runToTheEnd();
  // 6 prompt tokens + 340 in a context of 128: the window slid at least twice.
  assert.equal(first.length, total);
  assert.doesNotMatch(await page.textContent("#p-output [data-slot=status]"), /context is full/);
  // With the cache off every step compares the cached logits with the recompute of the window.
  const kv = await page.textContent("#p-kv");
  const diff = Number(/([0-9.]+e[-+][0-9]+) \(max \|difference\|\)/.exec(kv)?.[1]);
  assert.ok(Number.isFinite(diff) && diff < 1e-3, `cache against recompute after the slides: ${diff} (${kv.slice(0, 200)})`);
  // Rewind to before the last slide and run again: the same tokens (a
  // token with a visible text is clicked: a newline's span has no box).
  const at = first.findIndex((text, i) => i >= 150 && text.trim().length > 0);
  await rewindTo(page, at);
  assert.deepEqual(await tokens(page), first.slice(0, at));
  assert.deepEqual(await runToTheEnd(), first, `the re-run from ${at} draws the first run's tokens`);
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});
