// The engine worker's downloads: a trained model's three files, and large
// files (weights, GGUF) streamed with progress messages to the page and kept
// in the Cache API. Runs in the worker (progress goes out by self.postMessage).

import { CACHE_NAME, cacheKey } from "./model-cache.js";

/**
 * A trained model's three files: manifest, tokenizer, weights (the weights
 * through the Cache API, with progress reports).
 * @param {number} id
 * @param {string} base
 * @returns {Promise<{ manifestText: string, tokenizer: string, weights: Uint8Array }>}
 */
export async function fetchModelFiles(id, base) {
  base = base.endsWith("/") ? base : `${base}/`;
  const manifestText = await fetchText(`${base}model.json`);
  let manifest;
  try { manifest = JSON.parse(manifestText); } catch { throw new Error(`${base}model.json is not JSON`); }
  if (manifest.format !== "nexttoken-model") throw new Error(`${base}model.json is not a nexttoken model manifest`);
  // Files beside the manifest only, checked before anything is fetched (the
  // engine's Manifest::parse says the same for the CLI).
  for (const field of ["weights", "tokenizer"]) {
    const name = manifest[field];
    if (typeof name !== "string" || !/^[^/\\:\0]{1,255}$/.test(name) || name === "." || name === "..") {
      throw new Error(`${base}model.json: "${field}" must be a file name beside model.json, not ${JSON.stringify(String(name).slice(0, 80))}`);
    }
  }
  // The cache key carries a hash of the manifest, so a new model under the
  // same name is fetched again instead of served stale.
  const weightsUrl = `${base}${manifest.weights}`, version = hashText(manifestText);
  const [tokenizer, weights] = await Promise.all([
    fetchText(`${base}${manifest.tokenizer}`),
    fetchCachedBytes(id, weightsUrl, version, 0, (n) => new JsBytes(n)).then((b) => b.bytes()),
  ]);
  return { manifestText, tokenizer, weights, forget: () => forgetCached(weightsUrl, version) };
}

/**
 * Drop a file from the cache: the engine refused its bytes (a download cut
 * short that still looked complete, a damaged copy), so the next try fetches
 * it again instead of failing on the same bytes forever.
 * @param {string} url
 * @param {string} version
 */
export async function forgetCached(url, version) {
  if (typeof caches === "undefined") return;
  // A copy still being written would otherwise land after the delete.
  await storing.get(cacheKey(url, version));
  try { await (await caches.open(CACHE_NAME)).delete(cacheKey(url, version)); } catch { /* no cache: nothing kept */ }
}

/** Cache writes still going on after their download returned, by cache key. @type {Map<string, Promise<unknown>>} */
const storing = new Map();

/**
 * @param {string} url
 * @returns {Promise<string>}
 */
async function fetchText(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`could not fetch ${url} (HTTP ${res.status})`);
  return res.text();
}

/**
 * Where a download's bytes go: `push` each piece as it arrives. The engine's
 * `FileBuffer` is one (the bytes land in the engine's memory, never held
 * here); `JsBytes` keeps them in this thread. `view(start, end)` gives bytes
 * already written without copying them (undefined once they have moved);
 * `viewsStay` says that such a view stays true after the download.
 * @typedef {{ push(chunk: Uint8Array): void, view(start: number, end: number): Uint8Array | undefined, readonly length: number, viewsStay?: boolean, free?(): void }} ByteSink
 */

/** A growing buffer here, for files the engine takes as a JS array (a trained model's weights). */
export class JsBytes {
  /** @param {number} expected */
  constructor(expected) { this.buffer = new Uint8Array(expected); this.length = 0; this.viewsStay = true; }
  /** @param {Uint8Array} chunk */
  push(chunk) {
    if (this.length + chunk.length > this.buffer.length) {
      // More than announced: grow (doubling), rare.
      const bigger = new Uint8Array(Math.max(this.buffer.length * 2, this.length + chunk.length));
      bigger.set(this.buffer.subarray(0, this.length));
      this.buffer = bigger;
    }
    this.buffer.set(chunk, this.length);
    this.length += chunk.length;
  }
  /**
   * A buffer outgrown is left as it was, so a view of it stays true.
   * @param {number} start
   * @param {number} end
   */
  view(start, end) { return this.buffer.subarray(start, end); }
  /** @returns {Uint8Array} the bytes written */
  bytes() { return this.length === this.buffer.length ? this.buffer : this.buffer.slice(0, this.length); }
}

/**
 * A file from the user's disk (a File the page handed over: a handle, not
 * its bytes), read piece by piece into the sink `makeSink(size)` returns, so
 * its bytes are held once, in the engine's memory, and never as a whole
 * here or on the page.
 * @template {ByteSink} S
 * @param {number} id
 * @param {Blob} file
 * @param {string} name
 * @param {(size: number) => S | Promise<S>} makeSink
 * @returns {Promise<S>}
 */
