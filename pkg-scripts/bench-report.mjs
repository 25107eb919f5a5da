// The tables of pkg-scripts/bench from its results (bench-run.mjs): the
// markdown it prints and writes into BENCHMARKS.md between the markers
// <!-- bench:begin KIND --> and <!-- bench:end KIND --> of the machine's
// kind (one block per kind, so each kind's last run stays), and the change
// since the previous run. Run alone it re-renders the last results without measuring:
//   node pkg-scripts/bench-report.mjs [--write]   (reads target/bench/latest.json)
// (Over 400 lines: one job, BENCHMARKS.md from the bench's JSON: each table's rows and their ratios, written in one place so the file's words match the numbers.)

import { readFileSync, writeFileSync, existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ROOT, BUILTINS, median } from "./bench-common.mjs";

const SMOL = "smollm2-135m";
const GEMMA = "gemma3-270m";
/** The real models' names in the tables. */
const TITLES = { [SMOL]: "SmolLM2", [GEMMA]: "Gemma 3 270M" };
const title = (x) => TITLES[x] ?? x;

/**
 * The machine's kind: the processor family and whether it has AVX-512.
 * Speed ratios differ between kinds (the kernels take other paths), so
 * BENCHMARKS.md keeps the last run of each.
 * @param {{ cpu: string, simd: string[] }} m
 * @returns {{ key: string, name: string }}
 */
export function machineKind(m) {
  const family = /xeon/i.test(m.cpu) ? "Intel Xeon" : /epyc/i.test(m.cpu) ? "AMD EPYC"
    : m.cpu.replace(/\((R|TM)\)/g, "").replace(/\s+(Processor|CPU).*$/i, "").trim() || "unknown";
  const simd = m.simd.includes("avx512f") ? "AVX-512" : m.simd.includes("avx2") ? "AVX2 only" : "no AVX2";
  const name = `${family}, ${simd}`;
  return { key: name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, ""), name };
}
const begin = (kind) => `<!-- bench:begin ${kind.key} -->`;
const end = (kind) => `<!-- bench:end ${kind.key} -->`;

// ---------------------------------------------------------------- numbers

/**
 * ", median of N loads: a, b, c" for a figure taken over several loads, else "".
 * @param {{ loads?: number, private_peak_runs_mb?: (number|null)[] }|null|undefined} t
 */
function loadsNote(t) {
  if (!t?.loads || t.loads < 2) return "";
  return `; median of ${t.loads} loads: ${t.private_peak_runs_mb.map((x) => (typeof x === "number" ? x.toFixed(0) : "–")).join(", ")} MiB`;
}

/**
 * Beside the F16 row's private peaks (which count garbage not yet
 * collected): what each tab holds beyond its file once settled (Chrome's
 * footprint after a collection) and what the engine's wasm memory holds
 * beyond it, the F16 copy's then the Q4_1 file's.
 * @param {any} f16 @param {any} q41
 */
function settledOverheads(f16, q41) {
  const over = (t, key) => (typeof t?.[key] === "number" ? t[key] - fromMb(t.file_mb) : null);
  const pair = (key) => [over(f16, key), over(q41, key)];
  const [footF16, footQ41] = pair("footprint_mb");
  const [wasmF16, wasmQ41] = pair("worker_wasm_mb");
  if (footF16 === null || footQ41 === null || wasmF16 === null || wasmQ41 === null) return "";
  return ` (over its file once settled, Chrome's footprint after a collection: ${mib(footF16)} against the Q4_1 file's ${mib(footQ41)}; ` +
    `the engine's wasm memory: ${wasmF16.toFixed(1)} against ${wasmQ41.toFixed(1)} MiB)`;
}

/** Thousands separators. @param {number} x */
const grouped = (x) => Math.round(x).toLocaleString("en-US");
/** tok/s: 20.7, 1,234, 47.3 M. @param {number|null|undefined} x */
function rate(x) {
  if (typeof x !== "number" || !Number.isFinite(x)) return "–";
  if (x >= 1e6) return `${(x / 1e6).toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 })} M`;
  return x >= 1000 ? grouped(x) : x.toFixed(1);
}
/** ms: 13.6, 1,930. @param {number|null|undefined} x */
function ms(x) {
  if (typeof x !== "number" || !Number.isFinite(x)) return "–";
  return x >= 100 ? grouped(x) : x.toFixed(1);
}
/**
 * Memory, whole MiB (2^20 bytes): every memory figure is one, as /proc (KiB)
 * and Chrome's dumps give it. Sizes of files and of the module are MB (10^6
 * bytes, `*_mb` of a file, `wasm`); a memory target set against a file's
 * size compares both in MiB (`fileMib`).
 * @param {number|null|undefined} x
 */
const mib = (x) => (typeof x === "number" && Number.isFinite(x) ? `${grouped(x)} MiB` : "–");
/** A size in MB (10^6 bytes) in MiB. @param {number} x */
const fromMb = (x) => (x * 1e6) / 2 ** 20;
/** A file's size as "253.1 MB = 241 MiB". @param {number|null|undefined} x MB */
const fileSize = (x) => (typeof x === "number" ? `${x.toFixed(1)} MB = ${grouped(fromMb(x))} MiB` : "–");
/** a / b as "0.352×". */
function ratio(a, b) {
  if (typeof a !== "number" || typeof b !== "number" || !(b > 0)) return null;
  return a / b;
}
const times = (r) => (r === null ? "–" : `${r >= 10 ? r.toFixed(1) : r.toFixed(3)}×`);
/** "13.2 / 13.9" (p50 / p95). */
const p50p95 = (s) => (s && s.n ? `${ms(s.p50)} / ${ms(s.p95)}` : "–");
const met = (ok) => (ok === null || ok === undefined ? "–" : ok ? "**met**" : "not yet");

// ---------------------------------------------------------------- the section

/**
 * The markdown of one run: where and how it was measured, then the tables.
 * @param {any} r results of bench-run.mjs
 * @returns {string}
 */
