// The engine's thread. The wasm Playground lives here so the page never
// blocks; every request carries an id that the reply echoes, so the page can
// drop replies it no longer wants.
//
// The messages both ways, and what each carries, are in www/PROTOCOL.md
// (the protocol's one text): requests in, replies with the request's id out,
// a report's `pending` logits for the page's own Previewer, the `vocab`
// message after a load's first report.
// (Over 400 lines: the worker's one job is the message loop over the engine; every request kind is a short handler here so the protocol reads in one place, see PROTOCOL.md.)

import init, { FileBuffer, Playground, set_panic_hook } from "../pkg/nexttoken.js";
import { fetchModelFiles, fetchCachedBytes, forgetCached, readUserFile } from "./downloads.js";
import { yieldToMessages } from "./yield.js";
import { helperFailed, useThreads } from "./thread-pool.js";
import { engineModuleUrl } from "./engine-wasm.js";

/** @type {any} the wasm Playground, null until loaded */
let pg = null;
/** Id of the run in progress (null when none) and whether a stop came in. */
let running = null;
let stopWanted = false;
/** Ids of stop requests waiting for the run to settle. */
let stopWaiters = [];
/** The settings the run in progress draws with (a run_settings message updates them). */
let runSettings = null;
/**
 * Whether the page's inside panel is open: every model loaded is told, so
 * while it is closed the engine computes no attention weights or logit lens.
 */
let insideWanted = false;
/** A prompt has been started on the current model (inside_now needs one). */
let started = false;
/**
 * During a run the logit lens (a pass of the unembedding per layer: on
 * SmolLM2 about four times the step itself in wasm) is computed for a report
 * at most this often; the others carry the attention only (`lens: []`) and
 * the page keeps showing the last lens. Every other report has it.
 */
const RUN_LENS_EVERY_MS = 400;

/**
 * The engine, compiled as soon as this worker starts (while the page is still
 * reading its model catalogue) and instantiated here. The compiled module is
 * also sent to the page with the `vocab` message, so the page's own Previewer
 * instantiates it without compiling 5 MB of wasm a second time.
 * @type {Promise<{ module: WebAssembly.Module, memory: WebAssembly.Memory }>}
 */
const engineReady = (async () => {
  const module = await compileEngine(engineModuleUrl(self.location.search));
  const exports = await init({ module_or_path: module });
  set_panic_hook();
  // The memory the glue made for the module (shared in a threads build):
  // helper threads instantiate the module on it.
  return { module, memory: /** @type {WebAssembly.Memory} */ (exports.memory) };
})();
engineReady.catch(() => {}); // the load that awaits it reports the failure

/**
 * Compile while downloading; a host that serves wasm without the
 * application/wasm type gets the slower whole-file compile instead.
 * @param {URL} url
 * @returns {Promise<WebAssembly.Module>}
 */
async function compileEngine(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`could not fetch ${url} (HTTP ${res.status}); is www/pkg/ built (pkg-scripts/build)?`);
  if (typeof WebAssembly.compileStreaming === "function" && res.headers.get("content-type") === "application/wasm") {
    return WebAssembly.compileStreaming(res);
  }
  return WebAssembly.compile(await res.arrayBuffer());
}

/** When the request being handled arrived (replies carry the engine's time, `ms`). */
let requestStart = 0;

self.onmessage = (event) => {
  const msg = event.data;
  // Not a request: nothing is timed or cancelled for it.
  if (msg?.type === "recycle") { recycle(msg.logits); return; }
  if (msg?.type === "helper_failed") { helperFailed(msg.id, msg.message); return; }
  requestStart = performance.now();
  handle(msg).catch((err) => reportError(msg.id, err));
};

/**
 * Dispatch one request.
 * @param {{ id: number, type: string, [k: string]: any }} msg
 */
