// The page's own service worker, for hosts that cannot send headers (GitHub
// Pages). isolation.js registers it only when index.html opts in with
//   <meta name="nexttoken-isolation" content="service-worker">
// It re-serves this site's own GET responses with the three headers that make
// the page cross-origin isolated (the ones pkg-scripts/static-server.mjs
// sends), so the page and its engine worker get `crossOriginIsolated`.
// Everything else goes to the network as if it were not here: other origins'
// requests, opaque and redirected responses, every method but GET. It keeps
// no copy of anything and never opens the Cache API (the engine worker's model
// cache, worker/model-cache.js, is the page's alone).
// It lives at the top of the site so that its scope is the whole site.

/** What it adds to each response (the same as static-server.mjs's ISOLATION_HEADERS). */
const ISOLATION_HEADERS = [
  ["Cross-Origin-Opener-Policy", "same-origin"],
  ["Cross-Origin-Embedder-Policy", "require-corp"],
  ["Cross-Origin-Resource-Policy", "same-origin"],
];

/** Statuses whose response must have no body (a Response with one throws). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

// Take over at once: the page reloads as soon as this worker controls it.
self.addEventListener("install", () => { self.skipWaiting(); });
self.addEventListener("activate", (event) => { event.waitUntil(self.clients.claim()); });

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  if (new URL(request.url).origin !== self.location.origin) return;
  // A fetch of this kind throws outside same-origin mode; let the browser answer it.
  if (request.cache === "only-if-cached" && request.mode !== "same-origin") return;
  event.respondWith(withIsolation(request));
});

/**
 * The network's response to `request`, with the isolation headers when it
 * is an ordinary same-origin one, else exactly as it came.
 * @param {Request} request
 * @returns {Promise<Response>}
 */
async function withIsolation(request) {
  const response = await fetch(request);
  // opaque, opaqueredirect, cors: not ours to change. A redirected response
  // copied would lose its final URL (the base of a module's imports).
  if (response.type !== "basic" || response.redirected) return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of ISOLATION_HEADERS) headers.set(name, value);
  // The body is passed on as a stream: a model file is not held here.
  return new Response(NULL_BODY.has(response.status) ? null : response.body,
    { status: response.status, statusText: response.statusText, headers });
}
