//# allFunctionsCalledOnLoad
// The page's side of the worker protocol: request ids, stale replies dropped,
// preview coalescing, and a restart when the wasm instance dies.

import { startEngineWorker } from "../worker/engine-worker.js";

/**
 * @typedef {Object} ClientHooks
 * @property {() => void} onStart   a worker started (the first, or one after a crash): what every
 *   engine is told (its threads) goes here, before any other request reaches it
 * @property {(progress: { loaded: number, total: number, what: string, stage?: string }) => void} onProgress
 * @property {(message: string, crashed: boolean) => void} onFatal   the worker died (the next request starts a new one)
 * @property {(msg: { vocab?: { bytes: Uint8Array, ends: Uint32Array }, module?: WebAssembly.Module, pending?: object }) => void} onEngineState
 *   every message that says what the worker's engine now holds (a model's vocabulary, the
 *   pending logits after a report), in the order the worker sent them, stale or not: the
 *   last one is the worker's state, whoever asked
 * @property {() => ({ worker: Worker, messages: unknown[], error: string|null } | null)} [takeStarted]
 *   a worker of `workerUrl`'s already started, with what it said so far and why it failed if it
 *   did, for the client to take over instead of starting one (engine/early-worker.js)
 */

export class EngineClient {
  /**
   * @param {string|URL} workerUrl
   * @param {ClientHooks} hooks
   */
  constructor(workerUrl, hooks) {
    this.workerUrl = workerUrl;
    this.hooks = hooks;
    this.nextId = 1;
    /** @type {Map<number, { resolve: Function, reject: Function, onReport?: Function, kept?: boolean }>} */
    this.pending = new Map();
    this.previewBusy = false;
    /** @type {{ settings: object, resolve: Function, reject: Function }|null} */
    this.previewQueued = null;
    /** @type {Worker|null} started on the first request */
    this.worker = null;
  }

  /** Start (or restart) the worker thread. */
  startWorker() {
    const started = this.hooks.takeStarted?.() ?? null;
    this.worker = started?.worker ?? startEngineWorker(this.workerUrl);
    this.worker.onmessage = (e) => this.receive(e.data);
    const failed = (/** @type {string} */ why) =>
      this.fail(`The engine could not start; is www/pkg/ built (pkg-scripts/build)? ${why}`.trim(), false);
    this.worker.onerror = (e) => {
      e.preventDefault?.();
      failed(e.message || "");
    };
    this.hooks.onStart();
    if (started?.error != null) { failed(started.error); return; }
    for (const msg of started?.messages ?? []) this.receive(/** @type {any} */ (msg));
  }

  /**
   * Kill the worker and reject everything in flight; the owner reloads (the
   * next request starts a fresh worker, so a broken build cannot loop).
   * @param {string} message
   * @param {boolean} [crashed] true: a panic in a running engine (worth a restart);
   *   false: the engine cannot even start (a restart would fail the same way)
   */
  fail(message, crashed = true) {
    this.worker?.terminate();
    this.worker = null;
    const waiting = [...this.pending.values()];
    this.pending.clear();
    this.previewBusy = false;
    if (this.previewQueued) { waiting.push(this.previewQueued); this.previewQueued = null; }
    for (const p of waiting) p.reject(new EngineError(message, true));
    this.hooks.onFatal(message, crashed);
  }

  /**
   * @param {{ id: number, type: string, [k: string]: any }} msg
   */
  receive(msg) {
    if (msg.vocab || msg.pending) this.hooks.onEngineState(msg);
    const p = this.pending.get(msg.id);
    if (!p) return; // a reply to a request we gave up on: stale, drop it
    if (msg.type === "progress") { this.hooks.onProgress(msg); return; }
    if (msg.type === "error") {
      this.pending.delete(msg.id);
      if (msg.fatal) { p.reject(new EngineError(msg.message, true)); this.fail(msg.message); return; }
      p.reject(new EngineError(msg.message, false));
      return;
    }
    if (msg.type === "report" && msg.final === false) { p.onReport?.(msg); return; }
    this.pending.delete(msg.id);
    p.resolve(msg);
  }

  /**
   * Hand a pending logits array back to the worker once the page has copied
   * it (worker/worker.js recycles it for a later report); no reply.
   * @param {Float64Array} logits
   */
  recycle(logits) {
    if (!this.worker || !(logits instanceof Float64Array) || logits.buffer.byteLength === 0) return;
    this.worker.postMessage({ type: "recycle", logits }, [logits.buffer]);
  }

  /**
   * Send one request and wait for its reply.
   * @param {string} type
   * @param {object} [payload]
   * @param {(msg: object) => void} [onReport] for run: each intermediate report
   * @param {Transferable[]} [transfer] buffers handed to the worker instead of copied
   * @returns {Promise<any>}
   */
  request(type, payload = {}, onReport, transfer = []) {
    return this.send(type, payload, { onReport }, transfer);
  }

  /**
   * Send a request whose reply is never stale: it says how the engine works
   * from now on, whatever view asked (its threads), so dropStale keeps it.
   * @param {string} type
   * @param {object} [payload]
   * @returns {Promise<any>}
   */
  tell(type, payload = {}) {
    return this.send(type, payload, { kept: true });
  }

  /**
   * @param {string} type
   * @param {object} payload
   * @param {{ onReport?: Function, kept?: boolean }} how
   * @param {Transferable[]} [transfer]
   * @returns {Promise<any>}
   */
  send(type, payload, how, transfer = []) {
    const id = this.nextId++;
    if (!this.worker) this.startWorker();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, ...how });
      this.worker.postMessage({ id, type, ...payload }, transfer);
    });
  }

  /**
   * Forget every outstanding request except runs and what `tell` sent: their
   * replies are dropped when they come (used on reset so an old step cannot
   * paint a new view).
   */
  dropStale() {
    for (const [id, p] of this.pending) {
      if (!p.onReport && !p.kept) { this.pending.delete(id); p.reject(new EngineError("superseded", false, true)); }
    }
  }

  /**
   * Preview with coalescing: while one is in flight only the latest request
   * is kept; earlier waiting ones resolve with null.
   * @param {object} settings
   * @returns {Promise<any|null>} the preview reply, or null when superseded
   */
  preview(settings) {
    if (this.previewBusy) {
      if (this.previewQueued) this.previewQueued.resolve(null);
      return new Promise((resolve, reject) => { this.previewQueued = { settings, resolve, reject }; });
    }
    this.previewBusy = true;
    const done = () => {
      this.previewBusy = false;
      const next = this.previewQueued;
      if (next) {
        this.previewQueued = null;
        this.preview(next.settings).then(next.resolve, next.reject);
      }
    };
    return this.request("preview", { settings }).finally(done);
  }
}

/** An error from the engine; fatal when the worker had to be restarted. */
export class EngineError extends Error {
  /**
   * @param {string} message
   * @param {boolean} fatal
   * @param {boolean} [superseded]
   */
  constructor(message, fatal, superseded = false) {
    super(message);
    this.fatal = fatal;
    this.superseded = superseded;
  }
}