export function renderSection(r) {
  const out = [];
  const m = r.machine;
  const when = r.date.replace("T", " ").replace(/:\d\d\.\d+Z$/, " UTC");
  const src = `commit ${r.source.commit}${r.source.uncommitted.length ? ` with uncommitted changes in ${r.source.uncommitted.join(", ")}` : ""}`;
  const llama = r.llamacpp;
  out.push(`Measured ${when} by \`${r.command}\` (${r.seconds} s${r.quick ? "; --quick: fewer repeats, noisier" : ""}) on ` +
    `${m.cores} cores of \`${m.cpu}\` (${m.simd.join(", ") || "no AVX"}), ${m.memory_gib} GiB, load average ` +
    `${m.loadavg_start[0]} at the start${typeof m.quiet_wait_s === "number" ? ` (after waiting ${m.quiet_wait_s} s for it to fall)` : ""} and ${m.loadavg_end?.[0] ?? "?"} at the end; engine and page at ${src} ` +
    `(\`www/pkg\` from \`pkg-scripts/build\`: release, +simd128, no wasm-opt; Chromium runs its relaxed-simd module, \`www/worker/engine-wasm.js\`); ${m.chromium ?? "Chromium"} headless; Node ${m.node}; ` +
    `${m.rustc ?? "rustc"}${llama ? `; ${llama.version}` : ""}. Everything runs on one thread but the "Every core" figures. The JSON of the run is ` +
    `\`target/bench/latest.json\` (the run before it on this kind of machine, \`previous-${machineKind(m).key}.json\`).`);
  if (r.failures.length) out.push(`\n**Not measured in this run:** ${r.failures.map((f) => `${f.measure} (${f.error})`).join("; ")}.`);

  const smol = r.engine[SMOL];
  if (smol) {
    const n = smol.native, b = smol.browser;
    const dec = b?.decode_tokens ?? 128, pre = b?.prefill_tokens ?? 64;
    out.push("", `### SmolLM2-135M-Instruct (Q4_1 GGUF) beside llama.cpp, same file, same run`, "");
    out.push("| | this engine, native (`nexttoken bench`, burn-flex) | this engine, headless Chromium (wasm) | llama.cpp, native |");
    out.push("|---|---|---|---|");
    const vs = (x, ref) => (ratio(x, ref) === null ? "" : ` (${times(ratio(x, ref))})`);
    out.push(`| decode, ${dec} tokens after a ${pre}-token prompt | ${rate(n?.decode_tok_s)} tok/s${vs(n?.decode_tok_s, llama?.decode_tok_s)} | ` +
      `${rate(b?.decode_tok_s)} tok/s${vs(b?.decode_tok_s, llama?.decode_tok_s)} | ${rate(llama?.decode_tok_s)} tok/s |`);
    out.push(`| prefill, ${pre} tokens in one batch | ${rate(n?.prefill_tok_s)} tok/s${vs(n?.prefill_tok_s, llama?.prefill64_tok_s)} | ` +
      `${rate(b?.prefill_tok_s)} tok/s${vs(b?.prefill_tok_s, llama?.prefill64_tok_s)} | ${rate(llama?.prefill64_tok_s)} tok/s |`);
    out.push(`| load | ${n ? `${n.load_s.toFixed(2)} s (read, dequantise, build)` : "–"} | ` +
      `${b ? `${b.build_s.toFixed(2)} s to build, after ${b.fetch_s.toFixed(2)} s to fetch from localhost` : "–"} | ${llama ? `${llama.load_s.toFixed(2)} s (mmap)` : "–"} |`);
    const tab = b?.memory;
    const page = r.tab_memory;
    out.push(`| peak memory, ${grouped(tab?.tokens ?? r.native_memory?.tokens ?? 1024)} tokens in the cache | ${mib(r.native_memory?.peak_rss_mb)} process (VmHWM) | ` +
      (page ? `the playground tab (\`index.html\`, its worker included): ${mib(page.private_peak_mb)} private peak (RssAnon${loadsNote(page)}), ` +
        `${mib(page.footprint_mb)} Chrome's memory footprint once settled, ${mib(page.resident_peak_mb)} resident peak (VmHWM); ` +
        `wasm memory ${mib(page.worker_wasm_mb)} in the worker, ${mib(page.page_wasm_mb)} on the page. ` : "") +
      `The engine alone in a bare page: ${mib(tab?.tab_private_peak_mb)} private peak, ${mib(tab?.tab_peak_mb)} resident peak` +
      `${r.blank_page ? `; a blank page's tab (same Chromium, same run): ${mib(r.blank_page.rss_mb)} resident, ${mib(r.blank_page.private_mb)} private` : ""} | ` +
      `${llama ? `${mib(llama.peak_rss_mb)} process (Python included), ${llama.n_ctx}-token context` : "–"} |`);
    out.push("", "Ratios in brackets are of llama.cpp's figure in the same row.");
  }

  const gemma = r.engine[GEMMA];
  if (gemma) {
    const n = gemma.native, b = gemma.browser, llama = r.llamacpp_models?.[GEMMA];
    const dec = b?.decode_tokens ?? 128, pre = b?.prefill_tokens ?? 64;
    const vs = (x, ref) => (ratio(x, ref) === null ? "" : ` (${times(ratio(x, ref))})`);
    out.push("", "### Gemma 3 270M (Q4_K_M GGUF) beside llama.cpp, same file, same run", "");
    out.push("| | this engine, native | this engine, headless Chromium (wasm) | llama.cpp, native |");
    out.push("|---|---|---|---|");
    out.push(`| decode, ${dec} tokens after a ${pre}-token prompt | ${rate(n?.decode_tok_s)} tok/s${vs(n?.decode_tok_s, llama?.decode_tok_s)} | ` +
      `${rate(b?.decode_tok_s)} tok/s${vs(b?.decode_tok_s, llama?.decode_tok_s)} | ${rate(llama?.decode_tok_s)} tok/s |`);
    out.push(`| prefill, ${pre} tokens in one batch | ${rate(n?.prefill_tok_s)} tok/s${vs(n?.prefill_tok_s, llama?.prefill64_tok_s)} | ` +
      `${rate(b?.prefill_tok_s)} tok/s${vs(b?.prefill_tok_s, llama?.prefill64_tok_s)} | ${rate(llama?.prefill64_tok_s)} tok/s |`);
    const page = r.tab_memory_models?.[GEMMA];
    out.push(`| peak memory, 1,024 tokens in the cache | ${mib(r.native_memory_models?.[GEMMA]?.peak_rss_mb)} process (VmHWM) | ` +
      (page ? `the playground tab: ${mib(page.private_peak_mb)} private peak (RssAnon${loadsNote(page)}), ${mib(page.footprint_mb)} Chrome's footprint once settled; ` : "") +
      `the engine alone in a bare page: ${mib(b?.memory?.tab_private_peak_mb)} private peak | ` +
      `${llama ? `${mib(llama.peak_rss_mb)} process (Python included)` : "–"} |`);
    out.push("", "A Chromium decode step includes the step's report over all 262,144 tokens (an exact softmax).");
  }

  const cored = Object.entries(r.threads_models ?? {});
  if (cored.length) {
    out.push("", `### Every core (${r.cores} threads), native`, "");
    out.push(`| model | this engine, decode / prefill tok/s, on ${r.cores} threads | against llama.cpp on ${r.cores} threads | against llama.cpp on 1 thread | its own 1-thread figures |`);
    out.push("|---|---|---|---|---|");
    for (const [name, t] of cored) {
      const one = r.engine[name]?.native, l1 = r.llamacpp_models?.[name], ln = t.llamacpp;
      out.push(`| ${title(name)} | ${rate(t.native?.decode_tok_s)} / ${rate(t.native?.prefill_tok_s)} | ` +
        `${times(ratio(t.native?.decode_tok_s, ln?.decode_tok_s))} / ${times(ratio(t.native?.prefill_tok_s, ln?.prefill64_tok_s))} (llama.cpp ${rate(ln?.decode_tok_s)} / ${rate(ln?.prefill64_tok_s)}) | ` +
        `${times(ratio(t.native?.decode_tok_s, l1?.decode_tok_s))} / ${times(ratio(t.native?.prefill_tok_s, l1?.prefill64_tok_s))} | ` +
        `${rate(one?.decode_tok_s)} / ${rate(one?.prefill_tok_s)} |`);
    }
    const paged = cored.filter(([, t]) => t.page_run);
    if (paged.length) {
      out.push("", `| model | the page's Run in Chromium on ${r.cores} threads, decode tok/s | against llama.cpp on ${r.cores} threads | against llama.cpp on 1 thread | the page's Run on 1 thread |`);
      out.push("|---|---|---|---|---|");
      for (const [name, t] of paged) {
        const pr = t.page_run, l1 = r.llamacpp_models?.[name], ln = t.llamacpp, one = r.page_run?.[name];
        const got = pr.threads_in_force?.threads;
        out.push(`| ${title(name)} | ${rate(pr.page_tok_s_median)}${got !== undefined && got !== r.cores ? ` (the engine used ${got})` : ""} | ` +
          `${times(ratio(pr.page_tok_s_median, ln?.decode_tok_s))} | ${times(ratio(pr.page_tok_s_median, l1?.decode_tok_s))} | ` +
          `${rate(one?.page_tok_s_median)} (${times(ratio(pr.page_tok_s_median, one?.page_tok_s_median))}) |`);
      }
    }
    const busy = r.busy?.by_threads ?? [];
    if (busy.length) {
      out.push("", `| ${title(r.busy.model)}'s page, engine on | slider move → frame during a Run, p50 / p95 | … to that frame painted, p50 / p95 | the Run meanwhile, tok/s | Step click → token shown, p50 / p95 (worker p50) |`);
      out.push("|---|---|---|---|---|");
      for (const b of busy) {
        out.push(`| ${b.threads_in_force} thread${b.threads_in_force === 1 ? "" : "s"}${b.threads_in_force !== b.threads ? ` (${b.threads} asked)` : ""} | ` +
          `${p50p95(b.slider_during_run.frame)} (n = ${b.slider_during_run.frame.n}) | ${p50p95(b.slider_during_run.painted)} | ${rate(b.run_tok_s_during_moves)} | ` +
          `${p50p95(b.step_click_to_token)} (${ms(b.step_worker.p50)}) |`);
      }
    }
    const held = cored.filter(([, t]) => t.tab_memory);
    if (held.length) {
      out.push("", `| model, ${grouped(held[0][1].tab_memory.tokens)} tokens cached | the playground tab's private peak on ${r.cores} threads | on the page's default threads | ratio |`);
      out.push("|---|---|---|---|");
      for (const [name, t] of held) {
        const tm = t.tab_memory, one = r.tab_memory_models?.[name];
        const got = tm.threads;
        out.push(`| ${title(name)} | ${mib(tm.private_peak_mb)}${got !== null && got !== undefined && got !== r.cores ? ` (the engine used ${got})` : ""}${loadsNote(tm)} | ` +
          `${mib(one?.private_peak_mb)} (${one?.threads ?? "?"} thread${one?.threads === 1 ? "" : "s"}) | ${times(ratio(tm.private_peak_mb, one?.private_peak_mb))} |`);
      }
    }
    out.push("", "The kernels' products split into bands of weight rows across the threads (rayon's natively, the page worker's " +
      "helper workers in the browser), each value computed as on one thread (the logits are bit-identical at any thread count).");
  }

  out.push("", "### Every shipped model, tokens/s", "");
  out.push("| model | prompt + decode tokens | native decode | native prefill | Chromium decode | Chromium prefill | Chromium `preview()` alone |");
  out.push("|---|---|---|---|---|---|---|");
  for (const name of r.models) {
    const e = r.engine[name] ?? {};
    const b = e.browser, n = e.native;
    const lengths = b ? `${b.prefill_tokens} + ${b.decode_tokens}` : "–";
    out.push(`| ${name}${BUILTINS.includes(name) ? " (built in)" : ""} | ${lengths} | ${rate(n?.decode_tok_s)} | ${rate(n?.prefill_tok_s)} | ` +
      `${rate(b?.decode_tok_s)} | ${rate(b?.prefill_tok_s)} | ${b ? `${b.preview_ms.toFixed(2)} ms` : "–"} |`);
  }
  out.push("", "Natively a decode step is the model call and an argmax (`nexttoken bench`); in Chromium it is " +
    "`Playground.step`, the model call and the step's report over the whole vocabulary, as the page uses it " +
    "(`preview()` alone is that report's rules without the model). The built-in toy models do next to no model work, " +
    "so their native figures time little but the loop, and their Chromium figures the report.");

  const pages = ["bard", SMOL, GEMMA].filter((x) => r.page[x] || r.load[x]);
  if (pages.length) {
    out.push("", "### The page in headless Chromium (ms)", "");
    out.push(`| figure | ${pages.map(title).join(" | ")} |`);
    out.push(`|---|${pages.map(() => "---").join("|")}|`);
    const row = (label, f) => out.push(`| ${label} | ${pages.map((x) => f(r.page[x], r.load[x], x) ?? "–").join(" | ")} |`);
    row("slider move → frame, first move after load, each load", (p) => p && p.first.frame.map(ms).join(", "));
    row("… to that frame painted, each load", (p) => p && p.first.painted.map(ms).join(", "));
    row("slider move → frame, the later moves, p50 / p95", (p) => p && `${p50p95(p.later.frame)} (n = ${p.later.frame.n})`);
    row("… to that frame painted, p50 / p95", (p) => p && p50p95(p.later.painted));
    row("… of which the page's work, p50 / p95", (p) => p && p50p95(p.later.work));
    row("Step click → token shown, p50 / p95", (p) => p?.steps && `${p50p95(p.steps.click_to_token)} (worker ${ms(p.steps.worker.p50)})`);
    const ins = r.inside;
    if (ins) {
      row("Run, worker's time per token, inside panel closed / open, mean (ratio; p50s)", (_, __, name) => name === ins.model ?
        `${ms(ins.closed.step.mean)} / ${ms(ins.open.step.mean)} (${ins.ratio?.toFixed(2) ?? "–"}×; p50 ${ms(ins.closed.step.p50)} / ${ms(ins.open.step.p50)})` : null);
    }
    row("Run with the default panels: the page's tokens/s against the engine alone's, medians (ratio)", (_, __, name) => {
      const pr = r.page_run?.[name];
      return pr ? `${rate(pr.page_tok_s_median)} against ${rate(pr.engine_tok_s_median)} (${times(pr.ratio)})` : null;
    });
    // A run from before bench-load.mjs opened pages in a tab already up has
    // only the first-document figure, as `first_render`.
    row("open → first distribution, cold profile, in a tab already up: median (max)", (_, l) => l?.cold?.first_render_new_tab &&
      `${ms(l.cold.first_render.p50)} (${ms(l.cold.first_render.max)})`);
    row("… the page being its new tab's first document: median (max)", (_, l) => {
      const f = l?.cold && (l.cold.first_render_new_tab ?? l.cold.first_render);
      return f && `${ms(f.p50)} (${ms(f.max)})`;
    });
    row("open → first distribution, warm (Cache API): median (max)", (_, l) => l?.warm && `${ms(l.warm.first_render.p50)} (${ms(l.warm.first_render.max)})`);
    row("… of which the worker's model build, then prefill and first report (cold medians)",
      (_, l) => l?.cold && `${ms(l.cold.stages.worker_build_ms)}, then ${ms(l.cold.stages.prefill_ms)}`);
    row("tab memory when ready, cold (VmRSS, median)", (_, l) => l?.cold && mib(l.cold.tab_rss_mb.p50));
    const floor = r.page.bard?.floor;
    const loadFloor = r.load.bard?.cold?.floor;
    out.push("", `The browser's floor on this machine: a key press → frame on a scratch input whose handler changes one text node, ` +
      `p50 / p95 ${p50p95(floor?.frame)} ms (to painted ${p50p95(floor?.painted)} ms); open → a trivial page's module script runs, ` +
      `median ${ms(loadFloor?.p50)} ms (cold). The slider moves run with top-k 50, top-p 0.9, min-p 0.02 and repetition penalty 1.2 on.`);
  }

  out.push("", "### The targets", "");
  out.push("| target | this run | |");
  out.push("|---|---|---|");
  for (const t of targets(r)) out.push(`| ${t.label} | ${t.value} | ${met(t.ok)} |`);

  out.push("", "### How each figure is measured", "");
  out.push(...method(r.size ?? FULL_SIZE));
  return out.join("\n");
}

