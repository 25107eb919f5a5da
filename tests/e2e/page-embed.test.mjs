// Browser tests of the playground as course authors embed it: embed mode
// with chosen panels, the narrow page, the <next-token-playground> element,
// the "Copy embed code" snippet, and the panels saved as figures. Real
// headless Chromium and the real wasm engine on the course's logits10 model
// (p_max = 0.632149 at tau = 0.5 is lesson 21's number).
//
// Run: pkg-scripts/build, then node --test tests/e2e/page-embed.test.mjs
// Screenshots land in tests/artifacts/page-*.png.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startSuite, stopSuite, openPage, screenshot, openPlaygroundIn, forgiveAbsentIndex } from "./harness.mjs";

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => ({ server, browser } = await startSuite()));
after(() => stopSuite({ server, browser }));

/** @param {string} query @param {{ width?: number, height?: number }} [size] */
const openPlayground = (query, size) => openPlaygroundIn(browser, server, query, size);

test("embed mode shows only the chosen panels, compactly; the narrow page is readable", async () => {
  const page = await openPlayground("?model=logits10&embed=1&panels=dist,rules,entropy&temperature=0.5", { width: 720, height: 800 });
  const visible = await page.$$eval("section.panel", (els) => els.filter((e) => e.offsetParent !== null).map((e) => e.id));
  assert.deepEqual(visible, ["p-dist", "p-rules", "p-entropy"]);
  assert.equal(await page.isVisible("header.top"), false);
  assert.match(await page.textContent("#p-dist [data-slot=head]"), /p_max = 0\.632149/);
  await screenshot(page, "page-embed");
  await page.close();

  const phone = await openPlayground("?model=logits10", { width: 360, height: 740 });
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `no sideways scrolling at 360 px (overflow ${overflow}px)`);
  await screenshot(phone, "page-360px");
  await phone.close();
});

test("a ?panels= link without the controls panel gives its panels the whole width on a wide screen", async () => {
  for (const [width, height] of [[1280, 800], [1920, 1080]]) {
    const page = await openPlayground("?model=logits10&panels=dist,rules", { width, height });
    assert.equal(await page.isVisible("#p-controls"), false);
    const m = await page.evaluate(() => {
      const box = (sel) => { const r = document.querySelector(sel).getBoundingClientRect(); return { left: r.left, right: r.right, width: r.width }; };
      const wrap = document.querySelector("#p-rules .table-wrap");
      return { main: box("main.layout"), grid: box("main.layout > .grid"), dist: box("#p-dist"), rules: box("#p-rules"), tableCut: wrap.scrollWidth - wrap.clientWidth };
    });
    assert.ok(m.grid.width >= m.main.width - 1, `at ${width} px the panels' grid takes the layout's width: ${m.grid.width} of ${m.main.width}`);
    assert.ok(m.rules.width >= m.main.width - 1, `at ${width} px the rules table's panel is full width: ${m.rules.width} of ${m.main.width}`);
    assert.ok(Math.abs(m.dist.left - m.main.left) < 1, `at ${width} px the distribution starts at the layout's left edge (no empty controls column)`);
    assert.ok(m.tableCut <= 0, `at ${width} px the rules table does not scroll sideways (${m.tableCut}px cut)`);
    await screenshot(page, `page-panels-dist-rules-${width}`);
    assert.deepEqual(page.problems(), []);
    await page.close();
  }
});

test("each panel saves as PNG and SVG figures", async () => {
  const page = await openPlayground("?model=logits10&temperature=0.5");
  for (const panel of ["p-dist", "p-entropy"]) {
    const [png] = await Promise.all([page.waitForEvent("download"), page.click(`#${panel} .fig-buttons button:has-text("PNG")`)]);
    assert.match(png.suggestedFilename(), /\.png$/);
    const [svg] = await Promise.all([page.waitForEvent("download"), page.click(`#${panel} .fig-buttons button:has-text("SVG")`)]);
    assert.match(svg.suggestedFilename(), /\.svg$/);
  }
  assert.deepEqual(page.problems(), []);
  await page.close();
});


test("the <next-token-playground> element builds an embed iframe from its attributes", async () => {
  const { page, errors } = await openPage(browser, new URL("embed-demo.html", server.url).href);
  const frame = await (await page.waitForSelector("next-token-playground iframe")).contentFrame();
  await frame.waitForSelector("body[data-ready=true]", { state: "attached", timeout: 60000 });
  const src = new URL(await page.getAttribute("next-token-playground iframe", "src"));
  assert.equal(src.searchParams.get("embed"), "1");
  assert.equal(src.searchParams.get("temperature"), "0.5");
  assert.match(await frame.textContent("#p-dist [data-slot=head]"), /p_max = 0\.632149/);
  assert.equal(await frame.isVisible("#p-kv"), false);
  await page.close();
  assert.deepEqual(forgiveAbsentIndex(errors), []);
});

test("panel switches and “Copy embed code” give an iframe snippet of the current view", async () => {
  const page = await openPlayground("?model=logits10&temperature=0.5");
  await page.uncheck("#show-kv");
  await page.uncheck("#show-beam");
  await page.waitForFunction(() => new URLSearchParams(location.search).get("panels") === "output,dist,rules,entropy,score,controls");
  assert.equal(await page.isVisible("#p-kv"), false);
  await page.click("#btn-embed");
  const code = await page.inputValue("#embed-code");
  const src = new URL(code.match(/src="([^"]+)"/)[1].replace(/&amp;/g, "&"));
  assert.match(code, /^<iframe [^>]*width="\d+" height="\d+"/);
  assert.equal(src.searchParams.get("embed"), "1");
  assert.equal(src.searchParams.get("temperature"), "0.5");
  assert.equal(src.searchParams.get("panels"), "output,dist,rules,entropy,score,controls");
  assert.deepEqual(page.problems(), []);
  await page.close();
});
