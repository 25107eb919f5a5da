// The page's side of the worker protocol: request ids, stale replies dropped,
// preview coalescing, and a restart when the wasm instance dies.

/**
 * @typedef {Object} ClientHooks
 * @property {(loaded: number, total: number, what: string) => void} onProgress
 * @property {(message: string) => void} onFatal   the worker died; it has been replaced
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
    /** @type {Map<number, { resolve: Function, reject: Function, onReport?: Function }>} */
    this.pending = new Map();
    this.previewBusy = false;
    /** @type {{ settings: object, resolve: Function, reject: Function }|null} */
    this.previewQueued = null;
    this.startWorker();
  }

  /** Start (or restart) the worker thread. */
  startWorker() {
    this.worker = new Worker(this.workerUrl, { type: "module" });
    this.worker.onmessage = (e) => this.receive(e.data);
    this.worker.onerror = (e) => {
      e.preventDefault?.();
      this.fail(`the engine worker could not start: ${e.message || "script error"}`);
    };
  }

  /**
   * Kill the worker and reject everything in flight; the owner reloads.
   * @param {string} message
   */
  fail(message) {
    this.worker.terminate();
    const waiting = [...this.pending.values()];
    this.pending.clear();
    this.previewBusy = false;
    if (this.previewQueued) { waiting.push(this.previewQueued); this.previewQueued = null; }
    this.startWorker();
    for (const p of waiting) p.reject(new EngineError(message, true));
    this.hooks.onFatal(message);
  }

  /**
   * @param {{ id: number, type: string, [k: string]: any }} msg
   */
  receive(msg) {
    const p = this.pending.get(msg.id);
    if (!p) return; // a reply to a request we gave up on: stale, drop it
    if (msg.type === "progress") { this.hooks.onProgress(msg.loaded, msg.total, msg.what); return; }
    if (msg.type === "error") {
      this.pending.delete(msg.id);
      if (msg.fatal) { this.fail(`the engine crashed: ${msg.message}`); p.reject(new EngineError(msg.message, true)); return; }
      p.reject(new EngineError(msg.message, false));
      return;
    }
    if (msg.type === "report" && msg.final === false) { p.onReport?.(msg); return; }
    this.pending.delete(msg.id);
    p.resolve(msg);
  }

  /**
   * Send one request and wait for its reply.
   * @param {string} type
   * @param {object} [payload]
   * @param {(msg: object) => void} [onReport] for run: each intermediate report
   * @returns {Promise<any>}
   */
  request(type, payload = {}, onReport) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onReport });
      this.worker.postMessage({ id, type, ...payload });
    });
  }

  /**
   * Forget every outstanding request except runs: their replies are dropped
   * when they come (used on reset so an old step cannot paint a new view).
   */
  dropStale() {
    for (const [id, p] of this.pending) {
      if (!p.onReport) { this.pending.delete(id); p.reject(new EngineError("superseded", false, true)); }
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
