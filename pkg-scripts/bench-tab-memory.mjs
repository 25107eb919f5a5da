// The playground tab's memory with a real model (SmolLM2 unless --model=NAME,
// e.g. gemma3-270m) and 1,024 tokens in the cache:
// issue 9's "under 300 MB for the whole tab", measured on the page a student
// opens (index.html, its worker in the same renderer process), not on the
// engine alone.
//
// A fresh browser (empty Cache API: the first visit, the download teed into
// the cache while it streams into the engine) opens
//   index.html?model=smollm2-135m&prompt=<1,000 tokens>&steps=24&temperature=0&nostop=1
// so the worker prefills 1,000 tokens and replays 24 steps: the cache ends
// holding 1,024 positions (read back from the KV panel's report). Figures:
//   - private_peak_mb: the renderer's private memory (RssAnon), sampled every
//     25 ms from navigation to 2 s after the 24th token;
//   - footprint_mb: Chrome's own private memory footprint of that process
//     (its memory-infra dump: the figure its task manager shows as the tab's
//     memory), once settled, with the largest allocators beside it;
//   - resident_mb / resident_peak_mb: VmRSS and VmHWM, which also count the
//     browser's shared library and font pages that every renderer maps;
//   - the engine's wasm memory in the worker and the page's own (the
//     Previewer), read through an accessor appended to the served
//     pkg/nexttoken.js for this run only.
//
// With --file=PATH (a GGUF file on disk, such as an F16 copy of SmolLM2) the
// page opens on the tiny kv-demo model and the file is given to its "Open a
// GGUF file…" input, as a user opens their own; the prompt is then typed and
// the 24 tokens stepped. The peak counts both models; kv-demo's is a few KB.
//
// With --threads=N the page asks its engine for N threads (URL `threads`;
// default: the page's own default, auto): its helper workers share the
// engine's memory, so what they add is their own stacks and JavaScript heaps.
//
//   node pkg-scripts/bench-tab-memory.mjs [--tokens=1024] [--model=NAME | --file=PATH] [--threads=N] [--json]
// Needs pkg-scripts/build and the model's fetch script (pkg-scripts/fetch-smollm2). The figures are one
// JSON line, the last on stdout (with --json); readable lines go to stderr.

import { startServer, launchBrowser, openPage, waitForReady, rendererMemory, watchRendererMemory, engineWorker } from "../tests/e2e/harness.mjs";
import { intOption, option, say, emitJson, timedSteps } from "./bench-common.mjs";
import path from "node:path";

const TOKENS = intOption("tokens", 1024, 25);
const STEPS = 24;
const FILE = option("file", null);
const MODEL = FILE ? path.basename(FILE) : option("model", "smollm2-135m");
const THREADS = option("threads", null);
const threadsParam = THREADS === null ? "" : `&threads=${encodeURIComponent(THREADS)}`;