async function handle(msg) {
  const { id, type } = msg;
  // Anything that uses the model ends a beam search in progress: the next
  // change cancels it (previews and a run's new settings do not touch it).
  if (!KEEPS_BEAM.has(type)) cancelBeam();
  // The same for runs of compared configurations (the engine ends them too).
  if (!KEEPS_COMPARE.has(type)) cancelCompare(`stopped: ${USES_OF_THE_MODEL[type] ?? `a ${type} request used the model`}`);
  if (type === "load") { insideWanted = !!msg.inside; return load(id, msg.model, msg.kv_type); }
  if (type === "stop") return stop(id);
  if (type === "threads") return threads(id, msg.want);
  if (!pg) throw new Error("no model is loaded yet");
  switch (type) {
    case "reset": return replyWithState(id, prefill(msg.prompt, msg.settings));
    case "step": return replyWithState(id, decode(msg.settings));
    case "preview": return reply(id, { kind: "preview", distribution: pg.preview(msg.settings) });
    case "run_settings":
      // A setting moved during a run: the run draws its next tokens with the
      // new rules (nothing is computed for this message).
      if (running !== null) runSettings = msg.settings;
      return reply(id, { kind: "run_settings", running: running !== null });
    case "rewind": return replyWithState(id, { kind: "step", report: pg.rewind(msg.n, msg.settings) });
    case "beam": return beam(id, msg.settings);
    case "set_logits": { // the prompt restarts on the new vector: a StepReport
      const report = pg.set_logits(Float64Array.from(msg.logits), msg.prompt, msg.settings);
      started = true;
      return replyWithState(id, { kind: "step", report });
    }
    case "train": return replyWithState(id, { kind: "train", result: pg.train_bigram(msg.steps, BigInt(msg.seed)) });
    case "score": {
      // Teacher-forced in one pass; the generation state is left alone, so no `pending`.
      return reply(id, { kind: "score", score: pg.score(msg.text, !!msg.chat), ms: performance.now() - requestStart });
    }
    case "run": return run(id, msg.settings);
    case "inside": return inside(id, !!msg.on);
    case "compare": return compare(id, msg);
    case "compare_cancel": cancelCompare("cancelled"); return reply(id, { kind: "compare_cancelled" });
    default: throw new Error(`unknown request type "${type}"`);
  }
}

/**
 * The prompt's prefill (tokenise, one batched pass over the prompt, the first
 * report), timed around the engine call alone.
 * @param {string} prompt
 * @param {object} settings
 */
function prefill(prompt, settings) {
  const t0 = performance.now();
  const report = pg.start(prompt, settings);
  const ms = performance.now() - t0;
  started = true;
  return { kind: "step", report, timing: { phase: "prefill", tokens: report.full.prompt_tokens.length, ms } };
}

/**
 * One decode step (draw a token, feed it, the step's report), timed around
 * the engine call alone.
 * @param {object} settings
 */
function decode(settings) {
  const t0 = performance.now();
  const report = pg.step(settings);
  const ms = performance.now() - t0;
  return { kind: "step", report, timing: { phase: "decode", tokens: 1, ms } };
}

/**
 * Post a report reply.
 * @param {number} id
 * @param {object} payload
 */
function reply(id, payload) {
  self.postMessage({ id, type: "report", ...payload }, insideBuffers(payload.inside));
}

/**
 * Use `want` threads from now on (thread-pool.js asks the page for the helpers); the
 * reply says how many are in force and, when fewer, why. A run in progress
 * takes the new count at its next product.
 * @param {number} id
 * @param {"auto"|number} want
 */
async function threads(id, want) {
  const { module, memory } = await engineReady;
  reply(id, { kind: "threads", ...await useThreads(want ?? "auto", module, memory) });
}

/**
 * The inside panel opened or closed: the engine is told, and an open panel
 * gets the inside of the pending position at once (`inside_now`), without
 * waiting for the next step.
 * @param {number} id
 * @param {boolean} on
 */
function inside(id, on) {
  insideWanted = on;
  const supported = typeof pg.set_inside === "function";
  if (supported) pg.set_inside(on);
  reply(id, { kind: "inside", inside: on && supported && started ? pg.inside_now() : null, supported });
}

/**
 * The attention weights of an InsideReport, to transfer rather than copy.
 * Only arrays that own their whole buffer go: a view into the engine's
 * memory would detach the wasm memory itself.
 * @param {any} inside an InsideReport or null
 * @returns {ArrayBuffer[]}
 */
function insideBuffers(inside) {
  if (!inside) return [];
  return inside.attention.map((/** @type {{ weights: Float32Array }} */ a) => a.weights)
    .filter((w) => w instanceof Float32Array && w.byteOffset === 0 && w.byteLength === w.buffer.byteLength)
    .map((w) => w.buffer);
}

/**
 * Post a report reply with the engine's pending state attached.
 * @param {number} id
 * @param {object} payload
 * @param {object} [extra] more fields (final)
 */
