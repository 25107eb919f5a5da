// The inside panel ("Inside the step"): off by default (reports carry
// `inside: null` and the worker is never asked), opened by panels=…,inside or
// its switch; on the real engine every attention row it draws sums to 1, its
// last lens layer is the distribution panel's raw top token and probability,
// top1_from is where the final top-1 becomes and stays the top token; a Run
// reads the lens a few times a second and on its last step; the
// layer and head move with the keyboard; the toy models say there is nothing
// inside; an embed shows it; a phone shows one layer. On a synthetic report
// the painter hatches positions outside a local layer's window and groups
// long texts' positions into columns. With the real models' files: the
// answer-forms lesson shows the layer where ␣Paris becomes the top token as
// the lens says, and Gemma 3's local layers leave a 600-token prompt's first
// positions unread.
//
// Run: pkg-scripts/build, then node --test tests/e2e/inside-panel.test.mjs
// (NEXTTOKEN_REQUIRE_SMOLLM2=1 NEXTTOKEN_REQUIRE_GEMMA3=1 to fail without the real models' files)

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startSuite, stopSuite, openPage, waitForReady, screenshot, recordWorkerMessages, waitForView, needSmollm2, needGemma3, forgiveAbsentIndex } from "./harness.mjs";

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => ({ server, browser } = await startSuite()));
after(() => stopSuite({ server, browser }));

/**
 * Open the page and wait for its model.
 * @param {string} query
 * @param {{ width?: number, height?: number, timeout?: number, record?: boolean }} [o]
 */
async function open(query, o = {}) {
  const { page, errors } = await openPage(browser, "about:blank", { viewport: { width: o.width ?? 1300, height: o.height ?? 900 } });
  if (o.record) await recordWorkerMessages(page);
  await page.goto(new URL(`index.html?tour=0&${query}`, server.url).href);
  await waitForReady(page, o.timeout ?? 60000);
  return { page, errors };
}

/** Wait until the inside panel shows a report. */
async function insideShown(page, timeout = 60000) {
  await page.waitForSelector("#p-inside .body[data-state=shown]", { state: "attached", timeout });
}

/** The store's InsideReport, its weights as plain arrays, and what the distribution panel shows. */
async function reportAndPanels(page) {
  return page.evaluate(async () => {
    const { view } = await import("./state/store.js");
    const ins = view.inside;
    const d = view.distribution;
    const row = document.querySelector("#p-dist .dist-body .dist-row");
    return {
      inside: ins && { ...ins, attention: ins.attention.map((a) => ({ ...a, weights: Array.from(a.weights), isF32: a.weights instanceof Float32Array })) },
      info: view.info,
      chosen: view.chosen,
      rawTop: d.raw_top.map((t) => ({ id: t.id, display: t.display, prob: t.prob })),
      distRow: { name: row.querySelector(".tokname").textContent, rawTitle: row.children[2].getAttribute("title") },
      lensRows: [...document.querySelectorAll("#p-inside .lens-table tbody tr")].map((r) => ({
        lens: Number(r.dataset.lens), from: r.classList.contains("top1-from"), chips: [...r.querySelectorAll(".lens-chip")].map((c) => c.textContent) })),
      headFrom: Number(document.querySelector("#p-inside .lens-head").dataset.top1From),
    };
  });
}

/**
 * The engine's own promises about a report: shapes, every attention row a
 * distribution, the lens ending at the raw distribution, top1_from the first
 * layer from which the raw top-1 stays on top.
 * @param {any} r reportAndPanels
 */
