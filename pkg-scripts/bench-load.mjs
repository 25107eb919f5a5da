// Time from opening the page to the first distribution on screen, on the
// default model (or --model=NAME, e.g. smollm2-135m), in headless Chromium
// over localhost, and the tab's memory: the renderer process's resident size
// when the page is ready and its peak (VmRSS, VmHWM from /proc; the engine's
// worker runs in that process). Each run uses a fresh
// browser profile (so the Cache API starts empty) unless --warm is given,
// in which case the page is opened once first and the timed loads reuse it.
//
// Every timed load opens the page in a tab that is already up: the tab shows
// about:blank first, the machine is left to go idle, then the tab goes to the
// page (as Lighthouse starts its loads, and as a browser that keeps a spare
// renderer process opens a link to a new site). On 2 cores the renderer's
// own start-up, when the page is the tab's first document, competed with the
// page's load for about 200 ms of bard's cold open (medians of 8 alternating
// loads: 901 against 1,124 ms), while a trivial page saw none of it. Cold
// runs also time that first-document open, in the same fresh browser
// (`first_render_new_tab`), so both figures stay in view.
//
// The page is opened with ?bench=1, so it loads bench.js, which keeps the
// load milestones (window.__ntpLoad); the student's page has none of it.
// Usage (after pkg-scripts/build):  node pkg-scripts/bench-load.mjs [runs] [--warm] [--model=NAME] [--json]
//   --json: the figures as one JSON line on stdout (the readable lines go to stderr)
import { startServer, launchBrowser, openPage, waitForReady, rendererMemory } from "../tests/e2e/harness.mjs";
import { option, positionals, say, emitJson, median, stats, machineIdle } from "./bench-common.mjs";

const runs = Number(positionals().find((a) => /^\d+$/.test(a)) || 5);
const warm = process.argv.includes("--warm");
const model = option("model");
const server = await startServer();
const pageUrl = `${server.url}?bench=1${model ? `&model=${encodeURIComponent(model)}` : ""}`;
/** Per run: the largest renderer's { rss, hwm } in MB when the page is ready. */
const memory = [];
const times = [];
/** Per run: the page's milestones and the worker's stage durations (window.__ntpLoad). */
const stages = [];
/** Per cold run: the same, the page being its new tab's first document. */
const newTabStages = [];
/** Per run: when a trivial page's module script ran (the floor, cold mode only). */
const floor = [];
try {
  let browser = await launchBrowser();
  let context = null;
  if (warm) {
    // One context for every load, so the Cache API and the HTTP cache carry over.
    context = await browser.newContext();
    const first = await context.newPage();
    await first.goto(pageUrl);
    await waitForReady(first, 300000);
    await first.close();
  }
  for (let i = 0; i < runs; i++) {
    if (!warm) {
      await browser.close();
      browser = await launchBrowser();
    }
    // Cold: the two ways of opening alternate which comes first, each in a
    // fresh profile (its own context) of the same fresh browser.
    if (!warm && i % 2 === 1) newTabStages.push(await firstDocumentLoad(browser));
    const page = warm ? await context.newPage() : (await openPage(browser, "about:blank")).page;
    if (warm) await page.goto("about:blank");
    await machineIdle();
    await page.goto(pageUrl);
    await waitForReady(page, 300000);
    // The distribution panel's first bars: the page sets data-ready once a report is drawn.
    const { ms, load } = await page.evaluate(() => ({ ms: performance.now(), load: window.__ntpLoad }));
    times.push(ms);
    stages.push(load);
    memory.push(await rendererMemory(browser));
    await page.close();
    if (!warm && i % 2 === 0) newTabStages.push(await firstDocumentLoad(browser));
  }
  await browser.close();
  // The floor: a page whose only module script records the time it runs,
  // opened the same way (a fresh browser, about:blank, the machine idle).
  if (!warm) {
    for (let i = 0; i < runs; i++) {
      const floorBrowser = await launchBrowser();
      const page = await floorBrowser.newPage();
      await page.goto("about:blank");
      await machineIdle();
      await page.route("**/__floor.html", (route) => route.fulfill({
        contentType: "text/html",
        body: '<!doctype html><meta charset="utf-8"><title>floor</title><script type="module">window.__t = performance.now();</script>',
      }));
      await page.goto(`${server.url}__floor.html`);
      await page.waitForFunction(() => typeof window.__t === "number");
      floor.push(await page.evaluate(() => window.__t));
      await floorBrowser.close();
    }
  }
} finally {
  await server.close();
}

