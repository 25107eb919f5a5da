// Smoke test of the whole stack: the static server hands out the right
// content types, the page loads in real headless Chromium, the wasm engine
// starts and says it is ready, and nothing logs an error on the way.
//
// Run alone: node --test tests/e2e/smoke.test.mjs   (after pkg-scripts/build)

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import path from "node:path";
import { existsSync } from "node:fs";
import {
  WWW_ROOT, startServer, launchBrowser, openPage, waitForReady, screenshot, resolveUnderRoot,
} from "./harness.mjs";
import { startStaticServer } from "../../pkg-scripts/static-server.mjs";

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => {
  assert.ok(existsSync(path.join(WWW_ROOT, "pkg", "nexttoken_bg.wasm")),
    "www/pkg/nexttoken_bg.wasm is missing: run pkg-scripts/build first");
  server = await startServer();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/**
 * A raw GET that sends the path exactly as given (fetch() would resolve "..").
 * @param {string} base
 * @param {string} rawPath
 * @returns {Promise<number>} the status code
 */
function getStatusOfRawPath(base, rawPath) {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname, port, path: rawPath, method: "GET" }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

test("paths that climb out of www/ resolve to nothing", () => {
  const root = "/srv/www";
  assert.equal(resolveUnderRoot(root, "/pkg/nexttoken.js"), "/srv/www/pkg/nexttoken.js");
  assert.equal(resolveUnderRoot(root, "/a/../index.html"), "/srv/www/index.html");
  // Normalised against "/" first, so ".." can never get above the root.
  assert.equal(resolveUnderRoot(root, "/../Cargo.toml"), "/srv/www/Cargo.toml");
  assert.equal(resolveUnderRoot(root, "/%2e%2e/%2e%2e/etc/passwd"), "/srv/www/etc/passwd");
  assert.equal(resolveUnderRoot(root, "/%E0%A4%A"), null, "a malformed escape is refused");
  assert.equal(resolveUnderRoot(root, "/index.html%00.js"), null, "a NUL byte is refused");
});

test("the server sends the content types browsers insist on", async () => {
  // Our own server, even when NTP_BASE_URL points the page tests at another:
  // this is a test of pkg-scripts/static-server.mjs, which must not pass unrun.
  const own = await startStaticServer({ root: WWW_ROOT, port: 0, host: "127.0.0.1" });
  try {
    await checkContentTypes(own.url);
  } finally {
    await own.close();
  }
});

/** @param {string} base */
async function checkContentTypes(base) {
  const server = { url: base };
  const expected = {
    "": "text/html",
    "index.html": "text/html",
    "main.js": "text/javascript",
    "pkg/nexttoken.js": "text/javascript",
    "pkg/nexttoken_bg.wasm": "application/wasm",
  };
  for (const [rel, type] of Object.entries(expected)) {
    const res = await fetch(new URL(rel, server.url), { method: "HEAD" });
    assert.equal(res.status, 200, `HEAD /${rel}`);
    assert.equal(res.headers.get("content-type")?.split(";")[0], type, `content type of /${rel}`);
  }
  assert.equal((await fetch(new URL("no-such-file.js", server.url))).status, 404);
  assert.equal(await getStatusOfRawPath(server.url, "/../Cargo.toml"), 404, "no file above www/ is served");
}

test("the wasm module loads on its own and refuses a bad model name with a message", async () => {
  const { page, errors } = await openPage(browser, new URL("index.html", server.url).href);
  const result = await page.evaluate(async () => {
    const engine = await import(new URL("pkg/nexttoken.js", location.href).href);
    await engine.default();
    engine.set_panic_hook();
    const pg = engine.Playground.builtin("logits10");
    const info = pg.info();
    let refusal = null;
    try {
      engine.Playground.builtin("no-such-model");
    } catch (err) {
      refusal = { isError: err instanceof Error, message: String(err.message ?? err) };
    }
    return { info, refusal };
  });
  // Lesson 21's hand-written vector has ten classes.
  assert.equal(result.info.vocab_size, 10);
  assert.equal(result.info.kind, "logits");
  assert.ok(result.refusal, "an unknown built-in model must throw");
  assert.ok(result.refusal.isError, "it throws a JS Error, not a bare value");
  assert.match(result.refusal.message, /no-such-model/, "the message names the bad input");
  assert.doesNotMatch(result.refusal.message, /unreachable/, "not a Rust panic");
  await page.close();
  assert.deepEqual(ignoreAbsentModelIndex(errors), []);
});

test("the page loads, the engine reports ready, and nothing logs an error", async () => {
  const { page, errors } = await openPage(browser, server.url);
  await waitForReady(page);
  assert.equal(await page.title(), "Next-Token Playground");
  // The model panel's facts come from the engine's ModelInfo
  // ("<name> · <vocab_size> tokens · ...").
  const facts = (await page.textContent("#model-facts")) ?? "";
  assert.match(facts, /^\S+ · \d+ tokens/, `model facts: ${JSON.stringify(facts)}`);
  // The distribution panel has drawn the engine's top tokens.
  const rows = await page.$$eval("#p-dist .dist-row", (els) => els.length);
  assert.ok(rows > 0, "the distribution panel shows at least one token");
  const file = await screenshot(page, "smoke-default");
  assert.ok(existsSync(file));
  await page.close();
  assert.deepEqual(ignoreAbsentModelIndex(errors), []);
});

/**
 * The page treats a missing models/index.json as "no trained model yet" and
 * falls back to the course models, but Chromium still logs the 404. Forgive
 * exactly that, and only while the file is really absent from www/.
 * @param {string[]} errors
 * @returns {string[]}
 */
function ignoreAbsentModelIndex(errors) {
  if (existsSync(path.join(WWW_ROOT, "models", "index.json"))) return errors;
  const isIndex404 = (e) => /^http 404: .*\/models\/index\.json$/.test(e);
  const only404s = errors.filter((e) => e.startsWith("http ")).every(isIndex404);
  return errors.filter((e) => !isIndex404(e) && !(only404s && /^console: Failed to load resource: .*404/.test(e)));
}
