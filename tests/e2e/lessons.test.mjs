// The Lessons menu: every course preset opened by its permalink
// (?lesson=<id>), each number it shows checked against the value lesson 21
// prints (course text 003), the panels it shows, its two-line caption and
// its figure; the figure saved as SVG and PNG; the temperature sweep played,
// scrubbed and saved as an animated PNG of 30 frames. Expected values are
// copied from the course text (or, where the lesson only states a formula,
// computed here from it), never from the page's code.
//
// Run: pkg-scripts/build, then node --test tests/e2e/lessons.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { startSuite, stopSuite, openPage, waitForReady, forgiveAbsentIndex } from "./harness.mjs";

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => ({ server, browser } = await startSuite()));
after(() => stopSuite({ server, browser }));

// A printed value: its digits as the lesson prints them. `digits` lowers the
// decimals the page must show where the lesson's value came from its own
// retrained model (or its 6-decimal logits at b) so only those digits are fixed.
const p = (v, digits) => ({ v, digits });

// Lesson 21's printed numbers, by preset and by the key the page shows them under.
const EXPECTED = {
  "temperature-10class": {
    panels: ["dist", "entropy", "controls"],
    nums: {
      "p_max@0.5": "0.6321492583604867", "bits@0.5": "1.5006227545290947", "nats@0.5": "1.040152431385941",
      "p_max@1": "0.39613850050808724", "bits@1": "2.398942379757357", "nats@1": "1.6628201468545776",
      "p_max@2": "0.24098006525329924", "bits@2": "3.000344393648524", "nats@2": "2.079680257166313",
    },
  },
  "top-k-3": {
    panels: ["dist", "rules", "controls"],
    nums: { p1: "0.506480", p2: "0.307196", p3: "0.186324", kept_mass: "0.7821398567522391", support: "3", bits: "1.4718249822536822" },
  },
  "top-p-0.9": {
    panels: ["dist", "rules", "controls"],
    nums: {
      cum1: "0.396139", cum2: "0.636409", cum3: "0.782140", cum4: "0.870530", cum5: "0.924142", cum6: "0.956659", cum7: "0.976381", cum8: "0.988344",
      below: "0.8705303038115675", reaches: "0.9241418199787566", support: "5", bits: "2.0115280009976724",
    },
  },
  "four-panel": {
    panels: ["rules"],
    // The lesson's ordering: greedy → top-K=3 → τ=0.5 → top-P=0.9 → τ=1 → τ=2.
    order: ["greedy", "top-K=3", "tau=0.5", "top-P=0.9", "tau=1.0", "tau=2.0"],
    nums: {
      "nats:greedy": "0", "bits:greedy": "0",
      "nats:top-K=3": "1.0201913367268314", "bits:top-K=3": "1.4718249822536822",
      "nats:tau=0.5": "1.040152431385941", "bits:tau=0.5": "1.5006227545290947",
      "nats:top-P=0.9": "1.3942849625089193", "bits:top-P=0.9": "2.0115280009976724",
      "nats:tau=1.0": "1.6628201468545776", "bits:tau=1.0": "2.398942379757357",
      "nats:tau=2.0": "2.079680257166313", "bits:tau=2.0": "3.000344393648524",
    },
  },
  "temperature-sweep": {
    panels: ["dist"],
    // logspace(log10(0.2), log10(5), 30); its titles print τ and H with %.2f.
    nums: { frames: "30", tau_first: "0.20", tau_last: "5.00" },
  },
  "entropy-curves": {
    panels: ["entropy"],
    nums: { slope: "0.808682795298878", var: "0.8086827002533895", log2_10: "3.32", log2_3: "1.58" },
  },
  "tie-at-b": {
    panels: ["dist", "entropy", "controls"],
    // P(.|b) to 6 decimals; H to the digits the 6-decimal logits fix (course_numbers.rs).
    nums: {
      "a@0.5": "0.500000", "b@0.5": "0.000000", "c@0.5": "0.500000", "bits@0.5": p("1.0000000000000275", 7),
      "a@1": "0.500000", "b@1": "0.000000", "c@1": "0.500000", "bits@1": p("1.000000431403955", 7),
      "a@2": "0.499955", "b@2": "0.000091", "c@2": "0.499955", "bits@2": p("1.001256212153058", 7),
      "a@5": "0.492161", "b@5": "0.015678", "c@5": "0.492161", "bits@5": p("1.1007526326437544", 7),
    },
  },
  "repetition-penalty": {
    panels: ["dist", "rules", "controls"],
    nums: {
      pen0: "0.001845", pen1: "0.000000", pen2: "0.998155",
      "H:greedy": "0", "H:tau=0.5": p("1.0000000000000275", 4), "H:tau=1": p("1.000000431403955", 4), "H:tau=2": p("1.001256212153058", 4),
      "H:top-K=2": "1", "H:top-P=0.9": "1", "H:penalty rho=2 on 'a' x2": p("0.019413435029058908", 4),
    },
  },
  "greedy-cycle": {
    panels: ["output", "controls"],
    strings: {
      "map:a": "b", "map:b": "a", "map:c": "b",
      "orbit:a": "ababababa", "orbit:b": "babababab", "orbit:c": "cbabababa",
      "period:a": "2", "period:b": "2", "period:c": "2",
      greedy: "ababababababababa", greedy_penalty: "abcbababcbababcba",
    },
  },
  "sampled-chain": {
    panels: ["output"],
    nums: {
      eig0: "-1.000000", eig1: "-0.000000", eig2: "1.000000",
      pi0: "0.250000", pi1: "0.500000", pi2: "0.250000",
      rate: p("0.5000004951647452", 6), corpus_rate: "0.5",
    },
  },
  "gallery": {
    panels: ["output", "controls"],
    strings: { "gallery:greedy": "ababababababa", "gallery:greedy (no penalty)": "ababababababababa", "gallery:greedy (penalty=2)": "abcbababcbababcba" },
  },
  "diversity": { panels: ["output", "controls"], nums: {} },
  // Its numbers are the inside panel's report (tests/e2e/inside-panel.test.mjs checks them).
  "answer-forms": { panels: ["output", "dist", "inside", "controls"], nums: {} },
  "kv-cache": {
    panels: ["output", "kv"],
    nums: { cached_scores: "78", naive_scores: "364", cached_kv: "31", naive_kv: "468", kv_ratio: "15.1" },
  },
  "kv-demo-flops": {
    panels: ["kv"],
    nums: {
      ratio1: "1.000000", ratio2: "2.000000", ratio3: "3.000000", ratio4: "4.000000",
      ratio5: "5.000000", ratio6: "6.000000", ratio7: "7.000000", ratio8: "8.000000",
      naive_total: "3564", cached_total: "708", total_ratio: "5.03", cache_numbers: "64",
    },
  },
  "flop-curve": { panels: ["kv"], nums: {} },
  "kv-size": {
    panels: ["kv"],
    // 2 · 32 · 32 · 8192 · 128 numbers; "= 4.294967296 GB at 2 bytes (fp16)".
    nums: { numbers: "2147483648", bytes: String(2147483648 * 2), gb: "4.29" },
  },
  "beam-b2": { panels: ["beam"], nums: {} },
  "bigram-retrain": { panels: ["output"], nums: { floor: "0.3395" } },
};

