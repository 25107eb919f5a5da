// Cross-origin isolation, which the engine's pool of wasm threads needs (a
// shared memory is a SharedArrayBuffer, which needs `crossOriginIsolated`);
// without it the engine runs on one thread, so every case must work either
// way. Checked in headless Chromium (and Firefox ESR for the first and
// third):
//   (a) under pkg-scripts/static-server.mjs's headers (COOP, COEP, CORP) the
//       page and its engine worker are isolated, no service worker is
//       registered, and the model loads and steps with no error;
//   (b) from a host that sends no headers and a page that did not opt in, the
//       page is not isolated, registers no service worker, never reloads, and
//       works;
//   (c) from that host with the opt-in <meta> (a copy of www/ whose
//       index.html has it), the page registers www/isolation-sw.js, reloads
//       once and comes back isolated through it, engine worker included; the
//       model's weights still go into the page's own Cache API entry, and a
//       reload does not reload again. With a service worker that cannot
//       isolate, the page reloads once, gives up and works on one thread;
//   (d) the embed in an iframe of another origin's page that is not
//       isolated (a course site) loads and works, not isolated; an opted-in
//       page in such a frame neither registers nor reloads.
//
// Run: pkg-scripts/build, then node --test tests/e2e/isolation.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import os from "node:os";
import path from "node:path";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import {
  startServer, launchBrowser, launchFirefox, openPage, waitForReady, forgiveAbsentIndex, WWW_ROOT, engineWorker,
} from "./harness.mjs";
import { ISOLATION_HEADERS, startStaticServer } from "../../pkg-scripts/static-server.mjs";

/** The www/ server with its headers. */
let server;
/** @type {import("playwright-core").Browser} */
let browser;
/** @type {{ close: () => Promise<void> }[]} servers started by the tests */
const extraServers = [];
/** @type {string[]} site copies to remove */
const copies = [];

before(async () => {
  if (!process.env.NTP_BASE_URL && !existsSync(path.join(WWW_ROOT, "pkg", "nexttoken.js"))) {
    throw new Error("www/pkg is missing: run pkg-scripts/build first");
  }
  server = await startServer();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
  for (const s of extraServers) await s.close();
  for (const dir of copies) await rm(dir, { recursive: true, force: true });
});

const OPT_IN_META = '<meta name="nexttoken-isolation" content="service-worker">';

/**
 * A copy of www/ (links to its files) whose index.html carries the opt-in
 * meta, optionally with another service worker in place of ours and extra files.
 * @param {{ worker?: string, files?: Record<string, string> }} [options]
 * @returns {Promise<string>} the directory
 */
async function siteCopy({ worker, files = {} } = {}) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "ntp-isolation-"));
  copies.push(dir);
  for (const name of await readdir(WWW_ROOT)) {
    if (name === "index.html" || (worker && name === "isolation-sw.js")) continue;
    await symlink(path.join(WWW_ROOT, name), path.join(dir, name));
  }
  const html = await readFile(path.join(WWW_ROOT, "index.html"), "utf8");
  const marked = html.replace('<meta charset="utf-8">', `<meta charset="utf-8">\n  ${OPT_IN_META}`);
  assert.notEqual(marked, html, "the opt-in meta went in");
  await writeFile(path.join(dir, "index.html"), marked);
  if (worker) await writeFile(path.join(dir, "isolation-sw.js"), worker);
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
  return dir;
}

/**
 * A server of `root` that sends no isolation headers (a static host that cannot).
 * @param {string} [root]
 */
async function bareServer(root = WWW_ROOT) {
  const s = await startServer({ root, isolation: false });
  extraServers.push(s);
  return s;
}

/**
 * What the page says about its isolation (works in both drivers' pages and frames).
 * @param {any} where
 */
const inspect = (where) => where.evaluate(async () => {
  const { isolation } = await import("./isolation.js");
  const sw = navigator.serviceWorker;
  const regs = sw ? await sw.getRegistrations() : [];
  return {
    isolation: isolation(),
    sharedArrayBuffer: typeof SharedArrayBuffer === "function",
    registrations: regs.map((r) => new URL((r.active ?? r.waiting ?? r.installing).scriptURL).pathname),
    controller: sw?.controller ? new URL(sw.controller.scriptURL).pathname : null,
    navigation: performance.getEntriesByType("navigation")[0]?.type,
    reloadFlag: sessionStorage.getItem("nexttoken-isolation-reloaded"),
    caches: await caches.keys(),
  };
});