function checkReport(r) {
  const ins = r.inside;
  assert.ok(ins, "an inside report");
  assert.equal(ins.layers, r.info.layers);
  assert.equal(ins.heads, r.info.heads);
  assert.equal(ins.kv_heads, r.info.kv_heads);
  assert.equal(ins.attention.length, ins.layers);
  assert.equal(ins.lens.length, ins.layers + 1);
  for (const a of ins.attention) {
    assert.ok(a.isF32, `layer ${a.layer}: the weights arrive as a Float32Array`);
    const n = ins.query - a.first + 1;
    assert.ok(a.first >= ins.cache_start && a.first <= ins.query, `layer ${a.layer}: first ${a.first} within the cache`);
    assert.equal(a.weights.length, ins.heads * n, `layer ${a.layer}: heads × positions`);
    for (let h = 0; h < ins.heads; h++) {
      const row = a.weights.slice(h * n, (h + 1) * n);
      const sum = row.reduce((s, w) => s + w, 0);
      assert.ok(Math.abs(sum - 1) < 1e-4, `layer ${a.layer}, head ${h}: the weights sum to ${sum}`);
      assert.ok(row.every((w) => w >= 0), `layer ${a.layer}, head ${h}: no negative weight`);
      const entropy = -row.reduce((s, w) => s + (w > 0 ? w * Math.log(w) : 0), 0);
      assert.ok(Math.abs(entropy - a.entropy[h]) < 1e-3, `layer ${a.layer}, head ${h}: entropy ${a.entropy[h]} is the weights' (${entropy})`);
      if (a.first === ins.cache_start) assert.ok(Math.abs(a.sink[h] - row[0]) < 1e-6, `layer ${a.layer}, head ${h}: the sink is the first position's weight`);
    }
  }
  // The final top-1 is the top token of every lens layer from top1_from on, and not of the one before.
  const topAt = (l) => ins.lens[l].top[0].id;
  if (ins.top1_from === null) { assert.notEqual(topAt(ins.layers), ins.raw_top.id, "no top1_from: the last layer's top is another token"); return; }
  for (let l = ins.top1_from; l <= ins.layers; l++) assert.equal(topAt(l), ins.raw_top.id, `lens layer ${l}: top-1 is the final one`);
  if (ins.top1_from > 0) assert.notEqual(topAt(ins.top1_from - 1), ins.raw_top.id, "top1_from is the first of the run");
  for (const e of ins.lens) assert.equal(e.raw_top_rank === 1, e.top[0].id === ins.raw_top.id, `lens layer ${e.layer}: raw_top_rank agrees with its top`);
}

/**
 * The last lens layer is the distribution panel's: its top token and its
 * probability (the raw column), and the followed token's raw probability.
 * @param {any} r reportAndPanels
 */
function checkLastLayerIsTheDistribution(r) {
  const ins = r.inside;
  const last = ins.lens[ins.layers];
  assert.equal(last.top[0].id, r.rawTop[0].id, "the last lens layer's top token is the distribution's");
  assert.equal(last.top[0].display, r.distRow.name, "the distribution panel's first row names it");
  assert.ok(Math.abs(last.top[0].prob - r.rawTop[0].prob) < 1e-5, `its probability: lens ${last.top[0].prob}, distribution ${r.rawTop[0].prob}`);
  assert.equal(Number(r.distRow.rawTitle).toFixed(4), last.top[0].prob.toFixed(4), "as the distribution panel shows it");
  assert.equal(ins.raw_top.id, r.rawTop[0].id);
  const followed = r.rawTop.find((t) => t.id === ins.token.id);
  if (followed) assert.ok(Math.abs(ins.raw_prob - followed.prob) < 1e-5, "raw_prob is the distribution's probability of the followed token");
  assert.ok(Math.abs(last.token_prob - ins.raw_prob) < 1e-5, "the last lens layer gives the followed token raw_prob");
  // The panel marks top1_from, in the sentence and the table.
  assert.equal(r.headFrom, ins.top1_from);
  assert.deepEqual(r.lensRows.filter((x) => x.from).map((x) => x.lens), [ins.top1_from]);
  assert.match(r.lensRows[ins.layers].chips[0], new RegExp(`^${last.top[0].display.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} `));
}