const decimalsOf = (s) => (s.includes(".") ? s.split(".")[1].length : 0);

/** The shown number agrees with the printed one to the printed digits (at most 12 decimals required). */
function checkNumber(preset, key, shown, want) {
  const { v, digits } = typeof want === "string" ? { v: want, digits: undefined } : want;
  const clean = shown.replace(/,/g, "").replace("−", "-");
  const got = Number(clean);
  assert.ok(Number.isFinite(got), `${preset} ${key}: "${shown}" is not a number`);
  const need = digits ?? Math.min(decimalsOf(v), 12);
  assert.ok(decimalsOf(clean) >= need || Number.isInteger(got) && Number(v) === got,
    `${preset} ${key}: "${shown}" shows fewer than the lesson's ${need} decimals (${v})`);
  const used = Math.min(decimalsOf(clean), digits ?? decimalsOf(v));
  const tol = 0.5 * 10 ** -used + 1e-12 * Math.abs(Number(v)) + 1e-15;
  assert.ok(Math.abs(got - Number(v)) <= tol, `${preset} ${key}: shown ${shown}, the lesson prints ${v}`);
}

/** Softmax and entropy of the lesson's ten logits at τ, in bits (the title's formula). */
function entropyBitsAt(tau) {
  const z = [3.0, 2.5, 2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0, -1.5].map((x) => x / tau);
  const m = Math.max(...z), e = z.map((x) => Math.exp(x - m)), s = e.reduce((a, b) => a + b, 0);
  return -e.map((x) => x / s).reduce((h, q) => h + (q > 0 ? q * Math.log2(q) : 0), 0);
}

