// Every measure of pkg-scripts/bench in one run (that script builds first and
// then runs this): each helper runs as its own process and prints its figures
// as one JSON line, collected here into one results object; then the tables
// (bench-report.mjs), the JSON file and, when there was one, the change since
// the previous run. One thread everywhere.
//
//   1. the engine in headless Chromium (bench-engine-wasm.mjs), every shipped
//      model: prefill and decode tokens/s; for the real (GGUF) models also
//      the tab's memory with 1,024 tokens in the cache
//   2. the engine natively (`nexttoken bench`), the same models and lengths;
//      each real model's peak RSS with 1,024 tokens in the cache
//   3. llama.cpp on each real model's GGUF (bench-llamacpp), the same lengths
//   4. the page (bench-page.mjs) on bard and the real models: slider move ->
//      frame, the first move after load apart, the browser's floor, Step -> token
//   5. open -> first distribution (bench-load.mjs), cold and warm, the same models
//   6. the wasm module's size, raw and gzipped
//   7. a blank page's tab memory (bench-blank-page.mjs): the browser's floor
//      under the tab figures
//   8. the playground tab's memory with each real model and 1,024 tokens
//      cached (bench-tab-memory.mjs), on the student's page
//   9. what the inside panel costs SmolLM2's Run (bench-inside.mjs): the
//      worker's time per token with the panel closed and open, on one page
//  10. what the page costs a Run (bench-page-run.mjs), each real model: the
//      page's Run with its default panels against the engine alone, in
//      alternating rounds in one browser
//  11. how the page answers while its engine works (bench-page-busy.mjs),
//      SmolLM2 on one thread and on every core: slider move -> frame during
//      a Run, and Step -> token
// A real model (SmolLM2, Gemma 3 270M: the catalogue's GGUF entries) is
// measured when its file is there (its fetch script: pkg-scripts/fetch-smollm2,
// pkg-scripts/fetch-gemma3).
//
// Usage: node pkg-scripts/bench-run.mjs [--write] [--quick]
//   --write  also regenerate this machine kind's block of BENCHMARKS.md (between its bench markers)
//   --quick  fewer repeats and moves (to check the harness; noisier figures)
// Environment: NEXTTOKEN_BIN (the release CLI; default target/release/nexttoken),
//   CARGO_TARGET_DIR (where target/bench/ goes)
// Writes <target>/bench/latest.json and last-KIND.json, keeping the run
// before on the same kind of machine as previous-KIND.json.
// Speed is measured, never asserted: the exit status says only whether every
// measure ran.