test("off by default: reports carry inside: null, the worker is never asked; the switch opens it and the link says so", async () => {
  const { page, errors } = await open("model=bard&seed=5", { record: true });
  assert.equal(await page.isVisible("#p-inside"), false);
  assert.equal(new URL(page.url()).searchParams.get("panels"), null, "the default panels need no parameter");
  for (let i = 0; i < 2; i++) {
    const n = await page.evaluate(() => document.querySelectorAll("#p-output .tok").length);
    await page.click("#btn-step");
    await page.waitForFunction((k) => document.querySelectorAll("#p-output .tok").length > k, n);
    assert.equal(await page.evaluate(async () => (await import("./state/store.js")).view.report.inside), null, "a closed panel's report has inside: null");
  }
  assert.ok(!(await page.evaluate(() => window.__sent)).includes("inside"), "no inside request while closed");
  // Opened after two steps: the panels move on to the next token, whose inside comes at once.
  await page.check("#show-inside");
  await insideShown(page);
  await page.waitForFunction(() => new URLSearchParams(location.search).get("panels")?.split(",").includes("inside"));
  assert.match(await page.textContent("#p-dist .dist-head"), /^Next token at position/);
  const r = await reportAndPanels(page);
  checkReport(r);
  checkLastLayerIsTheDistribution(r);
  assert.equal(r.inside.token_is_chosen, false, "inside_now follows the raw top-1");
  assert.equal(r.inside.query, (await page.evaluate(async () => (await import("./state/store.js")).view.transcript.promptTokens.length)) + 1,
    "the query is the last token fed: the second generated one");
  // Closed again: the store forgets it and the worker is told.
  await page.uncheck("#show-inside");
  await waitForView(page, (view) => view.inside === null);
  assert.equal((await page.evaluate(() => window.__sent)).filter((t) => t === "inside").length, 2);
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});

test("panels=…,inside on bard: every attention row sums to 1, the last lens layer is the distribution panel's, a step follows its token", async () => {
  const { page, errors } = await open("model=bard&seed=3&panels=output,dist,inside");
  await insideShown(page);
  let r = await reportAndPanels(page);
  checkReport(r);
  checkLastLayerIsTheDistribution(r);
  // Grouped-query attention: 6 query heads read 2 KV heads.
  assert.deepEqual([r.inside.heads, r.inside.kv_heads], [r.info.heads, r.info.kv_heads]);
  const rows = await page.$eval("#p-inside .heat.overview", (s) => Number(s.dataset.rows));
  assert.equal(rows, r.info.layers * r.info.kv_heads, "the KV grid's rows: layer × KV head");
  // A step's report follows the chosen token.
  const before = r.inside.query;
  await page.click("#btn-step");
  // The step's report: the position the token was drawn from, its token followed.
  await waitForView(page, (view, q) => view.chosen && view.inside?.token_is_chosen && view.inside.query === q, before);
  r = await reportAndPanels(page);
  checkReport(r);
  assert.equal(r.inside.token_is_chosen, true);
  assert.equal(r.inside.token.id, r.chosen.id, "the lens follows the chosen token");
  checkLastLayerIsTheDistribution(r);
  assert.deepEqual(errors, []);
  await page.close();
});

test("an inside reply that a step's report overtook is dropped: the panel keeps the step's own inside", async () => {
  const { page, errors } = await open("model=bard&seed=3&panels=output,dist,inside");
  await insideShown(page);
  // A Step sent, then an inside request for the position then pending (the
  // panels show no drawn token yet, so syncInside asks the worker at once):
  // the worker answers the step first, and the inside reply describes the
  // position after it, which the panels do not show.
  const r = await page.evaluate(async () => {
    const gen = await import("./engine/generation.js");
    const { view } = await import("./state/store.js");
    const step = gen.doStep();
    const sync = gen.syncInside();
    await Promise.all([step, sync]);
    return { chosen: view.chosen?.id ?? null, inside: view.inside && { token_is_chosen: view.inside.token_is_chosen, token: view.inside.token?.id, query: view.inside.query },
      reportInside: view.report.inside && { query: view.report.inside.query }, same: view.inside === view.report.inside };
  });
  assert.notEqual(r.chosen, null, "the step drew a token");
  assert.equal(r.inside?.token_is_chosen, true, `the inside shown follows the drawn token: ${JSON.stringify(r)}`);
  assert.equal(r.inside.token, r.chosen);
  assert.ok(r.same, "the inside shown is the step report's own");
  assert.deepEqual(errors, []);
  await page.close();
});

