// Accessibility: axe-core (pinned in tests/package.json) on the page, the
// embed view and each state a panel can be in, light and dark, wide and
// phone: zero serious or critical violations of WCAG 2.1 A/AA. Plus what axe
// cannot judge: every control has a name, the keyboard reaches and operates
// them with a visible focus ring, the shortcuts do not fire while typing, and
// a generated token says its probability in numbers on focus.
//
// Run: pkg-scripts/build, then node --test tests/e2e/a11y.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { startSuite, stopSuite, openPage, waitForReady, screenshot } from "./harness.mjs";

const AXE_FILE = path.join(path.dirname(createRequire(import.meta.url).resolve("axe-core")), "axe.min.js");
// Evaluated, not added as a <script>: the page's policy refuses inline scripts
// (tests/e2e/csp.test.mjs), and DevTools' evaluation runs outside it.
const AXE_SOURCE = readFileSync(AXE_FILE, "utf8");

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => ({ server, browser } = await startSuite()));
after(() => stopSuite({ server, browser }));

/**
 * @param {string} query
 * @param {{ width?: number, height?: number, colorScheme?: "light"|"dark", path?: string }} [opts]
 */
async function open(query, { width = 1300, height = 900, colorScheme = "light", path: file = "index.html" } = {}) {
  const { page, errors } = await openPage(browser, "about:blank", { viewport: { width, height } });
  await page.emulateMedia({ colorScheme });
  await page.goto(new URL(`${file}${query}`, server.url).href);
  if (file === "index.html") await waitForReady(page);
  return { page, errors };
}

/**
 * axe on the page (or a frame of it): the serious and critical violations, as
 * readable lines (rule, impact, the first nodes' selectors and axe's summary).
 * @param {import("playwright-core").Page | import("playwright-core").Frame} where
 * @returns {Promise<string[]>}
 */
async function axeProblems(where) {
  await where.evaluate(AXE_SOURCE);
  const result = await where.evaluate(async () => {
    // @ts-ignore axe is the script just added
    const r = await window.axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] }, resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.slice(0, 4).map((n) => `${n.target.join(" ")}: ${n.failureSummary?.split("\n").slice(1, 2).join(" ")}`) }));
  });
  return result.filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help}\n    ${v.nodes.join("\n    ")}`);
}

/** @param {string[]} problems @param {string} where */
function assertClean(problems, where) {
  assert.deepEqual(problems, [], `axe on ${where}:\n  ${problems.join("\n  ")}`);
}

for (const colorScheme of /** @type {const} */ (["light", "dark"])) {
  test(`axe: the page after a few steps, each panel in its filled state (${colorScheme})`, async () => {
    const { page, errors } = await open("?model=bard&steps=4&seed=7&tour=0&panels=output,dist,rules,entropy,kv,inside,compare,beam,score,controls,model", { colorScheme });
    await page.waitForSelector("#p-inside .body[data-state=shown]", { state: "attached", timeout: 60000 });
    await page.waitForSelector("#p-compare .body[data-state=shown]", { state: "attached", timeout: 60000 });
    // the beam search runs by itself on the toy model (or, when the last step's
    // time made it look slow on a busy machine, from the panel's button); wait for its tree
    const beam = await page.waitForSelector("#p-beam svg, #p-beam [data-action=beam-search]:not([hidden])", { timeout: 60000 });
    if (await beam.evaluate((el) => el.tagName === "BUTTON")) await beam.click();
    await page.waitForSelector("#p-beam svg", { timeout: 60000 });
    // the score panel with a scored text, a token selected
    await page.fill("#score-text", "ROMEO:\nBut soft, what light");
    await page.click("#btn-score");
    await page.waitForSelector("#p-score .stok", { timeout: 30000 });
    await page.focus("#p-score .stok");
    // the embed code shown
    await page.click("#btn-embed");
    assertClean(await axeProblems(page), `the page (${colorScheme})`);
    await screenshot(page, `a11y-page-${colorScheme}`);
    assert.deepEqual(errors, []);
    await page.close();
  });
}

for (const colorScheme of /** @type {const} */ (["light", "dark"])) {
  test(`axe: a long chain's dense rules table, short headers and small type (${colorScheme})`, async () => {
    const { page, errors } = await open("?tour=0&top_k=40&top_p=0.95&min_p=0.02&repetition_penalty=1.2&typical_p=0.9&epsilon_cutoff=0.001" +
      "&eta_cutoff=0.001&top_nsigma=3&xtc_threshold=0.1&xtc_probability=0.5&dry_multiplier=0.8&mirostat=2&no_repeat_ngram_size=3",
    { width: 1280, height: 800, colorScheme });
    assert.equal(await page.$eval("#p-rules table", (t) => t.classList.contains("dense")), true);
    assertClean(await axeProblems(page), `the dense rules table (${colorScheme})`);
    assert.deepEqual(errors, []);
    await page.close();
  });
}

