// The samplers of issue 14 on the page: every new control changes the stage
// the engine reports as the samplers' definitions say, the chain builder
// reorders the stages (buttons, keyboard, drag) and the URL carries the
// chain, the presets give the engines' documented orders, and a bad URL
// value is refused with a message while the page stays usable.
//
// Expected kept sets are computed here from the papers' definitions on
// lesson 21's ten logits z = 3, 2.5, ..., -1.5 (the logits10 model), never
// from what the engine printed; the hand-worked numbers are asserted too.
//
// Run: pkg-scripts/build, then node --test tests/e2e/samplers.test.mjs
// Screenshots land in tests/artifacts/samplers-*.png.
// Over 400 lines: one suite for every sampler's control on one page load
// each; splitting it would repeat the definitions above in each part.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startSuite, stopSuite, openPlaygroundIn, screenshot } from "./harness.mjs";
import { parseQuery, formatQuery } from "../../www/state/url.js";
import { STAGE_LABELS } from "../../www/render/format.js";

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => ({ server, browser } = await startSuite()));
after(() => stopSuite({ server, browser }));

const open = (query, size) => openPlaygroundIn(browser, server, query, size);

// ---- the definitions, on lesson 21's logits ----

/** Lesson 21's ten logits (the logits10 model). */
const Z = [3, 2.5, 2, 1.5, 1, 0.5, 0, -0.5, -1, -1.5];
const softmax = (z) => {
  const m = Math.max(...z);
  const e = z.map((x) => Math.exp(x - m));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
};
const P = softmax(Z);
/** Entropy in nats. */
const H = -P.reduce((a, p) => a + p * Math.log(p), 0);
const count = (mask) => mask.filter(Boolean).length;

/** Locally typical sampling (Meister et al. 2023): tokens by |-ln p - H|, the shortest prefix with mass >= tau. */
function typicalMask(p, tau) {
  const order = p.map((_, i) => i).sort((a, b) => Math.abs(-Math.log(p[a]) - H) - Math.abs(-Math.log(p[b]) - H));
  const keep = new Array(p.length).fill(false);
  let mass = 0;
  for (const i of order) { keep[i] = true; mass += p[i]; if (mass >= tau) break; }
  return keep;
}
/** Epsilon sampling (Hewitt et al. 2022): drop p < epsilon. */
const epsilonMask = (p, eps) => p.map((x) => x >= eps);
/** Eta sampling (Hewitt et al. 2022): drop p < min(eta, sqrt(eta) * exp(-H)). */
const etaMask = (p, eta) => p.map((x) => x >= Math.min(eta, Math.sqrt(eta) * Math.exp(-H)));
/** Top-n-sigma (Tang et al. 2024): keep logits >= max - n * sigma (sigma over the whole vocabulary). */
function topNSigmaMask(z, n) {
  const mean = z.reduce((a, b) => a + b, 0) / z.length;
  const sigma = Math.sqrt(z.reduce((a, x) => a + (x - mean) ** 2, 0) / z.length);
  return z.map((x) => x >= Math.max(...z) - n * sigma);
}
/** XTC, the coin having come up: of the tokens with p >= threshold, all but the least likely go (if 2 or more). */
function xtcMask(p, threshold) {
  const top = p.map((x, i) => [x, i]).filter(([x]) => x >= threshold).sort((a, b) => a[0] - b[0]);
  const keep = new Array(p.length).fill(true);
  if (top.length >= 2) for (const [, i] of top.slice(1)) keep[i] = false;
  return keep;
}
/** Mirostat v2 (Basu et al. 2021) before any token: mu = 2 tau; keep tokens with surprise -log2 p <= mu. */
const mirostat2Mask = (p, tau) => p.map((x) => -Math.log2(x) <= 2 * tau);

