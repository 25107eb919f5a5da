// Hostile and odd links: unknown and duplicated URL parameters are named and
// ignored; the parameters the page reads are the README's table; a
// 20,000-character prompt opens, and the links the page writes stay under
// 8 KB (leaving the prompt out, and saying so). www/state/url.js runs here in
// node (it is pure), and the page in Chromium.
//
// Run: pkg-scripts/build, then node --test tests/e2e/url-params.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { readFile } from "node:fs/promises";
import { startSuite, stopSuite, openPage, waitForReady, forgiveAbsentIndex, REPO_ROOT, WWW_ROOT } from "./harness.mjs";
import { CONTENT_SECURITY_POLICY } from "../../pkg-scripts/static-server.mjs";
import { parseQuery, formatQuery, formatLink, KNOWN_PARAMETERS, MAX_LINK_QUERY } from "../../www/state/url.js";

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => ({ server, browser } = await startSuite()));
after(() => stopSuite({ server, browser }));

test("unknown parameters are named and ignored; a duplicate uses the first; stop may repeat", () => {
  const { state, problems } = parseQuery("?model=logits10&temprature=2&foo=1&seed=3&seed=4&seed=5&stop=A&stop=B");
  assert.deepEqual(problems, [
    "unknown URL parameters temprature, foo: ignored (the README lists the ones the page reads)",
    "seed is given 3 times; using the first (3)",
  ]);
  assert.equal(state.model, "logits10");
  assert.equal(state.settings.seed, 3);
  assert.equal(state.settings.temperature, parseQuery("").state.settings.temperature, "the misspelt one changed nothing");
  assert.deepEqual(state.settings.stop, ["A", "B"]);

  // A hostile name is shortened in the message, and many are counted, not listed.
  const long = "x".repeat(500);
  const many = parseQuery(`?${long}=1&a1=1&a2=1&a3=1&a4=1&a5=1&a6=1`).problems;
  assert.equal(many.length, 1);
  assert.ok(many[0].length < 200, many[0]);
  assert.match(many[0], /^unknown URL parameters x{40}…, a1, a2, a3, a4 and 2 more: ignored/);
  assert.deepEqual(parseQuery("?model=bard&steps=2&tour=0&bench=1").problems, []);
});

test("the parameters the page reads are exactly the README's table", async () => {
  const readme = await readFile(path.join(REPO_ROOT, "README.md"), "utf8");
  const table = readme.slice(readme.indexOf("| parameter | meaning |"), readme.indexOf("Every panel has"));
  const documented = new Set([...table.matchAll(/^\| ([^|]+) \|/gm)].flatMap((m) => [...m[1].matchAll(/`([a-z_]+)`/g)].map((x) => x[1])));
  assert.ok(documented.size > 20, `the table was found (${documented.size} names)`);
  assert.deepEqual([...documented].sort(), [...KNOWN_PARAMETERS].sort());
});

test("every parameter the page writes is one it reads back, to the same view", () => {
  const { state } = parseQuery("?model=bard&prompt=ROMEO%3A&temperature=0.5&top_k=3&top_p=0.9&min_p=0.05&repetition_penalty=1.3" +
    "&penalty_window=4&penalty_mode=per_occurrence&presence_penalty=0.5&frequency_penalty=-0.5&banned=3,17&bias=3:1.5,17:-2" +
    "&order=llama&seed=9&max_new=40&stop=KING&stop=QUEEN&use_cache=0&chat=1&steps=4&show=next&embed=1&panels=dist,rules" +
    "&beams=3&alpha=0.8&beam_len=5&bias_amount=2&kv_type=f16");
  assert.equal(state.kv, "f16");
  const query = formatQuery(state);
  const again = parseQuery(query);
  assert.deepEqual(again.problems, []);
  assert.deepEqual(again.state, state);
  assert.deepEqual(formatQuery({ ...state, logits: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], settings: { ...state.settings, stop: [] } })
    .match(/[?&](logits|nostop)=/g), ["&nostop=", "&logits="]);
});

test("links stay under 8 KB: a 20,000-character prompt is left out, with its steps, and nothing else", () => {
  const prompt = "To be, or not to be, that is the question: ".repeat(500).slice(0, 20000);
  const { state } = parseQuery(`?${new URLSearchParams({ prompt, temperature: "0.5", steps: "3", show: "next", top_k: "5" })}`);
  assert.equal(state.prompt.length, 20000, "a long prompt is read in full");
  assert.ok(formatQuery(state).length > 20000);
  const { query, omitted } = formatLink(state);
  assert.deepEqual(omitted, ["prompt"]);
  assert.ok(query.length <= MAX_LINK_QUERY);
  assert.equal(query, "?temperature=0.5&top_k=5", "the rest of the view stays in the link");

  // Characters, not bytes, are what a prompt is measured in: 1,000 CJK
  // characters are 9,000 characters of percent-encoding.
  const cjk = formatLink({ ...state, prompt: "語".repeat(1000), steps: 0, next: false });
  assert.deepEqual(cjk.omitted, ["prompt"]);
  // A view that fits is linked in full.
  const short = { ...state, prompt: "ROMEO:" };
  assert.deepEqual(formatLink(short), { query: formatQuery(short), omitted: [] });
  // Long stop strings go after the prompt, when the prompt alone is not enough.
  const stops = formatLink({ ...short, settings: { ...short.settings, stop: ["x".repeat(4000), "y".repeat(4000)] } });
  assert.deepEqual(stops.omitted, ["prompt", "stop strings"]);
  assert.ok(stops.query.length <= MAX_LINK_QUERY);
});