export async function readUserFile(id, file, name, makeSink) {
  const total = file.size;
  const sink = await makeSink(total);
  try {
    await pumpPieces(id, file.stream(), sink, { total, what: name, stage: "read" },
      () => `reading ${name} stopped after ${sink.length.toLocaleString("en")} of ${total.toLocaleString("en")} bytes`,
      "was it moved or changed? Open it again");
    if (sink.length !== total) throw new Error(`${name} gave ${sink.length} of its ${total} bytes; was it changed while it was read? Open it again`);
    self.postMessage({ id, type: "progress", loaded: total, total, what: name, stage: "read" });
    return sink;
  } catch (err) {
    sink.free?.();
    throw err;
  }
}

/**
 * Fetch a large file once, streaming progress to the page, and keep it in the
 * Cache API so the next visit reads it from disk. The bytes go piece by
 * piece into the sink `makeSink(size)` returns (no second copy to join
 * chunks); the cache is written from a second branch of the same response
 * while it downloads.
 * @template {ByteSink} S
 * @param {number} id
 * @param {string} url
 * @param {string} version part of the cache key
 * @param {number} expected the size the catalogue says (0: unknown)
 * @param {(size: number) => S | Promise<S>} makeSink
 * @returns {Promise<S>}
 */
export async function fetchCachedBytes(id, url, version, expected, makeSink) {
  const cache = typeof caches !== "undefined" ? await caches.open(CACHE_NAME).catch(() => null) : null;
  const key = cacheKey(url, version);
  const hit = cache ? await cache.match(key).catch(() => undefined) : undefined;
  if (hit) {
    try { return await readBody(id, hit, url, expected, "cache", makeSink); }
    catch { await cache.delete(key).catch(() => {}); } // a damaged copy: download it again
  }
  const res = await fetch(url);
  if (!res.ok) throw new Error(`could not fetch ${url} (HTTP ${res.status})`);
  // The cache is fed the pieces as they are read (a failed write, e.g. over
  // the quota, only costs the next visit a download).
  const copy = cache ? cacheCopy(cache, key, res.headers) : null;
  try {
    const bytes = await readBody(id, res, url, expected, "download", makeSink, copy);
    copy?.close();
    // The cache reads views of the sink's bytes. Where they stay put
    // (`viewsStay`), the bytes go to the engine while the cache still writes
    // them: on a first visit that write took half of bard's 250 ms download
    // (bench-load.mjs). The engine's own buffer moves when its memory grows,
    // so its download waits until the cache holds the file.
    if (copy && bytes.viewsStay) {
      const stored = copy.stored.finally(() => { if (storing.get(key) === stored) storing.delete(key); });
      storing.set(key, stored);
    } else await copy?.stored;
    return bytes;
  } catch (err) {
    // A download that failed half-way leaves no entry behind to be used later.
    copy?.fail(err);
    await copy?.stored;
    await cache?.delete(key).catch(() => {});
    throw err;
  }
}

/**
 * The Cache API's copy of a download, written from the bytes the download
 * has put in its sink (views, not copies), with the download waiting
 * whenever the cache is more than a few pieces behind. (A tee of the
 * response instead buffers whatever its slower branch has not read yet:
 * from a fast server, tens of MB of a 253 MB file held at once, on top of
 * the engine's copy. A copy of each piece instead is garbage the size of the
 * file, which a worker busy in its prefill cannot collect: Gemma 3's tab
 * peaked 20 MB higher with it.)
 * @param {Cache} cache
 * @param {string} key
 * @param {Headers} headers the response's, Content-Length included
 * @typedef {ReturnType<typeof cacheCopy>} CacheCopy
 */
function cacheCopy(cache, key, headers) {
  /** @type {ReadableStreamDefaultController<Uint8Array>} */
  let controller;
  /** @type {(() => void) | null} */
  let wake = null;
  let open = true;
  const body = new ReadableStream({
    start(c) { controller = c; },
    pull() { wake?.(); wake = null; },
    cancel() { open = false; wake?.(); wake = null; },
  }, new ByteLengthQueuingStrategy({ highWaterMark: 4 * PIECE_BYTES }));
  const stored = cache.put(key, new Response(body, { headers })).catch(() => { open = false; wake?.(); wake = null; });
  return {
    stored,
    /**
     * @param {ByteSink} sink
     * @param {number} start where the piece just pushed into it begins
     */
    async push(sink, start) {
      if (!open) return;
      const written = sink.view(start, sink.length);
      if (!written) return fail(new Error("the downloaded bytes moved before the cache read them"));
      controller.enqueue(written);
      if ((controller.desiredSize ?? 1) > 0) return;
      // A cache that stops reading for 10 s is given up: the download goes on without it.
      const pulled = await Promise.race([
        new Promise((resolve) => { wake = () => resolve(true); }),
        new Promise((resolve) => setTimeout(() => resolve(false), 10000)),
      ]);
      if (!pulled && open) { open = false; wake = null; controller.error(new Error("the cache stopped reading")); }
    },
    close() { if (open) controller.close(); },
    fail,
  };
  /**
   * Give up the copy: the cache stores nothing. Called before the sink is
   * freed, as the views the cache has not read yet are of the sink's bytes.
   * @param {unknown} err
   */
  function fail(err) { if (open) { open = false; controller.error(err); } }
}