test("the definitions on lesson 21's logits give the hand-worked sets", () => {
  // p = 0.396139 0.240270 0.145731 0.088390 0.053612 0.032517 0.019723 ...; H = 1.66282 nats
  assert.ok(Math.abs(H - 1.662820) < 1e-6);
  assert.equal(count(typicalMask(P, 0.5)), 3, "t2, t3 (surprise nearest H), then t1: mass 0.782");
  assert.equal(count(epsilonMask(P, 0.02)), 6, "t7 = 0.0197 < 0.02");
  assert.equal(count(etaMask(P, 0.1)), 4, "cutoff min(0.1, 0.316 * e^-1.663 = 0.0600): t5 = 0.0536 goes");
  assert.equal(count(topNSigmaMask(Z, 1)), 3, "sigma = 1.436: logits >= 1.564");
  assert.equal(count(xtcMask(P, 0.1)), 8, "t1, t2, t3 are >= 0.1: t1 and t2 go");
  assert.equal(count(mirostat2Mask(P, 1.5)), 3, "mu = 3 bits: p >= 1/8");
});

// ---- reading the rules panel ----

/**
 * One column of the rules table: its kept count and the probabilities its
 * cells show (from their titles, 6 decimals; 0 for a cut token), by row.
 * @param {import("playwright-core").Page} page
 * @param {string} stage @param {"alone"|"pipeline"} group
 */
function column(page, stage, group) {
  return page.evaluate(([stage, group]) => {
    const table = document.querySelector("#p-rules table");
    const heads = [...table.tHead.rows[1].cells];
    const j = heads.findIndex((th) => th.dataset.stage === stage && th.dataset.group === group);
    if (j < 0) return null;
    const probs = [...table.tBodies[0].rows].map((r) => {
      const m = /p = ([0-9.e+-]+)/.exec(r.cells[j].title);
      return r.cells[j].classList.contains("kept") && m ? Number(m[1]) : 0;
    });
    return { count: Number(table.tFoot.rows[1].cells[j].textContent), probs };
  }, [stage, group]);
}

/** The pipeline's stages as the table's headers show them, in order. */
const pipelineColumns = (page) => page.$$eval("#p-rules thead tr:nth-child(2) th[data-group=pipeline]", (ths) => ths.map((th) => th.dataset.stage));
/** The chain builder's stages, in order. */
const chainList = (page) => page.$$eval("#chain-list li", (lis) => lis.map((li) => li.dataset.stage));
/** Wait until the URL is written after the last change. */
const urlWritten = (page) => page.waitForFunction(() => document.body.dataset.urlPending !== "true");

/**
 * Type a value into a control's number box and wait for the column to show `want` kept tokens.
 * @returns {Promise<{ count: number, probs: number[] }>}
 */
async function setAndRead(page, key, value, stage, group, want) {
  await page.fill(`#ctl-${key}`, String(value));
  await page.waitForFunction(([stage, group, want]) => {
    const table = document.querySelector("#p-rules table");
    const j = [...table.tHead.rows[1].cells].findIndex((th) => th.dataset.stage === stage && th.dataset.group === group);
    return j >= 0 && Number(table.tFoot.rows[1].cells[j].textContent) === want;
  }, [stage, group, want], { timeout: 5000 }).catch(() => {});
  return column(page, stage, group);
}

test("each truncation's control keeps the set its definition gives, alone and in the chain", async () => {
  const page = await open("?model=logits10");
  const cases = [
    // control, value, its stage, the kept count by definition, the value that turns it off
    ["typical_p", 0.5, "typical_p", count(typicalMask(P, 0.5)), 1],
    ["epsilon_cutoff", 0.02, "epsilon_cutoff", count(epsilonMask(P, 0.02)), 0],
    ["eta_cutoff", 0.1, "eta_cutoff", count(etaMask(P, 0.1)), 0],
    ["top_n_sigma", 1, "top_n_sigma", count(topNSigmaMask(Z, 1)), 0],
    ["xtc_probability", 1, "xtc", count(xtcMask(P, 0.1)), 0], // at the threshold's default, 0.1
  ];
  for (const [key, value, stage, want, offValue] of cases) {
    const alone = await setAndRead(page, key, value, stage, "alone", want);
    assert.ok(alone, `${stage} has a column of its own once ${key} = ${value}`);
    assert.equal(alone.count, want, `${stage} alone at ${key} = ${value}`);
    const inChain = await column(page, stage, "pipeline");
    assert.ok(inChain, `the chain shows a ${stage} stage (added when ${key} was set): ${await pipelineColumns(page)}`);
    assert.equal(inChain.count, want, `${stage} in the chain (at tau = 1, nothing else on before it)`);
    // back to off: the column goes, nothing stays cut
    await page.fill(`#ctl-${key}`, String(offValue));
    await page.waitForFunction((s) => !document.querySelector(`#p-rules thead th[data-stage="${s}"][data-group=alone]`), stage);
  }
  // Typical-p as Hugging Face and as llama.cpp: both columns, both named.
  await setAndRead(page, "typical_p", 0.5, "typical_p", "alone", 3);
  assert.equal((await column(page, "typical_p_llama", "alone"))?.count, 3, "llama.cpp's typical-p: no ties here, the same 3");
  await page.fill("#ctl-typical_p", "1");

  assert.deepEqual(page.problems(), []);
  await page.close();
});

