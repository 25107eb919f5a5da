// The page's side of the engine's threads: the `threads` URL parameter (a bad
// value is said and keeps auto), the Threads select in More controls, the
// `threads` request sent to every new worker before anything else and on each
// change (without reloading the model or stopping a run), and the readout
// beside the speed, which shows the worker's answer, never the page's wish.
// www/state/url.js runs here in node (it is pure), the page in Chromium.
// That the threads give the same answers as one is
// tests/e2e/threads-identical.test.mjs's.
// Over 400 lines: one suite of the page's threads, whose tests share a
// server, a browser and the helpers that open a page on N threads.
//
// Run: pkg-scripts/build, then node --test tests/e2e/threads.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import os from "node:os";
import {
  startSuite, stopSuite, startServer, openPage, waitForReady, waitForView, recordWorkerMessages,
  needSmollm2, forgiveAbsentIndex, screenshot, ARTIFACTS_DIR, engineWorker, nextEngineWorker, serveEngineThatPanicsOnce,
} from "./harness.mjs";
import { parseQuery, formatQuery } from "../../www/state/url.js";

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => ({ server, browser } = await startSuite()));
after(() => stopSuite({ server, browser }));

/** The readout's threads figure. */
const READOUT = "#speed [data-slot=threads]";

/**
 * Open the page (recording what it posts to its worker) and wait until the
 * engine has painted and the worker has answered the threads request.
 * @param {string} query
 * @param {{ on?: { url: string }, width?: number, height?: number }} [opts] on: another server
 */
async function openThreads(query, { on = server, width = 1300, height = 900 } = {}) {
  const { page, errors } = await openPage(browser, "about:blank", { viewport: { width, height } });
  await recordWorkerMessages(page);
  await page.goto(new URL(`index.html${query}`, on.url).href);
  await waitForReady(page);
  await waitForView(page, (view) => view.threads !== null);
  return { page, problems: () => forgiveAbsentIndex(errors) };
}

/** @param {import("playwright-core").Page} page @returns {Promise<string>} the readout's text once painted */
async function readout(page) {
  await page.waitForSelector(`${READOUT}:not([hidden])`, { state: "attached" });
  return (await page.textContent(READOUT)) ?? "";
}

/** @param {import("playwright-core").Page} page @returns {Promise<string[]>} the types posted to the worker so far */
const sent = (page) => page.evaluate(() => window.__sent.slice());

/** @param {import("playwright-core").Page} page @returns {Promise<number>} */
const cores = (page) => page.evaluate(() => navigator.hardwareConcurrency);

/**
 * This machine's cores, where the engine can take every one of them with
 * helpers; null (the test skipped) where it cannot.
 * @param {import("node:test").TestContext} t
 * @returns {number | null}
 */
function everyCoreOrSkip(t) {
  const cpus = os.availableParallelism();
  if (cpus >= 2 && cpus <= 16) return cpus;
  t.skip(`${cpus} cores: the engine cannot take every core with helpers here`);
  return null;
}

test("threads in a link: auto or 1 … the cores; anything else is said and keeps auto; the default is not written", () => {
  const had = Object.getOwnPropertyDescriptor(globalThis, "navigator");
  // node 20 has no navigator: this device has 4 cores for the parser.
  Object.defineProperty(globalThis, "navigator", { value: { hardwareConcurrency: 4 }, configurable: true });
  try {
    assert.equal(parseQuery("").state.threads, "auto");
    assert.equal(parseQuery("?threads=auto").state.threads, "auto");
    for (const n of [1, 2, 4]) {
      const { state, problems } = parseQuery(`?threads=${n}`);
      assert.deepEqual(problems, []);
      assert.equal(state.threads, n);
      assert.equal(formatQuery(state), `?threads=${n}`);
      assert.deepEqual(parseQuery(formatQuery(state)).state, state, "read back to the same view");
    }
    for (const bad of ["0", "-1", "abc", "2.5", "5", "", "1e1", "Auto"]) {
      const { state, problems } = parseQuery(`?threads=${encodeURIComponent(bad)}`);
      assert.equal(state.threads, "auto", `threads=${bad}`);
      assert.deepEqual(problems, [`threads=${bad}: must be auto or a whole number from 1 to 4 (this device's cores); using auto`]);
    }
    assert.equal(formatQuery(parseQuery("?threads=auto&model=bard").state), "?model=bard", "auto is not written");
    const embed = new URLSearchParams(formatQuery(parseQuery("?threads=3&embed=1").state));
    assert.equal(embed.get("threads"), "3", "in an embed's link too");
  } finally {
    if (had) Object.defineProperty(globalThis, "navigator", had);
    else delete globalThis.navigator;
  }
});

