// Bad input through the page's links: an empty prompt, a prompt longer than
// the context, text the tokenizer cannot encode, seeds that are not
// non-negative integers, negative or huge max_new and steps, unknown model
// names and ones that look like paths or addresses. Each is named in a
// message, and the page stays usable: the distribution shows and Step draws
// (at once, or once the prompt is edited where there is nothing to draw
// from), with no page error and no request for anything but the page's own files.
//
// Run: pkg-scripts/build, then node --test tests/e2e/bad-input.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startSuite, stopSuite, openPage, waitForReady, forgiveAbsentIndex } from "./harness.mjs";

let server;
let browser;
before(async () => { ({ server, browser } = await startSuite()); });
after(async () => { await stopSuite({ server, browser }); });

/** Opens `query`; records the page's problems and every URL it requests. */
async function open(query) {
  const { page, errors } = await openPage(browser, "about:blank");
  const requests = [];
  page.on("request", (r) => requests.push(r.url()));
  await page.goto(new URL(`index.html?${query}`, server.url).href);
  await page.waitForFunction(() => document.querySelector("#messages .message"), null, { timeout: 60000 });
  return { page, errors, requests };
}

/** Waits for a message matching `re`. */
async function says(page, re) {
  await page.waitForFunction((src) => [...document.querySelectorAll("#messages .message span")].some((e) => new RegExp(src).test(e.textContent)),
    re.source, { timeout: 60000 });
}

/** Usable: ready, the distribution's ten rows shown, and Step draws one more token. */
async function assertUsable(page, what) {
  await waitForReady(page);
  const rows = await page.$$eval("#p-dist .dist-row", (els) => els.length);
  assert.ok(rows > 0, `${what}: the distribution shows (${rows} rows)`);
  const n = await page.$$eval("#p-output .tok", (els) => els.length);
  assert.equal(await page.isDisabled("#btn-step"), false, `${what}: Step is on`);
  await page.click("#btn-step");
  await page.waitForFunction((want) => document.querySelectorAll("#p-output .tok").length === want && document.body.dataset.ready === "true", n + 1);
}

