// Shared helpers for the browser tests: a static server of www/, Debian's
// headless Chromium driven by playwright-core (and Debian's Firefox ESR,
// driven by puppeteer-core over WebDriver BiDi), a page that records every
// console error, and screenshots in tests/artifacts/.
// (Over 400 lines: one job, what the browser tests share; each helper is
// small, and a file per helper would only add imports to every test.)
//
// Every test that calls startServer() or launchBrowser() must close what it
// got (server.close(), browser.close()), or node --test never exits.
//
// Environment:
//   NTP_BASE_URL  serve nothing; point startServer() at a server already running
//   CHROMIUM      another Chromium binary than /usr/bin/chromium
//   FIREFOX       another Firefox binary than /usr/bin/firefox-esr

import assert from "node:assert/strict";
import path from "node:path";
import { existsSync } from "node:fs";
import { mkdir, readdir, stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import puppeteer from "puppeteer-core";
import { startStaticServer, resolveUnderRoot, MIME_TYPES } from "../../pkg-scripts/static-server.mjs";
import { ENGINE_MODULES } from "../../www/worker/engine-wasm.js";

export { resolveUnderRoot, MIME_TYPES };

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** The repository root. */
export const REPO_ROOT = path.resolve(HERE, "..", "..");
/** The static site the tests open. */
export const WWW_ROOT = path.join(REPO_ROOT, "www");
/**
 * Every module of the site, as paths relative to www/ ("engine/link.js"), in
 * every folder but the built engine (pkg/) and the model files.
 * @returns {Promise<string[]>}
 */
export async function pageModules() {
  const found = [];
  const walk = async (dir) => {
    for (const e of await readdir(path.join(WWW_ROOT, dir), { withFileTypes: true })) {
      const rel = dir ? `${dir}/${e.name}` : e.name;
      if (e.isDirectory()) { if (!["pkg", "models", "img"].includes(rel)) await walk(rel); }
      else if (e.name.endsWith(".js")) found.push(rel);
    }
  };
  await walk("");
  return found.sort();
}
/** Where screenshots land (gitignored). */
export const ARTIFACTS_DIR = path.join(REPO_ROOT, "tests", "artifacts");

/** The flags Debian's Chromium needs in a container (playwright-core makes its own profile). */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * Serve a directory (www/ by default) on 127.0.0.1 at a free port, with the
 * same server as pkg-scripts/serve. With NTP_BASE_URL set, nothing is started
 * and that URL is returned instead. `isolation: false` serves without the
 * cross-origin isolation headers (a host that cannot send them).
 * @param {{ root?: string, isolation?: boolean }} [options]
 * @returns {Promise<{ url: string, close: () => Promise<void> }>} url ends with "/"
 */
export async function startServer({ root = WWW_ROOT, isolation = true } = {}) {
  const external = process.env.NTP_BASE_URL;
  if (external) {
    return { url: external.endsWith("/") ? external : external + "/", close: async () => {} };
  }
  const { url, close } = await startStaticServer({ root, port: 0, host: "127.0.0.1", isolation });
  return { url, close };
}

/**
 * Launch Debian's headless Chromium (or $CHROMIUM).
 * @returns {Promise<import("playwright-core").Browser>}
 */
export async function launchBrowser() {
  const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";
  const exists = await stat(executablePath).catch(() => null);
  if (!exists) throw new Error(`launchBrowser: no Chromium at ${executablePath} (run pkg-scripts/setup, or set CHROMIUM)`);
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}

/**
 * Launch Debian's headless Firefox ESR (or $FIREFOX) through puppeteer-core
 * and WebDriver BiDi. (playwright-core drives only its own patched Firefox,
 * which cannot be downloaded here, and its BiDi client needs a newer Firefox
 * than the ESR.) The pages it opens have puppeteer's API.
 * @returns {Promise<import("puppeteer-core").Browser>}
 */
export async function launchFirefox() {
  const executablePath = process.env.FIREFOX ?? "/usr/bin/firefox-esr";
  const exists = await stat(executablePath).catch(() => null);
  if (!exists) throw new Error(`launchFirefox: no Firefox at ${executablePath} (run pkg-scripts/setup, or set FIREFOX)`);
  return puppeteer.launch({ browser: "firefox", executablePath, headless: true });
}

/**
 * A bare page of the server's origin, for tests that import the engine into
 * it (any document will do; models/index.json is one), recording its
 * uncaught errors.
 * @param {import("playwright-core").Browser} browser
 * @param {{ url: string }} server
 * @returns {Promise<{ page: import("playwright-core").Page, problems: string[] }>}
 */
export async function originPage(browser, server) {
  const page = await browser.newPage();
  /** @type {string[]} */
  const problems = [];
  page.on("pageerror", (e) => problems.push(e.message));
  await page.goto(new URL("models/index.json", server.url).href);
  return { page, problems };
}

/**
 * Open url in a fresh browser context and record every problem the page
 * reports: console errors (the page's and its workers'), uncaught exceptions,
 * failed requests and HTTP error responses. Closing the page closes its context.
 * @param {import("playwright-core").Browser} browser
 * @param {string} url
 * @param {{ viewport?: { width: number, height: number }, waitUntil?: "load" | "domcontentloaded" | "networkidle" | "commit" }} [options]
 * @returns {Promise<{ page: import("playwright-core").Page, errors: string[] }>}
 */
export async function openPage(browser, url, { viewport = { width: 1300, height: 900 }, waitUntil = "load" } = {}) {
  const page = await browser.newPage({ viewport, acceptDownloads: true });
  /** @type {string[]} */
  const errors = [];
  page.on("console", (msg) => {
    if (msg.type() !== "error") return;
    // The page asks with HEAD whether a model file is served (see below); Chromium logs the 404 of an absent one.
    if (/^Failed to load resource/.test(msg.text()) && /\.gguf$/.test(msg.location()?.url ?? "")) return;
    errors.push(`console: ${msg.text()}`);
  });
  // A dedicated worker's console.error and its uncaught exceptions reach
  // these page events too (checked with playwright-core 1.65 and Chromium 156),
  // so the engine worker needs no listeners of its own.
  page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
  page.on("requestfailed", (req) => {
    const why = req.failure()?.errorText ?? "?";
    // ERR_ABORTED is the page cancelling its own request (a model load superseded
    // by another, e.g. a bad ?model= falling back to the default): not a failure.
    if (why !== "net::ERR_ABORTED") errors.push(`requestfailed: ${req.url()} (${why})`);
  });
  page.on("response", (res) => {
    // A HEAD answered 404 is the page asking whether a model file is served
    // (www/state/catalogue.js): the picker then says how to get it. Not a failure.
    if (res.status() === 404 && res.request().method() === "HEAD") return;
    if (res.status() >= 400) errors.push(`http ${res.status()}: ${res.url()}`);
  });
  page.on("crash", () => errors.push("crash: the page crashed"));
  await page.goto(url, { waitUntil });
  return { page, errors };
}

/**
 * Wait until the page says the engine is ready (panels/paint.js sets
 * <body data-ready="true"> once the model is loaded and painted).
 * @param {import("playwright-core").Page} page
 * @param {number} [timeoutMs]
 */
export async function waitForReady(page, timeoutMs = 60000) {
  await page.waitForSelector("body[data-ready=true]", { state: "attached", timeout: timeoutMs });
}

/**
 * Wait until `predicate(view, arg)` holds for the page's store view.
 * Playwright's waitForFunction takes any returned promise as a truthy
 * answer, so the store is imported once and the predicate polled
 * synchronously on each frame. The predicate goes to Playwright as source
 * text, which Playwright evaluates itself: the page's CSP refuses an eval of
 * the page's own.
 * @param {import("playwright-core").Page} page
 * @param {(view: any, arg: any) => any} predicate
 * @param {any} [arg]
 * @param {number} [timeoutMs]
 */
export async function waitForView(page, predicate, arg, timeoutMs = 60000) {
  await page.evaluate(async () => { globalThis.__storeView = (await import("./state/store.js")).view; });
  // A function, not a string: Playwright evaluates a string as an
  // expression, and an arrow function's source is a function object, a
  // truthy answer at once (so the wait never waited).
  const poll = new Function("a", `return (${predicate.toString()})(globalThis.__storeView, a);`);
  await page.waitForFunction(poll, arg, { timeout: timeoutMs });
}

/**
 * Save a full-page screenshot to tests/artifacts/<name>.png.
 * @param {import("playwright-core").Page} page
 * @param {string} name letters, digits, ".", "_" and "-" only
 * @returns {Promise<string>} the file written
 */
export async function screenshot(page, name) {
  if (typeof name !== "string" || !/^[A-Za-z0-9._-]+$/.test(name) || name.startsWith(".")) {
    throw new Error(`screenshot: bad name ${JSON.stringify(name)} (use letters, digits, ".", "_", "-")`);
  }
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  const file = path.join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * What every page test file needs first: the built engine, a server of www/
 * and a browser. Throws a clear message when www/pkg has not been built.
 * @returns {Promise<{ server: { url: string, close: () => Promise<void> }, browser: import("playwright-core").Browser }>}
 */
export async function startSuite() {
  if (!process.env.NTP_BASE_URL && !existsSync(path.join(WWW_ROOT, "pkg", "nexttoken.js"))) {
    throw new Error("www/pkg is missing: run pkg-scripts/build first");
  }
  return { server: await startServer(), browser: await launchBrowser() };
}

/** Closes what startSuite opened (either may be missing if it failed). */
export async function stopSuite({ server, browser }) {
  await browser?.close();
  await server?.close();
}

/** SmolLM2's GGUF, made by pkg-scripts/fetch-smollm2 (git-ignored). */
export const SMOLLM2_FILE = path.join(WWW_ROOT, "models", "smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf");

/**
 * Whether a test that needs SmolLM2's file can run. Without the file it is
 * skipped with the command that fetches it, unless NEXTTOKEN_REQUIRE_SMOLLM2=1
 * (pkg-scripts/test sets it, as for the engine's own SmolLM2 tests): then a
 * missing file fails the test.
 * @param {import("node:test").TestContext} t
 * @returns {boolean} true: go on
 */
export function needSmollm2(t) {
  if (existsSync(SMOLLM2_FILE)) return true;
  const advice = "SmolLM2's GGUF is not in www/models/smollm2/: run pkg-scripts/fetch-smollm2";
  if (process.env.NEXTTOKEN_REQUIRE_SMOLLM2 === "1") throw new Error(`${advice} (NEXTTOKEN_REQUIRE_SMOLLM2=1 requires it)`);
  t.skip(advice);
  return false;
}

/** Gemma 3 270M's GGUF, made by pkg-scripts/fetch-gemma3 (git-ignored). */
export const GEMMA3_FILE = path.join(WWW_ROOT, "models", "gemma3", "gemma-3-270m-q4_k_m.gguf");

/**
 * `needSmollm2` for Gemma 3 270M's file (NEXTTOKEN_REQUIRE_GEMMA3=1 makes a
 * missing file fail).
 * @param {import("node:test").TestContext} t
 * @returns {boolean} true: go on
 */
export function needGemma3(t) {
  if (existsSync(GEMMA3_FILE)) return true;
  const advice = "Gemma 3's GGUF is not in www/models/gemma3/: run pkg-scripts/fetch-gemma3";
  if (process.env.NEXTTOKEN_REQUIRE_GEMMA3 === "1") throw new Error(`${advice} (NEXTTOKEN_REQUIRE_GEMMA3=1 requires it)`);
  t.skip(advice);
  return false;
}

/**
 * The memory of this browser's largest renderer process (the tab, its
 * workers included) in MiB (KiB over 1,024): { rss, hwm } from /proc (VmRSS, VmHWM), and
 * anon, the part that is the tab's own (RssAnon: not the shared library
 * pages every Chromium process maps). Only the renderers of `browser` count,
 * so another Chromium running on the machine cannot inflate the figure.
 * @param {import("playwright-core").Browser} browser
 */
export async function rendererMemory(browser) {
  return largestMemory(await rendererPids(browser));
}

/**
 * The process ids of `browser`'s renderers, from the browser itself.
 * @param {import("playwright-core").Browser} browser
 * @returns {Promise<number[]>}
 */
async function rendererPids(browser) {
  const cdp = await browser.newBrowserCDPSession();
  const { processInfo } = await cdp.send("SystemInfo.getProcessInfo");
  await cdp.detach();
  return processInfo.filter((p) => p.type === "renderer").map((p) => p.id);
}

/**
 * The largest of these processes by resident size, its figures in MiB.
 * @param {number[]} pids
 */
async function largestMemory(pids) {
  const { readFile } = await import("node:fs/promises");
  let best = null;
  for (const id of pids) {
    const status = await readFile(`/proc/${id}/status`, "utf8").catch(() => "");
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
    const m = { pid: id, rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024, anon: kb("RssAnon") / 1024 };
    if (!best || m.rss > best.rss) best = m;
  }
  return best;
}

/**
 * Samples rendererMemory(browser) every `everyMs` until stop(), which gives
 * the peaks seen: { rss, anon } (sampled) and hwm (the kernel's own peak
 * of the resident size). The tab's private memory (anon) has no kernel peak,
 * so it is sampled; wasm memory never shrinks, so its part is also in the
 * last sample.
 * @param {import("playwright-core").Browser} browser
 * @param {number} [everyMs]
 */
export function watchRendererMemory(browser, everyMs = 25) {
  const peak = { rss: 0, anon: 0, hwm: 0 };
  const note = (m) => { if (m) for (const k of Object.keys(peak)) peak[k] = Math.max(peak[k], m[k]); };
  let running = true;
  const loop = (async () => {
    let pids = [];
    for (let i = 0; running; i++) {
      // New renderers appear with new pages: ask the browser now and then.
      if (i % 20 === 0) pids = await rendererPids(browser).catch(() => pids);
      note(await largestMemory(pids));
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return { stop: async () => { running = false; await loop; note(await rendererMemory(browser).catch(() => null)); return peak; } };
}

/**
 * Open the page with a query and wait until the engine has painted.
 * `page.problems()` lists what went wrong on the way: console errors, page
 * errors, failed requests; the 404 of an absent models/index.json is the one
 * thing forgiven (the page falls back to the course models), and only while
 * that file really is absent.
 * @param {import("playwright-core").Browser} browser
 * @param {{ url: string }} server
 * @param {string} query
 * @param {{ width?: number, height?: number }} [size]
 */
export async function openPlaygroundIn(browser, server, query, size = {}) {
  const viewport = { width: size.width ?? 1300, height: size.height ?? 900 };
  const { page, errors } = await openPage(browser, new URL(`index.html${query}`, server.url).href, { viewport });
  await waitForReady(page);
  page.problems = () => forgiveAbsentIndex(errors);
  return page;
}

/**
 * The problems a page recorded, less the 404 of models/index.json while that
 * file really is absent (the page then offers the course models).
 * @param {string[]} errors
 * @returns {string[]}
 */
export function forgiveAbsentIndex(errors) {
  if (existsSync(path.join(WWW_ROOT, "models", "index.json"))) return errors.slice();
  const indexMissing = (e) => /^http 404: .*\/models\/index\.json$/.test(e);
  const only = errors.filter((e) => e.startsWith("http ")).every(indexMissing);
  return errors.filter((e) => !indexMissing(e) && !(only && /^console: Failed to load resource/.test(e)));
}

/**
 * From the next navigation on, the type of every message the page posts to
 * its engine worker is pushed onto `window.__sent`, and what each load sent as
 * a file from disk onto `window.__loadFiles`.
 * @param {import("playwright-core").Page} page
 */
export async function recordWorkerMessages(page) {
  await page.addInitScript(() => {
    window.__sent = [];
    // What each load's model carried as a file from disk: its type's name
    // ("File": a handle; "ArrayBuffer": the bytes), so a test can see the page
    // never read the file whole.
    window.__loadFiles = [];
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (msg, ...rest) {
      if (msg && typeof msg.type === "string") window.__sent.push(msg.type);
      if (msg?.type === "load" && msg.model?.file) window.__loadFiles.push(Object.prototype.toString.call(msg.model.file).slice(8, -1));
      return post.call(this, msg, ...rest);
    };
  });
}

/**
 * The page's engine worker (www/worker/worker.js), among its workers: its
 * helper threads (thread-helper.js) are workers too, and never answer an
 * evaluate, since their thread belongs to the engine's thread pool.
 * @param {import("playwright-core").Page} page
 * @returns {import("playwright-core").Worker|undefined}
 */
export function engineWorker(page) {
  return page.workers().find((w) => /\/worker\/worker\.js(\?.*)?$/.test(w.url()));
}

/**
 * Serve `page` the real engine with one addition: its worker's
 * `Playground.step` throws what a Rust panic gives in wasm (a RuntimeError
 * "unreachable") once, after the test sets `self.__ntpPanicOnce` in the
 * engine worker (`engineWorker(page)`). Call before the page is opened.
 * @param {import("playwright-core").Page} page
 */
export async function serveEngineThatPanicsOnce(page) {
  await page.route("**/pkg/nexttoken.js", async (route) => {
    const res = await route.fetch();
    const body = `${await res.text()}
const __ntpRealStep = Playground.prototype.step;
Playground.prototype.step = function (s) {
  if (self.__ntpPanicOnce) { self.__ntpPanicOnce = false; throw new WebAssembly.RuntimeError("unreachable"); }
  return __ntpRealStep.call(this, s);
};`;
    await route.fulfill({ response: res, body });
  });
}

/**
 * Wait until the page's engine worker is another than `old` (a restarted
 * one): the old one leaves the page's list once its helpers have ended too.
 * @param {import("playwright-core").Page} page
 * @param {import("playwright-core").Worker|undefined} old
 * @returns {Promise<import("playwright-core").Worker|undefined>} the new one (undefined: none in 10 s)
 */
export async function nextEngineWorker(page, old) {
  for (const end = Date.now() + 10000; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
    const now = engineWorker(page);
    if (now && now !== old) return now;
  }
  return undefined;
}

/**
 * The wasm engine in `page` (already on the test server) with a GGUF file
 * streamed in as the worker does it, and for each prompt its token ids and
 * the top 50 raw logits (llama.cpp's top 10 are among them whenever the
 * logits agree): what the wasm-against-llama.cpp tests compare.
 * @param {import("playwright-core").Page} page
 * @param {string} file the GGUF file's path on disk, under www/
 * @param {string[]} prompts
 * @param {string} [module] which of the engine's modules in www/pkg/
 *   (worker/engine-wasm.js ENGINE_MODULES): each gets its own copy of the glue
 * @returns {Promise<{ ids: number[], top: [number, number][] }[]>}
 */
export async function wasmPromptLogits(page, file, prompts, module = ENGINE_MODULES.simd128) {
  const url = "/" + path.relative(WWW_ROOT, file);
  return page.evaluate(async ({ url, prompts, module }) => {
    const mod = await import(`/pkg/nexttoken.js?${module}`);
    await mod.default({ module_or_path: `/pkg/${module}` });
    const res = await fetch(url);
    const buffer = new mod.FileBuffer(Number(res.headers.get("content-length")));
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer.push(value);
    }
    const pg = mod.Playground.from_gguf_buffer(buffer, url.split("/").pop());
    const settings = { temperature: 0, top_n: 50, stop: [] };
    return prompts.map((text) => {
      const rep = pg.start(text, settings);
      return { ids: rep.full.prompt_tokens.map((p) => p.id), top: rep.distribution.raw_top.map((r) => [r.id, r.logit]) };
    });
  }, { url, prompts, module });
}

/**
 * Our top 50 logits at one position against llama.cpp's top 10 there, as the
 * native tests compare them (crate/tests/llamacpp_support): the same top
 * token wherever llama.cpp's margin is wider than the centred tolerance, all
 * ten among ours, and their logits within `tolerance`, raw and after removing
 * each side's mean over the ten (the error in log p_i/p_j).
 * @param {import("node:test").TestContext} t
 * @param {string} what
 * @param {[number, number][]} ourTop [id, logit], highest first
 * @param {[number, number][]} ref llama.cpp's [id, logit], highest first
 * @param {{ abs: number, centred: number }} tolerance
 */
export function checkAgainstLlamaCpp(t, what, ourTop, ref, tolerance) {
  const logit = new Map(ourTop);
  if (ref[0][1] - ref[1][1] > tolerance.centred) assert.equal(ourTop[0][0], ref[0][0], `${what}: the top token`);
  for (const [id] of ref) assert.ok(logit.has(id), `${what}: llama.cpp's token ${id} is not in our top 50`);
  const ourMean = ref.reduce((s, [id]) => s + logit.get(id), 0) / ref.length;
  const refMean = ref.reduce((s, [, l]) => s + l, 0) / ref.length;
  let abs = 0, centred = 0;
  for (const [id, l] of ref) {
    const d = logit.get(id) - l;
    abs = Math.max(abs, Math.abs(d));
    centred = Math.max(centred, Math.abs(d - (ourMean - refMean)));
  }
  t.diagnostic(`${what}: max gap ${abs.toFixed(3)}, centred ${centred.toFixed(3)}`);
  assert.ok(abs <= tolerance.abs && centred <= tolerance.centred,
    `${what}: logits differ from llama.cpp's by ${abs} (centred ${centred}); tolerance ${JSON.stringify(tolerance)}`);
}

/**
 * A 3-beam search in the page's Beam panel: it runs by itself after a step
 * when its estimate (beams × length × the last step's time) is under half a
 * second, else it waits for the Search button, which this presses. Which one
 * depends on the machine's speed. Resolves once three beams are listed.
 * @param {import("playwright-core").Page} page
 */
export async function searchThreeBeams(page) {
  await page.waitForFunction(() => document.querySelectorAll("#p-beam .beam-list li").length === 3 ||
    !document.querySelector("#p-beam [data-action=beam-search]")?.hidden);
  if (await page.isVisible("#p-beam [data-action=beam-search]")) await page.click("#p-beam [data-action=beam-search]");
  await page.waitForFunction(() => document.querySelectorAll("#p-beam .beam-list li").length === 3);
}