for (const bad of ["abc", "0"]) {
  test(`threads=${bad}: the page says so, works, and the control is on auto`, async () => {
    const { page, problems } = await openThreads(`?model=logits10&threads=${bad}&tour=0`);
    assert.match(await page.textContent("#messages"), new RegExp(`threads=${bad}: must be auto or a whole number from 1 to \\d+`));
    assert.equal(await page.inputValue("#ctl-threads"), "auto");
    await page.click("#btn-step");
    await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 1);
    await page.waitForFunction(() => !document.body.dataset.urlPending);
    assert.equal(new URL(page.url()).searchParams.has("threads"), false, "the bad value is not written back");
    assert.equal((await sent(page)).filter((t) => t === "threads").length, 1, "the worker was told once, at its start");
    assert.deepEqual(problems(), []);
    await page.close();
  });
}

test("the Threads select in More controls: auto and 1 … the cores; choosing 1 tells the worker, reloads nothing, and the readout says 1 thread", async () => {
  const { page, problems } = await openThreads("?model=bard&seed=3&tour=0");
  const n = await cores(page);
  assert.equal(await page.locator("#ctl-more #ctl-threads").count(), 1, "under More controls");
  const options = await page.$$eval("#ctl-threads option", (os) => os.map((o) => [o.value, o.textContent]));
  // auto: the cores but one (the page's own thread keeps one), at least 1, at most 8.
  assert.deepEqual(options, [["auto", `auto (${Math.min(Math.max(n - 1, 1), 8)})`], ...Array.from({ length: n }, (_, i) => [String(i + 1), String(i + 1)])]);
  assert.equal(await page.inputValue("#ctl-threads"), "auto");
  // Labelled, and described by its help and by what the worker answered.
  assert.equal(await page.textContent("label[for=ctl-threads]"), "Threads");
  assert.match(await page.textContent("#ctl-threads-help"), /text is the same with any number/);

  await page.click("#btn-step");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 1);
  const text = await page.textContent("#p-output [data-slot=text]");
  const before = await sent(page);
  assert.equal(before[0], "threads", `the new worker is told its threads first: ${before.join(", ")}`);
  await page.selectOption("#ctl-threads", "1");
  await waitForView(page, (view) => view.threads?.wanted === 1);
  assert.equal(await readout(page), "1 thread");
  assert.equal(await page.textContent("#ctl-threads-now"), "1 thread in force");
  await page.waitForFunction(() => new URLSearchParams(location.search).get("threads") === "1");
  const after = (await sent(page)).slice(before.length);
  assert.ok(after.includes("threads"), `a threads request: ${after.join(", ")}`);
  assert.ok(!after.includes("load") && !after.includes("reset"), `no reload, no new prompt: ${after.join(", ")}`);
  assert.equal(await page.textContent("#p-output [data-slot=text]"), text, "the generated text stays");

  // Keyboard: back to auto from the focused select.
  await page.focus("#ctl-threads");
  await page.keyboard.press("Home");
  await page.waitForFunction(() => !new URLSearchParams(location.search).has("threads"));
  assert.equal(await page.inputValue("#ctl-threads"), "auto");
  assert.deepEqual(problems(), []);
  await page.close();
});

test("changing the threads during a run neither stops it nor reloads the model (SmolLM2)", async (t) => {
  // A real model, so the products are split when the change comes, and a
  // run far longer than the test (4,000 tokens at tens a second).
  if (!needSmollm2(t)) return;
  const { page, problems } = await openThreads("?model=smollm2-135m&temperature=0&nostop=1&max_new=4000&tour=0");
  await page.click("#btn-run");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length >= 3);
  const before = (await sent(page)).length;
  await page.selectOption("#ctl-threads", "1");
  await waitForView(page, (view) => view.threads?.wanted === 1);
  const at = await page.evaluate(() => document.querySelectorAll("#p-output .tok").length);
  await page.waitForFunction((k) => document.querySelectorAll("#p-output .tok").length >= k + 10, at);
  assert.equal(await page.textContent("#btn-run"), "Stop", "still running");
  await page.click("#btn-run");
  await page.waitForFunction(() => document.querySelector("#btn-run").textContent === "Run");
  const after = (await sent(page)).slice(before);
  assert.ok(!after.includes("load") && !after.includes("reset"), `no reload: ${after.join(", ")}`);
  assert.deepEqual(problems(), []);
  await page.close();
});

