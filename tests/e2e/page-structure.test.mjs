// The page's module graph: the page a student opens loads no bench code and
// keeps no timing records, the benchmarks' ?bench=1 switches them on,
// index.html preloads every module of the page's first graph (so it loads in
// one round of requests, not one level of imports at a time), each with
// Chromium's compile hint, and neither preloads nor hints the parts loaded
// after it (later.js), no import
// cycle appears in any folder, the folders depend one way, and only the
// store writes the page's state.
//
// Run: pkg-scripts/build, then node --test tests/e2e/page-structure.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { readFile } from "node:fs/promises";
import { WWW_ROOT, startSuite, stopSuite, openPage, waitForReady, pageModules } from "./harness.mjs";

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => ({ server, browser } = await startSuite()));
after(() => stopSuite({ server, browser }));

/**
 * Open the page and list the .js files it requested.
 * @param {string} query
 */
async function openRecording(query) {
  const { page, errors } = await openPage(browser, "about:blank");
  /** @type {string[]} */
  const scripts = [];
  page.on("request", (req) => {
    const u = new URL(req.url());
    if (u.pathname.endsWith(".js")) scripts.push(u.pathname.replace(/^\//, ""));
  });
  await page.goto(new URL(`index.html${query}`, server.url).href);
  await waitForReady(page);
  return { page, errors, scripts };
}

test("the student's page loads no bench code and keeps no timing records", async () => {
  const { page, errors, scripts } = await openRecording("?model=logits10");
  await page.focus("#ctl-temperature-range");
  await page.keyboard.press("ArrowRight");
  await page.waitForFunction(() => new URLSearchParams(location.search).get("temperature") === "1.01");
  assert.ok(!scripts.includes("bench/bench.js"), `bench/bench.js was requested: ${scripts.join(", ")}`);
  const globals = await page.evaluate(() => Object.keys(window).filter((k) => k.startsWith("__ntp")));
  assert.deepEqual(globals, []);
  assert.deepEqual(errors, []);
  await page.close();
});

test("?bench=1 loads bench/bench.js, which records the load milestones and slider timings", async () => {
  const { page, errors, scripts } = await openRecording("?model=logits10&bench=1");
  assert.ok(scripts.includes("bench/bench.js"));
  await page.waitForSelector("body[data-local-preview=true]", { state: "attached", timeout: 30000 });
  await page.focus("#ctl-temperature-range");
  for (let i = 0; i < 3; i++) {
    const n = await page.evaluate(() => window.__ntpPerfPainted.length);
    await page.keyboard.press("ArrowRight");
    await page.waitForFunction((k) => window.__ntpPerfPainted.length > k, n);
  }
  const rec = await page.evaluate(() => ({ load: window.__ntpLoad, perf: window.__ntpPerf, painted: window.__ntpPerfPainted }));
  for (const k of ["boot", "controls", "catalogue", "load_sent", "ready", "first_report", "first_render"]) {
    assert.equal(typeof rec.load[k], "number", `__ntpLoad.${k}`);
  }
  // The catalogue is read first; a built-in model's load (nothing to ask the
  // server first) goes out before the controls are built, not after them.
  assert.ok(rec.load.boot <= rec.load.catalogue && rec.load.catalogue <= rec.load.load_sent && rec.load.load_sent <= rec.load.controls &&
    rec.load.load_sent <= rec.load.ready && rec.load.ready <= rec.load.first_report && rec.load.first_report <= rec.load.first_render,
    `milestones in order: ${JSON.stringify(rec.load)}`);
  assert.equal(typeof rec.load.worker?.build_ms, "number", "the worker's stage durations");
  assert.equal(rec.perf.length, 3);
  assert.equal(rec.painted.length, 3);
  rec.perf.forEach((t, i) => assert.ok(t >= 0 && t <= rec.painted[i], `frame start ${t} before painted ${rec.painted[i]}`));
  assert.deepEqual(errors, []);
  await page.close();
});

/**
 * The relative imports of a module, static and dynamic ("./x.js", import("../y.js")),
 * as paths relative to www/; the built engine (pkg/) is left out.
 * @param {string} rel
 * @returns {Promise<string[]>}
 */
async function importsOf(rel) {
  const text = await readFile(path.join(WWW_ROOT, rel), "utf8");
  const specs = [
    ...[...text.matchAll(/^import\s[^;]*?from\s+"(\.{1,2}\/[^"]+)";/gm)].map((m) => m[1]),
    ...[...text.matchAll(/\bimport\("(\.{1,2}\/[^"?]+)(?:\?[^"]*)?"\)/g)].map((m) => m[1]),
  ];
  return specs.map((s) => path.posix.normalize(path.posix.join(path.posix.dirname(rel), s))).filter((d) => !d.startsWith("pkg/"));
}

test("the page's modules import each other without a cycle, in every folder", async () => {
  const modules = await pageModules();
  // The walk itself: the folders are there, and each holds modules.
  for (const dir of ["worker", "engine", "state", "controls", "panels", "render", "lessons", "bench", "embed"]) {
    assert.ok(modules.some((m) => m.startsWith(`${dir}/`)), `modules in www/${dir}/`);
  }
  /** @type {Map<string, string[]>} */
  const graph = new Map();
  for (const m of modules) graph.set(m, await importsOf(m));
  for (const [m, deps] of graph) {
    for (const d of deps) assert.ok(graph.has(d), `${m} imports ${d}, which is not a module of www/`);
  }
  const seen = new Map(); // 1: on the path, 2: done
  const visit = (node, trail) => {
    if (seen.get(node) === 2) return;
    assert.notEqual(seen.get(node), 1, `import cycle: ${[...trail, node].join(" → ")}`);
    seen.set(node, 1);
    for (const dep of graph.get(node) ?? []) visit(dep, [...trail, node]);
    seen.set(node, 2);
  };
  for (const node of graph.keys()) visit(node, []);
});

/**
 * The page's folders from the bottom up: a module imports from its own folder
 * or from a folder lower down, never higher, so a change travels one way
 * (a control -> the store -> the engine -> the painter). The worker's thread
 * imports nothing of the page; the page takes from worker/ only its shared
 * leaves: the model cache's names, what "auto" threads means, and how the
 * engine's worker and its helper threads are started.
 */
const SHARED_LEAVES = ["worker/model-cache.js", "worker/thread-count.js", "worker/engine-worker.js"];
const LAYERS = [["state"], ["render"], ["panels"], ["engine"], ["controls", "lessons", "embed", "bench"], ["."]];

test("the folders depend one way: state <- render <- panels <- engine <- controls, lessons, embed, bench <- main.js", async () => {
  const rank = (rel) => {
    const dir = rel.includes("/") ? rel.split("/")[0] : ".";
    return LAYERS.findIndex((layer) => layer.includes(dir));
  };
  const found = [];
  for (const rel of await pageModules()) {
    const dir = rel.includes("/") ? rel.split("/")[0] : ".";
    for (const dep of await importsOf(rel)) {
      const depDir = dep.includes("/") ? dep.split("/")[0] : ".";
      if (dir === "worker" || depDir === "worker") {
        if (dir !== depDir && !SHARED_LEAVES.includes(dep)) found.push(`${rel} -> ${dep}`);
        continue;
      }
      if (rank(rel) < 0 || rank(dep) < 0) { found.push(`${rel} -> ${dep} (a folder with no layer)`); continue; }
      if (dir !== depDir && rank(dep) >= rank(rel)) found.push(`${rel} -> ${dep}`);
    }
  }
  assert.deepEqual(found, [], "imports against the direction");
});

/**
 * The lines of a module that change one of `names` (an assignment to a field,
 * a delete, or an array method that changes it in place).
 * @param {string} source
 * @param {string[]} names
 */
function writesTo(source, names) {
  const obj = `(?:${names.join("|")})`;
  const write = new RegExp(
    `(?<![\\w$.])${obj}(?:\\.[\\w$]+|\\[[^\\]]+\\])+\\s*(?:=(?!=)|\\+=|-=|\\?\\?=|\\|\\|=|&&=|\\+\\+|--)` +
    `|(?<![\\w$.])${obj}(?:\\.[\\w$]+)*\\.(?:push|pop|shift|unshift|splice|sort|reverse|fill)\\(` +
    `|\\bdelete\\s+${obj}\\.|Object\\.assign\\(\\s*${obj}\\b`);
  return source.split("\n").filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line) && write.test(line));
}

