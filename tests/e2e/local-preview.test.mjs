// Browser tests of the main-thread preview (www/engine/local-preview.js): a slider
// move is answered on the page's own thread from the worker's pending logits.
// The expectation is independent of that path: a separate engine worker, started
// by the test inside the page, loads the same model, starts the same prompt and
// answers `preview` for the same settings (the worker protocol, PROTOCOL.md).
//
// Run: pkg-scripts/build, then node --test tests/e2e/local-preview.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startSuite, stopSuite, openPage, waitForReady, recordWorkerMessages } from "./harness.mjs";

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => ({ server, browser } = await startSuite()));
after(() => stopSuite({ server, browser }));

/** Wait for the pending paints and the URL update (two animation frames). */
async function settle(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.waitForFunction(() => document.body.dataset.urlPending !== "true"); // the URL is written after the paint
}

/**
 * The replies of a fresh engine worker, started by the test inside the page
 * (not the page's, so nothing of the page's state is shared), to `messages`
 * sent one after another, each awaited; typed arrays come back as arrays.
 * @param {import("playwright-core").Page} page
 * @param {object[]} messages requests with ids (PROTOCOL.md)
 * @returns {Promise<any[]>}
 */
async function freshWorkerReplies(page, messages) {
  return page.evaluate(async (msgs) => {
    const worker = new Worker(new URL("worker/worker.js", location.href), { type: "module" });
    const ask = (msg) => new Promise((resolve, reject) => {
      worker.onmessage = (e) => {
        if (e.data.id !== msg.id || e.data.type === "progress") return;
        if (e.data.type === "error") reject(new Error(e.data.message)); else resolve(e.data);
      };
      worker.postMessage(msg);
    });
    const plain = (v) => (ArrayBuffer.isView(v) ? Array.from(v) : Array.isArray(v) ? v.map(plain)
      : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)])) : v);
    try {
      const replies = [];
      for (const m of msgs) replies.push(plain(await ask(m)));
      return replies;
    } finally {
      worker.terminate();
    }
  }, messages);
}

/**
 * The worker's own preview for the page's current settings and prompt, from a fresh worker.
 * @param {import("playwright-core").Page} page
 * @returns {Promise<any>} the Distribution
 */
async function workerPreview(page) {
  const { model, prompt, settings } = await page.evaluate(async () => {
    const { parseQuery } = await import("./state/url.js");
    const { toEngineSettings } = await import("./state/settings.js");
    const parsed = parseQuery(location.search).state;
    const prompt = /** @type {HTMLTextAreaElement} */ (document.querySelector("#prompt")).value;
    return { model: parsed.model, prompt, settings: toEngineSettings(parsed.settings) };
  });
  const replies = await freshWorkerReplies(page, [
    { id: 1, type: "load", model: { builtin: model } },
    { id: 2, type: "reset", prompt, settings },
    { id: 3, type: "preview", settings },
  ]);
  return replies[2].distribution;
}

/** The final probabilities of the top tokens and the p_max the page shows. */
async function shownNumbers(page) {
  return page.evaluate(() => ({
    probs: [...document.querySelectorAll("#p-dist .dist-row .num[data-prob]")].map((e) => Number(e.getAttribute("data-prob"))),
    pMax: Number(document.querySelector("#p-dist [data-slot=head]").getAttribute("data-pmax")),
    head: document.querySelector("#p-dist [data-slot=head]").textContent,
    source: document.body.dataset.previewSource,
  }));
}

test("a keyboard slider move is previewed on the page's thread with the worker's numbers", async () => {
  const { page, errors } = await openPage(browser, new URL("index.html?model=logits10&temperature=0.5&top_k=4", server.url).href);
  await waitForReady(page);
  await page.waitForSelector("body[data-local-preview=true]", { state: "attached", timeout: 30000 });

  // five steps of 0.01 up the temperature slider, by keyboard
  await page.focus("#ctl-temperature-range");
  for (let i = 0; i < 5; i++) await page.keyboard.press("ArrowRight");
  await settle(page);
  assert.equal(new URL(page.url()).searchParams.get("temperature"), "0.55");
  const shown = await shownNumbers(page);
  assert.equal(shown.source, "local", "the main-thread previewer answered");

  const expected = await workerPreview(page);
  const final = expected.stages[expected.stages.length - 1];
  const expectedProbs = final.top.map((t) => t.prob);
  const expectedMax = Math.max(...expectedProbs);
  assert.equal(shown.probs.length, expectedProbs.length);
  // The page's previewer receives the logits as f32; logits10's values are exact in f32.
  shown.probs.forEach((p, i) => assert.ok(Math.abs(p - expectedProbs[i]) < 1e-9, `token ${i}: ${p} vs worker ${expectedProbs[i]}`));
  assert.ok(Math.abs(shown.pMax - expectedMax) < 1e-9, `p_max ${shown.pMax} vs worker ${expectedMax}`);
  // top_k = 4 keeps four tokens: the rest show probability 0 after the rules
  assert.equal(shown.probs.filter((p) => p > 0).length, 4);
  assert.match(shown.head, new RegExp(`p_max = ${expectedMax.toFixed(6).replace(".", "\\.")}`));
  // (the one thing forgiven: the 404 of an absent models/index.json)
  assert.deepEqual(errors.filter((e) => !/models\/index\.json|Failed to load resource/.test(e)), []);
  await page.close();
});

