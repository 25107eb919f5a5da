// The "score a text" panel on the default model (bard): every token of the
// text with the rank and probability the model gave it, colour never alone,
// the summary and the most surprising tokens; scoring leaves the generation
// alone. Also: a chat link on a model without a chat template.
//
// Run: pkg-scripts/build, then node --test tests/e2e/score.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startSuite, stopSuite, openPage, waitForReady, screenshot } from "./harness.mjs";

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => ({ server, browser } = await startSuite()));
after(() => stopSuite({ server, browser }));

/** @param {string} query */
async function open(query) {
  const { page, errors } = await openPage(browser, new URL(`index.html${query}`, server.url).href);
  await waitForReady(page);
  return { page, errors };
}

const TEXT = "ROMEO:\nBut soft, what light through yonder window breaks?";

test("a scored text shows every token's rank and probability, the summary and the most surprising tokens", async () => {
  const { page, errors } = await open("?model=bard&seed=7&steps=2");
  // data-ready comes with the prompt's report; the replayed steps follow
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 2);
  const before = await page.textContent("#p-output [data-slot=text]");
  await page.fill("#score-text", TEXT);
  await page.click("#btn-score");
  await page.waitForFunction(() => document.querySelectorAll("#p-score .score-text .stok").length > 5);
  const tokens = await page.$$eval("#p-score .score-text .stok", (els) => els.map((e) => ({
    text: e.textContent, rank: e.getAttribute("data-rank"), label: e.getAttribute("aria-label"), title: e.title, cls: e.className,
  })));
  assert.equal(tokens.map((t) => t.text).join(""), TEXT, "the tokens spell the text");
  assert.equal(tokens[0].rank, "");
  assert.match(tokens[0].label, /nothing predicts it/);
  for (const t of tokens.slice(1)) {
    assert.ok(Number(t.rank) >= 1, `rank of ${JSON.stringify(t.text)}: ${t.rank}`);
    // colour is never alone: the rank and probability are in the token's name and title
    assert.match(t.label, new RegExp(`rank ${t.rank}, p = [0-9.e-]+, \\d+\\.\\d\\d bits; the model expected `));
    assert.equal(t.title, t.label);
    const bucket = Number(t.rank) === 1 ? "sb-1" : Number(t.rank) <= 10 ? "sb-10" : Number(t.rank) <= 100 ? "sb-100" : "sb-rest";
    assert.ok(t.cls.includes(bucket), `${t.text}: rank ${t.rank} in ${t.cls}`);
  }
  // The legend's counts add up to the tokens with a prediction.
  const counts = await page.$$eval("#p-score .score-key .count", (els) => els.map((e) => Number(e.textContent.split(" ")[0])));
  assert.equal(counts.reduce((a, b) => a + b, 0), tokens.length - 1);
  const summary = await page.textContent("#p-score [data-slot=summary]");
  assert.match(summary, new RegExp(`^${tokens.length} tokens, ${tokens.length - 1} predicted · mean surprisal \\d+\\.\\d{3} bits per token · perplexity \\d+\\.\\d\\d`));
  const listed = await page.$$eval("#p-score .score-list li", (els) => els.map((e) => Number(e.getAttribute("data-i"))));
  assert.ok(listed.length >= 1 && listed.length <= 10);
  const bits = (i) => Number(/(\d+\.\d\d) bits/.exec(tokens[i].label)[1]);
  for (let k = 1; k < listed.length; k++) assert.ok(bits(listed[k - 1]) >= bits(listed[k]), "highest surprisal first");
  // Focus (keyboard) shows a token's details in words.
  await page.focus("#p-score .score-text .stok[data-i='3']");
  await page.waitForFunction(() => /^token 4 /.test(document.querySelector("#p-score [data-slot=detail]").textContent));
  // The generation was left alone.
  assert.equal(await page.textContent("#p-output [data-slot=text]"), before);
  await screenshot(page, "score-bard");

  // ... and the next step draws what it would have drawn without the scoring.
  await page.click("#btn-step");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 3);
  const after = await page.textContent("#p-output [data-slot=text]");
  const other = await open("?model=bard&seed=7&steps=3");
  await other.page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 3);
  assert.equal(await other.page.textContent("#p-output [data-slot=text]"), after);
  await other.page.close();
  assert.deepEqual(errors, []);
  await page.close();
});

test("“Use the generated text” scores what the model wrote, on a toy model too", async () => {
  const { page, errors } = await open("?model=bigram-abc&temperature=0&steps=6");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 6);
  await page.click("#btn-score-output");
  await page.waitForFunction(() => document.querySelectorAll("#p-score .score-text .stok").length === 7);
  assert.equal(await page.inputValue("#score-text"), await page.textContent("#p-output [data-slot=text]"));
  assert.deepEqual(errors, []);
  await page.close();
});

test("a chat link on a model without a chat template continues the prompt as plain text, with a message", async () => {
  const { page, errors } = await open("?model=bard&chat=1");
  assert.match(await page.textContent("#messages"), /chat=1: .* has no chat template/);
  assert.equal(await page.isVisible("#chat-switch"), false);
  await page.waitForFunction(() => !new URLSearchParams(location.search).has("chat"));
  await page.click("#btn-step");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 1);
  assert.deepEqual(errors, []);
  await page.close();
});
