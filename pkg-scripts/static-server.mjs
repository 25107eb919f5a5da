// A small static file server for www/: the content types browsers insist on
// (module scripts must be JavaScript, WebAssembly.instantiateStreaming needs
// application/wasm), no caching, nothing served from above the root, the
// page's Content-Security-Policy as a header, and the headers that make the
// page cross-origin isolated (ISOLATION_HEADERS).
// Used by pkg-scripts/serve and by the browser tests (tests/e2e/harness.mjs).
//
// As a command: node pkg-scripts/static-server.mjs [--no-isolation] <root> [port] [host]
// (--no-isolation: a host that cannot send headers, e.g. GitHub Pages)

import http from "node:http";
import path from "node:path";
import { stat } from "node:fs/promises";
import { createReadStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";

/** Content types by file extension. */
export const MIME_TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
  ".md": "text/markdown; charset=utf-8",
  ".safetensors": "application/octet-stream",
  ".gguf": "application/octet-stream",
};

/**
 * The page's Content-Security-Policy: its own files only, no inline script or
 * style, no eval; 'wasm-unsafe-eval' lets WebAssembly compile (the engine, in
 * the worker and on the page's thread). www/index.html carries the same text
 * in a <meta> for static hosts that send no header (tests/e2e/csp.test.mjs
 * checks they are equal). The header also reaches what a meta cannot: the
 * worker, whose policy is its own script's response's.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

/**
 * The headers that make a page cross-origin isolated (`crossOriginIsolated`,
 * which SharedArrayBuffer, and so a pool of wasm threads, needs): its own
 * browsing-context group (COOP), and nothing embedded that did not agree to
 * it (COEP require-corp). CORP same-origin is this site's own answer to that
 * check; same-origin requests pass it, and other origins' no-cors loads of
 * our files are refused (an iframe of the page in a site that is not
 * isolated itself is not checked, so course pages still embed it).
 * www/isolation-sw.js adds the same three where a host cannot send them.
 */
export const ISOLATION_HEADERS = {
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-embedder-policy": "require-corp",
  "cross-origin-resource-policy": "same-origin",
};

/**
 * Map a URL path to a file under root, or null for a path that cannot be
 * decoded. The path is normalised against "/" first, so ".." stops at root.
 * @param {string} root absolute directory
 * @param {string} urlPath e.g. "/pkg/nexttoken.js"
 * @returns {string | null}
 */
export function resolveUnderRoot(root, urlPath) {
  let decoded;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null; // malformed %-escape
  }
  if (decoded.includes("\0")) return null;
  const file = path.resolve(root, "." + path.posix.normalize("/" + decoded));
  return file === root || file.startsWith(root + path.sep) ? file : null;
}

/**
 * Answer one request with a file under root (GET and HEAD only); a
 * directory answers with its index.html.
 * @param {string} root absolute directory
 * @param {http.IncomingMessage} req
 * @param {http.ServerResponse} res
 * @param {{ csp: boolean, isolation: boolean }} options send CONTENT_SECURITY_POLICY, ISOLATION_HEADERS
 */
async function serveFile(root, req, res, { csp, isolation }) {
  // On every response, errors included, as a host that sends them does.
  if (isolation) for (const [name, value] of Object.entries(ISOLATION_HEADERS)) res.setHeader(name, value);
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405, { "content-type": "text/plain", allow: "GET, HEAD" });
    res.end("method not allowed");
    return;
  }
  const urlPath = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
  let file = resolveUnderRoot(root, urlPath);
  let info = file ? await stat(file).catch(() => null) : null;
  if (file && info?.isDirectory()) {
    file = path.join(file, "index.html");
    info = await stat(file).catch(() => null);
  }
  if (!file || !info?.isFile()) {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end(`not found: ${urlPath}`);
    return;
  }
  res.writeHead(200, {
    "content-type": MIME_TYPES[path.extname(file).toLowerCase()] ?? "application/octet-stream",
    "content-length": info.size,
    // www/pkg is rebuilt often; a cached module would hide the new build.
    "cache-control": "no-store",
    ...(csp ? { "content-security-policy": CONTENT_SECURITY_POLICY } : {}),
  });
  if (req.method === "HEAD") { res.end(); return; }
  // Streamed: a model file of 100 MB is not read into memory first.
  await pipeline(createReadStream(file), res);
}

/**
 * Serve root on host:port (port 0 = any free port).
 * Rejects with a readable message when the port is taken.
 * `csp: false` sends no policy header (a static host that sends none: the
 * page's <meta> is then all there is). `isolation: false` sends none of
 * ISOLATION_HEADERS (a host that cannot: the page is then not isolated
 * unless it opts in to www/isolation-sw.js).
 * @param {{ root: string, port?: number, host?: string, csp?: boolean, isolation?: boolean }} options
 * @returns {Promise<{ url: string, port: number, close: () => Promise<void> }>} url ends with "/"
 */
export async function startStaticServer({ root, port = 0, host = "127.0.0.1", csp = true, isolation = true }) {
  const absRoot = path.resolve(root);
  const rootInfo = await stat(absRoot).catch(() => null);
  if (!rootInfo?.isDirectory()) throw new Error(`${absRoot} is not a directory`);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad port ${port}: want 0..65535`);

  const server = http.createServer((req, res) => {
    serveFile(absRoot, req, res, { csp, isolation }).catch((err) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(`internal error: ${err.message}`);
    });
  });
  await new Promise((resolve, reject) => {
    server.once("error", (err) => {
      const code = /** @type {NodeJS.ErrnoException} */ (err).code;
      if (code === "EADDRINUSE") reject(new Error(`port ${port} on ${host} is already in use (set PORT to another one)`));
      else if (code === "EACCES") reject(new Error(`no permission to listen on port ${port} (set PORT to one above 1023)`));
      else reject(err);
    });
    server.listen(port, host, () => resolve(undefined));
  });
  const bound = /** @type {import("node:net").AddressInfo} */ (server.address()).port;
  return {
    url: `http://${host}:${bound}/`,
    port: bound,
    close: () => new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections(); // keep-alive sockets would keep node running
    }),
  };
}

// As a command: serve until killed.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const flags = args.filter((a) => a.startsWith("--"));
  const [root, portArg = "8080", host = "127.0.0.1"] = args.filter((a) => !a.startsWith("--"));
  const unknown = flags.filter((f) => f !== "--no-isolation");
  if (!root || unknown.length) {
    if (unknown.length) console.error(`serve: ERROR: unknown option ${unknown.join(" ")}`);
    console.error("usage: node static-server.mjs [--no-isolation] <root> [port] [host]");
    process.exit(2);
  }
  const isolation = !flags.includes("--no-isolation");
  const port = /^\d+$/.test(portArg) ? Number(portArg) : NaN;
  if (!(port <= 65535)) {
    console.error(`serve: ERROR: bad port "${portArg}": want a number 0..65535`);
    process.exit(2);
  }
  try {
    const { url } = await startStaticServer({ root, port, host, isolation });
    console.log(`serve: ${path.resolve(root)} at ${url}${isolation ? "" : " without the isolation headers"}  (Ctrl-C to stop)`);
  } catch (err) {
    console.error(`serve: ERROR: ${err.message}`);
    process.exit(1);
  }
}