/**
 * Read a response's body into a sink, with progress messages.
 * @template {ByteSink} S
 * @param {number} id
 * @param {Response} res
 * @param {string} url
 * @param {number} expected
 * @param {"download"|"cache"} stage
 * @param {(size: number) => S | Promise<S>} makeSink
 * @param {CacheCopy | null} [copy] also given each piece (the cache's copy)
 * @returns {Promise<S>}
 */
async function readBody(id, res, url, expected, stage, makeSink, copy = null) {
  const total = Number(res.headers.get("content-length")) || expected || 0;
  const what = url;
  const sink = await makeSink(total);
  try {
    if (!res.body) {
      sink.push(new Uint8Array(await res.arrayBuffer()));
      if (copy) await copy.push(sink, 0);
    } else {
      await pumpPieces(id, res.body, sink, { total, what, stage },
        () => `the ${stage === "cache" ? "cached copy" : "download"} of ${url} stopped after ${sink.length.toLocaleString("en")}` +
          `${total ? ` of ${total.toLocaleString("en")}` : ""} bytes`,
        "try again", copy);
    }
    const loaded = sink.length;
    self.postMessage({ id, type: "progress", loaded, total: Math.max(total, loaded), what, stage });
    // Content-Length counts the bytes sent: comparable only when they were not compressed.
    const encoding = res.headers.get("content-encoding");
    const announced = !encoding || encoding === "identity" ? Number(res.headers.get("content-length")) || 0 : 0;
    if (announced && loaded !== announced) {
      throw new Error(`${url} stopped after ${loaded} of the ${announced} bytes its server announced (a partial download); try again`);
    }
    if (expected && loaded !== expected) {
      throw new Error(`${url} has ${loaded} bytes, not the ${expected} the catalogue says (a partial download, or another file; fetch it again)`);
    }
    return sink;
  } catch (e) {
    copy?.fail(e); // before the sink is freed: the cache reads views of its bytes
    sink.free?.(); // an engine buffer's memory goes back now, not at the next GC
    throw e;
  }
}

/**
 * A stream's pieces into `sink` (and `copy`), with at most ~20 progress
 * messages a second (a piece is often 64 KiB). The caller posts the last
 * progress and checks the length.
 * @param {number} id
 * @param {ReadableStream<Uint8Array>} body
 * @param {ByteSink} sink
 * @param {{ total: number, what: string, stage: string }} progress
 * @param {() => string} stopped what a failed read says, before its cause
 * @param {string} advice what it says after
 * @param {CacheCopy | null} [copy]
 */
async function pumpPieces(id, body, sink, { total, what, stage }, stopped, advice, copy = null) {
  let lastPost = 0;
  const read = pieceReader(body);
  for (;;) {
    const { done, value } = await read().catch((err) => { throw new Error(`${stopped()} (${err?.message ?? err}); ${advice}`); });
    if (done) return;
    const start = sink.length;
    sink.push(value);
    if (copy) await copy.push(sink, start);
    const now = performance.now();
    if (now - lastPost > 50) { lastPost = now; self.postMessage({ id, type: "progress", loaded: sink.length, total, what, stage }); }
  }
}

/** The one buffer a byte stream's pieces are read into (see pieceReader). */
const PIECE_BYTES = 1 << 20;

/**
 * `read()` of a body's pieces. Where the body is a byte stream (Chromium's
 * fetch bodies), every piece is read into the same 1 MiB buffer: the sink
 * copies it out before the next read, so a 98 MB download leaves no trail of
 * 64 KiB chunks for the garbage collector (measured: a SmolLM2 load's private
 * memory peaked 30–110 MB above where it settled, run to run). Elsewhere (a
 * default stream, e.g. a Response clone's branch) the stream's own chunks.
 * @param {ReadableStream<Uint8Array>} body
 * @returns {() => Promise<ReadableStreamReadResult<Uint8Array>>}
 */
function pieceReader(body) {
  let byob = null;
  try { byob = body.getReader({ mode: "byob" }); } catch { /* not a byte stream */ }
  if (!byob) {
    const reader = body.getReader();
    return () => reader.read();
  }
  let buffer = new ArrayBuffer(PIECE_BYTES);
  return async () => {
    const r = await byob.read(new Uint8Array(buffer, 0, PIECE_BYTES));
    // The read transfers the buffer: the piece's view holds it now.
    if (r.value) buffer = r.value.buffer;
    return r;
  };
}

/**
 * A short FNV-1a hash of a text (a cache version tag, not security).
 * @param {string} text
 * @returns {string}
 */
function hashText(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) { h ^= text.charCodeAt(i); h = Math.imul(h, 0x01000193); }
  return (h >>> 0).toString(16);
}
