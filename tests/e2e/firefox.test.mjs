// The page in Firefox: Debian's Firefox ESR (puppeteer-core over WebDriver
// BiDi) opens the same views as Chromium (playwright-core) and must show the
// same numbers, token for token: the same engine, the same seed, the same
// arithmetic (our own exp, IEEE operations only) in another browser's wasm.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { mkdir } from "node:fs/promises";
import { startServer, launchBrowser, launchFirefox, openPage, waitForReady, WWW_ROOT, ARTIFACTS_DIR } from "./harness.mjs";

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let chromium;
/** @type {import("puppeteer-core").Browser} */
let firefox;

before(async () => {
  if (!process.env.NTP_BASE_URL && !existsSync(path.join(WWW_ROOT, "pkg", "nexttoken.js"))) {
    throw new Error("www/pkg is missing: run pkg-scripts/build first");
  }
  server = await startServer();
  chromium = await launchBrowser();
  firefox = await launchFirefox();
});

after(async () => {
  await firefox?.close();
  await chromium?.close();
  await server?.close();
});

/**
 * Open a view in Firefox, recording console errors and uncaught exceptions.
 * @param {string} query
 */
async function openFirefox(query) {
  const page = await firefox.newPage();
  await page.setViewport({ width: 1300, height: 900 });
  /** @type {string[]} */
  const errors = [];
  page.on("console", (msg) => { if (msg.type() === "error") errors.push(`console: ${msg.text()}`); });
  page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
  await page.goto(new URL(`index.html${query}`, server.url).href);
  await page.waitForSelector("body[data-ready=true]", { timeout: 60000 });
  return { page, errors };
}

/**
 * Two frames, then the URL written: the page has settled after an action.
 * Works with both drivers' pages (both have evaluate and waitForFunction).
 * @param {any} page
 */
async function settle(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.waitForFunction(() => document.body.dataset.urlPending !== "true");
}

/**
 * Every number the panels show for the current distribution, as text.
 * @param {any} page
 */
async function shown(page) {
  return page.evaluate(() => {
    const text = (sel) => document.querySelector(sel)?.textContent ?? null;
    return {
      output: text("#p-output [data-slot=text]"),
      head: text("#p-dist [data-slot=head]"),
      dist: text("#p-dist .body"),
      rules: text("#p-rules table"),
      entropy: text("#p-entropy .entropy-list"),
      url: location.search,
    };
  });
}

test("Firefox shows the same generation and the same numbers in every panel as Chromium", async () => {
  // Five tokens replayed on load (no stop string, so all five come).
  const query = "?model=bard&seed=7&temperature=0.8&top_k=40&top_p=0.95&repetition_penalty=1.1&nostop=1&steps=5";
  const ff = await openFirefox(query);
  const { page: ch } = await openPage(chromium, new URL(`index.html${query}`, server.url).href);
  await waitForReady(ch);
  for (const page of [ff.page, ch]) {
    await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 5);
    await settle(page);
  }
  const [a, b] = [await shown(ff.page), await shown(ch)];
  assert.ok(a.output && a.output.length > "ROMEO:".length, `Firefox generated text: ${a.output}`);
  assert.deepEqual(a, b);

  // The same three keyboard moves of the temperature slider in both.
  for (const page of [ff.page, ch]) {
    await page.focus("#ctl-temperature-range");
    for (let i = 0; i < 3; i++) await page.keyboard.press("ArrowRight");
    await settle(page);
  }
  const [c, d] = [await shown(ff.page), await shown(ch)];
  assert.match(c.url, /temperature=0\.83/);
  assert.notEqual(c.rules, a.rules, "the move changed the rules panel");
  assert.deepEqual(c, d);

  await mkdir(ARTIFACTS_DIR, { recursive: true });
  await ff.page.screenshot({ path: path.join(ARTIFACTS_DIR, "firefox-bard.png"), fullPage: true });
  assert.deepEqual(ff.errors, []);
  await ff.page.close();
  await ch.close();
});

test("Firefox renders the embed view of the course's logit vector with the lesson's numbers", async () => {
  const ff = await openFirefox("?embed=1&panels=dist,rules,entropy&model=logits10");
  const visible = await ff.page.evaluate(() =>
    [...document.querySelectorAll(".panel")].filter((p) => !p.hidden).map((p) => p.id));
  assert.deepEqual(visible, ["p-dist", "p-rules", "p-entropy"]);
  assert.match(await ff.page.$eval("#p-dist [data-slot=head]", (e) => e.textContent), /p_max = 0\.396139/);
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  await ff.page.screenshot({ path: path.join(ARTIFACTS_DIR, "firefox-embed.png"), fullPage: true });
  assert.deepEqual(ff.errors, []);
  await ff.page.close();
});
