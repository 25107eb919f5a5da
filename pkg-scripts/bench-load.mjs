// Time from opening the page to the first distribution on screen, on the
// default model, in headless Chromium over localhost. Each run uses a fresh
// browser profile (so the Cache API starts empty) unless --warm is given,
// in which case the page is opened once first and the timed loads reuse it.
// Usage (after pkg-scripts/build):  node pkg-scripts/bench-load.mjs [runs] [--warm]
import { startServer, launchBrowser, openPage, waitForReady } from "../tests/e2e/harness.mjs";

const runs = Number(process.argv.find((a) => /^\d+$/.test(a)) || 5);
const warm = process.argv.includes("--warm");
const server = await startServer();
const times = [];
try {
  let browser = await launchBrowser();
  let context = null;
  if (warm) {
    // One context for every load, so the Cache API and the HTTP cache carry over.
    context = await browser.newContext();
    const first = await context.newPage();
    await first.goto(server.url);
    await waitForReady(first, 120000);
    await first.close();
  }
  for (let i = 0; i < runs; i++) {
    if (!warm) {
      await browser.close();
      browser = await launchBrowser();
    }
    const page = warm ? await context.newPage() : (await openPage(browser, server.url)).page;
    if (warm) await page.goto(server.url);
    await waitForReady(page, 120000);
    // The distribution panel's first bars: the page sets data-ready once a report is drawn.
    const ms = await page.evaluate(() => performance.now());
    times.push(ms);
    if (warm) await page.close();
  }
  await browser.close();
} finally {
  await server.close();
}
times.sort((a, b) => a - b);
const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
console.log(`open → first distribution (${warm ? "warm cache" : "cold profile"}), ${runs} runs: ` +
  `median ${q(0.5).toFixed(0)} ms, max ${times[times.length - 1].toFixed(0)} ms, all ${times.map((t) => t.toFixed(0)).join(", ")}`);