/**
 * Whether the page's engine worker is cross-origin isolated (its helper
 * threads are workers too, but their thread is the pool's: they answer no
 * evaluate).
 * @param {import("playwright-core").Page} page
 * @returns {Promise<boolean[]>}
 */
const workersIsolated = async (page) => { const w = engineWorker(page); return w ? [await w.evaluate(() => self.crossOriginIsolated)] : []; };

/**
 * Open url in Chromium with the documents it loads counted (a reload is one more).
 * @param {string} url
 */
async function openCounted(url) {
  const { page, errors } = await openPage(browser, "about:blank");
  /** @type {string[]} */
  const navigations = [];
  page.on("load", () => navigations.push(page.url()));
  const response = await page.goto(url);
  return { page, errors, navigations, response };
}

/** Step once and wait for the token: the engine works. @param {import("playwright-core").Page} page */
async function stepOnce(page) {
  const before = await page.$$eval("#p-output .tok", (els) => els.length); // a reload replays the link's steps
  await page.click("#btn-step");
  await page.waitForFunction((n) => document.querySelectorAll("#p-output .tok").length === n + 1, before, { timeout: 60000 });
}

test("(a) under the server's headers the page and its engine worker are isolated, and the model loads and steps", async () => {
  const { page, errors, navigations, response } = await openCounted(new URL("index.html?tour=0", server.url).href);
  for (const [name, value] of Object.entries(ISOLATION_HEADERS)) assert.equal(response.headers()[name], value, name);
  await waitForReady(page);
  const seen = await inspect(page);
  assert.deepEqual(seen.isolation, { isolated: true, how: "headers" });
  assert.equal(seen.sharedArrayBuffer, true);
  assert.deepEqual(seen.registrations, [], "no service worker");
  assert.equal(seen.navigation, "navigate");
  assert.equal(navigations.length, 1, "no reload");
  const workers = await workersIsolated(page);
  assert.ok(workers.length >= 1 && workers.every((w) => w === true), `the engine worker is isolated: ${workers}`);
  await stepOnce(page);
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});

test("(b) without headers and without the opt-in: not isolated, no service worker, no reload, works", async () => {
  const bare = await bareServer();
  const { page, errors, navigations, response } = await openCounted(new URL("index.html?tour=0", bare.url).href);
  for (const name of Object.keys(ISOLATION_HEADERS)) assert.equal(response.headers()[name], undefined, name);
  await waitForReady(page);
  const seen = await inspect(page);
  assert.deepEqual(seen.isolation, { isolated: false, how: "none" });
  assert.equal(seen.sharedArrayBuffer, false);
  assert.deepEqual(seen.registrations, [], "no service worker");
  assert.equal(seen.controller, null);
  assert.equal(seen.navigation, "navigate");
  assert.equal(seen.reloadFlag, null);
  assert.equal(navigations.length, 1, "no reload");
  assert.deepEqual(await workersIsolated(page), [false]);
  await stepOnce(page);
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});

test("(c) without headers but with the opt-in: one reload through isolation-sw.js, then isolated, the model cached as before", async () => {
  const bare = await bareServer(await siteCopy());
  const { page, errors, navigations } = await openCounted(new URL("index.html?tour=0", bare.url).href);
  await waitForReady(page);
  const seen = await inspect(page);
  assert.deepEqual(seen.isolation, { isolated: true, how: "service-worker" });
  assert.equal(seen.sharedArrayBuffer, true);
  assert.deepEqual(seen.registrations, ["/isolation-sw.js"]);
  assert.equal(seen.controller, "/isolation-sw.js");
  assert.equal(seen.navigation, "reload");
  assert.equal(seen.reloadFlag, null, "the guard is cleared once isolated");
  assert.equal(navigations.length, 2, `one reload: ${navigations.join(" ")}`);
  const workers = await workersIsolated(page);
  assert.ok(workers.length >= 1 && workers.every((w) => w === true), `the engine worker is isolated: ${workers}`);
  // The service worker keeps nothing of its own; the weights went into the page's cache through it.
  assert.deepEqual(seen.caches, ["nexttoken-models-v1"]);
  const cached = await page.evaluate(async () => (await (await caches.open("nexttoken-models-v1")).keys()).map((r) => new URL(r.url).pathname));
  assert.ok(cached.includes("/models/bard/model.safetensors"), `bard's weights are cached: ${cached}`);
  await stepOnce(page);

  // A reload stays isolated and does not reload again; the model comes from the cache.
  await page.reload();
  await waitForReady(page);
  assert.equal(navigations.length, 3, `no second reload: ${navigations.join(" ")}`);
  assert.deepEqual((await inspect(page)).isolation, { isolated: true, how: "service-worker" });
  await stepOnce(page);
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});

