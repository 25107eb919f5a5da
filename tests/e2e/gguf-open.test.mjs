// "Open a GGUF file…": files the page or the engine cannot run are refused
// with a clear message, and the model loaded before stays usable. The files
// come through the file picker and through a drop on the page; neither path
// sends anything over the network.
//
// Run: pkg-scripts/build, then node --test tests/e2e/gguf-open.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { open } from "node:fs/promises";
import { SMOLLM2_FILE as SMOLLM2, needSmollm2, startSuite, stopSuite, openPage, waitForReady, screenshot, recordWorkerMessages } from "./harness.mjs";

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => ({ server, browser } = await startSuite()));
after(() => stopSuite({ server, browser }));

/**
 * The page on a small model, recording what it posts to its engine worker
 * and every request it makes.
 */
async function openRecording() {
  const { page, errors } = await openPage(browser, "about:blank");
  await recordWorkerMessages(page);
  /** @type {string[]} */
  const requests = [];
  page.on("request", (req) => requests.push(`${req.method()} ${new URL(req.url()).pathname}`));
  await page.goto(new URL("index.html?model=kv-demo&prompt=abc&seed=3&steps=2", server.url).href);
  await waitForReady(page);
  return { page, errors, requests };
}

/**
 * Drop a file on the page, as a user dragging it from the desktop would.
 * @param {import("playwright-core").Page} page
 * @param {string} name
 * @param {number[]} bytes
 */
async function dropFile(page, name, bytes) {
  await page.evaluate(({ name, bytes }) => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(bytes)], name, { type: "application/octet-stream" }));
    const target = document.querySelector("#p-dist");
    for (const type of ["dragenter", "dragover", "drop"]) {
      target.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    }
  }, { name, bytes });
}

/** The page still works on the model it had: one more step. */
async function stillUsable(page, tokensBefore) {
  await page.waitForFunction(() => document.body.dataset.ready === "true");
  assert.equal(await page.inputValue("#model-select"), "kv-demo");
  assert.match(await page.textContent("#model-facts"), /^kv-demo · /);
  await page.click("#btn-step");
  await page.waitForFunction((n) => document.querySelectorAll("#p-output .tok").length === n + 1, tokensBefore);
}

test("a file that is not a GGUF is refused by the page before the engine sees it", async () => {
  const { page, errors, requests } = await openRecording();
  const sentBefore = await page.evaluate(() => window.__sent.length);
  const requestsBefore = requests.length;
  // A PNG's first bytes, through the file picker.
  await page.setInputFiles("#gguf-file", { name: "picture.png", mimeType: "image/png",
    buffer: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...new Array(40).fill(0)]) });
  await page.waitForFunction(() => /picture\.png is not a GGUF file/.test(document.querySelector("#messages").textContent));
  assert.match(await page.textContent("#messages"), /starts with the bytes 89 50 4e 47, a GGUF file with "GGUF"/);
  // Too short to hold a header, dropped on the page.
  await dropFile(page, "tiny.gguf", [0x47, 0x47, 0x55, 0x46, 3, 0]);
  await page.waitForFunction(() => /tiny\.gguf is 6 bytes: too short/.test(document.querySelector("#messages").textContent));
  const sent = await page.evaluate((k) => window.__sent.slice(k), sentBefore);
  assert.ok(!sent.includes("load"), `nothing went to the engine: ${sent.join(", ")}`);
  assert.deepEqual(requests.slice(requestsBefore), [], "nothing went over the network");
  await stillUsable(page, 2);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a broken GGUF (the magic, then garbage) gets the engine's message and the model before stays", async () => {
  const { page, errors, requests } = await openRecording();
  const requestsBefore = requests.length;
  const garbage = [0x47, 0x47, 0x55, 0x46, ...Array.from({ length: 200 }, (_, i) => (i * 37 + 11) & 0xff)];
  await dropFile(page, "broken.gguf", garbage);
  await page.waitForFunction(() => /Could not open broken\.gguf/.test(document.querySelector("#messages").textContent), null, { timeout: 30000 });
  const msg = await page.textContent("#messages");
  assert.match(msg, /The model loaded before is still here/);
  assert.doesNotMatch(msg, /unreachable|RuntimeError|panicked/, `not a crash: ${msg}`);
  assert.equal(await page.isHidden("#load-progress"), true, "the progress line is gone");
  assert.deepEqual(requests.slice(requestsBefore), [], "nothing went over the network");
  await stillUsable(page, 2);
  await screenshot(page, "gguf-open-broken");
  assert.deepEqual(errors, []);
  await page.close();
});

