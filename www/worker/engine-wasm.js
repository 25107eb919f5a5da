// Which of the engine's two wasm modules this browser runs. Both come from
// the same code (pkg-scripts/build); the second also takes relaxed SIMD's
// byte dot product in its 4- and 5-bit block kernels, which does their
// integer sums in half the instructions with the same results bit for bit
// (crate/src/quant/kernels/wasm_simd/relaxed.rs). A module holding an
// instruction the browser does not know fails to compile as a whole, so
// the choice is made before compiling, by validating a tiny module that
// uses that instruction. Chromium 114 on and Firefox 153 ESR take the
// relaxed module; a browser without relaxed SIMD gets the simd128 one.
//
// Measured in headless Chromium on 2 cores (Intel Xeon, AVX-512), one
// thread, simd128 -> relaxed (bench-engine-wasm.mjs --wasm=simd128 against
// the default, 3 repeats, two runs each): SmolLM2 (Q4_1) prefill 161-170 ->
// 214-218 tokens/s, decode 49.4-51.7 -> 53.8-53.9; Gemma 3 270M (Q5_0 and
// Q4_K beside Q6_K and a Q8_0 head, which keep the simd128 kernels)
// prefill 102.7-103.0 -> 159.0-160.4, decode 19.5-20.0 -> 21.0-21.2.
// Where that dot product is not one instruction (x86 without AVX-VNNI, as
// the AMD EPYC with AVX2 only), the relaxed module takes its 16-bit form
// for those formats and simd128's kernel for Q8_0 (relaxed.rs
// `unfused_x86`, with the kernels' timings; the README's speed section has
// the models').

/** The modules, in www/pkg/: the same glue (nexttoken.js) loads either. */
export const ENGINE_MODULES = Object.freeze({
  simd128: "nexttoken_bg.wasm",
  relaxed: "nexttoken_relaxed_bg.wasm",
});

/**
 * A module of one function that runs `i32x4.relaxed_dot_i8x16_i7x16_add_s`
 * on three zero vectors and drops the result.
 */
const RELAXED_PROBE = (() => {
  const zeros = (/** @type {number} */ n) => new Array(n).fill(0);
  const v128Zero = [0xfd, 0x0c, ...zeros(16)];
  const body = [0x00, ...v128Zero, ...v128Zero, ...v128Zero, 0xfd, 0x93, 0x02, 0x1a, 0x0b];
  const code = [0x01, body.length, ...body];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
    0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // one type: () -> ()
    0x03, 0x02, 0x01, 0x00, // one function of that type
    0x0a, code.length, ...code,
  ]);
})();

/** Whether this browser's wasm has relaxed SIMD. */
export function hasRelaxedSimd() {
  try {
    return WebAssembly.validate(RELAXED_PROBE);
  } catch {
    return false;
  }
}

/**
 * Which module to run: the simd128 one where `?wasm=simd128` is in the URL
 * of the script that asks (a test or benchmark measuring it), else the
 * relaxed one where this browser has relaxed SIMD.
 * @param {string} [search] the asking script's `location.search`
 * @returns {keyof typeof ENGINE_MODULES}
 */
export function engineModuleKind(search = "") {
  if (new URLSearchParams(search).get("wasm") === "simd128") return "simd128";
  return hasRelaxedSimd() ? "relaxed" : "simd128";
}

/**
 * The URL of the module to run, beside `../pkg/nexttoken.js`.
 * @param {string} [search] as `engineModuleKind`
 */
export function engineModuleUrl(search = "") {
  return new URL(`../pkg/${ENGINE_MODULES[engineModuleKind(search)]}`, import.meta.url);
}