test("the entropy panel lists the stages the rules table draws: raw, the stages in force, final; no stage that is off", async () => {
  /** The entropy panel's items and the rules table's columns, as data-stage names. */
  const lists = (page) => page.evaluate(() => {
    const ent = [...document.querySelectorAll("#p-entropy .ent-item")].map((e) => e.dataset.stage);
    const cols = (g) => [...document.querySelectorAll(`#p-rules thead tr:nth-child(2) th[data-group=${g}]`)].map((th) => th.dataset.stage);
    return { stages: ent.filter((x) => x.startsWith("stage:")).map((x) => x.slice(6)), rules: ent.filter((x) => x.startsWith("rule:")).map((x) => x.slice(5)),
      pipeline: cols("pipeline"), alone: cols("alone") };
  });
  // The Hugging Face chain holds typical-p, epsilon and eta, all off by default.
  const page = await open("?model=logits10");
  let l = await lists(page);
  assert.deepEqual(l.stages, ["raw", ...l.pipeline], "the entropy list's stages are the table's pipeline columns, after raw");
  assert.deepEqual(l.rules, l.alone, "the entropy list's rules alone are the table's alone columns");
  for (const off of ["sequence_bias", "no_repeat_ngram", "typical_p", "epsilon_cutoff", "eta_cutoff"]) {
    assert.ok(!l.stages.includes(off), `${off} is off (it changes nothing): not listed (${l.stages})`);
  }
  for (const off of ["typical_p", "typical_p_llama", "epsilon_cutoff", "eta_cutoff", "top_n_sigma", "xtc", "mirostat"]) {
    assert.ok(!l.rules.includes(off), `${off} alone is off: not listed (${l.rules})`);
  }
  assert.equal(l.stages.at(-1), "final");
  // A stage turned on is listed, where the table draws it.
  await page.fill("#ctl-epsilon_cutoff", "0.02");
  await page.waitForSelector('#p-entropy [data-stage="stage:epsilon_cutoff"]');
  l = await lists(page);
  assert.deepEqual(l.stages, ["raw", ...l.pipeline]);
  assert.deepEqual(l.rules, l.alone);
  assert.ok(l.rules.includes("epsilon_cutoff"));
  assert.deepEqual(page.problems(), []);
  await page.close();
});

test("moving only xtc_threshold or dry_base draws no XTC or DRY stage: the panels draw what the engine reports on", async () => {
  /** The rules table's columns and the entropy panel's items, as data-stage names. */
  const drawn = (page) => page.evaluate(() => ({
    columns: [...document.querySelectorAll("#p-rules thead tr:nth-child(2) th")].map((th) => th.dataset.stage),
    entropy: [...document.querySelectorAll("#p-entropy .ent-item")].map((e) => e.dataset.stage.replace(/^[a-z]+:/, "")),
  }));
  // llama.cpp's chain holds XTC and DRY; the threshold and the base only shape them.
  const page = await open("?model=logits10&order=llama&xtc_threshold=0.2&dry_base=2");
  await page.waitForSelector("#p-rules thead th[data-stage=top_k][data-group=pipeline]");
  let d = await drawn(page);
  for (const off of ["xtc", "dry"]) {
    assert.ok(!d.columns.includes(off), `${off} is off in the engine: no column (${d.columns})`);
    assert.ok(!d.entropy.includes(off), `${off} is off in the engine: not in the entropy list (${d.entropy})`);
  }
  // What turns them on draws them: XTC's probability, DRY's multiplier.
  await page.fill("#ctl-xtc_probability", "0.5");
  await page.waitForSelector("#p-rules thead th[data-stage=xtc][data-group=pipeline]");
  await page.fill("#ctl-dry_multiplier", "1");
  await page.waitForSelector("#p-rules thead th[data-stage=dry][data-group=pipeline]");
  // A threshold above 0.5 turns XTC off again (it never acts there): no column.
  await page.fill("#ctl-xtc_threshold", "0.6");
  await page.waitForFunction(() => !document.querySelector("#p-rules thead th[data-stage=xtc]"), null, { timeout: 5000 });
  d = await drawn(page);
  assert.ok(d.columns.includes("dry") && !d.entropy.includes("xtc"), `${d.columns} / ${d.entropy}`);
  assert.deepEqual(page.problems(), []);
  await page.close();
  // Under the Hugging Face preset (no XTC stage) the threshold alone asks for no stage: the page opens clean.
  const hf = await open("?model=logits10&xtc_threshold=0.2&dry_base=2");
  await hf.waitForSelector("#p-rules thead th[data-stage=top_k][data-group=pipeline]");
  d = await drawn(hf);
  assert.ok(!d.columns.includes("xtc") && !d.columns.includes("dry"), `${d.columns}`);
  assert.deepEqual(hf.problems(), []);
  await hf.close();
});