/** Only the page's own origin was asked for anything. */
function assertOwnRequests(requests) {
  const foreign = requests.filter((u) => !u.startsWith(server.url) && !u.startsWith("data:") && !u.startsWith("blob:") && u !== "about:blank");
  assert.deepEqual(foreign, []);
  assert.deepEqual(requests.filter((u) => /etc\/passwd|\.\.\//.test(decodeURIComponent(new URL(u).pathname))), []);
}

test("an empty prompt says so, draws nothing, and the page works once something is typed", async () => {
  const { page, errors, requests } = await open("model=bard&prompt=");
  await says(page, /^the prompt is empty: type at least one character$/);
  assert.equal(await page.$$eval("#p-output .tok", (els) => els.length), 0);
  await page.fill("#prompt", "ROMEO:");
  await assertUsable(page, "after typing");
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  assertOwnRequests(requests);
  await page.close();
});

test("a prompt longer than the context: the model reads its newest part, the page says so, the distribution and Step work", async () => {
  // 300 × "ROMEO: " is 1,501 of bard's tokens; its context holds 128.
  const { page, errors } = await open(`model=bard&prompt=${encodeURIComponent("ROMEO: ".repeat(300))}&nostop=1`);
  // The sliding window keeps three quarters of the context: 96 of 128.
  await says(page, /^The prompt has 1501 tokens, more than the model's context holds: it reads only the last 96 \(the first 1405 are left out\)/);
  await assertUsable(page, "a long prompt");
  // The cache holds 96 positions: 32 more tokens fill its 128, and the 33rd
  // drawn (not fed) ends the generation, as after a short prompt.
  for (let i = 2; i <= 33; i++) {
    await page.click("#btn-step");
    await page.waitForFunction((want) => document.querySelectorAll("#p-output .tok").length === want && document.body.dataset.ready === "true", i);
  }
  await page.waitForFunction(() => /context is full/.test(document.querySelector("#p-output [data-slot=status]").textContent));
  assert.equal(await page.isDisabled("#btn-step"), true);
  // Back to a short prompt: the note goes.
  await page.fill("#prompt", "ROMEO:");
  await page.waitForFunction(() => !document.querySelector("#messages [data-key=prompt-window]"));
  await assertUsable(page, "a short prompt again");
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});

test("text the tokenizer cannot encode is named by character, and an encodable prompt makes the page work", async () => {
  const { page, errors } = await open("model=bigram-abc&prompt=abxc");
  await says(page, /^the character 'x' is not in this model's vocabulary; allowed: \{'a', 'b', 'c'\}$/);
  await page.fill("#prompt", "abc");
  await assertUsable(page, "bigram-abc on abc");
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});

test("seeds that are not non-negative integers are named and replaced by the default", async () => {
  for (const [seed, re] of [
    ["-1", /^seed=-1: Seed must be between 0 and 9007199254740991; using 42$/],
    ["1.5", /^seed=1\.5: Seed must be a whole number; using 42$/],
    ["abc", /^seed=abc: Seed: not a number; using 42$/],
    ["9007199254740992", /^seed=9007199254740992: Seed must be between 0 and 9007199254740991; using 42$/],
    ["1e400", /^seed=1e400: Seed/],
  ]) {
    const { page, errors } = await open(`model=bard&seed=${encodeURIComponent(seed)}`);
    await says(page, re);
    await assertUsable(page, `seed=${seed}`);
    assert.equal(await page.inputValue("#ctl-seed"), "42", `seed=${seed}`);
    assert.deepEqual(forgiveAbsentIndex(errors), [], `seed=${seed}`);
    await page.close();
  }
});

test("negative, fractional or huge max_new and steps are named and replaced", async () => {
  for (const [param, value, re] of [
    ["max_new", "-5", /^max_new=-5: Max new tokens must be between 1 and 4096; using 64$/],
    ["max_new", "99999999", /^max_new=99999999: Max new tokens must be between 1 and 4096; using 64$/],
    ["max_new", "0", /^max_new=0: Max new tokens must be between 1 and 4096; using 64$/],
    ["steps", "-1", /^steps=-1 must be a whole number from 0 to 4096; using 0$/],
    ["steps", "99999", /^steps=99999 must be a whole number from 0 to 4096; using 0$/],
    ["steps", "1.5", /^steps=1\.5 must be a whole number from 0 to 4096; using 0$/],
  ]) {
    const { page, errors } = await open(`model=bard&${param}=${value}`);
    await says(page, re);
    await assertUsable(page, `${param}=${value}`);
    assert.deepEqual(forgiveAbsentIndex(errors), [], `${param}=${value}`);
    await page.close();
  }
});

test("an unknown model name, or one that looks like a path or an address, falls back to bard without fetching it", async () => {
  for (const [model, re] of [
    ["nope", /^model=nope is not available; using bard$/],
    ["../bard", /^model=\.\.\/bard is not a model name; using the default model$/],
    ["/etc/passwd", /^model=\/etc\/passwd is not a model name; using the default model$/],
    ["models/bard", /^model=models\/bard is not a model name; using the default model$/],
    ["https://evil.example/m.gguf", /^model=https:\/\/evil\.example\/m\.gguf is not a model name; using the default model$/],
  ]) {
    const { page, errors, requests } = await open(`model=${encodeURIComponent(model)}`);
    await says(page, re);
    await assertUsable(page, `model=${model}`);
    assert.equal(await page.inputValue("#model-select"), "bard");
    assert.deepEqual(forgiveAbsentIndex(errors), [], `model=${model}`);
    assertOwnRequests(requests);
    await page.close();
  }
});

test("a top-k larger than the vocabulary is taken, keeps every token, and the rules panel says so", async () => {
  // bard has 2,048 tokens; the link may have been written for SmolLM2's 49,152.
  const { page, errors } = await openPage(browser, new URL("index.html?model=bard&top_k=30000", server.url).href);
  await waitForReady(page);
  await page.waitForFunction(() => /Top-k = 30000 is more than this model's 2048 tokens: it keeps every token/.test(document.querySelector("#rules-note")?.textContent ?? ""));
  const kept = await page.$eval("#p-rules tfoot tr:nth-child(2) td[data-stage=top_k][data-group=pipeline]", (td) => td.textContent);
  assert.equal(Number(kept), 2048, "top-k keeps the whole vocabulary");
  // Within the vocabulary the note goes.
  await page.fill("#ctl-top_k", "40");
  await page.press("#ctl-top_k", "Enter");
  await page.waitForFunction(() => !/is more than this model's/.test(document.querySelector("#rules-note")?.textContent ?? ""));
  await assertUsable(page, "top_k = 40");
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});