test("a Run reads the lens a few times a second and on its last step; the panel keeps the last lens meanwhile", async () => {
  const { page, errors } = await open("model=bard&seed=1&nostop=1&max_new=48&panels=output,dist,inside");
  await insideShown(page);
  await page.evaluate(async () => {
    const { subscribe, view } = await import("./state/store.js");
    window.__lens = [];
    subscribe("inside", () => window.__lens.push({ n: view.inside?.lens.length ?? -1, kept: view.insideLens?.lens.length ?? -1 }));
  });
  await page.click("#btn-run");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length >= 48 && document.querySelector("#btn-run").textContent === "Run");
  const seen = await page.evaluate(() => window.__lens);
  const layers = (await reportAndPanels(page)).inside.layers;
  assert.equal(seen.length, 48, "one inside report per token");
  assert.ok(seen.some((x) => x.n === 0), "reports in between leave the lens out");
  assert.ok(seen.every((x) => x.kept === layers + 1), "a lens stays on show all along");
  assert.equal(seen[seen.length - 1].n, layers + 1, "the step max_new ends the run on has its lens");
  const r = await reportAndPanels(page);
  checkReport(r);
  checkLastLayerIsTheDistribution(r);
  assert.equal(await page.evaluate(async () => { const { view } = await import("./state/store.js"); return view.insideLens === view.inside; }), true);
  assert.deepEqual(errors, []);
  await page.close();
});

test("the layer and head move with the keyboard and the mouse; every number shows on focus", async () => {
  const { page, errors } = await open("model=bard&panels=dist,inside");
  await insideShown(page);
  const at = () => page.$eval("#p-inside .body", (b) => [Number(b.dataset.layer), Number(b.dataset.head)]);
  assert.deepEqual(await at(), [0, 0]);
  await page.focus("#p-inside .heat-wrap[data-grid=overview]");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowRight");
  assert.deepEqual(await at(), [2, 1], "overview: down = next layer, right = next head");
  await page.focus("#p-inside .heat-wrap[data-grid=layer]");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowLeft");
  assert.deepEqual(await at(), [1, 2], "the layer's grid: down = next head, left = previous layer");
  // The stepper's buttons and the heads' buttons, reached with Tab.
  await page.click("#p-inside [data-action=inside-layer][data-delta='1']");
  assert.deepEqual(await at(), [2, 2]);
  await page.focus("#p-inside [data-action=inside-pick-head][data-head='4']");
  await page.keyboard.press("Enter");
  assert.deepEqual(await at(), [2, 4]);
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement.dataset.head), "5", "Tab goes on to the next head");
  // The readout and the table give the chosen head's numbers.
  const r = await reportAndPanels(page);
  const a = r.inside.attention[2];
  assert.match(await page.textContent("#p-inside [data-slot=readout]"),
    new RegExp(`^Layer 2, head 4 reads KV head ${Math.floor(4 / (r.inside.heads / r.inside.kv_heads))} .*entropy ${a.entropy[4].toFixed(3)} nats`));
  const cells = await page.$$eval("#p-inside .inside-heads tbody tr.selected td", (tds) => tds.map((t) => t.textContent));
  assert.equal(cells[1], a.entropy[4].toFixed(3));
  // The top 5 positions of the chosen head, most first, with their weights.
  const top = await page.$$eval("#p-inside .inside-top5 li", (li) => li.map((x) => [Number(x.dataset.pos), Number(x.dataset.w)]));
  assert.equal(top.length, Math.min(5, r.inside.query - a.first + 1));
  const n = r.inside.query - a.first + 1;
  const row = a.weights.slice(4 * n, 5 * n);
  assert.deepEqual(top.map(([p]) => p), row.map((w, i) => [w, i + a.first]).sort((x, y) => y[0] - x[0] || x[1] - y[1]).slice(0, 5).map(([, p]) => p));
  // The pointer over a cell: its group's weights on that position.
  const grid = await page.$("#p-inside .heat.overview");
  await grid.scrollIntoViewIfNeeded();
  const box = await grid.boundingBox();
  // The middle of the first row's first cell, from the grid's own geometry.
  const g = await grid.evaluate((s) => ({ labelW: Number(s.dataset.labelW), top: Number(s.dataset.top), cell: Number(s.dataset.cell), row: Number(s.dataset.row), vb: s.viewBox.baseVal.width }));
  const scale = box.width / g.vb;
  await page.mouse.move(box.x + (g.labelW + g.cell / 2) * scale, box.y + (g.top + g.row / 2) * scale);
  assert.match(await page.textContent("#p-inside [data-slot=readout]"), /^layer 0, position \d+ .*: KV head 0's heads put [\d.e-]+ on it on average \(head 0: /);
  await page.mouse.move(0, 0);
  assert.match(await page.textContent("#p-inside [data-slot=readout]"), /^Layer 2, head 4/);
  assert.deepEqual(errors, []);
  await page.close();
});