// The alone column comes from the engine's memo, which is keyed by min_keep too.
test("min_tokens_to_keep holds a truncation's cut: top-p = 0.1 keeps t1 alone, or 4 tokens with min_keep = 4", async () => {
  const page = await open("?model=logits10");
  await setAndRead(page, "top_p", 0.1, "top_p", "alone", 1);
  const chain = await setAndRead(page, "min_keep", 4, "top_p", "pipeline", 4);
  assert.equal(chain.count, 4, "in the chain");
  assert.equal((await column(page, "top_p", "alone")).count, 4, "alone");
  assert.deepEqual(page.problems(), []);
  await page.close();
});

test("mirostat v2 keeps the tokens within mu = 2 tau bits of surprise before the first token", async () => {
  const page = await open("?model=logits10&mirostat_ent=1.5&mirostat_lr=0.1");
  await page.selectOption("#ctl-mirostat", "2");
  const mask = mirostat2Mask(P, 1.5);
  const want = count(mask);
  await page.waitForFunction((want) => {
    const td = document.querySelector("#p-rules tfoot tr:nth-child(2) td[data-stage=mirostat][data-group=pipeline]");
    return td && Number(td.textContent) === want;
  }, want, { timeout: 5000 });
  assert.equal((await column(page, "mirostat", "pipeline")).count, want, "mu = 3 bits before the first token");
  assert.deepEqual(page.problems(), []);
  await page.close();
});

test("mirostat's mu step by step: 2 tau at the start, then moved by eta * (tau - the drawn token's surprise)", async () => {
  const page = await open("?model=logits10&mirostat=2&mirostat_ent=1.5&mirostat_lr=0.1");
  const mask = mirostat2Mask(P, 1.5);
  await page.waitForSelector("#p-rules .mu-list li");
  assert.equal(Number(await page.getAttribute("#p-rules .mu-list li:last-child", "data-mu")), 3, "mu starts at 2 tau");
  // The first token is drawn at mu = 3 from the three kept, renormalised;
  // the second step's distribution is cut at mu - eta * (s - tau), s its surprise in bits.
  await page.click("#btn-step");
  await page.waitForSelector("#p-output .out-gen .tok");
  const drawn = (await page.textContent("#p-output .out-gen .tok")).trim();
  const id = Number(drawn.slice(1)) - 1;
  assert.ok(mask[id], `the drawn token ${drawn} is one mirostat kept`);
  await page.click("#btn-step");
  // the second token's distribution (position 2, after the prompt's one token and the first drawn)
  await page.waitForFunction(() => /position 2:/.test(document.querySelector("#p-rules .mu-list li:last-child")?.textContent ?? ""), null, { timeout: 10000 });
  const mu = Number(await page.getAttribute("#p-rules .mu-list li:last-child", "data-mu"));
  const kept = P.reduce((a, p, i) => a + (mask[i] ? p : 0), 0);
  const surprise = -Math.log2(P[id] / kept);
  assert.ok(Math.abs(mu - (3 - 0.1 * (surprise - 1.5))) < 1e-9, `mu after ${drawn}: ${mu}, want ${3 - 0.1 * (surprise - 1.5)}`);
  // A slider move is previewed on the page's own thread, which holds the
  // worker's sampler state: it shows the next position (3) cut at the
  // session's mu, and the Step that follows draws from the same cut.
  assert.equal(await page.evaluate(() => document.body.dataset.localPreview), "true", "the page's own Previewer answers");
  await page.focus("#ctl-temperature-range");
  await page.keyboard.press("ArrowRight");
  await page.waitForFunction(() => /position 3:/.test(document.querySelector("#p-rules .mu-list li:last-child")?.textContent ?? ""), null, { timeout: 5000 });
  const previewed = Number(await page.getAttribute("#p-rules .mu-list li:last-child", "data-mu"));
  const previewedKept = (await column(page, "mirostat", "pipeline")).count;
  assert.ok(previewed !== 3, `the preview's mu has moved from 2 tau: ${previewed}`);
  await page.click("#btn-step");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .out-gen .tok").length === 3, null, { timeout: 10000 });
  const drawnAt = Number(await page.getAttribute("#p-rules .mu-list li:last-child", "data-mu"));
  assert.ok(Math.abs(drawnAt - previewed) < 1e-12, `the step drew at the previewed mu: ${drawnAt}, previewed ${previewed}`);
  assert.equal((await column(page, "mirostat", "pipeline")).count, previewedKept, "the step's mirostat cut is the previewed one");
  assert.deepEqual(page.problems(), []);
  await page.close();
});