/** @type {import("playwright-core").Page} */
let page;
let errors;

async function openLesson(id) {
  if (!page) ({ page, errors } = await openPage(browser, `${server.url}index.html?lesson=${id}`));
  else await page.goto(`${server.url}index.html?lesson=${id}`);
  await waitForReady(page);
  await page.waitForSelector("#p-lesson .body[data-ready='1'], #p-lesson .body[data-ready='error']", { timeout: 30000 });
  assert.equal(await page.getAttribute("#p-lesson .body", "data-ready"), "1", await page.textContent("#p-lesson .body"));
}

test("the Lessons menu lists every preset as a permalink", async () => {
  await openLesson("top-k-3");
  const links = await page.$$eval("#lessons-list a", (as) => as.map((a) => a.getAttribute("href")));
  assert.deepEqual(links.sort(), Object.keys(EXPECTED).map((id) => `?lesson=${id}`).sort());
  assert.equal(await page.getAttribute("#lessons-list a[aria-current=page]", "data-lesson"), "top-k-3");
  // Embedded beside a lesson: the lesson panel and the preset's panels only.
  await page.goto(`${server.url}index.html?lesson=four-panel&embed=1`);
  await waitForReady(page);
  await page.waitForSelector("#p-lesson .body[data-ready='1']");
  const visible = await page.$$eval("section.panel", (els) => els.filter((e) => e.offsetParent !== null).map((e) => e.id));
  assert.deepEqual(visible, ["p-lesson", "p-rules"]);
  // A link with no lesson shows no lesson panel; an unknown lesson is named.
  await page.goto(`${server.url}index.html?lesson=no-such-lesson&model=logits10`);
  await waitForReady(page);
  assert.equal(await page.isVisible("#p-lesson"), false);
  assert.match(await page.textContent("#messages"), /lesson=no-such-lesson is not a lesson/);
});

