// The browser's memory floor: what a Chromium tab holding an empty page
// takes, measured the same way as the playground's tab (the harness's
// rendererMemory: VmRSS, VmHWM and RssAnon of this browser's renderer).
// The tab figures of bench-engine-wasm.mjs include this floor; the bench
// prints it beside them so the model's own share can be read off.
//
//   node pkg-scripts/bench-blank-page.mjs [REPEATS] [--json]
//
// Each repeat is a fresh browser with one page of static HTML (served by the
// same static server as the playground, so the same headers and CSP apply),
// left to settle for a second; the figures are the medians.

import { startServer, launchBrowser, rendererMemory } from "../tests/e2e/harness.mjs";

const json = process.argv.includes("--json");
const repeats = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 3);
const unknown = process.argv.slice(2).filter((a) => a !== "--json" && !/^\d+$/.test(a));
if (unknown.length || !(repeats >= 1)) {
  console.error("usage: node pkg-scripts/bench-blank-page.mjs [REPEATS] [--json]");
  process.exit(2);
}

const server = await startServer();
const samples = [];
try {
  for (let i = 0; i < repeats; i++) {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      // PROTOCOL.md is a static file the server already serves: no script, no wasm.
      await page.goto(`${server.url}PROTOCOL.md`, { waitUntil: "load" });
      await page.waitForTimeout(1000);
      const m = await rendererMemory(browser);
      if (!m) throw new Error("no renderer process found");
      samples.push(m);
    } finally {
      await browser.close();
    }
  }
} finally {
  await server.close();
}

const median = (key) => {
  const xs = samples.map((s) => s[key]).sort((a, b) => a - b);
  return xs[Math.floor(xs.length / 2)];
};
const figures = { repeats, rss_mb: median("rss"), hwm_mb: median("hwm"), private_mb: median("anon") };
console.error(`blank page: resident ${figures.rss_mb.toFixed(0)} MB (peak ${figures.hwm_mb.toFixed(0)} MB), private ${figures.private_mb.toFixed(0)} MB; median of ${repeats}`);
if (json) console.log(JSON.stringify(figures));
