// The first minute on the page (issue 11), checked as boxes on the screen:
// at 1280×800 the core sliders, the distribution and the rules table are in
// the viewport on load and a slider moves with no scroll; the speed readout
// shows there after a step; on a phone the controls bar stays in view over
// the distribution; the first-visit tour starts, is skipped, is remembered and
// comes back from "?". Screenshots at 1280×800, 1920×1080 and 390×844 land
// in tests/artifacts/first-minute-*.png.
//
// Run: pkg-scripts/build, then node --test tests/e2e/first-minute.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startSuite, stopSuite, openPage, waitForReady } from "./harness.mjs";
import { ARTIFACTS_DIR } from "./harness.mjs";
import path from "node:path";
import { mkdir } from "node:fs/promises";

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => ({ server, browser } = await startSuite()));
after(() => stopSuite({ server, browser }));

/**
 * @param {string} query
 * @param {number} width
 * @param {number} height
 */
async function open(query, width, height) {
  const { page, errors } = await openPage(browser, new URL(`index.html${query}`, server.url).href, { viewport: { width, height } });
  await waitForReady(page);
  return { page, errors };
}

/** What a person sees without scrolling: a viewport-sized screenshot. */
async function viewportShot(page, name) {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS_DIR, `${name}.png`) });
}

/**
 * The element's box, and whether all of it is inside the viewport.
 * @param {import("playwright-core").Page} page
 * @param {string} sel
 */
async function box(page, sel) {
  return page.$eval(sel, (el) => {
    const r = el.getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, left: r.left, right: r.right,
      inside: r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth };
  });
}

const CORE = ["#ctl-temperature-range", "#ctl-top_k-range", "#ctl-top_p-range", "#ctl-min_p-range", "#ctl-order"];