test("every preset opens in its state and shows the lesson's numbers", async () => {
  // The page's Content-Security-Policy holds on every preset (no inline style or script, no other origin).
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  for (const [id, want] of Object.entries(EXPECTED)) {
    await openLesson(id);
    const visible = await page.$$eval("section.panel", (els) => els.filter((e) => !e.hidden).map((e) => e.id.replace(/^p-/, "")));
    for (const panel of want.panels) assert.ok(visible.includes(panel), `${id}: panel ${panel} shown (${visible})`);
    for (const panel of ["output", "dist", "rules", "entropy", "kv", "beam", "score"]) {
      if (!want.panels.includes(panel)) assert.ok(!visible.includes(panel), `${id}: panel ${panel} hidden`);
    }
    assert.equal(await page.$$eval("#lesson-caption .line", (l) => l.length), 2, `${id}: a two-line caption`);
    assert.ok(await page.$$eval("#p-lesson .lesson-figure svg, #p-lesson .lesson-figure table", (l) => l.length) > 0, `${id}: a figure`);
    const shown = Object.fromEntries(await page.$$eval("#p-lesson [data-num]", (els) => els.map((e) => [e.dataset.num, e.textContent])));
    for (const [key, v] of Object.entries(want.nums ?? {})) {
      assert.ok(key in shown, `${id}: ${key} is shown`);
      checkNumber(id, key, shown[key], v);
    }
    for (const [key, v] of Object.entries(want.strings ?? {})) assert.equal(shown[key], v, `${id}: ${key}`);
    if (want.order) {
      const keys = Object.keys(shown).filter((k) => k.startsWith("bits:")).map((k) => k.slice(5));
      assert.deepEqual(keys, want.order, "the six entropies in the lesson's ordering");
    }
    assert.deepEqual(await page.evaluate(() => window.__csp), [], `${id}: no CSP violation`);
    // The link the page writes keeps the lesson.
    assert.match(page.url(), new RegExp(`[?&]lesson=${id.replace(".", "\\.")}(&|$)`));
  }
  assert.deepEqual(forgiveAbsentIndex(errors), []);
});

test("the properties the exercises ask for: FLOP slopes, beam survivors, the loss's floor", async () => {
  await openLesson("flop-curve");
  let shown = Object.fromEntries(await page.$$eval("#p-lesson [data-num]", (els) => els.map((e) => [e.dataset.num, e.textContent])));
  // Exercise 4: cumulative naive FLOPs grow like T³, cached like T²: slopes below and toward 3 and 2.
  const [sn, sc] = [Number(shown.slope_naive), Number(shown.slope_cached)];
  assert.ok(sn > 2.5 && sn < 3 && sc > 1.5 && sc < 2, `slopes ${sn}, ${sc}`);
  // Σ_{t=1..64} of the lesson's formulas with d_head = 4.
  let n = 0, c = 0;
  for (let t = 1; t <= 64; t++) { n += 3 * t * 16 + 2 * t * t * 4 + t * t; c += 3 * 16 + 2 * t * 4 + t; }
  assert.equal(Number(shown.naive64.replace(/,/g, "")), n);
  assert.equal(Number(shown.cached64.replace(/,/g, "")), c);

  await openLesson("beam-b2");
  shown = Object.fromEntries(await page.$$eval("#p-lesson [data-num]", (els) => els.map((e) => [e.dataset.num, e.textContent])));
  // Exercise 6: after a, b is certain and every b is a coin flip: 4 ln ½ for 8 tokens; α changes nothing.
  for (const k of ["beam0", "beam1"]) assert.match(shown[k], /^b[ac]b[ac]b[ac]b[ac]$/);
  for (const k of ["logprob0", "logprob1"]) assert.ok(Math.abs(Number(shown[k]) - 4 * Math.log(0.5)) < 0.01, shown[k]);
  assert.equal(shown.beam_a1_0, shown.beam0);
  assert.equal(shown.beam_a1_1, shown.beam1);
  assert.ok(await page.$$eval("#p-lesson .lesson-figure svg text", (t) => t.length) > 8, "a tree of expansions");

  await openLesson("bigram-retrain");
  shown = Object.fromEntries(await page.$$eval("#p-lesson [data-num]", (els) => els.map((e) => [e.dataset.num, e.textContent])));
  assert.ok(Math.abs(Number(shown.final_loss) - (24 / 49) * Math.LN2) < 0.005, `final loss ${shown.final_loss}`);
  // Lesson 18's rows: P(b|a) = P(b|c) = 1, P(a|b) = P(c|b) = 0.5.
  assert.equal(shown.P01, "1.000");
  assert.equal(shown.P21, "1.000");
  assert.equal(shown.P10, "0.500");
  assert.equal(shown.P12, "0.500");
  assert.match(shown.sample, /^a(b[ac])*b?$/, "a and c are always followed by b");
  // The rows settling: four curves, one per probability the corpus fixes.
  assert.equal(await page.$$eval("#p-lesson .lesson-figure svg path[data-row]", (p) => p.length), 4, "P(b|a), P(b|c), P(a|b), P(c|b) over the steps");
});