test("DRY, sequence bias and no-repeat n-gram act on the repeat in the prompt t1 t2 t3 t1 t2", async () => {
  const page = await open("?model=logits10&prompt=t1t2t3t1t2");
  // DRY: t3 would extend the repeat "t1 t2" (length 2 = the allowed length):
  // its logit loses multiplier * base^(2 - 2) = 1.
  const dryZ = Z.map((z, i) => (i === 2 ? z - 1 : z));
  const want = softmax(dryZ);
  await page.fill("#ctl-dry_multiplier", "1");
  await page.waitForSelector("#p-rules thead th[data-stage=dry][data-group=pipeline]");
  const dry = await column(page, "dry", "pipeline");
  assert.equal(dry.count, 10, "DRY penalises, it cuts nothing");
  // rows are the raw top 10: t1..t10 in order
  dry.probs.forEach((p, i) => assert.ok(Math.abs(p - want[i]) < 1e-6, `t${i + 1}: ${p} vs ${want[i]}`));
  await page.fill("#ctl-dry_multiplier", "0");

  // Sequence bias (HF): "t2 t3" gets -1 on t3 when the text ends in t2, as it does: the same numbers.
  await page.fill("#ctl-sequence_bias", "1 2: -1");
  await page.dispatchEvent("#ctl-sequence_bias", "change");
  await page.waitForSelector("#p-rules thead th[data-stage=sequence_bias][data-group=pipeline]");
  const seq = await column(page, "sequence_bias", "pipeline");
  seq.probs.forEach((p, i) => assert.ok(Math.abs(p - want[i]) < 1e-6, `sequence bias, t${i + 1}: ${p} vs ${want[i]}`));
  await page.fill("#ctl-sequence_bias", "");
  await page.dispatchEvent("#ctl-sequence_bias", "change");

  // No-repeat n-gram (HF): n = 3 bans t3 (t1 t2 -> t3 already seen); n = 4 bans nothing (t3 t1 t2 never continued).
  const three = await setAndRead(page, "no_repeat_ngram_size", 3, "no_repeat_ngram", "pipeline", 9);
  assert.equal(three.count, 9);
  assert.equal(three.probs[2], 0, "t3 is the banned one");
  const four = await setAndRead(page, "no_repeat_ngram_size", 4, "no_repeat_ngram", "pipeline", 10);
  assert.equal(four.count, 10);
  assert.deepEqual(page.problems(), []);
  await page.close();
});

