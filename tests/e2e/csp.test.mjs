// The page as a web citizen: it loads and works under its own
// Content-Security-Policy (the Web Worker, wasm compiled with
// 'wasm-unsafe-eval', steps, a model switch, figures saved as SVG and PNG)
// with no violation; the policy is really in force (an injected inline
// script does not run, eval throws, on the page and in the worker, another
// origin cannot be reached); the <meta> alone holds it on a static host that
// sends no header; and no module of www/ inserts text as HTML.
//
// Run: pkg-scripts/build, then node --test tests/e2e/csp.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { readFile } from "node:fs/promises";
import { startSuite, stopSuite, openPage, waitForReady, forgiveAbsentIndex, pageModules, WWW_ROOT } from "./harness.mjs";
import { startStaticServer, CONTENT_SECURITY_POLICY } from "../../pkg-scripts/static-server.mjs";

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => ({ server, browser } = await startSuite()));
after(() => stopSuite({ server, browser }));

/** The course's ten logits (lesson 21), for an expectation computed here. */
const COURSE = [3, 2.5, 2, 1.5, 1, 0.5, 0, -0.5, -1, -1.5];

/**
 * Open url with every CSP violation recorded: the document's
 * securitypolicyviolation events (in every frame, from before any script of
 * the page runs) into window.__csp, and any console message that names the
 * policy (the worker's included) into the returned list.
 * @param {string} url
 */
async function openRecorded(url) {
  const { page, errors } = await openPage(browser, "about:blank");
  /** @type {string[]} */
  const consoleCsp = [];
  page.on("console", (msg) => { if (/Content Security Policy/i.test(msg.text())) consoleCsp.push(msg.text()); });
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener("securitypolicyviolation", (e) =>
      window.__csp.push(`${e.effectiveDirective} blocked ${e.blockedURI || "(inline)"} at ${e.sourceFile}:${e.lineNumber}`));
  });
  const response = await page.goto(url);
  return { page, errors, consoleCsp, response };
}

/** @param {import("playwright-core").Page | import("playwright-core").Frame} where */
const violations = (where) => where.evaluate(() => window.__csp);

/** A script that records whether eval runs where it is loaded. */
const EVAL_PROBE = "(() => { try { return String((0, eval)('1 + 1')); } catch (e) { return e.name; } })()";

/**
 * What the policy of the page (its meta and its header) and of a worker
 * started from the same server does to eval in their own scripts (not in
 * page.evaluate, which DevTools runs outside the policy), and whether an
 * inline script added to the document runs. The probe scripts are answered
 * by the test, but the worker's with the server's real response headers for
 * worker/worker.js, so its policy is the one the engine's worker gets.
 * @param {import("playwright-core").Page} page
 * @param {string} base the server's URL
 * @returns {Promise<{ inline: boolean, pageEval: string, workerEval: string }>}
 */
async function probePolicy(page, base) {
  await page.route("**/__csp-probe.js", (route) =>
    route.fulfill({ contentType: "text/javascript", body: `window.__evalProbe = ${EVAL_PROBE};` }));
  await page.route("**/__csp-probe-worker.js", async (route) => {
    const real = await route.fetch({ url: new URL("worker/worker.js", base).href });
    await route.fulfill({ response: real, body: `postMessage(${EVAL_PROBE});` });
  });
  return page.evaluate(async () => {
    const s = document.createElement("script");
    s.textContent = "window.__inline = 1";
    document.head.append(s);
    const inline = window.__inline === 1;
    const pageEval = await new Promise((resolve) => {
      const probe = document.createElement("script");
      probe.src = "/__csp-probe.js";
      probe.onload = () => resolve(window.__evalProbe);
      probe.onerror = () => resolve("the probe did not load");
      document.head.append(probe);
    });
    const workerEval = await new Promise((resolve) => {
      const w = new Worker("/__csp-probe-worker.js");
      w.onmessage = (e) => { resolve(e.data); w.terminate(); };
      w.onerror = () => resolve("the worker probe did not start");
    });
    return { inline, pageEval, workerEval };
  });
}