test("diversity: distinct completions from 40 seeds rise with the temperature on bard", async () => {
  await openLesson("diversity");
  await page.waitForSelector("#p-lesson [data-figure=diversity][data-done~=bard]", { timeout: 60000 });
  const shown = await page.$$eval("#p-lesson [data-num^='bard@']", (els) => els.map((e) => [Number(e.dataset.num.slice(5)), Number(e.textContent)]));
  // Course text 000: raising the temperature increases the number of distinct 8-token
  // completions from 40 seeds; greedy ignores the seed.
  assert.ok(shown.length >= 5, `${shown.length} temperatures`);
  assert.deepEqual(shown[0], [0, 1]);
  for (let i = 1; i < shown.length; i++) assert.ok(shown[i][0] > shown[i - 1][0] && shown[i][1] >= shown[i - 1][1], JSON.stringify(shown));
  assert.ok(shown.every(([, n]) => n <= 40) && shown[shown.length - 1][1] > shown[1][1], JSON.stringify(shown));
  assert.ok(await page.$$eval("#p-lesson .lesson-figure svg path", (p) => p.length) > 3, "a curve");
});

test("axe: the lesson panel and the open menu have no serious or critical WCAG 2.1 A/AA violation", async () => {
  const axe = readFileSync(path.join(path.dirname(createRequire(import.meta.url).resolve("axe-core")), "axe.min.js"), "utf8");
  for (const id of ["four-panel", "kv-size", "greedy-cycle"]) {
    await openLesson(id);
    await page.click(".lessons-menu summary");
    await page.evaluate(axe);
    const bad = await page.evaluate(async () => {
      // @ts-ignore axe is the script just added
      const r = await window.axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] }, resultTypes: ["violations"] });
      return r.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`);
    });
    assert.deepEqual(bad, [], `${id}`);
  }
});

test("the greedy cycle's link generates the penalised run live in the output panel", async () => {
  await openLesson("greedy-cycle");
  // The page is ready from the prompt's report on; the link's 16 steps follow.
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok[data-step]").length === 16, null, { timeout: 10000 });
  assert.match((await page.textContent("#p-output .body")).replace(/\s/g, ""), /^ababababababababa/);
  await page.click("[data-action=cycle-penalty]");
  await waitForReady(page);
  await page.waitForSelector("#p-lesson .body[data-ready='1']");
  // The lesson: greedy (penalty=2) : abcbababcbababcba
  await page.waitForFunction(() => document.querySelector("#p-output .body")?.textContent.replace(/\s/g, "").startsWith("abcbababcbababcba"), null, { timeout: 10000 });
});

test("on a phone (390×844) the menu sits on the title's line and its list stays on screen", async () => {
  const { page: phone } = await openPage(browser, `${server.url}index.html?lesson=top-k-3`, { viewport: { width: 390, height: 844 } });
  await waitForReady(phone);
  const box = (sel) => phone.$eval(sel, (el) => { const b = el.getBoundingClientRect(); return { top: b.top, bottom: b.bottom, left: b.left, right: b.right }; });
  const [menu, title, lede] = [await box(".lessons-menu summary"), await box("header.top h1"), await box(".lede")];
  assert.ok(menu.bottom <= lede.top && menu.top < title.bottom, `menu ${JSON.stringify(menu)}, title ${JSON.stringify(title)}`);
  await phone.click(".lessons-menu summary");
  const list = await box("#lessons-list");
  assert.ok(list.left >= 0 && list.right <= 390, `the list is on screen: ${JSON.stringify(list)}`);
  await phone.close();
});

test("the KV-size calculator: grouped-query attention and the loaded model", async () => {
  await openLesson("kv-size");
  await page.fill("#kv-size-kv_heads", "8");
  const shown = async () => Object.fromEntries(await page.$$eval("#p-lesson [data-num]", (els) => els.map((e) => [e.dataset.num, e.textContent.replace(/,/g, "")])));
  let s = await shown();
  assert.equal(s.numbers, String(2147483648 / 4));
  assert.equal(s.gqa_saving, "4.0");
  await page.click("[data-action=kv-loaded]");
  s = await shown();
  const info = await page.evaluate(() => [...document.querySelectorAll(".lesson-kv-form input")].map((i) => Number(/** @type {HTMLInputElement} */ (i).value)));
  const [layers, , kv, d, ctx] = info;
  assert.ok(layers >= 1 && kv >= 1, `the loaded model's shape ${info}`);
  assert.equal(Number(s.numbers), 2 * layers * kv * d * ctx);
});