for (const [width, height] of [[1280, 800], [1920, 1080]]) {
  test(`at ${width}×${height} the core controls, the distribution and the rules table are on screen at once`, async () => {
    const { page, errors } = await open("?steps=3&seed=7", width, height);
    for (const sel of [...CORE, "#p-dist .dist-row", "#p-dist .dist-row:last-child", "#p-rules table tbody tr:last-child", "#btn-step"]) {
      const b = await box(page, sel);
      assert.ok(b.inside, `${sel} is inside the ${width}×${height} viewport: ${JSON.stringify(b)}`);
    }
    // The rules table is not cut at the side either (no sideways scrolling in it).
    const cut = await page.$eval("#p-rules .table-wrap", (el) => el.scrollWidth - el.clientWidth);
    assert.ok(cut <= 0, `the rules table fits its panel (${cut}px hidden)`);

    // Moving temperature by keyboard changes the distribution's first row and scrolls nothing.
    const before = await page.textContent("#p-dist .dist-row .num[data-prob]");
    const scroll0 = await page.evaluate(() => [scrollX, scrollY]);
    await page.focus("#ctl-temperature-range");
    for (let i = 0; i < 20; i++) await page.keyboard.press("ArrowLeft");
    await page.waitForFunction((b) => document.querySelector("#p-dist .dist-row .num[data-prob]").textContent !== b, before);
    assert.deepEqual(await page.evaluate(() => [scrollX, scrollY]), scroll0, "no scroll while moving the slider");
    assert.ok((await box(page, "#p-dist .dist-row")).inside, "the first row is still in view");
    await viewportShot(page, `first-minute-${width}`);
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test("at 1280×800 the temperature slider moved with the mouse needs no scroll, and the speed shows after a step", async () => {
  const { page, errors } = await open("?model=logits10", 1280, 800);
  const t = await box(page, "#ctl-temperature-range");
  const row = await box(page, "#p-dist .dist-row");
  assert.ok(t.inside && row.inside, `slider ${JSON.stringify(t)} and first row ${JSON.stringify(row)} in view on load`);
  // a drag along the slider, from its middle to near its left end
  const y = (t.top + t.bottom) / 2;
  await page.mouse.move((t.left + t.right) / 2, y);
  await page.mouse.down();
  await page.mouse.move(t.left + 4, y, { steps: 5 });
  await page.mouse.up();
  await page.waitForFunction(() => Number(document.querySelector("#ctl-temperature").value) < 0.5);
  assert.deepEqual(await page.evaluate(() => [scrollX, scrollY]), [0, 0]);
  await page.click("#btn-step");
  await page.waitForSelector("#speed:not([hidden])");
  await page.waitForFunction(() => document.querySelector("#speed").dataset.decodeTokens === "1");
  const speed = await box(page, "#speed");
  assert.ok(speed.inside, `the speed readout is in view: ${JSON.stringify(speed)}`);
  assert.match(await page.textContent("#speed"), /prefill .*decode .*last step/);
  assert.deepEqual(errors, []);
  await page.close();
});

test("on a phone (390×844) the distribution's top rows are above the controls bar when the page opens", async () => {
  const { page, errors } = await open("", 390, 844);
  await viewportShot(page, "first-minute-390-load");
  const bar = await box(page, "#p-controls");
  const rows = await page.$$eval("#p-dist .dist-row", (els) => els.map((el) => el.getBoundingClientRect().bottom));
  assert.ok(rows.length === 10, `ten rows painted: ${rows.length}`);
  const visible = rows.filter((bottom) => bottom <= bar.top).length;
  assert.ok(visible >= 3, `at least the top 3 rows above the bar (top ${bar.top}): ${visible} are`);
  // The prompt and Step stay in view above them.
  for (const sel of ["#prompt", "#btn-step"]) assert.ok((await box(page, sel)).inside, `${sel} in view`);
  // After a step the output and its colour key come back.
  await page.click("#btn-step");
  await page.waitForSelector("#p-output .out-gen .tok", { state: "visible" });
  assert.equal(await page.isVisible("#p-output .scale-help"), true);
  assert.deepEqual(errors, []);
  await page.close();
});

test("on a phone (390×844) the controls bar stays at the bottom while the distribution is in view", async () => {
  const { page, errors } = await open("?steps=3&seed=7", 390, 844);
  assert.equal(await page.evaluate(() => document.body.dataset.layout), "bar-bottom");
  await viewportShot(page, "first-minute-390");
  await page.$eval("#p-dist", (el) => el.scrollIntoView({ block: "start" }));
  const bar = await box(page, "#p-controls");
  assert.ok(bar.inside && Math.abs(bar.bottom - 844) < 1, `the bar sits on the bottom edge: ${JSON.stringify(bar)}`);
  for (const sel of CORE) assert.ok((await box(page, sel)).inside, `${sel} in view on the phone`);
  const row = await box(page, "#p-dist .dist-row");
  assert.ok(row.inside && row.bottom <= bar.top, `the first row is above the bar: ${JSON.stringify(row)}`);
  await viewportShot(page, "first-minute-390-dist");
  // The less used controls: one click away, in the bar; Escape closes it.
  assert.equal(await page.isVisible("#ctl-repetition_penalty"), false);
  await page.click("#btn-more-controls");
  await page.waitForSelector("#ctl-repetition_penalty", { state: "visible" });
  assert.ok((await box(page, "#p-controls")).top >= 844 * 0.25, "the open bar leaves the top of the page visible");
  await viewportShot(page, "first-minute-390-more");
  await page.focus("#ctl-repetition_penalty");
  await page.keyboard.press("Escape");
  assert.equal(await page.isVisible("#ctl-repetition_penalty"), false);
  assert.equal(await page.evaluate(() => document.activeElement.id), "btn-more-controls");
  // no sideways scrolling, and the last panel can be scrolled out from under the bar
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth));
  await page.evaluate(() => scrollTo(0, document.documentElement.scrollHeight));
  const foot = await box(page, ".foot");
  assert.ok(foot.bottom <= (await box(page, "#p-controls")).top + 1, `the footer clears the bar: ${JSON.stringify(foot)}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test("on a wide screen 'More controls' brings the less used controls into view in one click", async () => {
  const { page, errors } = await open("?model=logits10", 1280, 800);
  assert.equal(await page.evaluate(() => document.body.dataset.layout), "side");
  await page.click("#btn-more-controls");
  await page.waitForFunction(() => document.activeElement?.id === "ctl-repetition_penalty-range");
  await page.waitForFunction(() => { const r = document.activeElement.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; });
  assert.deepEqual(errors, []);
  await page.close();
});

test("the tour: starts on a first visit, is skipped and remembered, comes back from ?, off in an embed", async () => {
  // A fresh profile driven by automation is no first visit: no tour by itself.
  const plain = await open("?model=logits10", 1280, 800);
  assert.equal(await plain.page.$("#tour"), null);
  await plain.page.close();

  // ?tour=1 asks for the first-visit behaviour.
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const url = (q) => new URL(`index.html${q}`, server.url).href;
  await page.goto(url("?model=logits10&tour=1"));
  await waitForReady(page);
  await page.waitForSelector("#tour");
  // non-modal: the page under it still works (Step is not covered)
  await page.click("#btn-step");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 1);
  const seen = [];
  for (let i = 0; i < 6; i++) {
    seen.push(await page.textContent("#tour-title"));
    const target = await page.$eval(".tour-target", (el) => el.id || el.className);
    assert.ok(target, "the card points at a part of the page");
    if (i < 5) await page.click("#tour [data-tour=next]");
  }
  assert.deepEqual(seen.length, 6);
  assert.match(seen.join(" | "), /distribution.*rule.*Entropy.*KV cache.*Generate.*Share/i);
  await page.click("#tour [data-tour=next]"); // Done
  assert.equal(await page.$("#tour"), null);
  // remembered: the next visit, even asking for the tour, does not start it
  await page.goto(url("?model=logits10&tour=1"));
  await waitForReady(page);
  await page.waitForTimeout(300);
  assert.equal(await page.$("#tour"), null, "the tour does not come back once done");
  // the ? button (and the ? key) bring it back; Escape closes it and gives the focus back
  await page.click("#btn-tour");
  await page.waitForSelector("#tour");
  assert.equal(await page.evaluate(() => document.activeElement.id), "tour");
  await page.keyboard.press("Escape");
  assert.equal(await page.$("#tour"), null);
  assert.equal(await page.evaluate(() => document.activeElement.id), "btn-tour");
  await page.keyboard.press("?");
  await page.waitForSelector("#tour");
  await page.click("#tour [data-tour=skip]");
  assert.equal(await page.$("#tour"), null);
  await context.close();

  // An embed: no tour unless the embed asks for it.
  const embedContext = await browser.newContext({ viewport: { width: 900, height: 700 } });
  const embed = await embedContext.newPage();
  await embed.goto(url("?model=logits10&embed=1&tour=0"));
  await waitForReady(embed);
  assert.equal(await embed.$("#tour"), null);
  await embed.goto(url("?model=logits10&embed=1&panels=dist,rules,output&tour=1"));
  await waitForReady(embed);
  await embed.waitForSelector("#tour");
  await embedContext.close();
});