for (const [width, colorScheme] of /** @type {const} */ ([[1300, "light"], [1300, "dark"], [390, "light"]])) {
  test(`axe: the compare panel with a finished run, a side refused, an import's report and an export (${width} px, ${colorScheme})`, async () => {
    const { page, errors } = await open(`?model=bard&tour=0&panels=output,dist,compare,controls&a=current&b=${encodeURIComponent("llama_cpp:--top-k 5\n--min-p 0")}`,
      { width, height: 900, colorScheme });
    await page.waitForSelector("#p-compare .body[data-state=shown]", { state: "attached", timeout: 60000 });
    await page.fill("#cmp-runs", "3");
    await page.fill("#cmp-max-new", "8");
    await page.click("#btn-cmp-run");
    await page.waitForSelector("#p-compare [data-slot=cmp-results][data-state=done]", { state: "attached", timeout: 60000 });
    await page.click("#p-compare details.cmp-texts.a summary");
    await page.click("#p-compare .cmp-side.b .cmp-filled summary");
    // a paste refused beside B's box
    await page.click("#p-compare .cmp-side.b .cmp-paste summary");
    await page.fill("#cmp-b-text", "--top-k nope");
    await page.click("#cmp-b-use");
    await page.waitForFunction(() => document.querySelector("#cmp-b-msg").textContent.length > 0);
    // an import's report and an export in the controls
    if (width < 700) await page.click("#btn-more-controls");
    await page.waitForFunction(() => document.querySelectorAll("#cfg-dialect option").length > 1);
    await page.fill("#cfg-text", "--temp 0.7 --top-k 40");
    await page.click("#btn-cfg-import");
    await page.waitForSelector("#cfg-result .cfg-head");
    await page.click("#btn-cfg-export");
    await page.waitForFunction(() => document.querySelector("#cfg-export-text").value.length > 0);
    assertClean(await axeProblems(page), `the compare panel (${width} px, ${colorScheme})`);
    await screenshot(page, `a11y-compare-${width}-${colorScheme}`);
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test("axe: the toy models' tools (logits editor, bigram retraining) and a refused value", async () => {
  const { page, errors } = await open("?model=logits10&tour=0");
  await page.fill("#ctl-top_p", "7"); // refused: the message next to the control
  assertClean(await axeProblems(page), "logits10 with its editor and a refused value");
  await page.close();
  const bigram = await open("?model=bigram-abc&tour=0");
  await bigram.page.click("#bigram-retrain");
  await bigram.page.waitForFunction(() => document.querySelector("#train-result")?.textContent.length > 0, null, { timeout: 60000 });
  assertClean(await axeProblems(bigram.page), "the bigram model after retraining");
  assert.deepEqual([...errors, ...bigram.errors], []);
  await bigram.page.close();
});

test("axe: the phone layout, its controls bar closed and open, and the tour", async () => {
  const { page, errors } = await open("?model=logits10&tour=0", { width: 390, height: 844 });
  assertClean(await axeProblems(page), "the phone layout");
  await page.click("#btn-more-controls");
  assert.equal(await page.getAttribute("#btn-more-controls", "aria-expanded"), "true");
  assertClean(await axeProblems(page), "the phone layout, more controls open");
  await page.keyboard.press("Escape");
  await page.click("#btn-tour");
  await page.waitForSelector("#tour");
  assertClean(await axeProblems(page), "the tour's card");
  assert.deepEqual(errors, []);
  await page.close();
});

test("axe: the embed view, alone and inside a lesson page (embed-demo.html)", async () => {
  const { page, errors } = await open("?model=logits10&embed=1&panels=dist,rules,entropy,controls&temperature=0.5", { width: 900, height: 700 });
  assertClean(await axeProblems(page), "?embed=1");
  await page.close();
  const demo = await open("", { path: "embed-demo.html", width: 900, height: 900 });
  const frame = await (await demo.page.waitForSelector("iframe")).contentFrame();
  await frame.waitForSelector("body[data-ready=true]", { state: "attached", timeout: 60000 });
  assertClean(await axeProblems(demo.page), "embed-demo.html");
  assertClean(await axeProblems(frame), "embed-demo.html's iframe");
  assert.deepEqual([...errors, ...demo.errors], []);
  await demo.page.close();
});

test("every control has a name, and the keyboard reaches each one with a visible focus ring", async () => {
  const { page, errors } = await open("?model=logits10&tour=0");
  const unnamed = await page.evaluate(() => [...document.querySelectorAll("button, input, select, textarea, [tabindex='0']")]
    .filter((el) => el.checkVisibility() && !el.hasAttribute("hidden"))
    .filter((el) => {
      const labelled = el.getAttribute("aria-label") || el.getAttribute("aria-labelledby") ||
        (/** @type {any} */ (el).labels?.length > 0) || el.closest("label");
      return !labelled && !el.textContent.trim();
    }).map((el) => el.id || el.outerHTML.slice(0, 80)));
  assert.deepEqual(unnamed, [], "controls without a name");

  // Tab through the page: every visible control is reached, each with an outline drawn.
  const reachable = await page.evaluate(() => [...document.querySelectorAll("button:not(:disabled), input:not(:disabled), select, textarea, [tabindex='0']")]
    .filter((el) => el.checkVisibility() && el.getAttribute("type") !== "file").map((el) => el.id).filter(Boolean));
  const seen = new Set();
  const noRing = [];
  for (let i = 0; i < reachable.length + 40 && seen.size < reachable.length; i++) {
    await page.keyboard.press("Tab");
    const f = await page.evaluate(() => {
      const el = document.activeElement;
      if (!el || el === document.body) return null;
      const cs = getComputedStyle(el);
      return { id: el.id, ring: cs.outlineStyle !== "none" && parseFloat(cs.outlineWidth) >= 2 };
    });
    if (!f?.id || !reachable.includes(f.id)) continue;
    seen.add(f.id);
    if (!f.ring) noRing.push(f.id);
  }
  assert.deepEqual(reachable.filter((id) => !seen.has(id)), [], "controls Tab never reached");
  assert.deepEqual(noRing, [], "focused without a visible ring");
  assert.deepEqual(errors, []);
  await page.close();
});

test("shortcuts S, R, B, X press their buttons, not while typing; their tooltips name them", async () => {
  const { page, errors } = await open("?model=logits10&tour=0");
  for (const [id, key] of [["#btn-step", "S"], ["#btn-run", "R"], ["#btn-back", "B"], ["#btn-reset", "X"]]) {
    assert.match(await page.getAttribute(id, "title"), new RegExp(`shortcut: ${key}\\)`), `${id}'s tooltip`);
    assert.equal(await page.getAttribute(id, "aria-keyshortcuts"), key.toLowerCase());
  }
  const tokens = () => page.evaluate(() => document.querySelectorAll("#p-output .tok").length);
  await page.focus("#ctl-temperature-range"); // a slider takes no letters: the shortcut works there
  await page.keyboard.press("s");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 1);
  await page.keyboard.press("s");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 2);
  await page.keyboard.press("b");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 1);
  // typing in a text box or a number box: the letters are the box's
  await page.focus("#score-text");
  await page.keyboard.type("s b x r");
  assert.match(await page.inputValue("#score-text"), /s b x r$/);
  await page.focus("#ctl-seed");
  await page.keyboard.press("s");
  await page.keyboard.press("r");
  await page.waitForTimeout(300);
  assert.equal(await tokens(), 1, "no step, step back or reset while typing");
  assert.equal(await page.textContent("#btn-run"), "Run", "no run while typing");
  // R runs, R again stops; X resets to the prompt
  await page.focus("#btn-step");
  await page.keyboard.press("r");
  await page.waitForFunction(() => document.querySelector("#btn-run").textContent === "Stop");
  await page.keyboard.press("r");
  await page.waitForFunction(() => document.querySelector("#btn-run").textContent === "Run");
  await page.keyboard.press("x");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 0 && document.body.dataset.ready === "true");
  assert.deepEqual(errors, []);
  await page.close();
});

test("a generated token's probability is in numbers on focus, not only in its colour", async () => {
  const { page, errors } = await open("?model=logits10&steps=2&tour=0");
  await page.focus("#p-output .tok");
  const tip = await page.evaluate(() => {
    const el = /** @type {HTMLElement} */ (document.activeElement);
    return { after: getComputedStyle(el, "::after").content, label: el.getAttribute("aria-label") };
  });
  assert.match(tip.after, /p = 0\.\d+, rank \d+/);
  assert.match(tip.label, /rank \d+, p = 0\.\d+/);
  assert.deepEqual(errors, []);
  await page.close();
});
