// Configurations in an engine's own words, and the compare panel. Importing
// llama.cpp flags puts them in force through the page's one settings path
// (sliders, chain, URL); a bad paste (garbage, an unknown flag, a value out
// of range, a 1 MB paste) is refused with a message naming the line and
// changes nothing; an export imports back to the same settings in each
// dialect. The compare panel shows, for the next token on bard, both kept
// sets with the tokens one keeps and the other drops marked, following a
// slider in the frame it moves; runs of continuations complete with progress
// in the worker while the page stays answered, and Cancel (or a Step) stops
// them with the transcript as it was; the sides travel in the link and the
// embed code; the panel saves as SVG and PNG. With SmolLM2's file: a finished
// run at 1280×800 and on a 390 px phone, screenshots in tests/artifacts/.
//
// Expected kept sets are computed here from the definitions (raw softmax,
// top-k), never from the page's code; the engine's import is the reference
// for what a text means (its own tests hold it to the engines' fixtures).
//
// Run: pkg-scripts/build, then node --test tests/e2e/compare.test.mjs
// (NEXTTOKEN_REQUIRE_SMOLLM2=1 to fail without SmolLM2's file)

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { startSuite, stopSuite, openPage, waitForReady, screenshot, needSmollm2, forgiveAbsentIndex, ARTIFACTS_DIR } from "./harness.mjs";
import { chainInForce } from "../../www/state/settings.js";

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => ({ server, browser } = await startSuite()));
after(() => stopSuite({ server, browser }));

/**
 * Open the page and wait for its model (and for the rules on the page's thread).
 * @param {string} query without "?"
 * @param {{ width?: number, height?: number, timeout?: number }} [o]
 */
async function open(query, o = {}) {
  const { page, errors } = await openPage(browser, new URL(`index.html?tour=0&${query}`, server.url).href,
    { viewport: { width: o.width ?? 1300, height: o.height ?? 900 } });
  await waitForReady(page, o.timeout ?? 60000);
  await page.waitForSelector("body[data-local-preview=true]", { state: "attached", timeout: o.timeout ?? 60000 });
  page.problems = () => forgiveAbsentIndex(errors);
  return page;
}

/** The store's settings and the URL's parameters, once the URL is written. */
async function settingsAndUrl(page) {
  await page.waitForFunction(() => !document.body.dataset.urlPending);
  return page.evaluate(async () => {
    const { state } = await import("./state/store.js");
    return { settings: structuredClone(state.settings), params: Object.fromEntries(new URLSearchParams(location.search)) };
  });
}

/** The engine's reading of a text on the page's thread (the reference for what it means). */
async function engineImport(page, text, dialect, base = null) {
  return page.evaluate(async ({ text, dialect, base }) => {
    const { importConfig } = await import("./engine/configs.js");
    const { engineSettings } = await import("./state/store.js");
    return importConfig(text, dialect, base ?? engineSettings());
  }, { text, dialect, base });
}

/** Paste `text` into the Import box in `dialect` ("" = detect) and press Import. */
async function importText(page, text, dialect) {
  await page.waitForFunction(() => document.querySelectorAll("#cfg-dialect option").length > 1);
  await page.fill("#cfg-text", text);
  await page.selectOption("#cfg-dialect", dialect);
  await page.click("#btn-cfg-import");
}