test("the page loads, steps, switches model and saves figures under its policy with no violation", async () => {
  const { page, errors, consoleCsp, response } = await openRecorded(new URL("index.html?tour=0", server.url).href);
  assert.equal(response.headers()["content-security-policy"], CONTENT_SECURITY_POLICY, "the server sends the policy");
  await waitForReady(page);
  assert.equal(new URL(page.url()).searchParams.get("model") ?? "bard", "bard");
  for (let n = 1; n <= 3; n++) {
    await page.click("#btn-step");
    await page.waitForFunction((k) => document.querySelectorAll("#p-output .tok").length === k, n, { timeout: 60000 });
  }

  await page.selectOption("#model-select", "logits10");
  await page.waitForFunction(() => new URLSearchParams(location.search).get("model") === "logits10");
  await waitForReady(page);
  const pMax = Math.exp(COURSE[0]) / COURSE.reduce((a, z) => a + Math.exp(z), 0);
  await page.waitForFunction((want) => document.querySelector("#p-dist [data-slot=head]")?.textContent.includes(`p_max = ${want}`),
    pMax.toFixed(6), { timeout: 60000 });

  const [svg] = await Promise.all([page.waitForEvent("download"), page.click("#p-dist .fig-buttons button:has-text(\"SVG\")")]);
  const svgText = await readFile(await svg.path(), "utf8");
  assert.match(svgText, /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.ok(svgText.includes("p_max"), "the SVG holds the panel");
  // The PNG goes through a data: image of that SVG and a canvas (img-src data:).
  const [png] = await Promise.all([page.waitForEvent("download"), page.click("#p-dist .fig-buttons button:has-text(\"PNG\")")]);
  const pngBytes = await readFile(await png.path());
  assert.deepEqual([...pngBytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "a PNG file");
  const width = pngBytes.readUInt32BE(16);
  const panelWidth = await page.$eval("#p-dist", (el) => Math.ceil(el.getBoundingClientRect().width));
  assert.equal(width, panelWidth * 2, "drawn at twice the panel's width");

  assert.deepEqual(await violations(page), [], "no securitypolicyviolation");
  assert.deepEqual(consoleCsp, [], "no console message about the policy");
  assert.deepEqual(forgiveAbsentIndex(errors), []);

  // The policy is in force: no inline script, no eval, on the page and in a worker.
  assert.deepEqual(await probePolicy(page, server.url), { inline: false, pageEval: "EvalError", workerEval: "EvalError" });
  // ... and another origin cannot be reached. Each refusal was recorded,
  // which is also what shows the recorder above could have failed.
  const remote = await page.evaluate(() => fetch("http://127.0.0.2:9/x").then(() => "fetched", (e) => e.name));
  assert.equal(remote, "TypeError");
  const seen = (await violations(page)).map((v) => v.replace(/ at .*/, ""));
  // Twice each: the meta's policy and the header's both hold, and both report.
  assert.deepEqual(seen, ["script-src-elem blocked inline", "script-src-elem blocked inline", "script-src blocked eval",
    "script-src blocked eval", "connect-src blocked http://127.0.0.2:9/x", "connect-src blocked http://127.0.0.2:9/x"]);
  await page.close();
});

test("the <meta> alone holds the policy on a static host that sends no header", async () => {
  const bare = await startStaticServer({ root: WWW_ROOT, csp: false });
  try {
    const { page, errors, consoleCsp, response } = await openRecorded(new URL("index.html?model=logits10&tour=0", bare.url).href);
    assert.equal(response.headers()["content-security-policy"], undefined, "this server sends no policy");
    await waitForReady(page);
    await page.click("#btn-step");
    await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 1, null, { timeout: 60000 });
    assert.deepEqual(await violations(page), []);
    assert.deepEqual(consoleCsp, []);
    assert.deepEqual(forgiveAbsentIndex(errors), []);
    // The meta holds on the page; the worker, whose policy only a header can
    // set, has none here.
    assert.deepEqual(await probePolicy(page, bare.url), { inline: false, pageEval: "EvalError", workerEval: "2" });
    const seen = (await violations(page)).map((v) => v.replace(/ at .*/, ""));
    assert.deepEqual(seen, ["script-src-elem blocked inline", "script-src blocked eval"], "once each: the meta is the only policy");
    await page.close();
    // The control: a page of this server with no meta lets the probes run,
    // so the refusals above are the policy's.
    const { page: demo } = await openRecorded(new URL("embed-demo.html", bare.url).href);
    assert.deepEqual(await probePolicy(demo, bare.url), { inline: true, pageEval: "2", workerEval: "2" });
    await demo.close();
  } finally {
    await bare.close();
  }
});

test("the page's <meta> policy is the one the server sends", async () => {
  const html = await readFile(path.join(WWW_ROOT, "index.html"), "utf8");
  const metas = [...html.matchAll(/<meta http-equiv="Content-Security-Policy" content="([^"]*)">/g)];
  assert.equal(metas.length, 1, "one policy meta in index.html");
  assert.equal(metas[0][1], CONTENT_SECURITY_POLICY);
  assert.ok(html.indexOf(metas[0][0]) < html.indexOf("<script"), "the meta comes before any script");
});

test("the embed demo page and its iframe load with no violation", async () => {
  const { page, errors, consoleCsp } = await openRecorded(new URL("embed-demo.html", server.url).href);
  const frame = await (await page.waitForSelector("next-token-playground iframe")).contentFrame();
  await frame.waitForSelector("body[data-ready=true]", { state: "attached", timeout: 60000 });
  // the demo's own look comes from its stylesheet, which the policy allows
  assert.equal(await page.evaluate(() => getComputedStyle(document.body).maxWidth), "780px");
  assert.deepEqual(await violations(page), []);
  assert.deepEqual(await violations(frame), []);
  assert.deepEqual(consoleCsp, []);
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});

/**
 * Where a script writes markup from a string: innerHTML/outerHTML
 * assignments, insertAdjacentHTML, document.write, srcdoc, createContextualFragment.
 * @param {string} source
 * @returns {string[]} the offending lines
 */
function htmlSinks(source) {
  const sink = /\.(innerHTML|outerHTML|srcdoc)\s*\+?=(?!=)|\.insertAdjacentHTML\s*\(|\bdocument\.write(ln)?\s*\(|\.createContextualFragment\s*\(/;
  return source.split("\n").filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line) && sink.test(line));
}

test("no module of www/ inserts a string as HTML (model and user text go in as text)", async () => {
  // The detector itself: each sink is caught, reading one is not.
  for (const bad of ["el.innerHTML = text;", "row.outerHTML += x", "p.insertAdjacentHTML('beforeend', s)",
    "document.write(s)", "frame.srcdoc = html", "range.createContextualFragment(s)"]) {
    assert.equal(htmlSinks(bad).length, 1, bad);
  }
  assert.deepEqual(htmlSinks("if (el.innerHTML === '') x();\n// el.innerHTML = 'comment'"), []);

  const files = await pageModules();
  assert.ok(files.length > 40, `the modules were found (${files.length})`);
  /** @type {string[]} */
  const found = [];
  for (const file of files) {
    for (const line of htmlSinks(await readFile(path.join(WWW_ROOT, file), "utf8"))) found.push(`${file}: ${line.trim()}`);
  }
  assert.deepEqual(found, []);
});
