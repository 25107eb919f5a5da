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

test("on a small phone (360 and 320 px) the title, the Lessons menu and ? share one line, and nothing in the header sticks out", async () => {
  for (const width of [360, 320]) {
    const page = await openPlayground("?model=logits10", { width, height: 740 });
    const head = await page.evaluate(() => {
      const box = (el) => { const r = el.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height }; };
      const summary = document.querySelector("#lessons-menu > summary");
      const top = document.querySelector("header.top");
      return {
        h1: box(document.querySelector(".top h1")), menu: box(summary), tour: box(document.querySelector("#btn-tour")),
        lineHeight: parseFloat(getComputedStyle(summary).lineHeight),
        over: [...top.querySelectorAll("*")].filter((el) => {
          const r = el.getBoundingClientRect();
          // what is drawn (the closed menu's list is laid out but not drawn)
          return el.checkVisibility() && r.width > 0 && (r.right > innerWidth + 0.5 || r.left < -0.5);
        }).map((el) => el.id || el.className || el.tagName),
        headerScroll: top.scrollWidth - top.clientWidth,
        pageScroll: document.documentElement.scrollWidth - innerWidth,
      };
    });
    const middle = (b) => (b.top + b.bottom) / 2;
    for (const [name, b] of [["the Lessons menu", head.menu], ["the ? button", head.tour]]) {
      assert.ok(middle(b) > head.h1.top && middle(b) < head.h1.bottom, `at ${width} px ${name} is on the title's line: ${JSON.stringify(b)} beside ${JSON.stringify(head.h1)}`);
    }
    assert.ok(head.menu.height < 2 * head.lineHeight, `at ${width} px the Lessons button is one line high: ${head.menu.height}px`);
    assert.ok(head.h1.right <= head.menu.left && head.menu.right <= head.tour.left, `at ${width} px title, menu, ? in a row without overlapping`);
    assert.deepEqual(head.over, [], `at ${width} px nothing in the header sticks out of the screen`);
    assert.ok(head.headerScroll <= 0 && head.pageScroll <= 0, `at ${width} px no sideways scrolling: header ${head.headerScroll}, page ${head.pageScroll}`);
    // the open menu fits on the screen too
    await page.click("#lessons-menu > summary");
    const list = await page.$eval("#lessons-list", (el) => { const r = el.getBoundingClientRect(); return { left: r.left, right: r.right, width: r.width }; });
    assert.ok(list.width > 0 && list.left >= 0 && list.right <= width, `at ${width} px the open Lessons menu is on the screen: ${JSON.stringify(list)}`);
    await page.screenshot({ path: new URL(`../artifacts/page-header-${width}px.png`, import.meta.url).pathname, clip: { x: 0, y: 0, width, height: 200 } });
    assert.deepEqual(page.problems(), []);
    await page.close();
  }
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
