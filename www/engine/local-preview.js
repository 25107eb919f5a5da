//# allFunctionsCalledOnLoad
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

/** A run's state is copied in once this long passes without a newer one (ms). */
const SETTLE_MS = 120;

export class LocalPreviewer {
  /**
   * @param {(ready: boolean) => void} [onReadyChange] told whenever `ready` flips
   * @param {() => object|null} [settingsNow] the page's engine settings, for the
   *   warm-up run of a new previewer (none: no warm-up)
   */
  constructor(onReadyChange = () => {}, settingsNow = () => null, onSpent = () => {}) {
    this.onReadyChange = onReadyChange;
    this.settingsNow = settingsNow;
    /** Told of a logits array copied in later than its state came (see setState's `later`). */
    this.onSpent = onSpent;
    /** The timer that copies a state taken `later` in once the states stop coming. */
    this.settleTimer = 0;
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
    /**
     * A state not copied into the previewer yet: it came before the previewer
     * existed, or during a run (see setState).
     * @type {{ logits: Float64Array, history: Uint32Array, position: number, sampler?: object }|null}
     */
    this.waitingState = null;
  }

  /** Whether `preview` can answer now. */
  get ready() {
    return this.previewer !== null && (this.hasState || this.waitingState !== null);
  }

  /** Forget everything (a model is loading, or the worker died). */
  invalidate() {
    this.generation++;
    this.version++;
    this.previewer?.free?.();
    this.previewer = null;
    this.hasState = false;
    this.waitingState = null;
    clearTimeout(this.settleTimer);
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
      // Copied into the previewer's memory: the arrays (Gemma 3: 6 MB) are
      // let go now rather than whenever the collector next runs, as a
      // transfer to length 0 detaches them and frees their bytes.
      for (const a of [vocab.bytes, vocab.ends]) a.buffer.transfer?.(0);
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
   * Copying it in also summarises the logits for the next preview (a sort
   * over the vocabulary: about 7 ms a token on SmolLM2 in Chromium), work
   * that during a run competes with the worker for the cores. A run's state
   * (`later`) is kept as it came and copied in when a preview needs it or
   * once SETTLE_MS pass without a newer one; a newer one replaces it unread.
   * @param {{ logits: Float64Array, history: Uint32Array, position: number, sampler?: object }} pending
   * @param {{ later?: boolean }} [when]
   * @returns {Float64Array|null} a logits array no longer needed here (these,
   *   copied into the previewer, or a waiting state's that these replace): it
   *   may go back to the worker to be refilled
   */
  setState(pending, { later = false } = {}) {
    clearTimeout(this.settleTimer);
    if (!this.previewer || later) {
      const superseded = this.waitingState?.logits ?? null;
      this.waitingState = pending;
      if (this.previewer) this.settleTimer = setTimeout(() => this.settle(), SETTLE_MS);
      this.tellReadiness();
      return superseded;
    }
    return this.copyIn(pending);
  }

  /** Copy a state kept for later in now (a preview wants it, or the run has paused). */
  settle() {
    clearTimeout(this.settleTimer);
    const pending = this.waitingState;
    if (!pending || !this.previewer) return;
    const spent = this.copyIn(pending);
    if (spent) this.onSpent(spent);
  }

  /**
   * @param {{ logits: Float64Array, history: Uint32Array, position: number, sampler?: object }} pending
   * @returns {Float64Array|null} the logits copied in
   */
  copyIn(pending) {
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
   * 2.4–6.3 ms, the later ones 0.4–0.7 ms). It runs at a second temperature
   * too, as a temperature of 1 leaves the logits unscaled: the first move
   * away from 1 compiled the scaling and its softmax (Gemma 3 270M, where
   * they pass over 262,144 tokens: the first move's preview 23.7 ms against
   * 16.2 ms for the same move later). The current settings go last, so the
   * stages the previewer keeps are theirs. Settings the engine refuses
   * change nothing here; the move that uses them says so.
   */
  warmUp() {
    this.cold = false;
    const settings = this.settingsNow();
    if (!settings) return;
    const other = { ...settings, temperature: settings.temperature === 1 ? 1.1 : 1 };
    for (const s of [other, settings]) {
      try { this.previewer.preview(s); } catch { /* said by the move that uses them */ }
    }
  }

  /**
   * Run the rules synchronously; throws the engine's readable Error on bad settings.
   * @param {object} settings engine settings
   * @returns {any} Distribution, exactly as the worker's preview
   */
  preview(settings) {
    this.settle();
    return this.previewer.preview(settings);
  }

  /**
   * Two configurations on the same raw logits, synchronously; throws the
   * engine's readable Error when either is refused.
   * @param {object} a engine settings @param {object} b engine settings
   * @returns {any} the engine's comparison (kept sets, entropies, the token each draws with the same coin)
   */
  compare(a, b) {
    this.settle();
    return this.previewer.compare(a, b);
  }
}