test("presets give the engines' documented orders; the builder reorders by keyboard and drag; the URL round-trips", async () => {
  const page = await open("?model=logits10");
  const before = (list, a, b) => list.indexOf(a) >= 0 && list.indexOf(a) < list.indexOf(b);

  // llama.cpp's default chain, as the issue documents it: penalties → DRY → top-n-σ
  // → top-k → typical → top-p → min-p → XTC → temperature last.
  await page.click("button[data-preset=llama]");
  let list = await chainList(page);
  const documented = ["penalties", "dry", "top_n_sigma", "top_k", "typical_p_llama", "top_p", "min_p", "xtc", "temperature"];
  for (let i = 1; i < documented.length; i++) assert.ok(before(list, documented[i - 1], documented[i]), `${documented[i - 1]} before ${documented[i]}: ${list}`);
  assert.equal(await page.getAttribute("button[data-preset=llama]", "aria-pressed"), "true");
  await urlWritten(page);
  assert.match(page.url(), /order=llama/);
  assert.doesNotMatch(page.url(), /chain=/, "a preset is linked by its name");

  // Hugging Face's generate: the warpers temperature → top-k → top-p, after the penalties.
  await page.click("button[data-preset=hf]");
  list = await chainList(page);
  for (const [a, b] of [["penalties", "temperature"], ["temperature", "top_k"], ["top_k", "top_p"]]) assert.ok(before(list, a, b), `${a} before ${b}: ${list}`);
  // OpenAI's API: temperature, top_p, presence/frequency penalties, logit_bias; no top-k.
  await page.click("button[data-preset=openai]");
  list = await chainList(page);
  for (const s of ["temperature", "top_p", "penalties", "bias_bans"]) assert.ok(list.includes(s), `${s} in ${list}`);
  assert.ok(!list.includes("top_k") && !list.includes("min_p"), `no top-k or min-p: ${list}`);
  assert.deepEqual(await pipelineColumns(page), [...list.filter((s) => ["temperature", "top_p", "penalties", "bias_bans"].includes(s)), "final"]);

  // Keyboard: "move up" on top-p twice puts it first; the focus stays on it.
  const topP = list.indexOf("top_p");
  await page.focus("#chain-list li[data-stage=top_p] .chain-up");
  for (let i = 0; i < topP; i++) await page.keyboard.press("Enter");
  list = await chainList(page);
  assert.equal(list[0], "top_p", `top-p moved to the top: ${list}`);
  assert.equal(await page.evaluate(() => document.activeElement.closest("li")?.dataset.stage), "top_p", "the keyboard stays on the moved stage");
  assert.equal(await page.evaluate(() => document.activeElement.classList.contains("chain-down")), true, "at the top, its other button");
  // Drag: temperature onto the first place.
  await page.dragAndDrop("#chain-list li[data-stage=temperature]", "#chain-list li[data-stage=top_p]");
  list = await chainList(page);
  assert.equal(list[0], "temperature", `temperature dragged to the top: ${list}`);
  // The table follows the chain.
  assert.deepEqual(await pipelineColumns(page), [...list.filter((s) => ["temperature", "top_p", "penalties", "bias_bans"].includes(s)), "final"]);
  // Add top-k at the end, remove penalties.
  await page.selectOption("#chain-add", "top_k");
  await page.click("#chain-add-btn");
  await page.click("#chain-list li[data-stage=penalties] .chain-remove");
  list = await chainList(page);
  assert.equal(list.at(-1), "top_k");
  assert.ok(!list.includes("penalties"));

  await urlWritten(page);
  const link = page.url();
  assert.match(link, new RegExp(`chain=${list.join("%2C")}(&|$)`), link);
  // The link opens the same chain and the same columns.
  const again = await open(new URL(link).search);
  assert.deepEqual(await chainList(again), list);
  assert.deepEqual(await pipelineColumns(again), await pipelineColumns(page));
  assert.deepEqual(again.problems(), []);
  await again.close();
  assert.deepEqual(page.problems(), []);
  await page.close();
});

