// The decoding rules on the page's own thread. A slider move only re-runs the
// rules on the pending raw logits, so the page keeps its own copy of them (sent
// by the worker with every report) and a wasm `Previewer` that answers in the
// same input task: no worker round trip, every panel repaints in one frame.
// Until it is ready (wasm loading, vocabulary not yet received, or no logits
// yet) `ready` is false and the page asks the worker instead.

/** The wasm module, imported on first use (a failed import leaves the worker path). */
let enginePromise = null;
/** The module once instantiated, and who waits for it. */
let engineLoaded = null;
/** @type {((mod: any) => void)[]} */
const engineWaiters = [];

/**
 * @param {WebAssembly.Module} [compiled] the worker's compiled engine: instantiating it
 *   here costs little, compiling the 5 MB module again would compete with the worker
 */
function loadEngine(compiled) {
  enginePromise ??= import("../pkg/nexttoken.js").then(async (mod) => {
    await mod.default(compiled instanceof WebAssembly.Module ? { module_or_path: compiled } : undefined);
    engineLoaded = mod;
    for (const fn of engineWaiters.splice(0)) fn(mod);
    return mod;
  });
  return enginePromise;
}

/**
 * The engine's module on this thread, loading it if nothing has yet: its
 * free functions (the configuration dialects: config_dialects,
 * import_config, export_config) need no model.
 * @returns {Promise<any>}
 */
export function engineModule() {
  return loadEngine();
}

/**
 * Call `fn` with the engine's module once it is instantiated on this thread
 * (at once if it is), without loading it: the first model's vocabulary does,
 * with the worker's compiled engine, so nothing compiles it a second time.
 * @param {(mod: any) => void} fn
 */
export function whenEngineModule(fn) {
  if (engineLoaded) fn(engineLoaded); else engineWaiters.push(fn);
}

export class LocalPreviewer {
  /**
   * @param {(ready: boolean) => void} [onReadyChange] told whenever `ready` flips
   * @param {() => object|null} [settingsNow] the page's engine settings, for the
   *   warm-up run of a new previewer (none: no warm-up)
   */
  constructor(onReadyChange = () => {}, settingsNow = () => null) {
    this.onReadyChange = onReadyChange;
    this.settingsNow = settingsNow;
    /** A new previewer not yet run once (see warmUp). */
    this.cold = false;
    this.wasReady = false;
    /** @type {any} the wasm Previewer of the current vocabulary, or null */
    this.previewer = null;
    /** Whether the previewer holds the worker's latest pending logits. */
    this.hasState = false;
    /** Counts vocabularies, so a slow wasm import cannot install an old one. */
    this.generation = 0;
    /** Counts the states taken (and forgotten): what a cached answer was computed from. */
    this.version = 0;
    /** A state that arrived before the previewer existed. @type {{ logits: Float64Array, history: Uint32Array, position: number, sampler?: object }|null} */
    this.waitingState = null;
  }

  /** Whether `preview` can answer now. */
  get ready() {
    return this.previewer !== null && this.hasState;
  }

  /** Forget everything (a model is loading, or the worker died). */
  invalidate() {
    this.generation++;
    this.version++;
    this.previewer?.free?.();
    this.previewer = null;
    this.hasState = false;
    this.waitingState = null;
    this.tellReadiness();
  }

  tellReadiness() {
    if (this.ready !== this.wasReady) { this.wasReady = this.ready; this.onReadyChange(this.ready); }
  }

  /**
   * A new model's vocabulary, from the worker's `vocab` message.
   * @param {{ bytes: Uint8Array, ends: Uint32Array }} vocab packed (`Playground.vocab_packed`)
   * @param {WebAssembly.Module} [compiled] the engine as the worker compiled it
   * @returns {Promise<void>} settled once the previewer exists (or failed to)
   */
  setVocab(vocab, compiled) {
    // A state that came before its vocabulary (the worker sends the vocabulary
    // after the first report) belongs to this model: keep it for the previewer.
    const early = this.waitingState;
    this.invalidate();
    this.waitingState = early;
    const generation = this.generation;
    return loadEngine(compiled).then((mod) => {
      if (generation !== this.generation) return;
      this.previewer = mod.Previewer.from_packed(vocab.bytes, vocab.ends);
      this.cold = true;
      if (this.waitingState) this.setState(this.waitingState);
    }).catch((err) => {
      // The worker path still works; only the fast path is lost.
      console.warn(`main-thread preview unavailable, using the worker: ${err?.message ?? err}`);
    });
  }

  /**
   * The worker's state after a report: pending raw logits, history, position,
   * and the sampler state (absent for bench/bench.js's synthetic logits: the defaults).
   * @param {{ logits: Float64Array, history: Uint32Array, position: number, sampler?: object }} pending
   * @returns {Float64Array|null} a logits array no longer needed here (these,
   *   copied into the previewer, or a waiting state's that these replace): it
   *   may go back to the worker to be refilled
   */
  setState(pending) {
    if (!this.previewer) {
      const superseded = this.waitingState?.logits ?? null;
      this.waitingState = pending;
      return superseded;
    }
    this.waitingState = null;
    this.version++;
    let copied = null;
    try {
      this.previewer.set_state(pending.logits, pending.history, pending.position);
      copied = pending.logits;
      if (pending.sampler) this.previewer.set_sampler_state(pending.sampler);
      this.hasState = true;
      if (this.cold) this.warmUp();
    } catch (err) {
      this.hasState = false;
      console.warn(`main-thread preview unavailable, using the worker: ${err?.message ?? err}`);
    }
    this.tellReadiness();
    return copied;
  }

  /**
   * Run the rules once on a new previewer, before it says it is ready, and
   * throw the result away: a browser compiles each wasm function the first
   * time it runs, so without this the first slider move after a load paid
   * for it (measured in headless Chromium on bard: the first preview() call
   * 2.4–6.3 ms, the later ones 0.4–0.7 ms). Settings the engine refuses
   * change nothing here; the move that uses them says so.
   */
  warmUp() {
    this.cold = false;
    const settings = this.settingsNow();
    if (!settings) return;
    try { this.previewer.preview(settings); } catch { /* said by the move that uses them */ }
  }

  /**
   * Run the rules synchronously; throws the engine's readable Error on bad settings.
   * @param {object} settings engine settings
   * @returns {any} Distribution, exactly as the worker's preview
   */
  preview(settings) {
    return this.previewer.preview(settings);
  }

  /**
   * Two configurations on the same raw logits, synchronously; throws the
   * engine's readable Error when either is refused.
   * @param {object} a engine settings @param {object} b engine settings
   * @returns {any} the engine's comparison (kept sets, entropies, the token each draws with the same coin)
   */
  compare(a, b) {
    return this.previewer.compare(a, b);
  }
}