import { spawn, execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync, renameSync, copyFileSync, mkdirSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { ROOT, BUILTINS, benchLengths } from "./bench-common.mjs";
import { renderSection, renderComparison, writeBenchmarks, machineKind } from "./bench-report.mjs";

const write = process.argv.includes("--write");
const quick = process.argv.includes("--quick");
const unknown = process.argv.slice(2).filter((a) => !["--write", "--quick"].includes(a));
if (unknown.length) {
  console.error(`bench: unknown argument(s) ${unknown.join(" ")}; usage: pkg-scripts/bench [--write] [--quick]`);
  process.exit(2);
}
const TARGET = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(ROOT, "target");
const NEXTTOKEN = process.env.NEXTTOKEN_BIN ?? path.join(TARGET, "release", "nexttoken");
const OUT_DIR = path.join(TARGET, "bench");
/** SmolLM2 in F16, written by pkg-scripts/bench with llama.cpp's quantize. */
const F16_COPY = path.join(OUT_DIR, "SmolLM2-135M-Instruct.F16.gguf");
const WASM = path.join(ROOT, "www/pkg/nexttoken_bg.wasm");
const SMOL = "smollm2-135m";
const MEMORY_TOKENS = 1024;
/** Every core of this machine: the native "all cores" figures use this many threads. */
const CORES = os.availableParallelism?.() ?? os.cpus().length;

/** How much of each measure: a full run, or --quick. */
const SIZE = quick
  ? { nativeRepeats: 2, wasmRepeats: 1, llamaRepeats: 2, moves: 30, smolMoves: 20, pageLoads: 1, steps: 3, loadRuns: 2, smolLoadRuns: 1, memoryLoads: 1, insideTokens: 12, insideRounds: 1, runTokens: 16, runRounds: 1, busyMoves: 10, busySteps: 3 }
  : { nativeRepeats: 5, wasmRepeats: 3, llamaRepeats: 5, moves: 200, smolMoves: 100, pageLoads: 3, steps: 10, loadRuns: 5, smolLoadRuns: 3, memoryLoads: 5, insideTokens: 32, insideRounds: 2, runTokens: 64, runRounds: 5, busyMoves: 120, busySteps: 10 };

/** The page's catalogue (www/models/index.json): a GGUF entry is a real model, with its file. */
const catalogue = JSON.parse(readFileSync(path.join(ROOT, "www/models/index.json"), "utf8")).models;
/** Each real model's file, by name. */
const GGUFS = Object.fromEntries(catalogue.filter((m) => m.gguf).map((m) => [m.name, path.join(ROOT, "www/models", m.gguf)]));
/** The real models whose file is there, in catalogue order. */
const reals = Object.keys(GGUFS).filter((m) => existsSync(GGUFS[m]));
const hasSmol = reals.includes(SMOL);
/** The shipped models: the catalogue's (real ones when their file is there) and the built-ins. */
const models = [...catalogue.map((m) => m.name).filter((m) => !GGUFS[m] || reals.includes(m)), ...BUILTINS];
/** What `nexttoken bench --model` takes for each. */
const cliModel = (m) => (BUILTINS.includes(m) ? `builtin:${m}` : GGUFS[m] ?? path.join(ROOT, "www/models", m));

const results = {
  schema: 1,
  date: new Date().toISOString(),
  command: `pkg-scripts/bench${process.argv.slice(2).length ? " " + process.argv.slice(2).join(" ") : ""}`,
  quick,
  size: SIZE,
  machine: machine(),
  source: source(),
  models,
  smollm2_present: hasSmol,
  real_models: reals,
  wasm: wasmSize(),
  engine: {},
  /** llama.cpp on SmolLM2 (the yardstick's first figures; llamacpp_models[m] for every real model). */
  llamacpp: null,
  llamacpp_models: {},
  native_memory: null,
  native_memory_models: {},
  page: {},
  load: {},
  blank_page: null,
  tab_memory: null,
  tab_memory_models: {},
  /** The F16 copy of SmolLM2 opened as a user's file (pkg-scripts/bench writes it with llama.cpp). */
  tab_memory_f16: null,
  /** The Q4_1 file opened the same way: the F16 figure's basis. */
  tab_memory_q41_file: null,
  /** SmolLM2's page Run with the inside panel closed and open (bench-inside.mjs). */
  inside: null,
  /** Each real model's page Run against the engine alone (bench-page-run.mjs). */
  page_run: {},
  /** SmolLM2's slider during a Run and its Step -> token, on 1 and on `cores` threads (bench-page-busy.mjs). */
  busy: null,
  /** Every core: the native CLI, llama.cpp and the page's Run, each on `cores` threads, per real model. */
  cores: CORES,
  threads_models: {},
  failures: [],
};

const plan = [];
for (const m of models) plan.push([`Chromium engine: ${m}`, () => browserEngine(m)]);
for (const m of models) plan.push([`native CLI: ${m}`, () => nativeEngine(m)]);
for (const m of reals) plan.push([`native CLI: ${m}, ${MEMORY_TOKENS} tokens cached (peak RSS)`, () => nativeMemory(m)]);
for (const m of reals) plan.push([`llama.cpp: ${m}`, () => llamaCpp(m)]);
// Every core: the engine's kernels split across threads natively and in the
// page (its worker's helper threads); llama.cpp on as many threads beside it.
if (CORES > 1) {
  for (const m of reals) plan.push([`native CLI: ${m} on ${CORES} threads`, () => nativeEngine(m, CORES)]);
  for (const m of reals) plan.push([`llama.cpp: ${m} on ${CORES} threads`, () => llamaCpp(m, CORES)]);
}
if (reals.length) plan.push(["Chromium: a blank page's memory (the floor under the tab figures)", blankPage]);
for (const m of reals) plan.push([`Chromium: the playground tab's memory, ${m} with ${MEMORY_TOKENS} tokens cached`, () => tabMemory(m)]);
if (CORES > 1) for (const m of reals) plan.push([`Chromium: the playground tab's memory, ${m} with ${MEMORY_TOKENS} tokens cached, on ${CORES} threads`, () => tabMemory(m, CORES)]);
if (existsSync(F16_COPY)) plan.push([`Chromium: the playground tab's memory, SmolLM2's F16 copy and its Q4_1 file opened as a user's files`, tabMemoryF16]);
for (const m of ["bard", ...reals]) plan.push([`page: slider and Step on ${m}`, () => pageFigures(m)]);
if (hasSmol) plan.push(["page: SmolLM2's Run with the inside panel closed and open", insideFigures]);
for (const m of reals) plan.push([`page: ${m}'s Run against the engine alone`, () => pageRunFigures(m)]);
if (CORES > 1) for (const m of reals) plan.push([`page: ${m}'s Run on ${CORES} threads`, () => pageRunFigures(m, CORES)]);
if (hasSmol && CORES > 1) plan.push([`page: SmolLM2's slider during a Run and Step, on 1 and ${CORES} threads`, busyFigures]);
for (const m of ["bard", ...reals]) {
  plan.push([`page load, cold: ${m}`, () => loadFigures(m, false)]);
  plan.push([`page load, warm: ${m}`, () => loadFigures(m, true)]);
}
for (const m of Object.keys(GGUFS).filter((m) => !reals.includes(m))) {
  console.error(`bench: ${m}'s file is absent (its fetch script: ${catalogue.find((e) => e.name === m).fetch ?? "?"}): measuring without it`);
}

// The builds and the F16 copy just before leave the machine busy for a
// while: the first figures of a run started at once (load average 3.4 on 2
// cores) were SmolLM2's Chromium decode 43.3 tok/s, against 55-57 measured
// alone minutes later. So the run waits for the one-minute load average to
// fall to half the cores, or QUIET_WAIT_S, whichever comes first.
const QUIET_WAIT_S = 240;
const quietFrom = Date.now();
while (os.loadavg()[0] > CORES / 2 && Date.now() - quietFrom < QUIET_WAIT_S * 1000) {
  await new Promise((resolve) => setTimeout(resolve, 5000));
}
results.machine.quiet_wait_s = Math.round((Date.now() - quietFrom) / 1000);
results.machine.loadavg_start = os.loadavg().map((x) => Number(x.toFixed(2)));
console.error(`bench: waited ${results.machine.quiet_wait_s} s for a quiet machine (load average ${results.machine.loadavg_start[0]})`);

const started = Date.now();
for (const [i, [label, run]] of plan.entries()) {
  console.error(`\nbench: [${i + 1}/${plan.length}] ${label} (${Math.round((Date.now() - started) / 1000)} s in)`);
  try {
    await run();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    console.error(`bench: FAILED: ${label}: ${message}`);
    results.failures.push({ measure: label, error: message });
  }
}
results.seconds = Math.round((Date.now() - started) / 1000);
results.machine.loadavg_end = os.loadavg().map((x) => Number(x.toFixed(2)));

mkdirSync(OUT_DIR, { recursive: true });
// The change is shown against the last run on the same kind of machine:
// speed ratios differ by kind, so an Intel run set beside an AMD one would
// show the machines' difference, not the code's.
const kind = machineKind(results.machine);
const latest = path.join(OUT_DIR, "latest.json");
const lastOfKind = path.join(OUT_DIR, `last-${kind.key}.json`);
const previousFile = path.join(OUT_DIR, `previous-${kind.key}.json`);
const sameKind = (file) => existsSync(file) && machineKind(JSON.parse(readFileSync(file, "utf8")).machine).key === kind.key;
if (existsSync(lastOfKind)) renameSync(lastOfKind, previousFile);
else if (sameKind(latest)) copyFileSync(latest, previousFile); // a run from before runs were kept by kind
writeFileSync(latest, JSON.stringify(results, null, 1) + "\n");
copyFileSync(latest, lastOfKind);
const previous = existsSync(previousFile) ? JSON.parse(readFileSync(previousFile, "utf8")) : null;

console.log(renderSection(results));
if (previous) console.log("\n" + renderComparison(previous, results));
console.error(`\nbench: wrote ${path.relative(ROOT, latest)}${previous ? ` (the run before on this kind of machine: ${path.relative(ROOT, previousFile)})` : ""}`);
if (write) {
  writeBenchmarks(path.join(ROOT, "BENCHMARKS.md"), results);
  console.error(`bench: regenerated BENCHMARKS.md's block for ${kind.name}`);
}
if (results.failures.length) {
  console.error(`bench: ${results.failures.length} measure(s) failed: ${results.failures.map((f) => f.measure).join("; ")}`);
  process.exit(1);
}

// ---------------------------------------------------------------- measures

async function browserEngine(m) {
  const memory = reals.includes(m) ? MEMORY_TOKENS : 0;
  // On SmolLM2 also the decode steps with the inside view on, in the same page.
  const inside = m === SMOL ? ["--inside"] : [];
  const figures = await runJson("node", ["pkg-scripts/bench-engine-wasm.mjs", m, String(SIZE.wasmRepeats), `--memory-tokens=${memory}`, ...inside, "--json"]);
  (results.engine[m] ??= {}).browser = figures;
}

async function nativeEngine(m, threads = 1) {
  // The same lengths as in the browser (which knows the model's context).
  const context = results.engine[m]?.browser?.info?.context;
  if (!context) throw new Error("no context known for this model (its browser measure failed)");
  const { prefill, decode } = benchLengths(context);
  const figures = await runJson(NEXTTOKEN, ["bench", "--model", cliModel(m), "--prefill", String(prefill), "--decode", String(decode),
    "--repeats", String(SIZE.nativeRepeats), "--threads", String(threads), ...(m === SMOL && threads === 1 ? ["--inside"] : [])]);
  if (threads === 1) (results.engine[m] ??= {}).native = figures;
  else (results.threads_models[m] ??= {}).native = figures;
}

async function nativeMemory(m) {
  // A prompt of 1,000 tokens and 24 decode steps: the cache ends with 1,024.
  const figures = await runJson(NEXTTOKEN, ["bench", "--model", GGUFS[m], "--prefill", String(MEMORY_TOKENS - 24), "--decode", "24",
    "--repeats", "1", "--threads", "1"]);
  results.native_memory_models[m] = { tokens: MEMORY_TOKENS, peak_rss_mb: figures.peak_rss_mb };
  if (m === SMOL) results.native_memory = results.native_memory_models[m];
}

async function llamaCpp(m, threads = 1) {
  const { prefill, decode } = benchLengths(results.engine[m]?.browser?.info?.context ?? 2048);
  const figures = await runJson("python3", ["pkg-scripts/bench-llamacpp", GGUFS[m], "--threads", String(threads), "--repeats", String(SIZE.llamaRepeats),
    "--decode-prompt", String(prefill), "--decode-tokens", String(decode)]);
  if (threads !== 1) { (results.threads_models[m] ??= {}).llamacpp = figures; return; }
  results.llamacpp_models[m] = figures;
  if (m === SMOL) results.llamacpp = results.llamacpp_models[m];
}

/**
 * The playground tab's memory over SIZE.memoryLoads loads of bench-tab-memory
 * with `source` (`--model=NAME` or `--file=PATH`), for a model file `file`,
 * the page asking for `threads` (null: its own default).
 * The private peak counts garbage not yet collected, so it moves with the
 * collector's timing (247-302 MB over three loads of the same tree): the
 * figures are the median load's, with every load's peak beside them.
 */
async function tabMemoryOf(source, file, threads = null) {
  const runs = [];
  const args = ["pkg-scripts/bench-tab-memory.mjs", `--tokens=${MEMORY_TOKENS}`, source, "--json"];
  if (threads !== null) args.push(`--threads=${threads}`);
  for (let i = 0; i < SIZE.memoryLoads; i++) runs.push(await runJson("node", args));
  const byPeak = [...runs].sort((a, b) => a.private_peak_mb - b.private_peak_mb);
  return { ...byPeak[Math.floor((byPeak.length - 1) / 2)], loads: runs.length, private_peak_runs_mb: runs.map((r) => r.private_peak_mb),
    file_mb: statSync(file).size / 1e6 };
}

/** The tab's memory on the page's default threads, or on `threads` (kept with the every-core figures). */
async function tabMemory(m, threads = null) {
  if (threads !== null) {
    // The helper workers share the engine's memory: what they add is their
    // own stacks and JavaScript heaps, measured the same way.
    (results.threads_models[m] ??= {}).tab_memory = await tabMemoryOf(`--model=${m}`, GGUFS[m], threads);
    return;
  }
  results.tab_memory_models[m] = await tabMemoryOf(`--model=${m}`, GGUFS[m]);
  if (m === SMOL) results.tab_memory = results.tab_memory_models[m];
}

async function tabMemoryF16() {
  // Its basis is the Q4_1 file opened the same way (the tiny model first, a
  // user's file, 24 Step clicks, each a full paint), so that the two differ
  // by the file's format alone: opened by URL, with its steps replayed, the
  // Q4_1 tab settled 15 MiB lower for the flow, not the format (measured:
  // worker memory beyond the file 34.7 MiB for both formats).
  results.tab_memory_q41_file = await tabMemoryOf(`--file=${GGUFS[SMOL]}`, GGUFS[SMOL]);
  results.tab_memory_f16 = await tabMemoryOf(`--file=${F16_COPY}`, F16_COPY);
}

async function blankPage() {
  results.blank_page = await runJson("node", ["pkg-scripts/bench-blank-page.mjs", String(SIZE.pageLoads), "--json"]);
}

async function pageFigures(m) {
  const moves = reals.includes(m) ? SIZE.smolMoves : SIZE.moves;
  // The floor is the browser's, not the model's: measured once, on bard's page.
  const args = ["pkg-scripts/bench-page.mjs", m, String(moves), String(SIZE.steps), "0", `--loads=${SIZE.pageLoads}`, "--no-beam", "--json"];
  if (m !== "bard") args.push("--no-floor");
  results.page[m] = await runJson("node", args);
}

async function insideFigures() {
  results.inside = await runJson("node", ["pkg-scripts/bench-inside.mjs", SMOL, String(SIZE.insideTokens), `--rounds=${SIZE.insideRounds}`, "--json"]);
}

async function pageRunFigures(m, threads = 1) {
  const figures = await runJson("node", ["pkg-scripts/bench-page-run.mjs", m, String(SIZE.runTokens), `--rounds=${SIZE.runRounds}`, `--threads=${threads}`, "--json"]);
  if (threads === 1) results.page_run[m] = figures;
  else (results.threads_models[m] ??= {}).page_run = figures;
}

async function busyFigures() {
  results.busy = await runJson("node", ["pkg-scripts/bench-page-busy.mjs", SMOL, `--threads=1,${CORES}`, `--moves=${SIZE.busyMoves}`, `--steps=${SIZE.busySteps}`, "--json"]);
}

async function loadFigures(m, warm) {
  const runs = reals.includes(m) ? SIZE.smolLoadRuns : SIZE.loadRuns;
  const args = ["pkg-scripts/bench-load.mjs", String(runs), `--model=${m}`, "--json"];
  if (warm) args.push("--warm");
  (results.load[m] ??= {})[warm ? "warm" : "cold"] = await runJson("node", args);
}

// ---------------------------------------------------------------- helpers

/**
 * Run a helper; its stderr streams through, the last line of its stdout is its figures.
 * @param {string} cmd
 * @param {string[]} args
 * @returns {Promise<any>}
 */
function runJson(cmd, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d) => { out += d; });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`${cmd} ${args.join(" ")} exited with status ${code}`));
      const last = out.trim().split("\n").pop() ?? "";
      try { resolve(JSON.parse(last)); } catch { reject(new Error(`${cmd} ${args.join(" ")} printed no JSON line (got ${JSON.stringify(last.slice(0, 200))})`)); }
    });
  });
}