/**
 * Issue 9's targets, each with this run's figure and whether it is met
 * (null when not measured). Read by people, never asserted.
 * @param {any} r
 */
function targets(r) {
  const smol = r.engine[SMOL];
  const llama = r.llamacpp;
  const list = [];
  const add = (label, value, ok) => list.push({ label, value, ok });
  const rel = (x, ref, goal, what) => {
    const q = ratio(x, ref);
    add(what, q === null ? "–" : `${times(q)} (${rate(x)} against ${rate(ref)} tok/s)`, q === null ? null : q >= goal);
  };
  if (smol) {
    rel(smol.browser?.decode_tok_s, llama?.decode_tok_s, 0.8, "SmolLM2 decode in Chromium, one thread, ≥ 0.8× llama.cpp's native one-thread decode");
    rel(smol.browser?.prefill_tok_s, llama?.prefill64_tok_s, 1.0, "SmolLM2 prefill of 64 tokens in Chromium, one thread, ≥ 1.0× llama.cpp's one-thread prefill");
    const priv = r.tab_memory?.private_peak_mb;
    add(`the playground tab's peak private memory (what Chrome counts as a tab's memory) with SmolLM2 and 1,024 tokens cached < 300 MB (${grouped(fromMb(300))} MiB)`,
      typeof priv === "number" ? `${mib(priv)}${loadsNote(r.tab_memory)} (Chrome's footprint once settled: ${mib(r.tab_memory.footprint_mb)})` : "–", typeof priv === "number" ? priv < fromMb(300) : null);
    rel(smol.native?.decode_tok_s, llama?.decode_tok_s, 0.7, "native CLI on SmolLM2, decode ≥ 0.7× llama.cpp");
    rel(smol.native?.prefill_tok_s, llama?.prefill64_tok_s, 0.7, "native CLI on SmolLM2, prefill ≥ 0.7× llama.cpp");
    // The inside view's cost: the step time with it on over off, in the same run.
    const cost = smol.browser?.inside_cost, native = smol.native?.steps;
    add("SmolLM2 decode step with the inside view on and the logit lens on every step (as a single Step computes it) ≤ 2× the step with it off (Chromium, the engine's `step`; native session steps beside it)",
      typeof cost === "number"
        ? `${times(cost)} (${rate(smol.browser.decode_inside_tok_s)} against ${rate(smol.browser.decode_tok_s)} tok/s)` +
          (native ? `; native ${times(native.inside_cost)} (${rate(native.step_inside_tok_s)} against ${rate(native.step_tok_s)} tok/s)` : "")
        : "–",
      typeof cost === "number" ? cost <= 2 : null);
  }
  const bard = r.engine.bard?.browser?.decode_tok_s;
  add("bard decode in Chromium ≥ 1,000 tok/s", typeof bard === "number" ? `${rate(bard)} tok/s` : "–", typeof bard === "number" ? bard >= 1000 : null);
  const sp = r.page[SMOL]?.later?.frame;
  add("slider move → frame p95 on SmolLM2's real distribution < 16 ms", sp?.n ? `${ms(sp.p95)} ms` : "–", sp?.n ? sp.p95 < 16 : null);
  for (const name of ["bard", SMOL, GEMMA]) {
    const p = r.page[name];
    if (!p) continue;
    const first = median(p.first.frame);
    add(`first slider move after load as fast as the later ones (${title(name)}: first-move median ≤ later moves' p95)`,
      `${ms(first)} against ${ms(p.later.frame.p95)} ms`, first !== null && p.later.frame.n ? first <= p.later.frame.p95 : null);
  }
  const ins = r.inside;
  if (ins) {
    add("SmolLM2's page Run with the inside panel open ≤ 2× the step time with it closed (worker's time per token, mean)",
      ins.ratio === null ? "–" : `${times(ins.ratio)} (${ms(ins.open.step.mean)} against ${ms(ins.closed.step.mean)} ms; tokens/s ${times(ins.tokens_per_s_ratio ?? null)} slower)`,
      ins.ratio === null ? null : ins.ratio <= 2);
  }
  for (const [name, pr] of Object.entries(r.page_run ?? {})) {
    add(`${title(name)}'s page Run with every default panel live ≥ 0.9× the engine alone's decode (same page build, same run)`,
      `${times(pr.ratio)} (${rate(pr.page_tok_s_median)} against ${rate(pr.engine_tok_s_median)} tok/s)`, pr.ratio >= 0.9);
  }
  for (const [name, t] of Object.entries(r.threads_models ?? {})) {
    const pr = t.page_run, l1 = r.llamacpp_models?.[name]?.decode_tok_s;
    if (!pr || typeof l1 !== "number") continue;
    const x = pr.page_tok_s_median / l1;
    add(`${title(name)}'s page Run on every core (${r.cores}) ≥ 1.3× llama.cpp's one-thread decode`,
      `${times(x)} (${rate(pr.page_tok_s_median)} against ${rate(l1)} tok/s; llama.cpp on ${r.cores} threads ${rate(t.llamacpp?.decode_tok_s)})`, x >= 1.3);
  }
  for (const [name, t] of Object.entries(r.threads_models ?? {})) {
    const tm = t.tab_memory, one = r.tab_memory_models?.[name];
    // The one-thread figure is the page's default, which is one thread only
    // where "auto" means one (2 cores: worker/thread-count.js).
    if (!tm || typeof one?.private_peak_mb !== "number" || one.threads !== 1) continue;
    const x = ratio(tm.private_peak_mb, one.private_peak_mb);
    add(`the playground tab's private peak with ${title(name)} on every core (${r.cores}) ≤ 1.1× its one-thread peak`,
      `${times(x)} (${mib(tm.private_peak_mb)} against ${mib(one.private_peak_mb)})`, x === null ? null : x <= 1.1);
  }
  // The page's answers while every core works for its engine: no slower
  // than on one thread, within the 10% two runs of the same figure differ by.
  const busy = r.busy?.by_threads ?? [];
  const one = busy.find((b) => b.threads === 1), all = busy.find((b) => b.threads === r.cores);
  if (one && all) {
    const within = (x, ref) => (typeof x === "number" && typeof ref === "number" ? x <= 1.1 * ref : null);
    const s1 = one.slider_during_run.frame.p95, sn = all.slider_during_run.frame.p95;
    add(`${title(r.busy.model)}: slider move → frame p95 during a Run on every core (${r.cores}) stays at its one-thread figure (≤ 1.1×)`,
      `${ms(sn)} against ${ms(s1)} ms`, within(sn, s1));
    const c1 = one.step_click_to_token.p50, cn = all.step_click_to_token.p50;
    add(`${title(r.busy.model)}: Step click → token p50 on every core (${r.cores}) stays at its one-thread figure (≤ 1.1×)`,
      `${ms(cn)} against ${ms(c1)} ms`, within(cn, c1));
  }
  const gemma = r.engine[GEMMA];
  if (gemma) {
    const llamaG = r.llamacpp_models?.[GEMMA];
    rel(gemma.browser?.decode_tok_s, llamaG?.decode_tok_s, 0.7, "Gemma 3 270M decode in Chromium ≥ 0.7× llama.cpp's native decode");
    const tab = r.tab_memory_models?.[GEMMA];
    const limit = typeof tab?.file_mb === "number" ? fromMb(tab.file_mb + 150) : null;
    add(`the playground tab's private peak with Gemma 3 270M and 1,024 tokens cached ≤ its file (${fileSize(tab?.file_mb)}) + 150 MB: ${mib(limit)}`,
      typeof tab?.private_peak_mb === "number" ? `${mib(tab.private_peak_mb)}${loadsNote(tab)}` : "–",
      typeof tab?.private_peak_mb === "number" && limit !== null ? tab.private_peak_mb <= limit : null);
    const gp = r.page[GEMMA]?.later?.frame;
    add("slider move → frame p95 on Gemma's 262,144-token distribution < 16 ms", gp?.n ? `${ms(gp.p95)} ms` : "–", gp?.n ? gp.p95 < 16 : null);
    const warm = r.load[GEMMA]?.warm?.first_render;
    add("open page → first distribution on Gemma 3 270M, warm (Cache API), < 2 s (median)", warm ? `${ms(warm.p50)} ms` : "–", warm ? warm.p50 < 2000 : null);
  }
  const f16 = r.tab_memory_f16, q41 = r.tab_memory_q41_file;
  if (f16 && q41) {
    // The Q4_1 file's overhead, opened the same way: what the tab holds beyond its file.
    const overhead = q41.private_peak_mb - fromMb(q41.file_mb);
    const limit = fromMb(f16.file_mb) + overhead;
    add(`the tab's private peak with SmolLM2's F16 copy opened as a user's file ≤ that file (${fileSize(f16.file_mb)}) + the Q4_1 file's overhead over its size, opened the same way (${mib(overhead)}; ${mib(q41.private_peak_mb)}${loadsNote(q41)}): ${mib(limit)}`,
      `${mib(f16.private_peak_mb)}${loadsNote(f16)}${settledOverheads(f16, q41)}`, f16.private_peak_mb <= limit);
  }
  const gz = r.wasm?.gzip_bytes;
  add("wasm module ≤ 2 MB gzipped", r.wasm ? `${(gz / 1e6).toFixed(2)} MB gzipped (${(r.wasm.raw_bytes / 1e6).toFixed(2)} MB raw)` : "–", r.wasm ? gz <= 2e6 : null);
  const newTab = r.load.bard?.cold?.first_render_new_tab;
  const cold = newTab ? r.load.bard.cold.first_render : null;
  add("open page → first distribution on bard < 1 s (cold profile, in a tab already up, median)",
    cold ? `${ms(cold.p50)} ms${newTab ? ` (the page as its new tab's first document: ${ms(newTab.p50)} ms)` : ""}` : "–", cold ? cold.p50 < 1000 : null);
  return list;
}

/** The sizes of a full run, for results written before they were recorded. */
const FULL_SIZE = { nativeRepeats: 5, wasmRepeats: 3, llamaRepeats: 5, moves: 200, smolMoves: 100, pageLoads: 3, steps: 10, loadRuns: 5, smolLoadRuns: 3 };

/**
 * What each figure is, with the counts of the run.
 * @param {typeof FULL_SIZE} z
 * @returns {string[]}
 */
const method = (z) => [
  `- **Native** (\`nexttoken bench --model M --prefill P --decode D --repeats ${z.nativeRepeats} --threads 1\`, release build): prefill = a P-token prompt ` +
    "through the model in one batch from an empty cache; decode = D tokens fed one at a time after it, each the argmax of the " +
    `previous logits; medians of ${z.nativeRepeats} repeats. P = 64 and D = 128, shortened to fit a model's context (bard: 64 + 64; kv-demo: 4 + 4). ` +
    "Load = opening the model (reading, dequantising, building). Peak memory: VmHWM of a separate run whose cache ends with " +
    "1,024 tokens (a 1,000-token prompt and 24 steps).",
  `- **Chromium** (\`node pkg-scripts/bench-engine-wasm.mjs M ${z.wasmRepeats} --json\`): the wasm engine imported into a page (the module the page's worker would take), the model built from its ` +
    `files, then the same P and D through \`Playground.start\` and \`Playground.step\`, medians of ${z.wasmRepeats} repeats after one warm-up prefill ` +
    "(on a toy model a repeat runs until 50 ms have passed: the browser's clock ticks in 0.1 ms). Memory: the renderer process's " +
    "VmRSS and VmHWM (the tab) after the load and once the cache holds 1,024 tokens (a 1,000-token prompt, then steps), and the peak of its " +
    "private memory (RssAnon, sampled every 25 ms from before the load): on Linux that is what Chrome's task manager shows as a tab's " +
    "memory footprint; VmRSS also counts Chromium's own library pages that every renderer maps, shared with the other processes.",
  "- **The inside view's cost** (SmolLM2 only): in the same Chromium page, the D decode steps again after `Playground.set_inside(true)` " +
    "(each step then also captures every layer's attention of its query and runs the logit lens: the final norm and the LM head on " +
    "31 residuals, summarised), `inside_cost` = the step time with the view on over off (`bench-engine-wasm.mjs --inside`); natively " +
    "`nexttoken bench --inside` times whole greedy session steps (rules and report included) with the view off and on.",
  "- **The playground tab's memory** (`node pkg-scripts/bench-tab-memory.mjs --tokens=1024 --json`): a fresh browser (empty Cache API) opens " +
    "`index.html?model=smollm2-135m` with a 1,000-token prompt and `steps=24`, so the worker prefills the prompt and replays 24 steps and the " +
    "cache holds 1,024 positions (read back from the KV panel). Private peak: the renderer's RssAnon (its worker runs in the same process), " +
    "sampled every 25 ms from navigation to 2 s after the 24th token: on Linux that is Chrome's private memory footprint, the figure its task " +
    "manager shows as a tab's memory, garbage not yet collected included, so it moves with the garbage collector's timing: the page is " +
    `opened ${z.memoryLoads ?? 1} time(s), each in a fresh browser, and the figures are those of the median load. ` +
    "Chrome's footprint once settled: its own memory-infra dump of that " +
    "process (a deterministic dump: after a garbage collection). Resident (VmHWM) is not the target's measure: it also counts about 120 MiB " +
    "of the browser's own library, ICU and font pages that every Chromium process maps and shares (the blank page's resident figure above is mostly those), so with " +
    "SmolLM2's 98 MB file kept as the weights and the engine's compiled code beside it, no page could hold it under 300 MB. " +
    "A user's file (`--file=PATH`: SmolLM2's F16 copy, and its Q4_1 file as the F16 row's basis): the page opens on the tiny kv-demo model, " +
    "the file is given to its \"Open a GGUF file…\" input, the prompt is typed and the 24 tokens are Step clicks, each a full paint. " +
    "Units: every memory figure is MiB (2^20 bytes: /proc's KiB over 1,024, Chrome's dumps' bytes over 2^20); file and module sizes are " +
    "MB (10^6 bytes); a target written in MB, or against a file's size, is converted to MiB before the comparison.",
  `- **llama.cpp** (\`pkg-scripts/bench-llamacpp GGUF --threads 1 --repeats ${z.llamaRepeats} --decode-prompt 64\`, llama-cpp-python built without AMX; ` +
    "`pkg-scripts/bench` installs it when it is missing): prefill = the same-length prompt in one `eval`, decode = D tokens one `eval` " +
    `each after a 64-token prompt; medians of ${z.llamaRepeats} after a warm-up; its peak memory includes Python's.`,
  `- **Slider** (\`node pkg-scripts/bench-page.mjs M MOVES ${z.steps} 0 --loads=${z.pageLoads} --no-beam --json\`): the page opened ${z.pageLoads} time(s), each in a freshly launched browser, ` +
    "with `?bench=1`; after the model is ready and the page's own Previewer holds its state, the temperature slider is moved by " +
    `ArrowRight/ArrowLeft presses one at a time (${z.moves} on bard, ${z.smolMoves} on SmolLM2). A move's time runs from the input event's timeStamp ` +
    "to the first animation frame after the DOM holds the new numbers (`window.__ntpPerf`; under 16 ms = the very next frame), and " +
    "to the first task after that frame is painted (`window.__ntpPerfPainted`); the page's work is the event → its input handler done. " +
    `The first move of each load is listed on its own; the later ones are pooled. Step click → token: ${z.steps} Step clicks, each until the ` +
    "output shows one more token.",
  `- **Inside** (\`node pkg-scripts/bench-inside.mjs smollm2-135m ${z.insideTokens ?? 32} --rounds=${z.insideRounds ?? 2} --json\`): one SmolLM2 page, ` +
    "greedy, no stop string; after a warm-up Run, Runs of that many tokens from Reset alternate between the inside panel closed and open; " +
    "the figure is the worker's time per token (decode step and its report, with every layer's attention weights when open, and the logit lens " +
    "at most every 400 ms and on the run's last step), the mean of each, and their ratio; also the runs' tokens/s.",
  `- **Page Run** (\`node pkg-scripts/bench-page-run.mjs M ${z.runTokens ?? 64} --rounds=${z.runRounds ?? 5} --json\`): in one browser, rounds alternate ` +
    "between the playground (its default panels, greedy, no stop string: Reset, then a Run of that many tokens, timed on the page's clock from " +
    "the click to the last token shown, seen by a MutationObserver, so the timing itself draws no frames) and the same engine and model in a bare page (`Playground.start` on the same prompt, then that many `step` calls back " +
    "to back); the figure is the ratio of the median tokens/s, after one warm-up of each.",
  `- **Answers while the engine works** (\`node pkg-scripts/bench-page-busy.mjs smollm2-135m --threads=1,N --moves=${z.busyMoves ?? 120} --steps=${z.busySteps ?? 10} --json\`): ` +
    "a playground page per thread count, with the slider figures' rules on, no stop string and the end token banned; a Run is started and, once " +
    "it shows a few tokens, the temperature slider is moved by key presses one at a time, after pauses of 23 to 89 ms (so the moves land anywhere " +
    "in a token's time), each timed as in the slider figures; then the Run is stopped and Step clicked, each timed click → token shown.",
  "- **Every core** (`nexttoken bench --model M --threads N`, `pkg-scripts/bench-llamacpp GGUF --threads N`, N = the machine's cores): as the " +
    "one-thread native measures, on N threads each; in the browser the Page Run with `--threads=N` (the page's URL asks for N threads; its " +
    "worker's helper workers take part in every product, on a cross-origin isolated page), and the playground tab's memory with " +
    "`bench-tab-memory.mjs --model=M --threads=N`, as on one thread (the helpers share the engine's memory; they add their own stacks " +
    "and JavaScript heaps).",
  "- **Load** (`node pkg-scripts/bench-load.mjs N --model=M [--warm] --json`): the page's own clock when the first distribution is in " +
    "the DOM, from navigation start; cold = a fresh browser profile per load (empty Cache API: the files come from localhost), " +
    `warm = one profile opened once before the timed loads (the weights from the Cache API). ${z.loadRuns} loads on bard, ${z.smolLoadRuns} on SmolLM2. ` +
    "Each timed load goes to the page from about:blank in a tab already up, once the machine is idle (as Lighthouse starts its loads, and as a " +
    "browser that keeps a spare renderer process opens a link to a new site); cold runs also time the page as its new tab's first document, " +
    "whose renderer starts beside the page's own work (on 2 cores that cost bard's cold open about 200–370 ms more).",
  "- **Size**: `www/pkg/nexttoken_bg.wasm` as built, and through `gzip -9` (MB = 10⁶ bytes).",
];

// ---------------------------------------------------------------- comparison

/**
 * The figures a change is judged by, flat: key, label, value, and whether higher is better.
 * @param {any} r
 * @returns {{ key: string, label: string, value: number, higher: boolean }[]}
 */
export function headlines(r) {
  const list = [];
  const add = (key, label, value, higher) => { if (typeof value === "number" && Number.isFinite(value)) list.push({ key, label, value, higher }); };
  // The toy models' figures time little but the loop: too noisy to judge a change by.
  for (const name of (r.models ?? []).filter((m) => !BUILTINS.includes(m))) {
    const e = r.engine?.[name] ?? {};
    add(`${name}.native.decode`, `${name}: native decode tok/s`, e.native?.decode_tok_s, true);
    add(`${name}.native.prefill`, `${name}: native prefill tok/s`, e.native?.prefill_tok_s, true);
    add(`${name}.browser.decode`, `${name}: Chromium decode tok/s`, e.browser?.decode_tok_s, true);
    add(`${name}.browser.prefill`, `${name}: Chromium prefill tok/s`, e.browser?.prefill_tok_s, true);
  }
  const smol = r.engine?.[SMOL];
  add("llama.decode", "llama.cpp decode tok/s (SmolLM2)", r.llamacpp?.decode_tok_s, true);
  add("llama.prefill", "llama.cpp prefill tok/s (SmolLM2)", r.llamacpp?.prefill64_tok_s, true);
  add("smol.browser.decode_ratio", "SmolLM2 Chromium decode / llama.cpp", ratio(smol?.browser?.decode_tok_s, r.llamacpp?.decode_tok_s), true);
  add("smol.native.decode_ratio", "SmolLM2 native decode / llama.cpp", ratio(smol?.native?.decode_tok_s, r.llamacpp?.decode_tok_s), true);
  add("smol.browser.prefill_ratio", "SmolLM2 Chromium prefill / llama.cpp", ratio(smol?.browser?.prefill_tok_s, r.llamacpp?.prefill64_tok_s), true);
  add("smol.native.prefill_ratio", "SmolLM2 native prefill / llama.cpp", ratio(smol?.native?.prefill_tok_s, r.llamacpp?.prefill64_tok_s), true);
  add("smol.tab_peak", "SmolLM2 tab peak MiB, 1,024 cached", smol?.browser?.memory?.tab_peak_mb, false);
  add("smol.tab_private_peak", "SmolLM2 tab private peak MiB, 1,024 cached", smol?.browser?.memory?.tab_private_peak_mb, false);
  add("page.private_peak", "playground tab private peak MiB, SmolLM2, 1,024 cached", r.tab_memory?.private_peak_mb, false);
  add("page.footprint", "playground tab Chrome footprint MiB, SmolLM2, 1,024 cached", r.tab_memory?.footprint_mb, false);
  add("page.resident_peak", "playground tab resident peak MiB, SmolLM2, 1,024 cached", r.tab_memory?.resident_peak_mb, false);
  add("smol.native_peak", "SmolLM2 native peak RSS MiB, 1,024 cached", r.native_memory?.peak_rss_mb, false);
  const gemma = r.engine?.[GEMMA], llamaG = r.llamacpp_models?.[GEMMA];
  add("gemma.llama.decode", "llama.cpp decode tok/s (Gemma 3 270M)", llamaG?.decode_tok_s, true);
  add("gemma.browser.decode_ratio", "Gemma 3 270M Chromium decode / llama.cpp", ratio(gemma?.browser?.decode_tok_s, llamaG?.decode_tok_s), true);
  add("gemma.browser.prefill_ratio", "Gemma 3 270M Chromium prefill / llama.cpp", ratio(gemma?.browser?.prefill_tok_s, llamaG?.prefill64_tok_s), true);
  add("gemma.page.private_peak", "playground tab private peak MiB, Gemma 3 270M, 1,024 cached", r.tab_memory_models?.[GEMMA]?.private_peak_mb, false);
  add("smol.f16.page.private_peak", "playground tab private peak MiB, SmolLM2 F16 copy, 1,024 cached", r.tab_memory_f16?.private_peak_mb, false);
  add("smol.q41file.page.private_peak", "playground tab private peak MiB, SmolLM2 Q4_1 opened as a file, 1,024 cached", r.tab_memory_q41_file?.private_peak_mb, false);
  for (const name of ["bard", SMOL, GEMMA]) {
    const p = r.page?.[name];
    add(`${name}.slider.first`, `${name}: first slider move → frame ms (median)`, p ? median(p.first.frame) : null, false);
    add(`${name}.slider.p95`, `${name}: slider move → frame p95 ms`, p?.later?.frame?.p95, false);
    // `load.cold` keeps its earlier meaning (the page as its new tab's first
    // document; runs before this split have only that), so changes compare like with like.
    const cold = r.load?.[name]?.cold;
    add(`${name}.load.cold`, `${name}: open → first distribution, cold, as a new tab's first document ms`,
      (cold?.first_render_new_tab ?? cold?.first_render)?.p50, false);
    add(`${name}.load.cold_tab_up`, `${name}: open → first distribution, cold, in a tab already up ms`,
      cold?.first_render_new_tab ? cold.first_render.p50 : null, false);
    add(`${name}.load.warm`, `${name}: open → first distribution, warm ms`, r.load?.[name]?.warm?.first_render?.p50, false);
  }
  for (const name of [SMOL, GEMMA]) add(`${name}.page_run.ratio`, `${name}: page Run / engine alone, tokens/s`, r.page_run?.[name]?.ratio, true);
  for (const b of r.busy?.by_threads ?? []) {
    add(`smol.busy.${b.threads}.slider.p95`, `SmolLM2: slider move → frame p95 ms during a Run on ${b.threads} thread(s)`, b.slider_during_run.frame.p95, false);
    add(`smol.busy.${b.threads}.step.p50`, `SmolLM2: Step click → token p50 ms on ${b.threads} thread(s)`, b.step_click_to_token.p50, false);
  }
  add("smol.inside.ratio", "SmolLM2 page Run: inside panel open / closed, worker's time per token", r.inside?.ratio, false);
  add("wasm.gzip", "wasm gzipped bytes", r.wasm?.gzip_bytes, false);
  add("wasm.raw", "wasm raw bytes", r.wasm?.raw_bytes, false);
  return list;
}

/**
 * The change from the previous run, as a markdown table.
 * @param {any} before
 * @param {any} now
 */
export function renderComparison(before, now) {
  const old = new Map(headlines(before).map((h) => [h.key, h]));
  const rows = [];
  for (const h of headlines(now)) {
    const o = old.get(h.key);
    if (!o) continue;
    const change = o.value !== 0 ? (h.value - o.value) / Math.abs(o.value) : null;
    const better = change === null || Math.abs(change) < 0.005 ? "" : (change > 0) === h.higher ? " better" : " worse";
    const fmt = (x) => (Math.abs(x) < 1 ? x.toFixed(3) : Math.abs(x) < 10 ? x.toFixed(2) : Math.abs(x) < 1000 ? x.toFixed(1) : grouped(x));
    rows.push(`| ${h.label} | ${fmt(o.value)} | ${fmt(h.value)} | ${change === null ? "–" : `${change >= 0 ? "+" : ""}${(change * 100).toFixed(1)} %${better}`} |`);
  }
  const head = `Change since the previous run (${before.date} at ${before.source?.commit ?? "?"}${before.quick ? ", --quick" : ""}; ` +
    "this machine's speed varies from run to run: a few per cent is noise):";
  return [head, "", "| figure | before | now | change |", "|---|---|---|---|", ...rows].join("\n");
}

// ---------------------------------------------------------------- BENCHMARKS.md

/** The speed section's heading, under which every kind's block sits. */
const SECTION = "## Speed, memory and size: `pkg-scripts/bench` (issue 9)";

/**
 * Put the run between its kind's markers in a BENCHMARKS.md file; a kind
 * without a block yet gets one at the end of the speed section (the section
 * is added before the first section when missing). Other kinds' blocks stay.
 * @param {string} file
 * @param {any} r
 */
export function writeBenchmarks(file, r) {
  writeFileSync(file, placeRun(readFileSync(file, "utf8"), machineKind(r.machine), renderSection(r)));
}

/**
 * BENCHMARKS.md's text with `section` (a run's markdown) as `kind`'s block.
 * @param {string} text
 * @param {{ key: string, name: string }} kind
 * @param {string} section
 * @returns {string}
 */
export function placeRun(text, kind, section) {
  // The kind is a level-3 heading, so the run's own tables go one deeper.
  const tables = section.replace(/^### /gm, "#### ");
  const body = `${begin(kind)}\n<!-- generated by pkg-scripts/bench --write on this kind of machine; edits here are overwritten -->\n\n` +
    `### ${kind.name}: the last run on this kind of machine\n\n${tables}\n\n${end(kind)}`;
  const a = text.indexOf(begin(kind)), b = text.indexOf(end(kind));
  let next;
  if (a >= 0 && b > a) {
    next = text.slice(0, a) + body + text.slice(b + end(kind).length);
  } else if (text.includes(SECTION)) {
    // After the last kind's block, or else right under the heading's text.
    const from = text.indexOf(SECTION);
    const nextSection = text.slice(from + SECTION.length).search(/^## /m);
    const sectionEnd = nextSection >= 0 ? from + SECTION.length + nextSection : text.length;
    const lastEnd = text.lastIndexOf("<!-- bench:end ", sectionEnd);
    const at = lastEnd > from ? text.indexOf("-->", lastEnd) + 3 : sectionEnd;
    next = `${text.slice(0, at).trimEnd()}\n\n${body}\n\n${text.slice(at).trimStart()}`;
  } else {
    const at = text.search(/^## /m);
    const block = `${SECTION}\n\n${body}\n\n`;
    next = at >= 0 ? text.slice(0, at) + block + text.slice(at) : `${text.trimEnd()}\n\n${block}`;
  }
  return next;
}

// Run alone: re-render the last results.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = path.join(process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(ROOT, "target"), "bench");
  const latest = path.join(dir, "latest.json");
  if (!existsSync(latest)) {
    console.error(`bench-report: no ${path.relative(ROOT, latest)}: run pkg-scripts/bench first`);
    process.exit(1);
  }
  const r = JSON.parse(readFileSync(latest, "utf8"));
  console.log(renderSection(r));
  const prev = path.join(dir, `previous-${machineKind(r.machine).key}.json`);
  if (existsSync(prev)) console.log("\n" + renderComparison(JSON.parse(readFileSync(prev, "utf8")), r));
  if (process.argv.includes("--write")) writeBenchmarks(path.join(ROOT, "BENCHMARKS.md"), r);
}