/**
 * A cold load the way runs before 2026-12-07 11:19 UTC timed it: the page is
 * a new tab's first document (the tab's renderer starts beside the page's
 * own work). Those runs opened it as soon as the browser was up; this waits
 * for the machine to go idle first, which alone changed nothing (bard,
 * medians of 8 alternating loads: 1,102 against 1,124 ms).
 * @param {import("playwright-core").Browser} browser
 */
async function firstDocumentLoad(browser) {
  await machineIdle();
  const { page } = await openPage(browser, pageUrl);
  await waitForReady(page, 300000);
  const load = await page.evaluate(() => window.__ntpLoad);
  await page.close();
  return load;
}
// The headline: the page's own clock (ms since navigation start) when the
// first distribution is in the DOM; the frame that paints it follows. The
// time at which this script saw body[data-ready] is later by its polling.
const summary = (label, xs) => {
  const v = xs.filter((x) => typeof x === "number").sort((a, b) => a - b);
  say(`${label} (${warm ? "warm cache" : "cold profile"}), ${v.length} runs: ` +
    `median ${v[Math.floor(v.length / 2)].toFixed(0)} ms, max ${v[v.length - 1].toFixed(0)} ms, all ${v.map((t) => t.toFixed(0)).join(", ")}`);
};
say(`page: ${pageUrl}`);
summary("open → first distribution in the DOM", stages.map((s) => s.first_render));
if (newTabStages.length) summary("… the page being its new tab's first document", newTabStages.map((s) => s.first_render));
summary("open → ready seen by the test driver", times);
if (floor.length) summary("floor: open → a trivial page's module script runs", floor);

// Where the time goes (medians over the runs, ms since navigation start unless
// marked as a duration).
const row = (label, f) => say(`  ${label.padEnd(46)} ${(median(stages.map(f)) ?? NaN).toFixed(0).padStart(6)} ms`);
say("median of each stage:");
row("bench.js running (main.js started, its first import)", (s) => s.boot);
row("controls built", (s) => s.controls);
row("model catalogue read (models/index.json)", (s) => s.catalogue);
row("load request sent to the worker", (s) => s.load_sent);
// The worker compiles the engine from its start and fetches the model's files
// from the load request on, both at once; these two are measured from the
// load request, so they overlap.
row("  worker: engine compiled (from the request)", (s) => s.worker?.wasm_ms);
row("  worker: model files fetched (from the request)", (s) => s.worker?.files_ms);
row("  worker: model built from the files (duration)", (s) => s.worker?.build_ms);
row("  worker: ready posted (page clock)", (s) => s.worker && s.worker.sent - s.origin);
row("model ready on the page", (s) => s.ready);
row("  worker: prompt prefilled + first report (duration)", (s) => s.prefill_ms);
row("first report on the page", (s) => s.first_report);
row("first distribution in the DOM", (s) => s.first_render);

if (memory.some((m) => m)) {
  const fmt = (xs) => xs.map((x) => x.toFixed(0)).join(", ");
  say(`tab (largest renderer process) when ready: VmRSS ${fmt(memory.map((m) => m?.rss ?? NaN))} MB; peak VmHWM ${fmt(memory.map((m) => m?.hwm ?? NaN))} MB`);
}
const firstRender = stages.map((s) => s.first_render);
emitJson({
  model: model ?? "default", warm, runs,
  first_render: { ...stats(firstRender), runs: firstRender },
  first_render_new_tab: newTabStages.length ? { ...stats(newTabStages.map((s) => s.first_render)), runs: newTabStages.map((s) => s.first_render) } : null,
  seen_ready: stats(times),
  floor: floor.length ? { ...stats(floor), runs: floor } : null,
  stages: {
    worker_ready: median(stages.map((s) => s.ready)), worker_build_ms: median(stages.map((s) => s.worker?.build_ms)),
    worker_files_ms: median(stages.map((s) => s.worker?.files_ms)), prefill_ms: median(stages.map((s) => s.prefill_ms)),
  },
  tab_rss_mb: stats(memory.map((m) => m?.rss)), tab_peak_mb: stats(memory.map((m) => m?.hwm)),
});