/** The output of a command (trimmed unless told), or null when it cannot run. */
function tryRun(cmd, args, { trim = true } = {}) {
  try {
    const out = execFileSync(cmd, args, { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    return trim ? out.trim() : out;
  } catch { return null; }
}

/** What the figures depend on: the CPU, cores, memory, load, browser and toolchain. */
function machine() {
  const flags = (readFileSync("/proc/cpuinfo", "utf8").match(/^flags\s*:(.*)$/m)?.[1] ?? "").trim().split(/\s+/);
  return {
    cpu: os.cpus()[0]?.model ?? "unknown",
    cores: os.cpus().length,
    memory_gib: Number((os.totalmem() / 2 ** 30).toFixed(1)),
    simd: ["avx2", "fma", "avx512f", "avx512_vnni", "amx_tile"].filter((f) => flags.includes(f)),
    loadavg_start: os.loadavg().map((x) => Number(x.toFixed(2))),
    chromium: tryRun(process.env.CHROMIUM ?? "/usr/bin/chromium", ["--version"]),
    node: process.version,
    rustc: tryRun("rustc", ["--version"]),
  };
}

/** The engine's and page's source: the commit, and which top-level folders have uncommitted changes. */
function source() {
  const commit = tryRun("git", ["rev-parse", "--short", "HEAD"]);
  // Porcelain lines are "XY path": two status letters (either may be a space), a space, the path.
  const status = tryRun("git", ["status", "--porcelain", "--untracked-files=all"], { trim: false }) ?? "";
  const top = (p) => (p.includes("/") ? `${p.split("/")[0]}/` : p);
  const dirty = [...new Set(status.split("\n").filter(Boolean).map((l) => top(l.slice(3))))].sort();
  return { commit, uncommitted: dirty };
}

/** The engine module's size as served, raw and gzipped (`gzip -9`, as pkg-scripts/build reports it; zlib's level 9 where gzip is absent). */
function wasmSize() {
  if (!existsSync(WASM)) return null;
  let gzip;
  try {
    gzip = execFileSync("gzip", ["-9", "-c", WASM], { maxBuffer: 1 << 30 }).length;
  } catch {
    gzip = zlib.gzipSync(readFileSync(WASM), { level: 9 }).length;
  }
  return { file: path.relative(ROOT, WASM), raw_bytes: statSync(WASM).size, gzip_bytes: gzip };
}