test("importing llama.cpp flags sets the sliders, the chain and the URL, and lists what llama.cpp's defaults filled in", async () => {
  const page = await open("model=bard");
  const flags = "--temp 0.7 --top-k 40\n--top-p 0.9 --min-p 0.1 --repeat-penalty 1.1";
  const expected = await engineImport(page, flags, "llama_cpp");
  await importText(page, flags, "llama_cpp");
  await page.waitForSelector("#cfg-result .cfg-head");
  const { settings, params } = await settingsAndUrl(page);
  // The sliders and number boxes show the imported values.
  assert.equal(await page.inputValue("#ctl-temperature-range"), "0.7");
  assert.equal(await page.inputValue("#ctl-top_k"), "40");
  assert.equal(await page.inputValue("#ctl-top_p"), "0.9");
  assert.equal(await page.inputValue("#ctl-min_p"), "0.1");
  assert.equal(await page.inputValue("#ctl-repetition_penalty"), "1.1");
  assert.equal(params.temperature, "0.7");
  assert.equal(params.top_k, "40");
  assert.equal(params.top_p, "0.9");
  assert.equal(params.min_p, "0.1");
  assert.equal(params.repetition_penalty, "1.1");
  // Every decoding setting is the engine's reading, and llama.cpp's chain is in force (temperature last).
  for (const [key, v] of Object.entries(expected.settings)) {
    if (key in settings && !["top_n", "use_cache", "chat"].includes(key)) assert.deepEqual(settings[key], v, key);
  }
  const chain = settings.chain.length ? settings.chain : null;
  if (chain) assert.equal(chain[chain.length - 1], "temperature", `llama.cpp's chain ends with temperature: ${chain}`);
  else assert.equal(settings.order, "llama");
  // The message says how it was read and what the defaults filled in.
  const result = await page.textContent("#cfg-result");
  assert.match(result, new RegExp(`read as ${expected.read_as.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
  assert.equal(await page.$$eval("#cfg-result .cfg-filled li", (l) => l.length), expected.filled.length);
  assert.equal(await page.textContent("#cfg-msg"), "");
  // The distribution follows: top-k 40 keeps at most 40 tokens.
  await page.waitForFunction(() => document.body.dataset.previewSource === "local");
  const kept = await page.evaluate(async () => (await import("./state/store.js")).view.distribution.stages.find((s) => s.name === "final").kept_count);
  assert.ok(kept <= 40, `final kept ${kept}`);
  assert.deepEqual(page.problems(), []);
  await page.close();
});

test("a bad paste (garbage, an unknown flag, a value out of range, 1 MB) is refused naming the line; nothing changes", async () => {
  const page = await open("model=bard&temperature=0.5&top_k=7");
  const before = await settingsAndUrl(page);
  const cases = [
    { name: "garbage", text: "}}} this is not a config {{{", dialect: "", want: /line \d+/ },
    { name: "an unknown flag", text: "--temp 0.7\n--no-such-flag 3", dialect: "llama_cpp", want: /line 2\b/ },
    { name: "a value out of range", text: "--temp 0.7\n--repeat-penalty 0", dialect: "llama_cpp", want: /line 2\b.*out of range/ },
    { name: "a value out of range in JSON", text: '{\n  "do_sample": true,\n  "top_p": 7\n}', dialect: "hf", want: /line 3\b.*out of range/ },
    { name: "an unknown JSON key", text: '{\n  "do_sample": true,\n  "tempertaure": 0.7\n}', dialect: "hf", want: /line 3\b/ },
    { name: "a 1 MB paste", text: `--temp 0.7 ${"x".repeat(1024 * 1024)}`, dialect: "llama_cpp", want: /64 KB|bytes/ },
  ];
  for (const c of cases) {
    await importText(page, c.text, c.dialect);
    await page.waitForFunction(() => document.querySelector("#cfg-msg").textContent.length > 0);
    const msg = await page.textContent("#cfg-msg");
    assert.match(msg, c.want, `${c.name}: ${msg}`);
    assert.equal(await page.getAttribute("#cfg-msg", "role"), "alert", "said to a screen reader");
    assert.equal(await page.getAttribute("#cfg-text", "aria-invalid"), "true");
    const after = await settingsAndUrl(page);
    assert.deepEqual(after.settings, before.settings, `${c.name}: the settings are untouched`);
    assert.deepEqual(after.params, before.params, `${c.name}: the URL is untouched`);
    assert.equal(await page.inputValue("#ctl-temperature-range"), "0.5");
    await page.fill("#cfg-text", "");
    await page.evaluate(() => { document.querySelector("#cfg-msg").textContent = ""; });
  }
  // A good paste afterwards clears the message.
  await importText(page, "--temp 0.9", "llama_cpp");
  await page.waitForFunction(() => new URLSearchParams(location.search).get("temperature") === "0.9");
  assert.equal(await page.textContent("#cfg-msg"), "");
  assert.equal(await page.getAttribute("#cfg-text", "aria-invalid"), null);
  assert.deepEqual(page.problems(), []);
  await page.close();
});

test("an export in each dialect imports back to the same settings, and says what that engine cannot express", async () => {
  const query = "model=bard&temperature=0.7&top_k=40&top_p=0.9&min_p=0.05&repetition_penalty=1.1&presence_penalty=0.3&order=llama&seed=9";
  const page = await open(query);
  const fresh = await open("model=bard");
  const { settings: wanted } = await settingsAndUrl(page);
  await page.waitForFunction(() => document.querySelectorAll("#cfg-export-dialect option").length >= 3);
  const dialects = await page.$$eval("#cfg-export-dialect option", (os) => os.map((o) => o.value));
  assert.deepEqual([...dialects].sort(), ["hf", "llama_cpp", "openai"]);
  for (const dialect of dialects) {
    await page.selectOption("#cfg-export-dialect", dialect);
    await page.click("#btn-cfg-export");
    await page.waitForFunction(() => !document.querySelector("#cfg-export-text").hidden && document.querySelector("#cfg-export-text").value.length > 0);
    const text = await page.inputValue("#cfg-export-text");
    const notes = await page.$$eval("#cfg-export-notes li", (l) => l.map((li) => li.getAttribute("data-key")));
    // Imported on a page at its defaults, the text gives back every setting the notes do not name.
    await fresh.evaluate(() => { document.querySelector("#cfg-result").replaceChildren(); });
    await importText(fresh, text, dialect);
    await fresh.waitForFunction(() => document.querySelector("#cfg-result .cfg-head") || document.querySelector("#cfg-msg").textContent);
    assert.equal(await fresh.textContent("#cfg-msg"), "", `${dialect}: its export ${JSON.stringify(text)} imports back`);
    const { settings: got } = await settingsAndUrl(fresh);
    for (const key of ["temperature", "top_k", "top_p", "min_p", "repetition_penalty", "presence_penalty"]) {
      if (notes.includes(key)) continue;
      assert.deepEqual(got[key], wanted[key], `${dialect}: ${key} back from ${JSON.stringify(text)}`);
    }
    // The stages run in the same order, unless the notes say this engine cannot say it.
    if (!notes.includes("chain") && !notes.includes("order")) {
      const on = (s) => chainInForce(s).filter((st) => ["temperature", "top_k", "top_p", "min_p"].includes(st));
      assert.deepEqual(on(got), on(wanted), `${dialect}: the order of temperature, top-k, top-p and min-p`);
    }
  }
  // Copy puts the text on the clipboard (or says to copy it by hand).
  await page.click("#btn-cfg-copy");
  await page.waitForFunction(() => document.querySelector("#cfg-copy-msg").textContent.length > 0);
  assert.deepEqual([...page.problems(), ...fresh.problems()], []);
  await page.close();
  await fresh.close();
});

/** The raw softmax's k most likely token ids, ties to the lower id (the definition). */
function topKIds(rawTop, k) {
  return rawTop.slice(0, k).map((t) => t.id);
}

/** The compare panel's table and facts, as shown. */
async function comparePanel(page) {
  await page.waitForSelector("#p-compare .body[data-state=shown]", { state: "attached", timeout: 30000 });
  return page.evaluate(async () => {
    const { view } = await import("./state/store.js");
    const rows = [...document.querySelectorAll("#p-compare table.cmp-tokens tbody tr")].map((tr) => ({
      id: Number(tr.getAttribute("data-id")), cls: tr.className, kept: tr.querySelector(".cmp-kept").textContent,
      a: tr.children[2].textContent, b: tr.children[3].textContent,
    }));
    const facts = [...document.querySelectorAll("#p-compare table.cmp-facts tbody tr")].map((tr) => [...tr.children].map((c) => c.textContent));
    return { step: view.compare.step, rows, facts, rawTop: view.distribution?.raw_top ?? null, info: view.info };
  });
}

test("the compare panel on bard: both kept sets, the tokens kept by one and dropped by the other marked, following a slider in its frame", async () => {
  // A: the page (τ = 1, nothing cut: every token kept); B: top-k = 3 alone, written as Hugging Face keywords.
  const page = await open(`model=bard&panels=output,dist,compare,controls&a=current&b=${encodeURIComponent('hf:{"do_sample": true, "top_k": 3, "top_p": 1.0}')}`);
  const shown = await comparePanel(page);
  const { step, rows, facts } = shown;
  const vocab = shown.info.vocab_size;
  assert.equal(step.a.kept, vocab, "A (no rule) keeps the whole vocabulary");
  assert.equal(step.b.kept, 3, "B keeps top-k = 3");
  assert.equal(step.shared, 3);
  assert.equal(step.a_only, vocab - 3);
  assert.equal(step.b_only, 0);
  // The facts table says the same, by side.
  assert.equal(facts[0][1], vocab.toLocaleString("en-US"));
  assert.equal(facts[0][2], "3");
  // B's three are the raw top 3 (the definition of top-k on the raw logits), marked "both"; the others "A only".
  const rawTop = await page.evaluate(async () => {
    const { local } = await import("./engine/link.js");
    const { engineSettings } = await import("./state/store.js");
    return local.preview({ ...engineSettings(), temperature: 1 }).raw_top;
  });
  const top3 = topKIds(rawTop, 3);
  for (const r of rows) {
    if (top3.includes(r.id)) { assert.equal(r.cls, "both"); assert.match(r.kept, /^both/); }
    else { assert.equal(r.cls, "only-a"); assert.match(r.kept, /^A only/); assert.equal(r.b, "dropped"); }
  }
  assert.ok(rows.some((r) => r.cls === "only-a"), "some tokens are A's only");
  // A's probabilities are the raw ones (τ = 1, no rule): its drawn token's too.
  for (const row of step.rows) assert.ok(Math.abs(row.a_prob - row.raw_prob) < 1e-12, `token ${row.id}: A ${row.a_prob} raw ${row.raw_prob}`);
  // B renormalises the three: they sum to 1, in the raw ratio.
  const bRows = step.rows.filter((r) => r.b_prob > 0);
  assert.ok(Math.abs(bRows.reduce((s, r) => s + r.b_prob, 0) - 1) < 1e-9);
  const rawSum = bRows.reduce((s, r) => s + r.raw_prob, 0);
  for (const r of bRows) assert.ok(Math.abs(r.b_prob - r.raw_prob / rawSum) < 1e-9);
  // The same coin for both; each draws a token it keeps.
  assert.equal(step.a.coin, step.b.coin);
  assert.ok(top3.includes(step.b.drawn.id));
  assert.ok(rows.some((r) => /B draws/.test(r.kept)));

  // A follows the page's temperature slider: the move and the panel in one frame.
  const entropyBefore = step.a.entropy_bits;
  const painted = await page.evaluate(async () => {
    const { view } = await import("./state/store.js");
    const before = view.compare.step;
    const slider = document.querySelector("#ctl-temperature-range");
    slider.focus();
    const t0 = performance.now();
    slider.value = "0.5";
    slider.dispatchEvent(new Event("input", { bubbles: true }));
    // Painted in the input's task, or at the latest in the next frame.
    await new Promise((r) => requestAnimationFrame(() => r()));
    return { changed: view.compare.step !== before, entropy: view.compare.step.a.entropy_bits,
      shownA: document.querySelector("#p-compare table.cmp-facts tbody tr:nth-child(2) td").textContent, ms: performance.now() - t0 };
  });
  assert.ok(painted.changed, "the comparison was computed again for the move");
  assert.ok(painted.entropy < entropyBefore, `τ 0.5 sharpens A: ${painted.entropy} < ${entropyBefore}`);
  assert.equal(painted.shownA, `${painted.entropy.toFixed(4)} bits`);
  // B, a pasted configuration, does not follow the page's temperature.
  assert.equal((await comparePanel(page)).step.b.kept, 3);

  // A side from the paste box: llama.cpp with --top-k 2.
  await page.click("#p-compare .cmp-side.a .cmp-paste summary");
  await page.waitForFunction(() => document.querySelectorAll("#cmp-a-dialect option").length > 1);
  await page.fill("#cmp-a-text", "--top-k 2 --top-p 1.0 --min-p 0");
  await page.selectOption("#cmp-a-dialect", "llama_cpp");
  await page.click("#cmp-a-use");
  await page.waitForFunction(() => new URLSearchParams(location.search).get("a")?.startsWith("llama_cpp:"));
  const after = await comparePanel(page);
  assert.equal(after.step.a.kept, 2);
  assert.equal(after.step.b_only, 1, "B's third token is B's only");
  assert.ok(after.rows.some((r) => r.cls === "only-b" && /^B only/.test(r.kept) && r.a === "dropped"));
  // A refused paste leaves the side as it was, the line named beside the box.
  await page.fill("#cmp-a-text", "--top-k 2\n--top-k nope");
  await page.click("#cmp-a-use");
  await page.waitForFunction(() => document.querySelector("#cmp-a-msg").textContent.length > 0);
  assert.match(await page.textContent("#cmp-a-msg"), /line 2\b/);
  assert.equal((await comparePanel(page)).step.a.kept, 2);
  assert.match(new URL(page.url()).searchParams.get("a"), /^llama_cpp:--top-k 2 --top-p 1\.0 --min-p 0$/);
  // Save current as B: a snapshot of the page's settings, which no longer follows the slider.
  await page.click("#cmp-b-save");
  await page.waitForFunction(() => new URLSearchParams(location.search).get("b")?.startsWith("page:"));
  const snap = await comparePanel(page);
  assert.equal(snap.step.b.kept, vocab, "τ 0.5, nothing cut: every token");
  // The figure buttons save the panel.
  const [png] = await Promise.all([page.waitForEvent("download"), page.click("#p-compare .fig-buttons button:has-text('PNG')")]);
  assert.match(png.suggestedFilename(), /compare\.png$/);
  const [svg] = await Promise.all([page.waitForEvent("download"), page.click("#p-compare .fig-buttons button:has-text('SVG')")]);
  assert.match(svg.suggestedFilename(), /compare\.svg$/);
  assert.deepEqual(page.problems(), []);
  await page.close();
});

/**
 * Start runs of continuations from the panel.
 * @param {import("playwright-core").Page} page
 * @param {number} runs @param {number} maxNew
 */
async function startRuns(page, runs, maxNew) {
  await page.fill("#cmp-runs", String(runs));
  await page.fill("#cmp-max-new", String(maxNew));
  await page.click("#btn-cmp-run");
}

test("runs of continuations finish with progress; the statistics, the chart and the texts; Cancel and a Step stop them, the page answering", async () => {
  const page = await open("model=bard&panels=output,dist,compare,controls&seed=5&a=current&b=llama_cpp:");
  await page.click("#btn-step");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length >= 1);
  const transcript = async () => page.evaluate(async () => {
    const { view } = await import("./state/store.js");
    return { text: view.transcript.text, ids: view.transcript.generated.map((t) => t.id) };
  });
  const before = await transcript();

  // A finished run: 6 of each, 16 tokens at most.
  await startRuns(page, 6, 16);
  await page.waitForSelector("#p-compare [data-slot=cmp-results][data-state=done]", { state: "attached", timeout: 120000 });
  const result = await page.evaluate(async () => (await import("./state/store.js")).view.compare.run.result);
  for (const k of ["a", "b"]) {
    const r = result[k];
    assert.equal(r.stats.runs, 6);
    assert.equal(r.continuations.length, 6);
    const count = (c) => (Array.isArray(c.tokens) ? c.tokens.length : c.tokens);
    assert.equal(r.stats.tokens, r.continuations.reduce((s, c) => s + count(c), 0));
    for (const key of ["distinct_1", "distinct_2", "repetition_rate", "stopped_early"]) assert.ok(r.stats[key] >= 0 && r.stats[key] <= 1, `${k}.${key} ${r.stats[key]}`);
    assert.ok(r.stats.mean_logprob <= 0, `${k}: mean log-probability ${r.stats.mean_logprob}`);
    for (const c of r.continuations) {
      assert.ok(count(c) >= 1 && count(c) <= 16);
      assert.ok(["eos", "max_new", "stop_string", "context_full"].includes(c.stop));
      if (c.stop === "max_new") assert.equal(count(c), 16);
    }
    // Stopped early: the share of continuations ended by the end of text or a stop string.
    const early = r.continuations.filter((c) => c.stop === "eos" || c.stop === "stop_string").length / r.continuations.length;
    assert.ok(Math.abs(r.stats.stopped_early - early) < 1e-12, `${k}: stopped early ${r.stats.stopped_early} against ${early}`);
  }
  assert.equal(await page.$$eval("#p-compare table.cmp-stats tbody tr", (l) => l.length), 7);
  assert.equal(await page.$$eval("#p-compare svg.cmp-stats-chart rect[data-metric]", (l) => l.length), 10);
  assert.equal(await page.$$eval("#p-compare details.cmp-texts", (l) => l.length), 2);
  assert.equal(await page.$$eval("#p-compare details.cmp-texts[open]", (l) => l.length), 0, "the texts start collapsed");
  assert.equal(await page.$$eval("#p-compare details.cmp-texts.a li", (l) => l.length), 6);
  // The same statistics in the table as in the result, to three decimals.
  const cell = await page.$eval("#p-compare table.cmp-stats tr[data-metric=distinct_1]", (tr) => [tr.children[1].textContent, tr.children[2].textContent]);
  assert.deepEqual(cell, [result.a.stats.distinct_1.toFixed(3), result.b.stats.distinct_1.toFixed(3)]);
  // The session is as it was: the same transcript, and Step goes on from it.
  assert.deepEqual(await transcript(), before);

  // Cancel: a long run, stopped after its first progress report; the page answered a slider meanwhile.
  await startRuns(page, 64, 256);
  await page.waitForSelector("#p-compare [data-slot=cmp-results][data-state=running] progress:not([hidden])", { state: "attached", timeout: 30000 });
  assert.equal(await page.isVisible("#btn-cmp-cancel"), true);
  assert.equal(await page.isDisabled("#btn-cmp-run"), true);
  const moved = await page.evaluate(async () => {
    const slider = /** @type {HTMLInputElement} */ (document.querySelector("#ctl-top_k-range"));
    const t0 = performance.now();
    slider.value = "5";
    slider.dispatchEvent(new Event("input", { bubbles: true }));
    await new Promise((r) => requestAnimationFrame(() => r()));
    const { view } = await import("./state/store.js");
    return { ms: performance.now() - t0, kept: view.distribution.stages.find((s) => s.name === "final").kept_count };
  });
  assert.equal(moved.kept, 5, "a slider move during the runs is previewed");
  assert.ok(moved.ms < 1000, `the slider's frame came ${moved.ms.toFixed(0)} ms after the move`);
  await page.click("#btn-cmp-cancel");
  await page.waitForSelector("#p-compare [data-slot=cmp-results][data-state=ended]", { state: "attached", timeout: 30000 });
  assert.match(await page.textContent("#p-compare .cmp-run-status"), /cancelled/);
  assert.equal(await page.isVisible("#btn-cmp-cancel"), false);
  assert.deepEqual(await transcript(), before, "the transcript is as before");
  await page.click("#btn-step");
  await page.waitForFunction((n) => document.querySelectorAll("#p-output .tok").length === n + 1, before.ids.length);
  const stepped = await transcript();
  assert.deepEqual(stepped.ids.slice(0, before.ids.length), before.ids, "Step goes on from the same tokens");

  // A Step during the runs stops them too, and steps.
  await startRuns(page, 64, 256);
  await page.waitForSelector("#p-compare [data-slot=cmp-results][data-state=running]", { state: "attached" });
  await page.click("#btn-step");
  await page.waitForSelector("#p-compare [data-slot=cmp-results][data-state=ended]", { state: "attached", timeout: 30000 });
  assert.match(await page.textContent("#p-compare .cmp-run-status"), /a Step used the model/);
  await page.waitForFunction((n) => document.querySelectorAll("#p-output .tok").length === n + 1, stepped.ids.length);
  // Bad numbers are refused beside the form, and nothing starts.
  await page.fill("#cmp-runs", "65");
  await page.click("#btn-cmp-run");
  assert.match(await page.textContent("#cmp-run-msg"), /Runs must be a whole number from 1 to 64/);
  assert.equal(await page.getAttribute("#p-compare [data-slot=cmp-results]", "data-state"), "ended");
  assert.deepEqual(page.problems(), []);
  await page.close();
});

test("the sides travel in the link: a course author's link opens both, the page's address and the embed code keep them", async () => {
  const a = "llama_cpp:--temp 0.5 --top-k 10";
  const b = 'hf:{"do_sample": true, "top_k": 5, "top_p": 1.0}';
  const page = await open(`model=bard&panels=dist,compare&a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`);
  const { step } = await comparePanel(page);
  assert.ok(step.a.kept <= 10, `A: top-k 10 then llama.cpp's defaults: ${step.a.kept}`);
  assert.equal(step.b.kept, 5);
  const sources = await page.$$eval("#p-compare .cmp-source", (l) => l.map((p) => p.textContent));
  const readA = await engineImport(page, a.slice("llama_cpp:".length), "llama_cpp");
  assert.equal(sources[0], readA.read_as);
  assert.equal(await page.inputValue("#cmp-a-text"), "--temp 0.5 --top-k 10", "the paste box holds A's text");
  // What llama.cpp's defaults filled in for A is listed under it.
  assert.match(await page.textContent("#p-compare .cmp-side.a .cmp-filled summary"), new RegExp(`^${readA.filled.length} filled in`));
  await page.waitForFunction(() => !document.body.dataset.urlPending);
  const url = new URL(page.url());
  assert.equal(url.searchParams.get("a"), a);
  assert.equal(url.searchParams.get("b"), b);
  assert.equal(url.searchParams.get("panels"), "dist,compare");
  const code = await page.evaluate(async () => (await import("./embed/code.js")).embedCode());
  const src = new URL(code.match(/src="([^"]+)"/)[1].replace(/&amp;/g, "&"));
  assert.equal(src.searchParams.get("a"), a);
  assert.equal(src.searchParams.get("b"), b);
  assert.equal(src.searchParams.get("embed"), "1");
  // The embed opens with both sides.
  const embed = await open(src.search.slice(1), { width: 720, height: 640 });
  assert.equal((await comparePanel(embed)).step.b.kept, 5);
  assert.equal(await embed.isVisible("#p-compare"), true);
  // A link whose side the engine refuses says so in the panel, and the page stays usable.
  const bad = await open(`model=bard&panels=dist,compare&a=${encodeURIComponent("llama_cpp:--top-k many")}&b=current`);
  await bad.waitForFunction(() => document.querySelector("#p-compare .cmp-side.a [data-slot=problem]")?.textContent.length > 0);
  assert.match(await bad.textContent("#p-compare .cmp-side.a [data-slot=problem]"), /line 1\b/);
  const badSide = await bad.textContent("#p-compare .cmp-caption");
  assert.match(badSide, /A: line 1/);
  // A link with a malformed side is named in the messages and uses the default.
  const odd = await open("model=bard&panels=dist,compare&b=nonsense");
  assert.match(await odd.textContent("#messages"), /b=nonsense: must be current, or a format's name/);
  assert.deepEqual([...page.problems(), ...embed.problems(), ...bad.problems(), ...odd.problems()], []);
  for (const p of [page, embed, bad, odd]) await p.close();
});

test("the panel's controls have names and the keyboard reaches them; it reads on a 390 px phone", async () => {
  const page = await open("model=bard&panels=output,dist,compare,controls", { width: 390, height: 844 });
  await comparePanel(page);
  const unnamed = await page.evaluate(() => [...document.querySelectorAll("#p-compare button, #p-compare input, #p-compare select, #p-compare textarea, #p-compare summary")]
    .filter((el) => el.checkVisibility())
    .filter((el) => !(el.getAttribute("aria-label") || el.labels?.length > 0 || el.textContent.trim()))
    .map((el) => el.id || el.outerHTML.slice(0, 80)));
  assert.deepEqual(unnamed, []);
  // Tab from the panel's heading reaches the side buttons, the paste boxes and Run, in order.
  await page.focus("#p-compare .fig-buttons button");
  const reached = [];
  for (let i = 0; i < 24; i++) {
    await page.keyboard.press("Tab");
    reached.push(await page.evaluate(() => document.activeElement?.id || document.activeElement?.textContent.trim().slice(0, 30)));
  }
  for (const id of ["cmp-a-follow", "cmp-a-save", "cmp-b-follow", "cmp-b-save", "cmp-runs", "cmp-max-new", "btn-cmp-run"]) {
    assert.ok(reached.includes(id), `Tab reaches ${id}: ${reached.join(", ")}`);
  }
  // Nothing in the panel sticks out of a phone's width (its tables scroll inside their own box).
  const wide = await page.evaluate(() => [...document.querySelectorAll("#p-compare *")]
    .filter((el) => !el.closest(".table-wrap") && el.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
    .map((el) => el.className || el.tagName));
  assert.deepEqual(wide, []);
  assert.deepEqual(page.problems(), []);
  await page.close();
});

test("SmolLM2: llama.cpp's defaults against Hugging Face's sampling defaults, a finished run, at 1280×800 and on a 390 px phone", async (t) => {
  if (!needSmollm2(t)) return;
  const query = `model=smollm2-135m&prompt=${encodeURIComponent("Once upon a time")}&panels=output,dist,compare,controls` +
    `&a=${encodeURIComponent("llama_cpp:")}&b=${encodeURIComponent('hf:{"do_sample": true}')}`;
  for (const [width, height, name] of [[1280, 800, "compare-smollm2-1280"], [390, 844, "compare-smollm2-390"]]) {
    const page = await open(query, { width, height, timeout: 240000 });
    const { step } = await comparePanel(page);
    assert.ok(step.a.kept <= 40, `llama.cpp's top-k 40: ${step.a.kept}`);
    assert.ok(step.b.kept <= 50, `Hugging Face's top-k 50: ${step.b.kept}`);
    await startRuns(page, 8, 24);
    await page.waitForSelector("#p-compare [data-slot=cmp-results][data-state=done]", { state: "attached", timeout: 300000 });
    await page.click("#p-compare details.cmp-texts.a summary");
    await page.locator("#p-compare").scrollIntoViewIfNeeded();
    await screenshot(page, name);
    await page.locator("#p-compare").screenshot({ path: path.join(ARTIFACTS_DIR, `${name}-panel.png`) });
    assert.deepEqual(page.problems(), []);
    await page.close();
  }
});