test("a worker started after a crash is told the threads before its model", async () => {
  const { page, errors } = await openPage(browser, "about:blank");
  await recordWorkerMessages(page);
  await serveEngineThatPanicsOnce(page);
  await page.goto(new URL("index.html?model=kv-demo&prompt=abc&threads=1&tour=0", server.url).href);
  await waitForReady(page);
  await waitForView(page, (view) => view.threads !== null);
  const worker = engineWorker(page);
  await worker.evaluate(() => { self.__ntpPanicOnce = true; });
  await page.click("#btn-step");
  await page.waitForFunction(() => /internal error \(unreachable\)/.test(document.querySelector("#messages").textContent));
  await waitForReady(page);
  await waitForView(page, (view) => view.threads?.wanted === 1);
  const types = (await sent(page)).filter((t) => t === "threads" || t === "load");
  assert.deepEqual(types, ["threads", "load", "threads", "load"], "each worker: its threads, then its model");
  assert.equal(await readout(page), "1 thread");
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});

test("on a page that is not cross-origin isolated, threads=2 reads 1 thread and says why", async (t) => {
  const plain = await startServer({ isolation: false });
  try {
    const { page, problems } = await openThreads("?model=logits10&threads=2&tour=0", { on: plain });
    if ((await cores(page)) < 2) { t.skip("this device has one core: threads=2 is not a choice here"); await page.close(); return; }
    assert.equal(await page.evaluate(() => crossOriginIsolated), false);
    assert.equal(await page.inputValue("#ctl-threads"), "2", "the wish stays the user's");
    assert.equal(await readout(page), "1 thread: this page is not cross-origin isolated");
    assert.equal(await page.getAttribute(READOUT, "data-wanted"), "2");
    assert.equal(await page.getAttribute(READOUT, "data-threads"), "1");
    assert.equal(await page.textContent("#ctl-threads-now"), "1 thread in force: this page is not cross-origin isolated");
    assert.deepEqual(problems(), []);
    await page.close();
  } finally {
    await plain.close();
  }
});

test("on an isolated page, threads=2 reads 2 threads and steps (SmolLM2)", async (t) => {
    if (!needSmollm2(t)) return;
    const { page, problems } = await openThreads("?model=smollm2-135m&threads=2&temperature=0&tour=0");
    if ((await cores(page)) < 2) { t.skip("this device has one core: threads=2 is not a choice here"); await page.close(); return; }
    assert.equal(await page.evaluate(() => crossOriginIsolated), true);
    assert.equal(await readout(page), "2 threads");
    await page.click("#btn-step");
    await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 1);
    assert.deepEqual(problems(), []);
    await page.close();
  });