function replyWithState(id, payload, extra = {}) {
  const pending = pendingState();
  const ms = performance.now() - requestStart;
  self.postMessage({ id, type: "report", ms, ...payload, ...extra, pending },
    [pending.logits.buffer, pending.history.buffer, ...insideBuffers(payload.report?.inside)]);
  sendOwedVocab();
}

/**
 * What the page's Previewer needs: the raw logits of the next position, the
 * token history (for the penalties), the position, and the sampler state
 * (the RNG's next number and mirostat's mu, for XTC's and mirostat's cuts).
 * @returns {{ logits: Float64Array, history: Uint32Array, position: number, sampler: { next_coin: number, mirostat_mu: number|null } }}
 */
function pendingState() {
  return { logits: pendingLogits(), history: pg.history(), position: pg.pending_position(), sampler: pg.pending_sampler_state() };
}

/**
 * Logits arrays the page has handed back (`recycle`) once its Previewer
 * copied them, to be filled again: a new 393 KB array with every step of
 * SmolLM2 was garbage left for the collector, about 10 MB of the tab's
 * private memory after 24 steps (measured with and without the logits).
 * @type {Float64Array[]}
 */
const spareLogits = [];
/** Enough for the array in flight and the one coming back. */
const SPARE_LOGITS = 2;

/** The pending logits, in a recycled array when one of the right length is here. */
function pendingLogits() {
  const spare = spareLogits.pop();
  if (spare && pg.pending_logits_into(spare)) return spare;
  return pg.pending_logits();
}

/**
 * Turn a thrown value into an error message. A RuntimeError from wasm is a
 * Rust panic ("unreachable"): the instance cannot be trusted any more.
 * @param {number} id
 * @param {unknown} err
 */
function reportError(id, err) {
  const fatal = err instanceof WebAssembly.RuntimeError;
  const message = err instanceof Error ? err.message : String(err);
  if (fatal) pg = null;
  self.postMessage({ id, type: "error", message, fatal });
}

/**
 * Build the Playground for a model. Its files download while the engine
 * compiles (a fresh worker does both at once). The model loaded before stays
 * in place until the new one is built, so a file the engine refuses leaves
 * the page with a working model.
 * @param {number} id
 * @param {{ builtin?: string, base?: string, gguf?: string, bytes?: number, version?: string, file?: Blob, name?: string }} model
 * @param {string} [kvType] one of the engine's KV types: the KV cache's numbers (the engine checks it); absent: the model's own
 */
async function load(id, model, kvType) {
  const t0 = performance.now();
  const timings = {};
  const done = (/** @type {any} */ f) => { timings.files_ms = performance.now() - t0; return f; };
  let files = null;
  // A GGUF file streams straight into the engine's memory (a FileBuffer,
  // once the engine is up), which the model then keeps as its weights; a
  // file from the user's disk the same way, from the handle the page sent.
  const engineBuffer = async (/** @type {number} */ n) => { await engineReady; return new FileBuffer(n); };
  if (model.base) files = fetchModelFiles(id, model.base).then(done);
  else if (model.gguf) files = fetchCachedBytes(id, model.gguf, model.version ?? "1", model.bytes ?? 0, engineBuffer).then(done);
  else if (model.file) files = readUserFile(id, model.file, model.name ?? "model.gguf", engineBuffer).then(done);
  files?.catch(() => {}); // awaited below; this only keeps an early failure from counting as unhandled
  const { module } = await engineReady;
  timings.wasm_ms = performance.now() - t0;
  let fetched = await files;
  files = null; // the promise would keep the bytes alive while the engine builds
  const t1 = performance.now();
  // Bytes the engine refuses are not kept for the next try (downloads.js forgetCached).
  const forget = model.base ? fetched.forget : model.gguf ? () => forgetCached(model.gguf, model.version ?? "1") : async () => {};
  let next;
  try {
    next = build(id, model, fetched, kvType);
  } catch (err) {
    await forget();
    throw err;
  } finally {
    fetched = null;
  }
  timings.build_ms = performance.now() - t1;
  if (pg && typeof pg.free === "function") pg.free();
  pg = next;
  started = false;
  if (typeof pg.set_inside === "function") pg.set_inside(insideWanted);
  timings.sent = performance.timeOrigin + performance.now();
  self.postMessage({ id, type: "ready", info: pg.info(), timings });
  // The page's Previewer names tokens from the vocabulary; listing it waits
  // until the first report is out, so the first distribution is not behind it.
  vocabOwed = module;
}

