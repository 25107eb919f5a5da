//# allFunctionsCalledOnLoad
// Cross-origin isolation: `crossOriginIsolated`, which SharedArrayBuffer (and
// so the engine's pool of wasm threads) needs. Without isolation the engine
// runs on one thread, and the speed readout says so.
//
// A host gets it by sending three headers on every response (see
// pkg-scripts/static-server.mjs, ISOLATION_HEADERS). A host that cannot send
// headers (GitHub Pages) may opt in to our service worker, isolation-sw.js,
// which adds them, by putting in index.html's <head>
//   <meta name="nexttoken-isolation" content="service-worker">
// Only then does the page register it: when the page is not isolated, it
// registers the worker, waits until it controls the page and reloads once
// (remembered in sessionStorage); if it still is not isolated after that
// reload it gives up quietly and runs on one thread. Without the meta nothing
// here registers a service worker or reloads the page. A page in a frame
// never reloads itself: its isolation is its top page's.

const OPT_IN = 'meta[name="nexttoken-isolation"][content="service-worker"]';
/** sessionStorage key: set just before the one reload, cleared once isolated. */
const RELOADED = "nexttoken-isolation-reloaded";
const WORKER_URL = new URL("./isolation-sw.js", import.meta.url).href;
const SCOPE = new URL("./", import.meta.url).href;
/** How long to wait for the service worker to control the page before giving up. */
const CONTROL_TIMEOUT_MS = 10000;

/**
 * Whether the page is cross-origin isolated, and what made it so.
 * @returns {{ isolated: boolean, how: "headers" | "service-worker" | "none" }}
 */
export function isolation() {
  const isolated = globalThis.crossOriginIsolated === true;
  if (!isolated) return { isolated, how: "none" };
  return { isolated, how: ourController() ? "service-worker" : "headers" };
}

/**
 * Run before the page boots. Resolves at once (with `isolation()`) unless
 * the host opted in and the page must reload through the service worker
 * first; then it reloads the page and never resolves.
 * @returns {Promise<ReturnType<typeof isolation>>}
 */
export async function isolate() {
  const optedIn = document.querySelector(OPT_IN) !== null;
  if (globalThis.crossOriginIsolated === true) {
    remember(false);
    return isolation();
  }
  if (!optedIn) {
    // The host took the meta out: our worker, if an earlier visit left it, goes at the next visit.
    if (ourController()) navigator.serviceWorker.getRegistration(SCOPE).then((r) => r?.unregister()).catch(() => {});
    return isolation();
  }
  if (window.top !== window || !("crossOriginIsolated" in globalThis) || reloadedBefore()) return isolation();
  try {
    const container = navigator.serviceWorker;
    if (!container) return isolation(); // no service workers here (e.g. a private window in some browsers)
    await container.register(WORKER_URL, { scope: SCOPE });
    if (!container.controller && !(await controlled(container))) return isolation();
    remember(true);
    location.reload();
    return new Promise(() => {}); // the page is going away
  } catch {
    return isolation(); // registration refused: one thread, as before
  }
}

/** Whether our service worker controls this page. */
function ourController() {
  try { return navigator.serviceWorker?.controller?.scriptURL === WORKER_URL; } catch { return false; }
}

/**
 * Resolves true once a service worker controls the page, false after CONTROL_TIMEOUT_MS.
 * @param {ServiceWorkerContainer} container
 * @returns {Promise<boolean>}
 */
function controlled(container) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), CONTROL_TIMEOUT_MS);
    container.addEventListener("controllerchange", () => { clearTimeout(timer); resolve(true); }, { once: true });
  });
}

/** Whether this tab already reloaded once for isolation. */
function reloadedBefore() {
  try { return sessionStorage.getItem(RELOADED) === "1"; } catch { return true; } // no storage: no guard, so no reload
}

/** @param {boolean} reloading */
function remember(reloading) {
  try {
    if (reloading) sessionStorage.setItem(RELOADED, "1");
    else sessionStorage.removeItem(RELOADED);
  } catch { /* no storage: nothing to remember */ }
}