test("the toy models without layers say there is nothing inside; kv-demo's one layer is shown", async () => {
  for (const model of ["logits10", "bigram-abc"]) {
    const { page, errors } = await open(`model=${model}&panels=dist,inside`);
    await page.waitForSelector("#p-inside .body[data-state=no-layers]", { state: "attached" });
    assert.match(await page.textContent("#p-inside .inside-note"), /has no layers: .*nothing inside to show/);
    assert.equal(await page.evaluate(async () => (await import("./state/store.js")).view.report.inside), null);
    assert.deepEqual(forgiveAbsentIndex(errors), []);
    await page.close();
  }
  const { page, errors } = await open("model=kv-demo&prompt=abc&panels=dist,inside");
  await insideShown(page);
  const r = await reportAndPanels(page);
  checkReport(r);
  checkLastLayerIsTheDistribution(r);
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});

test("an embed shows the inside panel; it saves as SVG and PNG", async () => {
  const { page, errors } = await open("model=bard&embed=1&panels=dist,inside", { width: 720, height: 900 });
  await insideShown(page);
  const visible = await page.$$eval("section.panel", (els) => els.filter((e) => e.offsetParent !== null).map((e) => e.id));
  assert.deepEqual(visible, ["p-dist", "p-inside"]);
  checkLastLayerIsTheDistribution(await reportAndPanels(page));
  const [svg] = await Promise.all([page.waitForEvent("download"), page.click("#p-inside .fig-buttons button:has-text(\"SVG\")")]);
  assert.equal(svg.suggestedFilename(), "next-token-inside.svg");
  const [png] = await Promise.all([page.waitForEvent("download"), page.click("#p-inside .fig-buttons button:has-text(\"PNG\")")]);
  assert.equal(png.suggestedFilename(), "next-token-inside.png");
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});

test("a phone shows one layer at a time: the stepper, the chosen layer's grid and lens row", async () => {
  const { page, errors } = await open("model=bard&panels=output,dist,inside", { width: 390, height: 844 });
  await insideShown(page);
  assert.equal(await page.isVisible("#p-inside .inside-overview"), false, "every layer's grid is left out");
  assert.equal(await page.isVisible("#p-inside .heat.layer-heads"), true);
  const shownRows = () => page.$$eval("#p-inside .lens-table tbody tr", (rs) => rs.filter((r) => r.offsetParent !== null).map((r) => Number(r.dataset.lens)));
  const r = await reportAndPanels(page);
  const expect = (layer) => [...new Set([layer + 1, r.inside.top1_from, r.inside.layers])].sort((a, b) => a - b);
  assert.deepEqual(await shownRows(), expect(0), "the chosen layer's row, the one marked ★ and the last");
  await page.click("#p-inside [data-action=inside-layer][data-delta='1']");
  assert.deepEqual(await shownRows(), expect(1));
  const width = await page.$eval("#p-inside", (el) => el.scrollWidth <= el.clientWidth + 1);
  assert.ok(width, "nothing wider than the phone");
  await page.locator("#p-inside").scrollIntoViewIfNeeded();
  await screenshot(page, "inside-panel-bard-390");
  assert.deepEqual(errors, []);
  await page.close();
});