/**
 * The engine's model from what load() fetched.
 * @param {number} id
 * @param {{ builtin?: string, base?: string, gguf?: string, file?: Blob, name?: string }} model
 * @param {any} fetched
 * @param {string} [kvType] ignored by the built-in course models (their numbers are the course's)
 * @returns {any} a Playground
 */
function build(id, model, fetched, kvType) {
  let next;
  if (model.builtin) {
    next = Playground.builtin(model.builtin);
  } else if (model.base) {
    next = Playground.from_files(fetched.manifestText, fetched.weights, fetched.tokenizer, undefined, kvType);
  } else if (model.gguf || model.file) {
    if (typeof Playground.from_gguf !== "function") throw new Error("this engine build cannot read GGUF files yet (no Playground.from_gguf; rebuild www/pkg)");
    const name = model.file ? (model.name ?? "model.gguf") : model.gguf.split("/").pop();
    const size = fetched.length;
    self.postMessage({ id, type: "progress", loaded: size, total: size, what: name, stage: "build" });
    const buffer = fetched;
    fetched = null;
    next = Playground.from_gguf_buffer(buffer, name, undefined, kvType); // takes the buffer over
  } else {
    throw new Error("load: the model names no source (builtin, base, gguf or file)");
  }
  return next;
}

/** Set by a load: the vocabulary (and compiled module) still to send the page. @type {WebAssembly.Module|null} */
let vocabOwed = null;

/** Send the vocabulary a load still owes the page (after a report, so behind it). */
function sendOwedVocab() {
  if (!vocabOwed || !pg) return;
  const module = vocabOwed;
  vocabOwed = null;
  // Two typed arrays, transferred: not 2 × 49,152 strings built, cloned and
  // rebuilt in both threads (40 MB of the SmolLM2 tab after a load, measured).
  const [bytes, ends] = pg.vocab_packed();
  self.postMessage({ type: "vocab", vocab: { bytes, ends }, module }, [bytes.buffer, ends.buffer]);
}

/**
 * Generate token by token, yielding to the message loop between tokens so a
 * stop request gets in. Each token is posted as a report with final = false;
 * the last message has final = true.
 * @param {number} id
 * @param {object} settings
 */
async function run(id, settings) {
  if (running !== null) throw new Error("a run is already in progress");
  running = id;
  runSettings = settings;
  stopWanted = false;
  let why = null;
  const lens = runLens();
  try {
    for (let i = 0; i < settings.max_new; i++) {
      if (stopWanted) { why = "stopped"; break; }
      requestStart = performance.now();
      lens.before(i === settings.max_new - 1);
      const step = decode(runSettings);
      lens.after();
      replyWithState(id, step, { final: false });
      if (step.report.stop) { why = step.report.stop; break; }
      await yieldToMessages();
    }
  } finally {
    lens.end();
    running = null;
    // A stop always settles: answer every waiting stop, even after an error.
    for (const w of stopWaiters) self.postMessage({ id: w, type: "report", kind: "stopped" });
    stopWaiters = [];
  }
  self.postMessage({ id, type: "report", kind: "run_end", why: why ?? "max_new", final: true });
}

/**
 * The lens's schedule for one run: on for a step when RUN_LENS_EVERY_MS have
 * passed since the last lens ended, and for the run's last step when it is
 * known (max_new); back on when the run ends.
 */
function runLens() {
  const settable = insideWanted && pg && typeof pg.set_inside_lens === "function";
  let lastEnd = -Infinity;
  let on = true;
  return {
    before(/** @type {boolean} */ last) {
      if (!settable) return;
      const want = last || performance.now() - lastEnd >= RUN_LENS_EVERY_MS;
      if (want !== on) pg.set_inside_lens(want);
      on = want;
    },
    after() { if (on) lastEnd = performance.now(); },
    end() { if (settable && !on && pg) pg.set_inside_lens(true); },
  };
}

/** Requests that leave a beam search in progress alone. */
const KEEPS_BEAM = new Set(["preview", "run_settings", "stop", "threads"]);
/** Requests that leave runs of compared configurations alone (compare_cancel ends them itself). */
const KEEPS_COMPARE = new Set(["preview", "run_settings", "stop", "compare_cancel", "threads"]);
/** What ended runs of compared configurations, in the page's words. */
const USES_OF_THE_MODEL = {
  load: "another model was loaded", reset: "a new prompt started", step: "a Step used the model", run: "a Run used the model",
  rewind: "a step back used the model", beam: "a beam search used the model", score: "scoring a text used the model",
  set_logits: "new logits were set", train: "the model was retrained", inside: "the inside panel used the model",
  compare: "new runs started",
};

