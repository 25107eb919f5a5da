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
  // The cache key carries a hash of the manifest, so a new model under the
  // same name is fetched again instead of served stale.
  const [tokenizer, weights] = await Promise.all([
    fetchText(`${base}${manifest.tokenizer}`),
    fetchCachedBytes(id, `${base}${manifest.weights}`, hashText(manifestText), 0),
  ]);
  return { manifestText, tokenizer, weights };
}

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
 * Fetch a large file once, streaming progress to the page, and keep it in the
 * Cache API so the next visit reads it from disk. The bytes land in one
 * buffer of the announced size (no second copy to join chunks); the cache
 * is written from a second branch of the same response while it downloads.
 * @param {number} id
 * @param {string} url
 * @param {string} version part of the cache key
 * @param {number} expected the size the catalogue says (0: unknown)
 * @returns {Promise<Uint8Array>}
 */
export async function fetchCachedBytes(id, url, version, expected) {
  const cache = typeof caches !== "undefined" ? await caches.open(CACHE_NAME).catch(() => null) : null;
  const key = cacheKey(url, version);
  const hit = cache ? await cache.match(key).catch(() => undefined) : undefined;
  if (hit) {
    try { return await readBody(id, hit, url, expected, "cache"); }
    catch { await cache.delete(key).catch(() => {}); } // a damaged copy: download it again
  }
  const res = await fetch(url);
  if (!res.ok) throw new Error(`could not fetch ${url} (HTTP ${res.status})`);
  // The cache reads its own branch of the body (a failed write, e.g. over
  // the quota, only costs the next visit a download).
  const stored = cache ? cache.put(key, res.clone()).catch(() => {}) : Promise.resolve();
  const bytes = await readBody(id, res, url, expected, "download");
  await stored;
  return bytes;
}

/**
 * Read a response's body with progress messages.
 * @param {number} id
 * @param {Response} res
 * @param {string} url
 * @param {number} expected
 * @param {"download"|"cache"} stage
 * @returns {Promise<Uint8Array>}
 */
async function readBody(id, res, url, expected, stage) {
  const total = Number(res.headers.get("content-length")) || expected || 0;
  const what = url;
  if (!res.body) {
    const bytes = new Uint8Array(await res.arrayBuffer());
    self.postMessage({ id, type: "progress", loaded: bytes.length, total: bytes.length, what, stage });
    return bytes;
  }
  let buffer = new Uint8Array(total);
  let loaded = 0;
  let lastPost = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (loaded + value.length > buffer.length) {
      // More than announced: grow (doubling), rare.
      const bigger = new Uint8Array(Math.max(buffer.length * 2, loaded + value.length));
      bigger.set(buffer.subarray(0, loaded));
      buffer = bigger;
    }
    buffer.set(value, loaded);
    loaded += value.length;
    // At most ~20 progress messages a second (a chunk is often 64 KiB).
    const now = performance.now();
    if (now - lastPost > 50) { lastPost = now; self.postMessage({ id, type: "progress", loaded, total, what, stage }); }
  }
  self.postMessage({ id, type: "progress", loaded, total: Math.max(total, loaded), what, stage });
  if (expected && loaded !== expected) {
    throw new Error(`${url} has ${loaded} bytes, not the ${expected} the catalogue says (a partial download, or another file; fetch it again)`);
  }
  return loaded === buffer.length ? buffer : buffer.slice(0, loaded);
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
