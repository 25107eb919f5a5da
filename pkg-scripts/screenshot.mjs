// Regenerates the README's screenshot: the page on its default model after
// a few generated tokens, in headless Chromium, saved to www/img/playground.png.
// Run after pkg-scripts/build:  node pkg-scripts/screenshot.mjs
import path from "node:path";
import { mkdir } from "node:fs/promises";
import { startServer, launchBrowser, openPage, waitForReady, WWW_ROOT } from "../tests/e2e/harness.mjs";

const out = path.join(WWW_ROOT, "img", "playground.png");
const server = await startServer();
const browser = await launchBrowser();
try {
  const { page, errors } = await openPage(browser, `${server.url}?steps=12&seed=7&temperature=0.8&top_k=40`, {
    viewport: { width: 1300, height: 1000 },
  });
  await waitForReady(page);
  await page.waitForTimeout(1500); // let the replayed steps and the panels settle
  await mkdir(path.dirname(out), { recursive: true });
  await page.screenshot({ path: out });
  if (errors.length) console.error("page errors:", errors);
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
} finally {
  await browser.close();
  await server.close();
}