test("where the engine's threads take every core, its helpers take no band while the page answers an input or paints, until that frame is painted; the tokens are the same (SmolLM2)", async (t) => {
  if (!needSmollm2(t)) return;
  const cpus = everyCoreOrSkip(t);
  if (cpus === null) return;
  const { page, problems } = await openThreads(`?model=smollm2-135m&threads=${cpus}&temperature=0&nostop=1&tour=0`);
  assert.equal(await cores(page), cpus);
  assert.equal(await readout(page), `${cpus} threads`);
  const worker = engineWorker(page);
  const helperTasks = () => worker.evaluate(async () => (await import(new URL("../pkg/nexttoken.js", self.location.href).href)).thread_helper_tasks());
  /**
   * Hold the pause as a caller, beside the page's own holds for its paints,
   * whose releases leave it held; read it back.
   * @param {boolean} on
   */
  const pause = (on) => page.evaluate(async (on) => {
    const { pauseHelpers, helpersPaused, PAUSED_BY } = await import("./worker/engine-worker.js");
    const { client } = await import("./engine/link.js");
    pauseHelpers(client.worker, on, PAUSED_BY.caller);
    return helpersPaused(client.worker, PAUSED_BY.caller);
  }, on);
  // One step at a time: a helper held aside for 200 ms in a row takes bands
  // again (a holder may never end its pause), and a step takes far less.
  const step = async (n) => {
    for (let i = 0; i < n; i++) {
      const k = await page.evaluate(() => document.querySelectorAll("#p-output .tok").length);
      await page.evaluate(() => /** @type {HTMLButtonElement} */ (document.querySelector("#btn-step")).click());
      await page.waitForFunction((k) => document.querySelectorAll("#p-output .tok").length === k + 1, k);
    }
    return page.evaluate(() => [...document.querySelectorAll("#p-output .tok")].map((e) => e.textContent));
  };

  // An input, and a paint of the panels, set the pause in their own task;
  // the next painted frame ends it.
  for (const what of ["input", "paint"]) {
    const seen = await page.evaluate(async (what) => {
      const { helpersPaused } = await import("./worker/engine-worker.js");
      const { client } = await import("./engine/link.js");
      const before = helpersPaused(client.worker);
      if (what === "input") document.querySelector("#prompt").dispatchEvent(new KeyboardEvent("keydown", { key: "Shift", bubbles: true }));
      else (await import("./panels/frame.js")).renderAll();
      const inTask = helpersPaused(client.worker);
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      await new Promise((r) => setTimeout(r, 0));
      return { before, inTask, after: helpersPaused(client.worker) };
    }, what);
    assert.deepEqual(seen, { before: false, inTask: true, after: false }, `${what}: paused in its task, free once its frame is painted`);
  }

  // Held paused: the engine's own thread takes every band.
  const paused = [];
  let before = 0;
  for (let i = 0; i < 3; i++) {
    assert.equal(await pause(true), true);
    // A paint's pause comes and goes within its frame; the caller's stays.
    const held = await page.evaluate(async () => {
      const { helpersPaused } = await import("./worker/engine-worker.js");
      const { client } = await import("./engine/link.js");
      (await import("./panels/frame.js")).renderAll();
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      await new Promise((r) => setTimeout(r, 0));
      return helpersPaused(client.worker);
    });
    assert.equal(held, true, "a paint's release leaves the caller's pause held");
    before = await helperTasks();
    paused.splice(0, Infinity, ...await step(1));
    assert.equal(await helperTasks(), before, `no band went to a helper while paused (step ${i + 1})`);
    assert.equal(await pause(false), false);
  }
  await page.click("#btn-reset");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 0);
  await waitForReady(page);
  const free = await step(3);
  assert.ok(await helperTasks() > before, "the helpers take bands again");
  assert.deepEqual(paused, free, "the same greedy tokens with the helpers paused and not");
  assert.deepEqual(problems(), []);
  await page.close();
});

test("where the engine's threads take every core, a Run paints its panels at most five times a second (SmolLM2)", async (t) => {
  if (!needSmollm2(t)) return;
  const cpus = everyCoreOrSkip(t);
  if (cpus === null) return;
  const { page, problems } = await openThreads(`?model=smollm2-135m&threads=${cpus}&temperature=0&nostop=1&max_new=48&tour=0`);
  assert.equal(await readout(page), `${cpus} threads`);
  // The Run's paints, counted from its click to its last paint.
  await page.evaluate(async () => {
    const { on } = await import("./state/events.js");
    const { view } = await import("./state/store.js");
    const count = { paints: 0, t0: performance.now(), last: 0 };
    window.__runPaints = count;
    on("painted", (d) => { if (view.running && !d.preview) { count.paints++; count.last = performance.now(); } });
    /** @type {HTMLButtonElement} */ (document.querySelector("#btn-run")).click();
  });
  await waitForView(page, (view) => !view.running && view.transcript.generated.length > 0);
  const { paints, ms, tokens, every } = await page.evaluate(async () => {
    const { view } = await import("./state/store.js");
    const { paints, t0, last } = window.__runPaints;
    const { RUN_PAINT_EVERY_MS_ALL_CORES: every } = await import("./panels/frame.js");
    return { paints, ms: last - t0, tokens: view.transcript.generated.length, every };
  });
  assert.equal(tokens, 48, "the Run made its tokens");
  assert.equal(every, 200, "five paints a second");
  // One paint per interval, and the Run's first and last come at once.
  assert.ok(paints <= Math.ceil(ms / every) + 2, `${paints} paints during a ${ms.toFixed(0)} ms Run of ${tokens} tokens`);
  await waitForView(page, (view) => view.beam !== null && !view.beamBusy); // the beam search a run's end starts, done
  // A report's paint that the interval put off comes at the next frame once
  // the run ends, not an interval later: a run's last token, and the Run
  // button back, show at once.
  const late = await page.evaluate(async () => {
    const store = await import("./state/store.js");
    const { scheduleRender, renderAll } = await import("./panels/frame.js");
    const { on } = await import("./state/events.js");
    // No paint pending from before (its frame would paint what follows early).
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    store.setRunning(true);
    const t0 = performance.now();
    renderAll(); // a run's paint: the next waits for the interval
    scheduleRender(); // a report's paint, put off
    store.setRunning(false); // the run ends
    const painted = new Promise((resolve) => on("painted", () => resolve(performance.now() - t0)));
    scheduleRender(); // its end's paint
    return await painted;
  });
  assert.ok(late < every, `the run's end painted ${late.toFixed(0)} ms after the run's last paint: the interval (${every} ms) held it back`);
  assert.deepEqual(problems(), []);
  await page.close();
});