/**
 * A synthetic InsideReport (runs in the page): `layers` layers of 4 query
 * heads over 2 KV heads, the layers in `windows` local with that window.
 */
function synthInside({ layers, query, windows }) {
  let seed = 7;
  const rnd = () => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed / 2 ** 32; };
  const heads = 4;
  const attention = Array.from({ length: layers }, (_, l) => {
    const win = windows[l] ?? null;
    const first = win ? Math.max(0, query - win + 1) : 0;
    const n = query - first + 1;
    const w = new Float32Array(heads * n);
    for (let h = 0; h < heads; h++) {
      let s = 0;
      for (let i = 0; i < n; i++) { w[h * n + i] = rnd(); s += w[h * n + i]; }
      for (let i = 0; i < n; i++) w[h * n + i] /= s;
    }
    return { layer: l, window: win, first, weights: w, entropy: [1, 1, 1, 1], sink: [0, 0, 0, 0] };
  });
  const lens = Array.from({ length: layers + 1 }, (_, l) => ({ layer: l, top: [{ id: 1, display: "x", prob: 0.5 }], entropy: 1,
    token_rank: 1, token_prob: 0.5, raw_top_rank: 1, raw_top_prob: 0.5 }));
  return { query, cache_start: 0, layers, heads, kv_heads: 2, token: { id: 1, display: "x" }, token_is_chosen: false, raw_prob: 0.5,
    raw_top: { id: 1, display: "x" }, attention, lens, top1_from: 0 };
}

test("the painter hatches what a local layer's window leaves unread, and groups a long text's positions into columns", async () => {
  const { page, errors } = await open("model=logits10");
  await page.evaluate(`window.__synth = ${synthInside.toString()}`);
  const grid = (opts) => page.evaluate(async (o) => {
    const { renderInside } = await import("./render/inside.js");
    const root = document.createElement("div");
    document.body.append(root);
    const inside = window.__synth(o);
    renderInside(root, { inside, info: { kind: "transformer", layers: o.layers, name: "synthetic" }, tokens: [], focus: { layer: 0, head: 0 }, hover: null });
    const svg = root.querySelector(".heat.overview");
    const cells = (sel) => (svg.querySelector(sel).getAttribute("d").match(/M/g) ?? []).length;
    const out = { rows: Number(svg.dataset.rows), cols: Number(svg.dataset.cols), notRead: cells(".not-read"), read: cells(".read"),
      chipsNotRead: root.querySelectorAll(".att-tok.not-read").length };
    root.remove();
    return out;
  }, opts);
  // 31 positions: layers 1 and 3 read the last 8 (2 KV-head rows each): 23 positions unread per row.
  let g = await grid({ layers: 4, query: 30, windows: { 1: 8, 3: 8 } });
  assert.deepEqual(g, { rows: 8, cols: 31, notRead: 4 * 23, read: 8 * 31 - 4 * 23, chipsNotRead: 0 });
  // 700 positions in columns of 6: a window of 512 leaves the first 188 positions, 31 whole columns, unread.
  g = await grid({ layers: 2, query: 699, windows: { 0: 512 } });
  assert.equal(g.cols, Math.ceil(700 / 6));
  assert.equal(g.notRead, 2 * Math.floor(188 / 6));
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});

