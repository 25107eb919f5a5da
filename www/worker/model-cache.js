//# allFunctionsCalledOnLoad
// The browser cache (Cache API) that keeps downloaded model files, shared by
// the worker (which fills it) and the page (which asks whether a file is
// already there, to show it in the picker without a request).

export const CACHE_NAME = "nexttoken-models-v1";

/**
 * The cache key of a file: its URL with a version tag (a query, not a
 * fragment: the Cache API ignores fragments when matching), so a new file
 * under the same name is fetched again instead of served stale.
 * @param {string} url
 * @param {string} version
 * @returns {string}
 */
export function cacheKey(url, version) {
  return `${url}${url.includes("?") ? "&" : "?"}ntp-v=${version}`;
}

/**
 * Whether a file is in the cache (false where the Cache API is unavailable,
 * e.g. a page not served over http(s) or localhost).
 * @param {string} url
 * @param {string} version
 * @returns {Promise<boolean>}
 */
export async function isCached(url, version) {
  if (typeof caches === "undefined") return false;
  try {
    const cache = await caches.open(CACHE_NAME);
    return (await cache.match(cacheKey(url, version))) !== undefined;
  } catch {
    return false;
  }
}