test("the sweep plays and scrubs; figures save as SVG, PNG and a 30-frame animated PNG", async () => {
  await openLesson("temperature-sweep");
  const title = () => page.textContent("#p-lesson .chart-title");
  assert.match(await title(), /^τ = 0\.20 {5}H = 0\.45 bits {3}\(uniform = 3\.32\)$/);
  await page.$eval("[data-action=sweep-scrub]", (el) => { /** @type {HTMLInputElement} */ (el).value = "29"; el.dispatchEvent(new Event("input")); });
  assert.equal(await title(), `τ = 5.00     H = ${entropyBitsAt(5).toFixed(2)} bits   (uniform = 3.32)`);
  await page.$eval("[data-action=sweep-scrub]", (el) => { /** @type {HTMLInputElement} */ (el).value = "0"; el.dispatchEvent(new Event("input")); });
  await page.click("[data-action=sweep-play]");
  await page.waitForFunction(() => Number(document.querySelector("#p-lesson svg[data-frame]")?.getAttribute("data-frame")) >= 3, null, { timeout: 5000 });
  const tau = Number((await title()).match(/τ = ([\d.]+)/)[1]);
  assert.ok(tau > 0.2, "playing moves τ");

  const save = async (action) => {
    const [download] = await Promise.all([page.waitForEvent("download"), page.click(`[data-action=${action}]`)]);
    return readFile(await download.path());
  };
  const svg = (await save("figure-svg")).toString("utf8");
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.match(svg, /temperature sweep/);
  const png = await save("figure-png");
  assert.deepEqual([...png.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10]);

  const apng = await save("figure-apng");
  // The file's own chunks: acTL says 30 frames, 30 fcTL chunks follow.
  const chunks = [];
  for (let at = 8; at + 12 <= apng.length;) {
    const len = apng.readUInt32BE(at);
    chunks.push({ type: apng.toString("latin1", at + 4, at + 8), data: apng.subarray(at + 8, at + 8 + len) });
    at += 12 + len;
  }
  assert.equal(chunks[0].type, "IHDR");
  assert.equal(chunks[chunks.length - 1].type, "IEND");
  const actl = chunks.find((ch) => ch.type === "acTL");
  assert.equal(actl.data.readUInt32BE(0), 30);
  assert.equal(chunks.filter((ch) => ch.type === "fcTL").length, 30);
  // The browser decodes it as 30 frames.
  const frames = await page.evaluate(async (b64) => {
    const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
    if (typeof ImageDecoder === "undefined") return null;
    const dec = new ImageDecoder({ data: bytes, type: "image/png" });
    await dec.tracks.ready;
    await dec.completed;
    const first = await dec.decode({ frameIndex: 0 });
    const last = await dec.decode({ frameIndex: 29 });
    return { count: dec.tracks.selectedTrack.frameCount, w: first.image.displayWidth, lastW: last.image.displayWidth };
  }, apng.toString("base64"));
  assert.ok(frames, "ImageDecoder is available in Chromium");
  assert.equal(frames.count, 30);
  assert.ok(frames.w > 0 && frames.lastW === frames.w);
  await page.close();
});