test("the URL names are the CLI's, and they round-trip", () => {
  const query = "?typical_p=0.5&epsilon_cutoff=0.001&eta_cutoff=0.002&no_repeat_ngram_size=3&min_tokens_to_keep=2&top_nsigma=1.5" +
    "&xtc_threshold=0.2&xtc_probability=0.5&dry_multiplier=0.8&dry_base=2&dry_allowed_length=3&dry_penalty_last_n=32" +
    "&mirostat=2&mirostat_lr=0.2&mirostat_ent=4&sequence_bias=3%2017:1.5;5:-2&dry_sequence_breaker=%0A&dry_sequence_breaker=.&chain=sequence_bias,penalties,dry,top_n_sigma,typical_p,epsilon_cutoff,eta_cutoff,no_repeat_ngram,xtc,temperature,mirostat";
  const { state, problems } = parseQuery(query);
  assert.deepEqual(problems, []);
  const s = state.settings;
  assert.deepEqual([s.typical_p, s.epsilon_cutoff, s.eta_cutoff, s.no_repeat_ngram_size, s.min_keep, s.top_n_sigma],
    [0.5, 0.001, 0.002, 3, 2, 1.5]);
  assert.deepEqual([s.xtc_threshold, s.xtc_probability, s.dry_multiplier, s.dry_base, s.dry_allowed_length, s.dry_penalty_last_n],
    [0.2, 0.5, 0.8, 2, 3, 32]);
  assert.deepEqual([s.mirostat, s.mirostat_eta, s.mirostat_tau], [2, 0.2, 4]);
  assert.deepEqual(s.sequence_bias, [[[3, 17], 1.5], [[5], -2]]);
  assert.deepEqual(s.dry_sequence_breakers, ["\n", "."]);
  assert.equal(s.chain.length, 11);
  const again = parseQuery(formatQuery(state));
  assert.deepEqual(again.problems, []);
  assert.deepEqual(again.state, state);

  // A sampler turned on without its stage in the chain: the stage is added, and said.
  const added = parseQuery("?order=openai&top_nsigma=1");
  assert.ok(added.state.settings.chain.includes("top_n_sigma"));
  assert.match(added.problems.join("\n"), /top_n_sigma/);
});

test("bad values in the URL are refused with a message, and the page stays usable", async () => {
  const page = await open("?model=logits10&typical_p=1.5&top_nsigma=-1&mirostat=3&min_tokens_to_keep=2.5&chain=top_k,bogus");
  const messages = (await page.$$eval("#messages .message", (els) => els.map((e) => e.textContent))).join("\n");
  for (const name of ["typical_p=1.5", "top_nsigma=-1", "mirostat=3", "min_tokens_to_keep=2.5", "chain=top_k,bogus"]) {
    assert.ok(messages.includes(name), `a message names ${name}:\n${messages}`);
  }
  assert.match(messages, /bogus/);
  // the defaults stand, and the Hugging Face chain
  assert.equal(await page.inputValue("#ctl-typical_p"), "1");
  assert.equal(await page.getAttribute("button[data-preset=hf]", "aria-pressed"), "true");
  // a number typed out of range is refused by the control, keeping the last good value
  await page.fill("#ctl-epsilon_cutoff", "1");
  assert.match(await page.textContent("#ctl-epsilon_cutoff-msg"), /keeping 0/);
  // still usable: top-k = 3 cuts the table to three tokens
  await page.fill("#ctl-top_k", "3");
  await page.waitForFunction(() => document.querySelector('#p-rules tfoot tr:nth-child(2) td[data-stage=final]')?.textContent === "3");
  assert.deepEqual(page.problems(), []);
  await page.close();
});

/** Fourteen samplers on (the README's URL names), on the default model: 27 columns besides the tokens'. */
const MANY_ON = "?top_k=40&top_p=0.95&min_p=0.02&repetition_penalty=1.2&typical_p=0.9&epsilon_cutoff=0.001&eta_cutoff=0.001" +
  "&top_nsigma=3&xtc_threshold=0.1&xtc_probability=0.5&dry_multiplier=0.8&mirostat=2&no_repeat_ngram_size=3&temperature=0.9";
/** Every stage in the chain at once (both typical-p forms, sequence bias): 29 columns. */
const ALL_STAGES = `${MANY_ON}&sequence_bias=${encodeURIComponent("3 17:1.5")}&chain=sequence_bias,penalties,no_repeat_ngram,bias_bans,dry,` +
  "top_n_sigma,temperature,top_k,top_p,min_p,xtc,mirostat,typical_p,typical_p_llama,epsilon_cutoff,eta_cutoff";