test("(c) with a service worker that cannot isolate, the page reloads once, gives up quietly and works", async () => {
  const dud = [
    "self.addEventListener(\"install\", () => self.skipWaiting());",
    "self.addEventListener(\"activate\", (e) => e.waitUntil(self.clients.claim()));",
  ].join("\n");
  const bare = await bareServer(await siteCopy({ worker: dud }));
  const { page, errors, navigations } = await openCounted(new URL("index.html?model=logits10&tour=0", bare.url).href);
  await waitForReady(page);
  const seen = await inspect(page);
  assert.deepEqual(seen.isolation, { isolated: false, how: "none" });
  assert.equal(seen.navigation, "reload");
  assert.equal(seen.reloadFlag, "1", "the guard stays for the tab's session");
  assert.equal(navigations.length, 2, `one reload only: ${navigations.join(" ")}`);
  assert.match(await page.textContent("#p-dist [data-slot=head]"), /p_max = /);
  await page.reload();
  await waitForReady(page);
  assert.equal(navigations.length, 3, `still no loop: ${navigations.join(" ")}`);
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});

test("(d) an embed in a frame of another origin's page that is not isolated loads and works, not isolated", async () => {
  const optedIn = await bareServer(await siteCopy());
  const query = "?model=logits10&embed=1&panels=dist,rules,entropy&temperature=0.5";
  const parentDir = await mkdtemp(path.join(os.tmpdir(), "ntp-isolation-parent-"));
  copies.push(parentDir);
  await writeFile(path.join(parentDir, "lesson.html"), [
    "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><link rel=\"icon\" href=\"data:,\"><title>A lesson</title></head><body>",
    `<iframe id="headers" src="${new URL(`index.html${query}`, server.url).href}" width="720" height="640" title="with headers"></iframe>`,
    `<iframe id="opted-in" src="${new URL(`index.html${query}`, optedIn.url).href}" width="720" height="640" title="opted in"></iframe>`,
    "</body></html>",
  ].join("\n"));
  // Another site: no isolation headers, and not our policy (whose default-src 'self' would refuse the frames).
  const lesson = await startStaticServer({ root: parentDir, isolation: false, csp: false });
  extraServers.push(lesson);
  const { page, errors, navigations } = await openCounted(new URL("lesson.html", lesson.url).href);
  assert.equal(await page.evaluate(() => crossOriginIsolated), false, "the lesson page is not isolated");
  for (const id of ["headers", "opted-in"]) {
    const frame = await (await page.waitForSelector(`#${id}`)).contentFrame();
    await frame.waitForSelector("body[data-ready=true]", { state: "attached", timeout: 60000 });
    assert.match(await frame.textContent("#p-dist [data-slot=head]"), /p_max = 0\.632149/, id);
    const seen = await inspect(frame);
    assert.deepEqual(seen.isolation, { isolated: false, how: "none" }, id);
    assert.deepEqual(seen.registrations, [], `${id}: no service worker`);
    assert.equal(seen.navigation, "navigate", `${id}: no reload`);
  }
  assert.equal(navigations.length, 1);
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});

test("Firefox: isolated under the headers, and through the service worker after one reload without them", async () => {
  const firefox = await launchFirefox();
  try {
    const bare = await bareServer(await siteCopy());
    for (const [base, how, navigation] of [[server.url, "headers", "navigate"], [bare.url, "service-worker", "reload"]]) {
      const page = await firefox.newPage();
      /** @type {string[]} */
      const errors = [];
      page.on("console", (msg) => { if (msg.type() === "error") errors.push(`console: ${msg.text()}`); });
      page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
      await page.goto(new URL("index.html?model=logits10&tour=0", base).href);
      await page.waitForSelector("body[data-ready=true]", { timeout: 60000 });
      const seen = await inspect(page);
      assert.deepEqual(seen.isolation, { isolated: true, how }, how);
      assert.equal(seen.sharedArrayBuffer, true, how);
      assert.equal(seen.navigation, navigation, how);
      assert.match(await page.$eval("#p-dist [data-slot=head]", (el) => el.textContent), /p_max = /);
      assert.deepEqual(errors, [], how);
      await page.close();
    }
  } finally {
    await firefox.close();
  }
});