test("the state changes in one place: no module but state/store.js writes the store's objects", async () => {
  // The detector itself: each kind of write is caught, a read or a comparison is not.
  for (const bad of ["state.steps = 0;", "view.ready = true", "state.settings[key] = v", "catalogue.models.push(x)",
    "Object.assign(state, fresh)", "view.beamBusy ||= true", "state.settings.banned.splice(0, 1)", "delete view.info"]) {
    assert.equal(writesTo(bad, ["state", "view", "catalogue"]).length, 1, bad);
  }
  assert.deepEqual(writesTo("if (state.steps === 0) x = view.ready;\n// state.steps = 1\nconst s = state.settings;", ["state", "view", "catalogue"]), []);

  const found = [];
  let importers = 0;
  for (const rel of await pageModules()) {
    if (rel === "state/store.js") continue;
    const text = await readFile(path.join(WWW_ROOT, rel), "utf8");
    const names = [];
    for (const m of text.matchAll(/^import\s*\{([^}]*)\}\s*from\s+"([^"]+)";/gm)) {
      if (!path.posix.normalize(path.posix.join(path.posix.dirname(rel), m[2])).endsWith("state/store.js")) continue;
      for (const n of m[1].split(",").map((x) => x.trim())) {
        const [name, local = name] = n.split(/\s+as\s+/);
        if (["state", "view", "catalogue"].includes(name)) names.push(local);
      }
    }
    for (const m of text.matchAll(/^import\s*\*\s*as\s+([\w$]+)\s+from\s+"([^"]+)";/gm)) {
      if (path.posix.normalize(path.posix.join(path.posix.dirname(rel), m[2])).endsWith("state/store.js")) {
        names.push(...["state", "view", "catalogue"].map((n) => `${m[1]}\\.${n}`));
      }
    }
    if (!names.length) continue;
    importers++;
    for (const line of writesTo(text, names)) found.push(`${rel}: ${line.trim()}`);
  }
  assert.ok(importers >= 10, `the store's readers were found (${importers})`);
  assert.deepEqual(found, []);
});