test("a truncated SmolLM2 file is refused with the engine's message, the model before stays", async (t) => {
  if (!needSmollm2(t)) return;
  const fh = await open(SMOLLM2);
  const head = Buffer.alloc(4 << 20);
  await fh.read(head, 0, head.length, 0);
  await fh.close();
  const { page, errors } = await openRecording();
  await page.setInputFiles("#gguf-file", { name: "smollm2-cut.gguf", mimeType: "application/octet-stream", buffer: head });
  await page.waitForFunction(() => /Could not open smollm2-cut\.gguf/.test(document.querySelector("#messages").textContent), null, { timeout: 60000 });
  const msg = await page.textContent("#messages");
  assert.doesNotMatch(msg, /unreachable|RuntimeError|panicked/, `not a crash: ${msg}`);
  await stillUsable(page, 2);
  assert.deepEqual(errors, []);
  await page.close();
});

test("SmolLM2 opened from disk becomes the model, stays out of links, and leaves on the next pick", { timeout: 300000 }, async (t) => {
  if (!needSmollm2(t)) return;
  const { page, errors, requests } = await openRecording();
  const requestsBefore = requests.length;
  await page.setInputFiles("#gguf-file", SMOLLM2);
  await page.waitForFunction(() => document.body.dataset.ready === "false");
  await waitForReady(page, 240000);
  assert.match(await page.textContent("#model-facts"), / · 49152 tokens · 30 layers/);
  assert.equal(await page.inputValue("#model-select"), "file");
  assert.match(await page.textContent("#model-select option[value=file]"), /Your file: SmolLM2-135M-Instruct\.Q4_1\.gguf/);
  assert.deepEqual(requests.slice(requestsBefore).filter((r) => r.includes(".gguf")), [], "the file never went over the network");
  assert.deepEqual(await page.evaluate(() => window.__loadFiles), ["File"],
    "the worker got the File itself, to read piece by piece into the engine, not the page's copy of its bytes");
  await page.click("#btn-step");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 1);
  await page.waitForFunction(() => document.body.dataset.urlPending !== "true");
  assert.equal(new URL(page.url()).searchParams.get("model"), null, "a file from disk is not in the link");
  assert.equal(new URL(page.url()).searchParams.get("steps"), "1");
  // Picking a catalogue model drops the file from the picker.
  await page.selectOption("#model-select", "kv-demo");
  await waitForReady(page);
  assert.equal(await page.$("#model-select option[value=file]"), null);
  assert.match(await page.textContent("#model-facts"), /^kv-demo · /);
  assert.deepEqual(errors, []);
  await page.close();
});

test("without SmolLM2's file on the server the picker says how to get it, and its link falls back with that message", async () => {
  const { page, errors } = await openPage(browser, "about:blank");
  // As on a machine where pkg-scripts/fetch-smollm2 was never run.
  await page.route("**/*.gguf", (route) => route.fulfill({ status: 404, body: "not here" }));
  await page.goto(new URL("index.html?model=smollm2-135m", server.url).href);
  await waitForReady(page);
  assert.match(await page.textContent("#messages"), /not on this server\. Run pkg-scripts\/fetch-smollm2/);
  assert.equal(await page.inputValue("#model-select"), "bard");
  const option = await page.$eval("#model-select option[value=smollm2-135m]", (o) => ({ text: o.textContent, disabled: o.disabled }));
  assert.match(option.text, /98\.4 MB; not on this server: run pkg-scripts\/fetch-smollm2/);
  assert.equal(option.disabled, true);
  await page.click("#btn-step");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 1);
  // Only the HEAD asked (and its 404 is forgiven by the harness); nothing else failed.
  assert.deepEqual(errors, []);
  await page.close();
});
