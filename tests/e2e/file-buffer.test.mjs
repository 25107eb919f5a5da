// The engine's FileBuffer, where the worker streams a GGUF download: sizes
// are checked before anything is allocated (the limit is the engine's
// MAX_FILE_BYTES, 2 GiB, in crate/src/wasm/file_buffer.rs), a size too big
// for a 32-bit number is refused rather than wrapped, and a file cut short
// is refused by the GGUF reader with a message, not a panic.
//
// Run: pkg-scripts/build, then node --test tests/e2e/file-buffer.test.mjs

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { originPage, startSuite, stopSuite } from "./harness.mjs";

/** @type {{ url: string, close: () => Promise<void> }} */
let server;
/** @type {import("playwright-core").Browser} */
let browser;

before(async () => ({ server, browser } = await startSuite()));
after(() => stopSuite({ server, browser }));

test("FileBuffer refuses impossible sizes up front and a truncated GGUF by name", async () => {
  const { page, problems } = await originPage(browser, server);
  const out = await page.evaluate(async () => {
    const mod = await import("/pkg/nexttoken.js");
    await mod.default();
    const refusal = (f) => { try { f(); return null; } catch (e) { return String(e.message ?? e); } };
    const GiB = 2 ** 30;
    const sizes = {};
    for (const [name, n] of [["3 GiB", 3 * GiB], ["5 GiB (wraps to 1 GiB as a u32)", 5 * GiB], ["-1", -1], ["NaN", NaN], ["1.5", 1.5]]) {
      sizes[name] = refusal(() => new mod.FileBuffer(n));
    }
    // A real file's first bytes only: the GGUF magic and version, then nothing.
    const res = await fetch("/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", { headers: { Range: "bytes=0-63" } }).catch(() => null);
    const head = res && res.ok ? new Uint8Array(await res.arrayBuffer()).slice(0, 64) : null;
    const buf = new mod.FileBuffer(64);
    const piece = head ?? new Uint8Array([0x47, 0x47, 0x55, 0x46, 3, 0, 0, 0]);
    buf.push(piece);
    const length = buf.length;
    const truncated = refusal(() => mod.Playground.from_gguf_buffer(buf, "cut.gguf"));
    const empty = refusal(() => mod.Playground.from_gguf_buffer(new mod.FileBuffer(0), "empty.gguf"));
    // The engine still works after the refusals.
    const pg = mod.Playground.builtin("logits10");
    return { sizes, length, pieceLength: piece.length, truncated, empty, vocab: pg.info().vocab_size };
  });
  for (const name of ["3 GiB", "5 GiB (wraps to 1 GiB as a u32)"]) {
    assert.match(out.sizes[name] ?? "", /larger than this engine takes \(2147483648 bytes\)/, `${name}: ${out.sizes[name]}`);
  }
  for (const name of ["-1", "NaN", "1.5"]) {
    assert.match(out.sizes[name] ?? "", /whole number of bytes/, `${name}: ${out.sizes[name]}`);
  }
  assert.equal(out.length, out.pieceLength);
  assert.ok(out.truncated && !/unreachable|panicked|RuntimeError/i.test(out.truncated), `a truncated file is refused with a message: ${out.truncated}`);
  assert.match(out.truncated, /remaining bytes|truncated|too short|ends before/i, "it says the file is cut short");
  assert.ok(out.empty && !/unreachable|panicked|RuntimeError/i.test(out.empty), `an empty file is refused with a message: ${out.empty}`);
  assert.equal(out.vocab, 10, "the engine keeps working");
  assert.deepEqual(problems, []);
  await page.close();
});

test("FileBuffer.view shows the bytes written, in place, until the buffer moves", async () => {
  const { page, problems } = await originPage(browser, server);
  const out = await page.evaluate(async () => {
    const mod = await import("/pkg/nexttoken.js");
    await mod.default();
    const piece = (n, seed) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255);
    const same = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);
    // Sized up front, as a download with a Content-Length is: views taken
    // piece by piece still hold their bytes after later pushes and after
    // the engine's memory grows (a 64 MiB allocation elsewhere).
    const fixed = new mod.FileBuffer(3000);
    const a = piece(1000, 1), b = piece(2000, 2);
    fixed.push(a);
    const va = fixed.view(0, 1000);
    fixed.push(b);
    const vb = fixed.view(1000, 3000);
    const grown = new mod.FileBuffer(64 << 20);
    const kept = same(va, a) && same(vb, b);
    const outside = [fixed.view(0, 3001), fixed.view(2000, 1000)];
    grown.free();
    // Unsized, as a download without one: the second push reallocates, so
    // the view after it is refused, and every one after that.
    const open = new mod.FileBuffer(0);
    open.push(a);
    const first = open.view(0, 1000);
    const firstSame = same(first, a);
    // Something allocated behind it, so the allocator cannot grow it in place.
    const behind = new mod.FileBuffer(4096);
    open.push(piece(1 << 20, 3));
    behind.free();
    const afterMove = [open.view(1000, 2000), open.view(0, 10)];
    fixed.free();
    open.free();
    return { kept, outside: outside.map((v) => v === undefined), firstSame, afterMove: afterMove.map((v) => v === undefined) };
  });
  assert.ok(out.kept, "views keep the bytes pushed, after later pushes and memory growth");
  assert.deepEqual(out.outside, [true, true], "a range past the bytes written, or backwards, gives no view");
  assert.ok(out.firstSame);
  assert.deepEqual(out.afterMove, [true, true], "once the bytes have moved, no view is given");
  assert.deepEqual(problems, []);
  await page.close();
});