test("the panels hold the new numbers in the same task as the input event", async () => {
  const { page } = await openPage(browser, new URL("index.html?model=logits10&temperature=0.5", server.url).href);
  await waitForReady(page);
  await page.waitForSelector("body[data-local-preview=true]", { state: "attached", timeout: 30000 });
  // No await between the event and the read: only a synchronous paint passes.
  const head = await page.evaluate(() => {
    const range = /** @type {HTMLInputElement} */ (document.querySelector("#ctl-temperature-range"));
    range.value = "1";
    range.dispatchEvent(new Event("input", { bubbles: true }));
    return document.querySelector("#p-dist [data-slot=head]").textContent;
  });
  // tau = 1 on the course's logits: softmax(3, 2.5, ..., -1.5) has p_max = e^3 / sum
  const z = [3.0, 2.5, 2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0, -1.5];
  const pMax = Math.exp(3) / z.reduce((s, v) => s + Math.exp(v), 0);
  assert.match(head, new RegExp(`p_max = ${pMax.toFixed(6).replace(".", "\\.")}`));
  await page.close();
});

test("a bad value typed in the number box is still refused and the numbers stay", async () => {
  const { page } = await openPage(browser, new URL("index.html?model=logits10&temperature=0.5", server.url).href);
  await waitForReady(page);
  await page.waitForSelector("body[data-local-preview=true]", { state: "attached", timeout: 30000 });
  await page.focus("#ctl-temperature-range");
  await page.keyboard.press("ArrowRight"); // 0.51, previewed here
  await settle(page);
  const before = await shownNumbers(page);
  assert.equal(before.source, "local");
  await page.fill("#ctl-temperature", "-1");
  await settle(page);
  assert.match(await page.textContent("#ctl-temperature-msg"), /at least 0.*keeping 0\.51/);
  assert.equal(new URL(page.url()).searchParams.get("temperature"), "0.51");
  const after = await shownNumbers(page);
  assert.deepEqual(after.probs, before.probs);
  await page.close();
});

test("a slider move during a run is previewed here once and reaches the run as run_settings, not as a second preview", async () => {
  const { page, errors } = await openPage(browser, "about:blank");
  await recordWorkerMessages(page);
  await page.goto(new URL("index.html?model=logits10&max_new=4000&nostop=1&seed=5", server.url).href);
  await waitForReady(page);
  await page.waitForSelector("body[data-local-preview=true]", { state: "attached", timeout: 30000 });
  const count = () => page.evaluate(() => document.querySelectorAll("#p-output .tok").length);
  await page.click("#btn-run");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length >= 3);
  const sentBefore = await page.evaluate(() => window.__sent.length);
  // top-k = 1 during the run: every later token is the most likely one
  await page.fill("#ctl-top_k", "1");
  const movedAt = await count();
  await page.waitForFunction((n) => document.querySelectorAll("#p-output .tok").length >= n + 30, movedAt);
  await page.click("#btn-run"); // Stop
  await page.waitForFunction(() => document.querySelector("#btn-run").textContent === "Run");
  const sent = await page.evaluate((k) => window.__sent.slice(k), sentBefore);
  assert.ok(sent.includes("run_settings"), `the run was told: ${sent.join(", ")}`);
  assert.ok(!sent.includes("preview"), `no second preview in the worker: ${sent.join(", ")}`);
  // Tokens drawn before the message got in keep their rank (how many were in
  // flight depends on the machine's load); from then on every token is the
  // top one. Ten top tokens in a row by chance at tau = 1 would be p ~ 1e-4.
  const ranks = await page.$$eval("#p-output .tok", (els) => els.map((e) => Number(/rank (\d+)/.exec(e.title)[1])));
  const later = ranks.slice(movedAt);
  const lastOther = later.findLastIndex((r) => r !== 1);
  assert.ok(later.length - (lastOther + 1) >= 10, `ranks after top-k = 1 end in at least ten 1s: ${later.join(",")}`);
  assert.equal(await page.evaluate(() => document.body.dataset.previewSource), "local");
  assert.deepEqual(errors.filter((e) => !/models\/index\.json|Failed to load resource/.test(e)), []);
  await page.close();
});