/** The rules table's box and columns. */
const rulesTable = (page) => page.evaluate(() => {
  const wrap = document.querySelector("#p-rules .table-wrap");
  const table = wrap.querySelector("table");
  const heads = [...table.tHead.rows[1].cells].slice(1);
  return {
    scrollWidth: wrap.scrollWidth, clientWidth: wrap.clientWidth, overflowX: getComputedStyle(wrap).overflowX,
    columns: heads.length, dense: table.classList.contains("dense"),
    fontPx: parseFloat(getComputedStyle(table.tBodies[0].rows[0].cells[1]).fontSize),
    // each header's full name: its own text, or its abbreviation's title and its accessible name
    names: heads.map((th) => ({ stage: th.dataset.stage, text: th.textContent, title: th.querySelector("abbr")?.title ?? null, label: th.getAttribute("aria-label") })),
    pageScroll: document.documentElement.scrollWidth - innerWidth,
  };
});

test("with fourteen samplers on, the rules table fits 1280×800 without scrolling sideways; a phone scrolls it in its own box", async () => {
  for (const [query, want] of [[MANY_ON, 27], [ALL_STAGES, 29]]) {
    const page = await open(query, { width: 1280, height: 800 });
    const t = await rulesTable(page);
    assert.equal(t.columns, want, `${want} columns`);
    assert.ok(t.scrollWidth <= t.clientWidth, `the rules table fits its panel at 1280 px: scrollWidth ${t.scrollWidth} > clientWidth ${t.clientWidth} (${t.columns} columns)`);
    assert.ok(t.dense && t.fontPx >= 11, `compact but readable: ${t.fontPx}px type`);
    for (const n of t.names) {
      const full = STAGE_LABELS[n.stage];
      assert.ok(n.text === full || (n.title === full && n.label === full), `the ${n.stage} header names it in full: ${JSON.stringify(n)}`);
    }
    assert.ok(t.pageScroll <= 0, "the page does not scroll sideways");
    if (want === 27) await screenshot(page, "samplers-1280-many-on");
    assert.deepEqual(page.problems(), []);
    await page.close();
  }
  const phone = await open(MANY_ON, { width: 390, height: 844 });
  const t = await rulesTable(phone);
  assert.ok(t.pageScroll <= 0, `the phone's page does not scroll sideways (${t.pageScroll}px)`);
  assert.equal(t.overflowX, "auto", "the table scrolls inside its own box");
  await phone.$eval("#p-rules", (el) => el.scrollIntoView({ block: "start" }));
  await phone.screenshot({ path: new URL("../artifacts/samplers-390-many-on.png", import.meta.url).pathname });
  assert.deepEqual(phone.problems(), []);
  await phone.close();
});

test("screenshots with More controls open: the core sliders and the distribution stay in view at 1280×800, nothing overflows on a phone", async () => {
  const wide = await open("?model=logits10&typical_p=0.9&order=llama", { width: 1280, height: 800 });
  await wide.click("#btn-more-controls");
  await wide.waitForTimeout(400);
  await screenshot(wide, "samplers-1280-more");
  await wide.screenshot({ path: new URL("../artifacts/samplers-1280-more-viewport.png", import.meta.url).pathname });
  for (const sel of ["#ctl-temperature-range", "#ctl-top_k-range", "#ctl-top_p-range", "#ctl-min_p-range", "#p-dist .dist-row"]) {
    const inside = await wide.$eval(sel, (el) => { const r = el.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight && r.width > 0; });
    assert.ok(inside, `${sel} in view at 1280×800 with More controls used`);
  }
  assert.deepEqual(wide.problems(), []);
  await wide.close();

  const phone = await open("?model=logits10&typical_p=0.9&order=llama", { width: 390, height: 844 });
  await phone.click("#btn-more-controls");
  await phone.waitForSelector("#chain-list", { state: "visible" });
  await phone.$eval("#chain-list", (el) => el.scrollIntoView({ block: "center" }));
  await phone.screenshot({ path: new URL("../artifacts/samplers-390-more.png", import.meta.url).pathname });
  assert.ok(await phone.evaluate(() => document.documentElement.scrollWidth <= innerWidth), "no sideways scrolling on the phone");
  const over = await phone.$$eval("#p-controls *", (els) => els.filter((el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && (r.right > innerWidth + 0.5 || r.left < -0.5);
  }).map((el) => el.id || el.className || el.tagName));
  assert.deepEqual(over, [], "no control sticks out of the phone's screen");
  assert.deepEqual(phone.problems(), []);
  await phone.close();
});