/**
 * Keep a logits array the page is done with, for the next report (no reply).
 * @param {unknown} logits
 */
function recycle(logits) {
  if (logits instanceof Float64Array && spareLogits.length < SPARE_LOGITS) spareLogits.push(logits);
}

/** The beam search in progress: its request id, and whether it was cancelled. */
let beamJob = null;

/**
 * Beam search, one depth per engine call with a yield in between, so the
 * page stays answered and a later request cancels it. Intermediate replies
 * `beam_progress { depth, of }`; the last is `beam { beam }`, or
 * `beam { beam: null, cancelled: true }` when a later request ended it.
 * @param {number} id
 * @param {object} settings
 */
async function beam(id, settings) {
  const job = { id, cancelled: false };
  beamJob = job;
  try {
    let progress = pg.beam_start(settings);
    while (!progress.done) {
      self.postMessage({ id, type: "report", kind: "beam_progress", depth: progress.depth, of: progress.of, final: false });
      await yieldToMessages();
      if (job.cancelled) return reply(id, { kind: "beam", beam: null, cancelled: true });
      progress = pg.beam_next();
    }
    return reply(id, { kind: "beam", beam: pg.beam_finish(), ms: performance.now() - requestStart });
  } finally {
    if (beamJob === job) beamJob = null;
  }
}

/** Ends the beam search in progress, if any (its request answers `cancelled`). */
function cancelBeam() {
  if (!beamJob) return;
  beamJob.cancelled = true;
  beamJob = null;
  pg?.beam_cancel();
}

/**
 * Ask the run to stop; the reply comes when it has.
 * @param {number} id
 */
function stop(id) {
  if (running === null) {
    self.postMessage({ id, type: "report", kind: "stopped" });
    return;
  }
  stopWanted = true;
  stopWaiters.push(id);
}

/** The runs of compared configurations in progress: their request id, and whether (and why) they were cancelled. */
let compareJob = null;
/** How often the runs' progress is posted (a toy model's tokens come far faster than a frame). */
const COMPARE_PROGRESS_MS = 50;

/**
 * Runs of continuations under two configurations, from the same prompt with
 * the same seeds: one token per engine call with a yield in between, as the
 * beam search, so the page stays answered and a later request cancels them.
 * Intermediate replies `compare_progress { done_runs, total_runs, tokens }`;
 * the last is `compare { result }`, or `compare { result: null, cancelled:
 * true, why }`. The session's own state is left as it was.
 * @param {number} id
 * @param {{ prompt: string, settings_a: object, settings_b: object, runs: number, max_new: number }} msg
 */
async function compare(id, msg) {
  if (typeof pg.compare_start !== "function") throw new Error("this engine build cannot compare configurations (no compare_start): rebuild www/pkg with pkg-scripts/build");
  const job = { id, cancelled: false, why: "" };
  compareJob = job;
  const t0 = performance.now();
  try {
    let progress = pg.compare_start(msg.prompt, msg.settings_a, msg.settings_b, msg.runs, msg.max_new);
    let posted = -Infinity;
    while (!progress.finished) {
      if (performance.now() - posted >= COMPARE_PROGRESS_MS) {
        posted = performance.now();
        self.postMessage({ id, type: "report", kind: "compare_progress", done_runs: progress.done_runs,
          total_runs: progress.total_runs, tokens: progress.tokens, final: false });
      }
      await yieldToMessages();
      if (job.cancelled) return reply(id, { kind: "compare", result: null, cancelled: true, why: job.why });
      progress = pg.compare_next();
    }
    return reply(id, { kind: "compare", result: pg.compare_finish(), ms: performance.now() - t0 });
  } finally {
    if (compareJob === job) compareJob = null;
  }
}

/**
 * Ends the runs of compared configurations in progress, if any (their request answers `cancelled`).
 * @param {string} why said to the page
 */
function cancelCompare(why) {
  if (!compareJob) return;
  compareJob.cancelled = true;
  compareJob.why = why;
  compareJob = null;
  pg?.compare_cancel?.();
}
