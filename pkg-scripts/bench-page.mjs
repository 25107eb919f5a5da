// Browser benchmark of the page (a skeleton to grow): in headless Chromium,
// with the real wasm engine, it measures
//   - slider move -> repaint (the page's own __ntpPerf record: the time from
//     the input event to the frame after the repaint), and
//   - one Step click -> the URL says one more token (a model call and a repaint).
// Speed targets live here and in BENCHMARKS.md, never in the tests.
//
// Usage: node pkg-scripts/bench-page.mjs [model] [moves] [steps]   (after pkg-scripts/build)

import { startServer, launchBrowser, openPage, waitForReady } from "../tests/e2e/harness.mjs";

const [model = "logits10", movesArg = "40", stepsArg = "20"] = process.argv.slice(2);
const moves = Number(movesArg);
const steps = Number(stepsArg);
if (!Number.isInteger(moves) || moves < 1 || !Number.isInteger(steps) || steps < 0) {
  console.error("usage: node pkg-scripts/bench-page.mjs [model] [moves >= 1] [steps >= 0]");
  process.exit(2);
}

/**
 * Median and 95th percentile of a list of milliseconds.
 * @param {number[]} ms
 */
function summarize(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return `median ${at(0.5).toFixed(1)} ms, p95 ${at(0.95).toFixed(1)} ms, n = ${s.length}`;
}

const server = await startServer();
const browser = await launchBrowser();
try {
  const { page, errors } = await openPage(browser, new URL(`index.html?model=${encodeURIComponent(model)}`, server.url).href);
  await waitForReady(page);

  // Alternate between two temperatures so every move changes the distribution.
  for (let i = 0; i < moves; i++) {
    const before = await page.evaluate(() => window.__ntpPerf.length);
    await page.evaluate((v) => {
      const range = /** @type {HTMLInputElement} */ (document.querySelector("#ctl-temperature-range"));
      range.value = String(v);
      range.dispatchEvent(new Event("input", { bubbles: true }));
    }, i % 2 ? 0.7 : 1.3);
    await page.waitForFunction((n) => window.__ntpPerf.length > n, before, { timeout: 10000 });
  }
  const paints = await page.evaluate(() => window.__ntpPerf.slice());
  console.log(`slider -> repaint (${model}): ${summarize(paints)}`);

  const stepTimes = [];
  for (let i = 0; i < steps; i++) {
    const n = await page.evaluate(() => Number(new URLSearchParams(location.search).get("steps") ?? 0));
    const t0 = performance.now();
    await page.click("#btn-step");
    try {
      await page.waitForFunction((k) => Number(new URLSearchParams(location.search).get("steps") ?? 0) > k, n, { timeout: 30000 });
    } catch {
      console.log(`step ${i + 1}: no new token (a stop condition?); stopping the step benchmark`);
      break;
    }
    stepTimes.push(performance.now() - t0);
  }
  if (stepTimes.length) console.log(`step click -> token shown (${model}): ${summarize(stepTimes)}`);
  if (errors.length) console.log(`page reported problems:\n  ${errors.join("\n  ")}`);
  await page.close();
} finally {
  await browser.close();
  await server.close();
}