test("a panic in a helper thread's band restarts the engine instead of leaving it waiting, and the new one has its helpers (SmolLM2)", async (t) => {
  if (!needSmollm2(t)) return;
  const { page, errors } = await openPage(browser, "about:blank");
  await page.goto(new URL("index.html?model=smollm2-135m&threads=2&temperature=0&tour=0", server.url).href);
  await waitForReady(page);
  await waitForView(page, (view) => view.threads !== null);
  if ((await cores(page)) < 2) { t.skip("this device has one core: threads=2 is not a choice here"); await page.close(); return; }
  assert.equal(await readout(page), "2 threads");
  const worker = engineWorker(page);
  await worker.evaluate(async () => (await import(new URL("../pkg/nexttoken.js", self.location.href).href)).thread_fault_next_helper_task());
  // The helper panics in the first band it claims; a step on SmolLM2 splits
  // its output head, but the engine's own thread may take every band of one.
  const crashed = () => page.evaluate(() => /internal error \(unreachable\)/.test(document.querySelector("#messages").textContent));
  for (let i = 0; i < 5 && !(await crashed()); i++) {
    const k = await page.evaluate(() => document.querySelectorAll("#p-output .tok").length);
    await page.click("#btn-step");
    await page.waitForFunction((k) => document.querySelectorAll("#p-output .tok").length > k || /internal error/.test(document.querySelector("#messages").textContent), k);
  }
  await page.waitForFunction(() => /internal error \(unreachable\)/.test(document.querySelector("#messages").textContent));
  const panics = errors.filter((e) => /panicked/.test(e));
  assert.ok(panics.some((e) => /a fault injected into helper 1's band/.test(e)), `the helper's panic: ${errors.join(" | ")}`);
  assert.ok(panics.some((e) => /engine helper thread 1 stopped in the middle of a matrix product/.test(e)), `the engine's thread stopped waiting: ${errors.join(" | ")}`);
  const fresh = await nextEngineWorker(page, worker);
  assert.ok(fresh, "a fresh worker");
  await waitForReady(page);
  // The view keeps the threads reply's counts, not its helpers' tasks: those
  // are read from the new worker itself, before and after a step.
  await waitForView(page, (view) => view.threads?.threads === 2);
  const freshTasks = () => fresh.evaluate(async () => (await import(new URL("../pkg/nexttoken.js", self.location.href).href)).thread_helper_tasks());
  const before = await freshTasks();
  const tokens = await page.evaluate(() => document.querySelectorAll("#p-output .tok").length);
  // The button's own click: a pointer event would stand the helpers aside
  // (stand-aside.js) for the frame in which the step may run.
  await page.evaluate(() => /** @type {HTMLButtonElement} */ (document.querySelector("#btn-step")).click());
  await page.waitForFunction((k) => document.querySelectorAll("#p-output .tok").length === k + 1, tokens);
  assert.ok(await freshTasks() > before, "the new worker's helpers take bands");
  assert.equal(await readout(page), "2 threads");
  assert.deepEqual(forgiveAbsentIndex(errors).filter((e) => !panics.includes(e)), []);
  await page.close();
});

test("screenshots: the Threads control in More controls at 1280×800 and 390 wide", async () => {
  for (const [width, height, name] of [[1280, 800, "threads-1280"], [390, 844, "threads-390"]]) {
    const { page, problems } = await openThreads("?model=bard&tour=0", { width, height });
    await page.click("#btn-step");
    await page.waitForSelector(`${READOUT}:not([hidden])`, { state: "attached" });
    await page.click("#btn-more-controls");
    await page.locator("#ctl-threads").scrollIntoViewIfNeeded();
    assert.ok(await page.isVisible("#ctl-threads"), `the select is shown at ${width} px`);
    await screenshot(page, name);
    await page.screenshot({ path: path.join(ARTIFACTS_DIR, `${name}-viewport.png`) });
    assert.deepEqual(problems(), []);
    await page.close();
  }
});
