// The wasm engine's own speed in headless Chromium, one thread, measured the
// way `nexttoken bench` and pkg-scripts/bench-llamacpp measure natively:
// building the model from its files, prefill of a P-token prompt in one batch
// from an empty cache, and D decode steps one at a time after that prompt
// (each `Playground.step` is the model call plus the step's report over the
// whole vocabulary, as the page uses it), medians of repeats after warm-up
// runs of each (one prefill; decode runs until 1 s of them has passed: V8
// runs a wasm function as baseline code until its optimised code is
// compiled on a background thread, which on a loaded machine took the first
// 2-3 of 9 bard decode repeats, at a fifth of the later speed) (on a toy model a repeat runs its measure until 50 ms have
// passed, as the browser's clock ticks in 0.1 ms). P and D are 64 and 128, shortened to fit the model's
// context (bench-common.mjs). Also `Playground.preview` alone (the rules and
// report over the vocabulary, no model call: the part of a step that is not
// the model), and the tab's memory: the renderer's VmRSS after the load, and
// with --memory-tokens=T (default 1024, when the context holds them) VmRSS and
// the process's peak VmHWM once the cache holds T tokens (a prompt of T - 24
// tokens, then decode steps), and the peak of its private memory (RssAnon,
// sampled every 25 ms from before the load: what Chrome's task manager
// counts as a tab's memory footprint, without Chromium's
// shared library pages that VmRSS counts in every process). With --inside,
// the decode steps again with the inside view on (`set_inside(true)`: each
// step also captures what its query read and runs the logit lens), in the
// same page, and their ratio (`inside_cost`, the step time with the view on
// over off). The figures are one JSON line, the last on stdout.
// Usage (after pkg-scripts/build):
//   node pkg-scripts/bench-engine-wasm.mjs [MODEL] [REPEATS] [--prefill=P] [--decode=D] [--memory-tokens=T] [--inside] [--wasm=simd128] [--json]
//   MODEL: a name from www/models/index.json (bard, smollm2-135m), a built-in
//   (logits10, bigram-abc, kv-demo) or a GGUF path under www/ (default: SmolLM2's file)
import { startServer, launchBrowser, rendererMemory, watchRendererMemory } from "../tests/e2e/harness.mjs";
import { SMOLLM2_URL_PATH, BUILTINS, positionals, intOption, option, benchLengths, say } from "./bench-common.mjs";

const args = positionals();
const model = args.find((a) => !/^\d+$/.test(a)) ?? SMOLLM2_URL_PATH;
const repeats = Number(args.find((a) => /^\d+$/.test(a)) ?? 3);
const memoryTokens = intOption("memory-tokens", 1024);
/** Which engine module (www/worker/engine-wasm.js): the one the page would take, unless --wasm=simd128. */
const wasm = option("wasm", "");
const server = await startServer();
const browser = await launchBrowser();
const watch = watchRendererMemory(browser);
try {
  const page = await browser.newPage();
  page.on("console", (m) => {
    if (m.type() === "error" && !/favicon\.ico$/.test(m.location()?.url ?? "")) console.error(`page: ${m.text()}`);
  });
  // Any document of the server's origin will do: the engine is imported into it.
  await page.goto(`${server.url}models/index.json`);
  const loaded = await page.evaluate(loadModel, { model, builtins: BUILTINS, wasm });
  await page.evaluate(definePrompts);
  const afterLoad = await rendererMemory(browser);
  const lengths = benchLengths(loaded.info.context);
  const prefill = intOption("prefill", lengths.prefill, 1);
  const decode = intOption("decode", lengths.decode, 1);
  say(`${model}: built in ${loaded.build_s.toFixed(2)} s; timing prefill of ${prefill} tokens and ${decode} decode steps, ${repeats} repeats`);
  const inside = process.argv.includes("--inside") && loaded.info.kind === "transformer";
  const speed = await page.evaluate(measureSpeed, { prefill, decode, repeats, inside });
  let memory = null;
  if (memoryTokens > 24 && memoryTokens <= loaded.info.context && loaded.info.kind === "transformer") {
    say(`${model}: filling the cache to ${memoryTokens} tokens for the memory figure`);
    const filled = await page.evaluate(fillCache, { tokens: memoryTokens });
    const m = await rendererMemory(browser);
    const peak = await watch.stop();
    memory = { tokens: filled.kv_len, kv_bytes: filled.kv_bytes, tab_rss_mb: m?.rss ?? null, tab_peak_mb: m?.hwm ?? null,
      tab_private_mb: m?.anon ?? null, tab_private_peak_mb: peak.anon || null };
  }
  const figures = {
    engine: "nexttoken wasm (Chromium, 1 thread)", model, name: loaded.info.name, ...loaded, ...speed,
    tab_rss_after_load_mb: afterLoad?.rss ?? null, tab_peak_mb: (await rendererMemory(browser))?.hwm ?? null, memory,
  };
  say(`${model}: prefill ${speed.prefill_tok_s.toFixed(1)} tok/s, decode ${speed.decode_tok_s.toFixed(1)} tok/s, ` +
    `preview alone ${speed.preview_ms.toFixed(2)} ms; tab after load ${afterLoad?.rss?.toFixed(0)} MB` +
    (memory ? `, with ${memory.tokens} tokens cached ${memory.tab_rss_mb?.toFixed(0)} MB, peak ${memory.tab_peak_mb?.toFixed(0)} MB; ` +
      `private ${memory.tab_private_mb?.toFixed(0)} MB, peak ${memory.tab_private_peak_mb?.toFixed(0)} MB` : ""));
  console.log(JSON.stringify(figures)); // the last line on stdout, for pkg-scripts/bench
} finally {
  await watch.stop();
  await browser.close();
  await server.close();
}

