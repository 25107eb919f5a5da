// Regenerates the README's screenshots in headless Chromium, after a few
// generated tokens:
//   node pkg-scripts/screenshot.mjs            the default model -> www/img/playground.png
//   node pkg-scripts/screenshot.mjs smollm2    SmolLM2 in chat mode -> www/img/playground-smollm2.png
//                                              (needs pkg-scripts/fetch-smollm2)
//   --out=FILE                                 write somewhere else
// Run after pkg-scripts/build.
import path from "node:path";
import { mkdir } from "node:fs/promises";
import { startServer, launchBrowser, openPage, waitForReady, WWW_ROOT } from "../tests/e2e/harness.mjs";

const smol = process.argv.includes("smollm2");
const outArg = process.argv.find((a) => a.startsWith("--out="))?.slice("--out=".length);
const out = path.resolve(outArg ?? path.join(WWW_ROOT, "img", smol ? "playground-smollm2.png" : "playground.png"));
const query = smol
  ? "?model=smollm2-135m&chat=1&nostop=1&seed=3&temperature=0.7&top_k=40&steps=14"
  : "?steps=12&seed=7&temperature=0.8&top_k=40";
const server = await startServer();
const browser = await launchBrowser();
try {
  const { page, errors } = await openPage(browser, `${server.url}${query}`, {
    viewport: { width: 1300, height: 1000 },
  });
  await waitForReady(page, 240000);
  await page.waitForTimeout(1500); // let the replayed steps and the panels settle
  await mkdir(path.dirname(out), { recursive: true });
  await page.screenshot({ path: out });
  if (errors.length) console.error("page errors:", errors);
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
} finally {
  await browser.close();
  await server.close();
}