const server = await startServer();
const browser = await launchBrowser();
let figures;
try {
  const { page } = await openPage(browser, "about:blank");
  await page.route("**/pkg/nexttoken.js", async (route) => {
    const res = await route.fetch();
    await route.fulfill({ response: res, body: `${await res.text()}\nself.__ntpWasmBytes = () => wasm.memory.buffer.byteLength;` });
  });
  // " the" is one token in SmolLM2's and Gemma's vocabularies; a model whose
  // file asks for BOS holds one position more (checked below).
  const prompt = " the".repeat(TOKENS - STEPS);
  const watch = watchRendererMemory(browser);
  const t0 = Date.now();
  if (FILE) {
    await page.goto(new URL(`index.html?model=kv-demo&temperature=0&nostop=1${threadsParam}`, server.url).href);
    await waitForReady(page, 600000);
    await page.setInputFiles("#gguf-file", FILE);
    await page.waitForFunction(() => document.body.dataset.ready === "false", null, { timeout: 60000 });
    await waitForReady(page, 600000);
    await page.fill("#prompt", prompt);
    await page.waitForFunction((n) => Number(document.querySelector("#p-kv [data-slot=facts]")?.getAttribute("data-len")) >= n,
      TOKENS - STEPS, { timeout: 600000 });
    await waitForReady(page, 600000);
    const { stopped } = await timedSteps(page, STEPS);
    if (stopped) throw new Error(`the ${STEPS} steps did not all come: ${stopped}`);
  } else {
    const query = `model=${MODEL}&prompt=${encodeURIComponent(prompt)}&steps=${STEPS}&temperature=0&nostop=1${threadsParam}`;
    await page.goto(new URL(`index.html?${query}`, server.url).href);
    await waitForReady(page, 600000);
    await page.waitForFunction((n) => document.querySelectorAll("#p-output .tok[data-step]").length >= n, STEPS, { timeout: 600000 });
  }
  const seconds = (Date.now() - t0) / 1000;
  await page.waitForTimeout(2000);
  const peak = await watch.stop();
  const kvText = await page.evaluate(() => document.querySelector("#p-kv")?.innerText ?? "");
  const held = Number(/([\d,]+) of [\d,]+ positions/.exec(kvText)?.[1]?.replace(/,/g, ""));
  if (held !== TOKENS && held !== TOKENS + 1) throw new Error(`the cache holds ${held} positions, not ${TOKENS} (KV panel: ${JSON.stringify(kvText.slice(0, 120))})`);
  const workerWasm = await engineWorker(page).evaluate(() => self.__ntpWasmBytes());
  const pageWasm = await page.evaluate(() => self.__ntpWasmBytes?.() ?? 0);
  const now = await rendererMemory(browser);
  const dump = await chromeMemoryDump(browser);
  const tab = dump.find((d) => d.pid === now.pid) ?? dump.sort((a, b) => b.footprint_mb - a.footprint_mb)[0];
  const threads = await page.evaluate(async () => (await import("./state/store.js")).view.threads?.threads ?? null);
  figures = {
    model: MODEL, tokens: held, seconds, threads,
    private_peak_mb: peak.anon, private_mb: now.anon, footprint_mb: tab?.footprint_mb ?? null,
    resident_mb: now.rss, resident_peak_mb: peak.hwm,
    worker_wasm_mb: workerWasm / 2 ** 20, page_wasm_mb: pageWasm / 2 ** 20,
    allocators: tab?.allocators ?? [],
  };
  say(`playground tab, ${MODEL}, ${held} tokens cached, ${threads} thread(s) (${seconds.toFixed(1)} s): private peak ${peak.anon.toFixed(0)} MB, ` +
    `now ${now.anon.toFixed(0)} MB; Chrome's footprint ${figures.footprint_mb?.toFixed(0)} MB; resident ${now.rss.toFixed(0)} MB ` +
    `(peak ${peak.hwm.toFixed(0)} MB); wasm: worker ${figures.worker_wasm_mb.toFixed(1)} MB, page ${figures.page_wasm_mb.toFixed(1)} MB`);
  say(`  largest allocators: ${figures.allocators.map(([n, mb]) => `${n} ${mb.toFixed(1)}`).join(", ")}`);
} finally {
  await browser.close();
  await server.close();
}
emitJson(figures);

/**
 * Chrome's memory-infra dump of every process: its private footprint and its
 * top-level allocators (MB). The wasm memories are in the footprint but in no
 * allocator (V8 reserves them outside its heaps).
 * @param {import("playwright-core").Browser} browser
 */
async function chromeMemoryDump(browser) {
  const cdp = await browser.newBrowserCDPSession();
  const events = [];
  cdp.on("Tracing.dataCollected", (e) => events.push(...e.value));
  const complete = new Promise((resolve) => cdp.once("Tracing.tracingComplete", resolve));
  await cdp.send("Tracing.start", {
    traceConfig: { includedCategories: ["disabled-by-default-memory-infra"], excludedCategories: ["*"], memoryDumpConfig: { triggers: [] } },
    transferMode: "ReportEvents",
  });
  await cdp.send("Tracing.requestMemoryDump", { deterministic: true, levelOfDetail: "detailed" });
  await cdp.send("Tracing.end");
  await complete;
  await cdp.detach();
  const hexMb = (v) => parseInt(v, 16) / 2 ** 20;
  const byPid = new Map();
  for (const e of events) {
    const d = e.args?.dumps;
    if (!d) continue;
    const entry = byPid.get(e.pid) ?? { pid: e.pid, footprint_mb: null, allocators: [] };
    if (d.process_totals?.private_footprint_bytes) entry.footprint_mb = hexMb(d.process_totals.private_footprint_bytes);
    for (const [name, a] of Object.entries(d.allocators ?? {})) {
      if (name.includes("/") || !a.attrs?.size) continue;
      const mb = hexMb(a.attrs.effective_size?.value ?? a.attrs.size.value);
      if (mb >= 1) entry.allocators.push([name, mb]);
    }
    byPid.set(e.pid, entry);
  }
  for (const entry of byPid.values()) entry.allocators.sort((a, b) => b[1] - a[1]);
  return [...byPid.values()];
}