test("the logits arrays the page hands back are refilled with each report's own logits", async () => {
  const { page, errors } = await openPage(browser, "about:blank");
  await recordWorkerMessages(page);
  // Keep a copy of every report's pending logits as it arrives, before the
  // page copies them into its Previewer and hands the array back.
  await page.addInitScript(() => {
    window.__pendingLogits = [];
    const desc = Object.getOwnPropertyDescriptor(Worker.prototype, "onmessage");
    Object.defineProperty(Worker.prototype, "onmessage", {
      get() { return desc.get.call(this); },
      set(fn) {
        desc.set.call(this, (e) => {
          if (e.data?.pending?.logits) window.__pendingLogits.push(Array.from(e.data.pending.logits));
          fn(e);
        });
      },
    });
  });
  const steps = 6;
  await page.goto(new URL(`index.html?model=bard&steps=${steps}&temperature=0&seed=3`, server.url).href);
  await waitForReady(page);
  await page.waitForFunction((n) => document.querySelectorAll("#p-output .tok[data-step]").length >= n, steps);
  await page.waitForSelector("body[data-local-preview=true]", { state: "attached", timeout: 30000 });
  const sent = await page.evaluate(() => window.__sent);
  const recycled = sent.filter((t) => t === "recycle").length;
  assert.ok(recycled >= steps, `the page handed back an array after each copied report: ${recycled} recycle messages (${sent.join(", ")})`);
  const got = await page.evaluate(() => window.__pendingLogits.filter((l) => l.length === 2048));

  // The same prompt and greedy steps in a fresh worker of the test's own,
  // which is never handed an array back: every report's logits, bit for bit.
  const prompt = await page.inputValue("#prompt");
  const settings = { temperature: 0, seed: 3, context_policy: "sliding" };
  const replies = await freshWorkerReplies(page, [
    { id: 1, type: "load", model: { base: new URL("models/bard/", server.url).href } },
    { id: 2, type: "reset", prompt, settings },
    ...Array.from({ length: steps }, (_, i) => ({ id: 3 + i, type: "step", settings })),
  ]);
  const expected = replies.slice(1).map((r) => r.pending.logits);
  assert.equal(got.length, steps + 1, "one pending state per report: the prompt's and each step's");
  for (let i = 0; i <= steps; i++) assert.deepEqual(got[i], expected[i], `report ${i}: the logits are that report's own`);
  assert.deepEqual(errors.filter((e) => !/models\/index\.json|Failed to load resource/.test(e)), []);
  await page.close();
});

test("after a Run, a slider move is previewed on the run's last position: the states a run sends are kept for later, not lost", async () => {
  // bard: a real transformer, whose next distribution depends on every token.
  const { page, errors } = await openPage(browser, new URL("index.html?model=bard&seed=7&temperature=0.8&max_new=24&nostop=1&tour=0", server.url).href);
  await waitForReady(page);
  await page.waitForSelector("body[data-local-preview=true]", { state: "attached", timeout: 30000 });
  await page.click("#btn-run");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length >= 24 && document.querySelector("#btn-run").textContent === "Run");
  // At once, before the run's last state would be copied in by itself.
  await page.focus("#ctl-temperature-range");
  await page.keyboard.press("ArrowRight");
  await settle(page);
  const shown = await shownNumbers(page);
  assert.equal(shown.source, "local", "the main-thread previewer answered");
  // The same run replayed by a fresh worker, then its preview at the new temperature.
  const { prompt, before, after } = await page.evaluate(async () => {
    const { parseQuery } = await import("./state/url.js");
    const { toEngineSettings } = await import("./state/settings.js");
    const parsed = parseQuery(location.search).state;
    const prompt = /** @type {HTMLTextAreaElement} */ (document.querySelector("#prompt")).value;
    return { prompt, before: toEngineSettings({ ...parsed.settings, temperature: 0.8 }), after: toEngineSettings(parsed.settings) };
  });
  assert.equal(after.temperature, 0.81);
  const base = (await page.evaluate(async () => (await (await fetch("models/index.json")).json()).models.find((m) => m.name === "bard").path)).replace(/[^/]+$/, "");
  const steps = Array.from({ length: 24 }, (_, i) => ({ id: 3 + i, type: "step", settings: before }));
  const replies = await freshWorkerReplies(page, [
    { id: 1, type: "load", model: { base: new URL(`models/${base}`, page.url()).href } },
    { id: 2, type: "reset", prompt, settings: before },
    ...steps,
    { id: 99, type: "preview", settings: after },
  ]);
  const generated = await page.$$eval("#p-output .tok", (els) => els.map((e) => e.textContent));
  assert.equal(replies.slice(2, 26).map((r) => r.report.chosen.text).join(""), generated.join(""), "the replay draws the page's tokens");
  const expected = replies[replies.length - 1].distribution;
  const final = expected.stages[expected.stages.length - 1];
  assert.equal(shown.probs.length, final.top.length);
  // The page's previewer receives the logits as f32.
  shown.probs.forEach((p, i) => assert.ok(Math.abs(p - final.top[i].prob) < 1e-6, `token ${i}: ${p} vs worker ${final.top[i].prob}`));
  assert.deepEqual(errors, []);
  await page.close();
});