test("the page opens a 20,000-character prompt link, says what it ignored and left out, and stays usable", async () => {
  const prompt = "ROMEO: " + "But soft, what light through yonder window breaks? ".repeat(400).slice(0, 19993);
  const query = `?${new URLSearchParams({ prompt, temperature: "0.5", foo: "1", tour: "0" })}&seed=3&seed=4`;
  assert.ok(query.length > 20000);
  // Our own server refuses a request line that long (node's 16 KB header
  // limit), as many static hosts do: that is why the page writes short links.
  const refused = await fetch(new URL(`index.html${query}`, server.url));
  assert.equal(refused.status, 431);
  // A host that takes it: the document is answered here, with the page's own file.
  const { page, errors } = await openPage(browser, "about:blank");
  await page.route((url) => url.pathname.endsWith("/index.html") && url.search.length > 8192,
    (route) => route.fulfill({ path: path.join(WWW_ROOT, "index.html"), headers: { "content-security-policy": CONTENT_SECURITY_POLICY } }));
  await page.goto(new URL(`index.html${query}`, server.url).href);
  const says = (re) => page.waitForFunction((src) => [...document.querySelectorAll("#messages .message span")]
    .some((e) => new RegExp(src).test(e.textContent)), re.source, { timeout: 60000 });
  await says(/^unknown URL parameter foo: ignored \(the README lists the ones the page reads\)$/);
  await says(/^seed is given 2 times; using the first \(3\)$/);
  // bard's context is 128 tokens: the page says the model reads the prompt's
  // last 96 (the sliding window's three quarters), and the distribution shows.
  await says(/^The prompt has \d+ tokens, more than the model's context holds: it reads only the last 96 /);
  await page.waitForSelector("body[data-ready=true]", { state: "attached", timeout: 60000 });
  await says(/leave out the prompt \(20,000 characters\); whoever opens them gets the model's default prompt/);
  await page.waitForFunction(() => document.body.dataset.urlPending !== "true");
  const link = new URLSearchParams(await page.evaluate(() => location.search));
  assert.ok(link.toString().length <= 7500, `the address is ${link.toString().length} characters`);
  assert.equal(link.get("prompt"), null);
  assert.equal(link.get("temperature"), "0.5");
  assert.equal(link.get("seed"), "3");
  assert.equal(link.has("foo"), false, "an ignored parameter is not written back");
  assert.equal(await page.inputValue("#prompt"), prompt, "the prompt itself is kept on the page");
  // The embed code is under the same limit.
  await page.click("#btn-embed");
  const snippet = await page.inputValue("#embed-code");
  assert.ok(snippet.length < 8192 && snippet.includes("embed=1") && !snippet.includes("prompt="), snippet.slice(0, 300));

  // Usable: a prompt that fits makes the page ready, Step draws, and the link is whole again.
  await page.fill("#prompt", "ROMEO:");
  await page.waitForSelector("body[data-ready=true]", { state: "attached", timeout: 60000 });
  await page.waitForFunction(() => !document.querySelector("#messages [data-key=link-too-long]"));
  await page.waitForFunction(() => new URLSearchParams(location.search).get("prompt") === "ROMEO:");
  assert.match(await page.textContent("#p-dist [data-slot=head]"), /p_max = 0\.\d+/);
  await page.click("#btn-step");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok").length === 1, null, { timeout: 60000 });
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();
});

test("kv_type picks the KV cache's numbers: the KV panel counts 2 or 4 bytes, the Model panel switches and reloads, a bad value is said", async () => {
  assert.deepEqual(parseQuery("?kv_type=f64").problems, ["kv_type=f64 must be f16 or f32; using the model's own"]);
  assert.equal(parseQuery("?kv_type=f64").state.kv, null);
  const { page, errors } = await openPage(browser, new URL("index.html?model=bard&kv_type=f16&steps=2&tour=0", server.url).href);
  await waitForReady(page);
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok[data-step]").length >= 2);
  const kvText = () => page.textContent("#p-kv");
  // bard: 4 layers, 2 KV heads of 32 numbers: a token's keys and values are
  // 2 · 4 · 2 · 32 numbers, 1.0 KiB in f16 and 2.0 KiB in f32 (KV-size formula, lesson 21).
  assert.match(await kvText(), /· 2 B; 1\.0 KiB per token/);
  assert.equal(await page.inputValue("#kv-type-select"), "f16");
  await page.selectOption("#kv-type-select", "f32");
  await page.waitForFunction(() => /· 4 B; 2\.0 KiB per token/.test(document.querySelector("#p-kv").textContent), null, { timeout: 60000 });
  await page.waitForFunction(() => new URLSearchParams(location.search).get("kv_type") === "f32");
  await page.waitForFunction(() => document.querySelectorAll("#p-output .tok[data-step]").length >= 2, null, { timeout: 60000 });
  // The model's own (f32 for bard): the parameter leaves the link.
  await page.selectOption("#kv-type-select", "");
  await page.waitForFunction(() => !new URLSearchParams(location.search).has("kv_type"));
  await page.waitForFunction(() => /· 4 B; 2\.0 KiB per token/.test(document.querySelector("#p-kv").textContent));
  // The course models keep theirs: no choice is offered for them.
  await page.selectOption("#model-select", "kv-demo");
  await page.waitForFunction(() => document.querySelector("#kv-type-row").hidden);
  assert.deepEqual(forgiveAbsentIndex(errors), []);
  await page.close();

  const bad = await openPage(browser, new URL("index.html?model=bard&kv_type=f64&tour=0", server.url).href);
  await waitForReady(bad.page);
  await bad.page.waitForFunction(() => [...document.querySelectorAll("#messages .message span")].some((e) => e.textContent.startsWith("kv_type=f64 must be f16 or f32")));
  assert.match(await bad.page.textContent("#p-kv"), /· 4 B;/);
  await bad.page.close();
});