test("where the answer forms: the lesson shows the layer where ␣Paris becomes the top token, as SmolLM2's lens says", { timeout: 300000 }, async (t) => {
  if (!needSmollm2(t)) return;
  const { page, errors } = await open("lesson=answer-forms", { timeout: 240000 });
  await insideShown(page, 120000);
  await page.waitForSelector("#p-lesson .body[data-ready='1']");
  await page.waitForSelector("#p-lesson [data-num=top1_from]");
  const r = await reportAndPanels(page);
  checkReport(r);
  checkLastLayerIsTheDistribution(r);
  assert.equal(r.inside.raw_top.display, "␣Paris", "SmolLM2's greedy answer");
  const shown = Object.fromEntries(await page.$$eval("#p-lesson [data-num]", (els) => els.map((e) => [e.dataset.num, e.textContent])));
  assert.equal(shown.top, "␣Paris");
  assert.equal(Number(shown.top1_from), r.inside.top1_from, "the lesson's layer is the lens's");
  assert.equal(shown.p_last, r.inside.lens[r.inside.layers].raw_top_prob.toFixed(6));
  assert.equal(await page.$eval("#p-lesson [data-figure=answer-forms] > div", (d) => Number(d.dataset.top1From)), r.inside.top1_from);
  assert.equal(r.headFrom, r.inside.top1_from, "the inside panel marks the same layer");
  const visible = await page.$$eval("section.panel", (els) => els.filter((e) => !e.hidden).map((e) => e.id.replace(/^p-/, "")));
  for (const p of ["output", "dist", "inside", "controls"]) assert.ok(visible.includes(p), `${p} shown`);
  await screenshot(page, "inside-answer-forms-1280");
  assert.deepEqual(errors, []);
  await page.close();
});

test("Gemma 3's local layers leave a 600-token prompt's first positions unread; its global layers read them all", { timeout: 600000 }, async (t) => {
  if (!needGemma3(t)) return;
  const words = Array.from({ length: 700 }, (_, i) => ["the", "river", "ran", "past", "old", "stone", "mills"][i % 7]).join(" ");
  const { page, errors } = await open(`model=gemma3-270m&panels=dist,kv,inside&prompt=${encodeURIComponent(words)}`, { timeout: 480000 });
  await insideShown(page, 120000);
  const r = await reportAndPanels(page);
  assert.ok(r.inside.query >= 600, `${r.inside.query + 1} tokens in the prompt`);
  const local = new Set(r.info.sliding_window.local_layers);
  for (const a of r.inside.attention) {
    if (local.has(a.layer)) {
      assert.equal(a.window, r.info.sliding_window.size);
      assert.equal(a.first, r.inside.query - a.window + 1, `local layer ${a.layer} reads only its window`);
      assert.ok(a.sink.every((s) => s === 0), "the first token is outside its window");
    } else {
      assert.equal(a.window, null);
      assert.equal(a.first, r.inside.cache_start, `global layer ${a.layer} reads every position`);
    }
  }
  checkReport(r);
  checkLastLayerIsTheDistribution(r);
  // The grid: a local layer's row is hatched before its window, a global one's is not.
  const rows = await page.evaluate(() => {
    const svg = document.querySelector("#p-inside .heat.overview");
    return { notRead: (svg.querySelector(".not-read").getAttribute("d").match(/M/g) ?? []).length, cols: Number(svg.dataset.cols) };
  });
  assert.ok(rows.notRead > 0, "the local layers' unread positions are drawn");
  // The chosen (local) layer's text: the early tokens are marked as not read.
  const firstLocal = [...local][0];
  for (let l = 0; l < firstLocal; l++) await page.click("#p-inside [data-action=inside-layer][data-delta='1']");
  assert.ok(await page.$$eval("#p-inside .att-tok.not-read", (els) => els.length) > 0, "tokens outside the window are marked");
  await screenshot(page, "inside-gemma3-long-prompt");
  assert.deepEqual(errors, []);
  await page.close();
});