test("index.html preloads every module of the page's first graph, and the later parts stay out of it", async () => {
  const html = await readFile(path.join(WWW_ROOT, "index.html"), "utf8");
  const preloaded = new Set([...html.matchAll(/<link rel="modulepreload" href="\.\/([^"]+)">/g)].map((m) => m[1]));
  // Walk the static imports from main.js (bench/bench.js is imported dynamically, only with
  // ?bench=1; later.js once the first distribution is drawn).
  const seen = new Set();
  const walk = async (rel) => {
    if (seen.has(rel)) return;
    seen.add(rel);
    const text = await readFile(path.join(WWW_ROOT, rel), "utf8");
    for (const m of text.matchAll(/^import\s[^;]*?from\s+"(\.{1,2}\/[^"]+)";/gm)) {
      await walk(path.posix.normalize(path.posix.join(path.posix.dirname(rel), m[1])));
    }
  };
  await walk("main.js");
  // What later.js holds must not creep back into the first graph: the
  // first distribution would wait for it again.
  for (const later of ["later.js", "render/compare.js", "render/inside.js", "lessons/presets.js", "panels/tour.js", "controls/config-io.js"]) {
    assert.ok(!seen.has(later), `${later} is in main.js's static graph`);
  }
  const missing = [...seen].filter((m) => !preloaded.has(m));
  assert.deepEqual(missing, [], "modules imported but not preloaded");
  const extra = [...preloaded].filter((m) => !seen.has(m));
  assert.deepEqual(extra, [], "modules preloaded but not imported");
  // Chromium compiles a module's functions with it when its first line is this
  // hint (index.html says what that saved); the first graph runs at load, the
  // later parts do not, so they are compiled at their first call.
  const HINT = "//# allFunctionsCalledOnLoad";
  const firstLine = async (rel) => (await readFile(path.join(WWW_ROOT, rel), "utf8")).split("\n", 1)[0];
  // engine-settings.js is the engine's output byte for byte (crate/tests/settings_table.rs),
  // a table with no functions to compile.
  const unhinted = [];
  for (const rel of seen) if (rel !== "state/engine-settings.js" && (await firstLine(rel)) !== HINT) unhinted.push(rel);
  assert.deepEqual(unhinted, [], "first-graph modules without the compile hint on their first line");
  for (const later of ["later.js", "render/compare.js", "render/inside.js", "lessons/presets.js"]) {
    assert.notEqual(await firstLine(later), HINT, `${later} loads after the first distribution: no compile hint`);
  }
});