/**
 * Runs in the page: builds the model into window.__pg, on the engine module
 * the page's worker would take (or the one `wasm` names).
 * @param {{ model: string, builtins: string[], wasm: string }} arg
 */
async function loadModel({ model, builtins, wasm }) {
  const mod = await import("/pkg/nexttoken.js");
  const { engineModuleKind, engineModuleUrl } = await import("/worker/engine-wasm.js");
  const search = wasm ? `?wasm=${wasm}` : "";
  await mod.default({ module_or_path: engineModuleUrl(search) });
  const get = async (url) => {
    const res = await fetch(url);
    if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status} (run pkg-scripts/fetch-smollm2 for SmolLM2)`);
    return res;
  };
  const t0 = performance.now();
  let build;
  if (builtins.includes(model)) {
    build = () => mod.Playground.builtin(model);
  } else {
    let gguf = model.endsWith(".gguf") ? model : null;
    let base = null;
    if (!gguf) {
      const index = await (await get("/models/index.json")).json();
      const entry = index.models.find((m) => m.name === model);
      if (!entry) throw new Error(`no model "${model}" in models/index.json, and not a built-in`);
      if (entry.gguf) gguf = `models/${entry.gguf}`;
      else base = `/models/${entry.path.replace(/[^/]+$/, "")}`;
    }
    if (gguf) {
      // As the worker loads it: streamed into the engine's memory, which the model keeps.
      const res = await get(`/${gguf}`);
      let file = new mod.FileBuffer(Number(res.headers.get("content-length")) || 0);
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        file.push(value);
      }
      build = () => { const pg = mod.Playground.from_gguf_buffer(file, gguf.split("/").pop()); file = null; return pg; };
    } else {
      const manifestText = await (await get(`${base}model.json`)).text();
      const manifest = JSON.parse(manifestText);
      const weights = new Uint8Array(await (await get(`${base}${manifest.weights}`)).arrayBuffer());
      const tokenizer = await (await get(`${base}${manifest.tokenizer}`)).text();
      build = () => mod.Playground.from_files(manifestText, weights, tokenizer);
    }
  }
  const t1 = performance.now();
  window.__pg = build();
  const t2 = performance.now();
  const info = window.__pg.info();
  return { wasm: engineModuleKind(search), fetch_s: (t1 - t0) / 1000, build_s: (t2 - t1) / 1000, info: { context: info.context, vocab_size: info.vocab_size, params: info.params ?? null, kind: info.kind } };
}

/**
 * Runs in the page: the settings every measure uses (greedy; the end token,
 * if any, banned so no run stops early) and window.__promptOf(n), a prompt
 * of exactly n tokens: one short text repeated, the first of a few that the
 * model's tokenizer splits into one token per repeat (after a BOS token, if
 * the file asks for one).
 */
function definePrompts() {
  const pg = window.__pg;
  const eos = pg.info().eos_id;
  window.__settings = { temperature: 0, max_new: 4096, stop: [], banned: eos === null || eos === undefined ? [] : [eos] };
  const candidates = [" the", " a", "a", ...pg.vocab_text().slice(0, 64)].filter((t) => t.length > 0);
  // A file that asks for BOS (Gemma) puts one token before the text.
  let unit = null, lead = 0;
  const count = (text) => {
    try { return pg.start(text, window.__settings).full.prompt_tokens.length; } catch { return -1; } // not in this vocabulary
  };
  window.__promptOf = (n) => {
    if (unit !== null) return unit.repeat(n - lead);
    for (const c of candidates) {
      const before = count(c) - 1;
      if (before < 0 || before >= n) continue;
      if (count(c.repeat(n - before)) === n) { unit = c; lead = before; return c.repeat(n - lead); }
    }
    throw new Error(`no text in [${candidates.slice(0, 5).join("|")}…] repeats into ${n} tokens`);
  };
}

/**
 * Runs in the page: prefill and decode speed, medians over `repeats`.
 * @param {{ prefill: number, decode: number, repeats: number }} arg
 */
function measureSpeed({ prefill, decode, repeats, inside }) {
  const pg = window.__pg;
  const settings = window.__settings;
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const prompt = window.__promptOf(prefill);
  // The browser's clock ticks in 0.1 ms: a repeat on a toy model runs its
  // measure as many times as it takes to fill MIN_MS, and counts them all.
  const MIN_MS = 50;
  const timedRepeat = (once) => {
    let tokens = 0, ms = 0;
    do { const t = once(); tokens += t.tokens; ms += t.ms; } while (ms < MIN_MS);
    return tokens / (ms / 1000);
  };
  const prefillOnce = () => {
    const s = performance.now();
    const rep = pg.start(prompt, settings);
    const ms = performance.now() - s;
    if (rep.full.prompt_tokens.length !== prefill) throw new Error(`the prompt is ${rep.full.prompt_tokens.length} tokens, not ${prefill}`);
    return { tokens: prefill, ms };
  };
  const decodeOnce = () => {
    pg.start(prompt, settings);
    const s = performance.now();
    for (let i = 0; i < decode; i++) {
      const rep = pg.step(settings);
      if (rep.stop && i < decode - 1) throw new Error(`decode stopped after ${i + 1} steps: ${rep.stop}`);
    }
    return { tokens: decode, ms: performance.now() - s };
  };
  prefillOnce(); // warm-up
  for (const w0 = performance.now(); performance.now() - w0 < 1000;) decodeOnce(); // warm-up (see the header)
  const prefillRuns = [];
  for (let r = 0; r < repeats; r++) prefillRuns.push(timedRepeat(prefillOnce));
  const decodeRuns = [];
  for (let r = 0; r < repeats; r++) decodeRuns.push(timedRepeat(decodeOnce));
  // The rules and the report over the whole vocabulary without the model:
  // what a step costs beyond the model call.
  const preview = [];
  for (let i = 0; i < 20; i++) {
    let n = 0;
    const s = performance.now();
    do { pg.preview(settings); n++; } while (performance.now() - s < 1);
    preview.push((performance.now() - s) / n);
  }
  const insideRuns = [];
  if (inside) {
    pg.set_inside(true);
    for (let r = 0; r < repeats; r++) insideRuns.push(timedRepeat(decodeOnce));
    pg.set_inside(false);
  }
  const withInside = inside
    ? { decode_inside_tok_s: median(insideRuns), decode_inside_tok_s_runs: insideRuns, inside_cost: median(decodeRuns) / median(insideRuns) }
    : {};
  return {
    ...withInside,
    prefill_tokens: prefill, prefill_tok_s: median(prefillRuns), prefill_tok_s_runs: prefillRuns,
    decode_tokens: decode, decode_tok_s: median(decodeRuns), decode_tok_s_runs: decodeRuns,
    decode_tok_s_best: Math.max(...decodeRuns), preview_ms: median(preview),
  };
}

/**
 * Runs in the page: the cache filled to `tokens`: a prompt of tokens - 24,
 * then decode steps until the cache holds `tokens` positions.
 * @param {{ tokens: number }} arg
 */
function fillCache({ tokens }) {
  const pg = window.__pg;
  const settings = window.__settings;
  let rep = pg.start(window.__promptOf(tokens - 24), settings);
  for (let i = 0; i < 48 && rep.kv.len < tokens; i++) rep = pg.step(settings);
  if (rep.kv.len !== tokens) throw new Error(`the cache holds ${rep.kv.len} tokens, not ${tokens}`);
  return { kv_len: rep.kv.len, kv_bytes: rep.kv.bytes };
}
