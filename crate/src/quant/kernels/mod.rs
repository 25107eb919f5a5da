//! Matrix products with weights kept in their GGUF blocks.
//!
//! `y = W·x` where each row of `W` is a run of 32-value blocks (Q4_0, Q4_1,
//! Q5_0, Q5_1, Q8_0, IQ4_NL) or of 256-value super-blocks whose 32-value
//! sub-blocks (Q4_K, IQ4_XS) or 16-value pairs of groups (Q6_K) line up with
//! the activations' blocks, and `x` is f32. The input rows are first
//! quantised to 8 bits per 32-value block (`activations`), then every
//! (weight block, input block) pair is an integer dot product scaled once in
//! f32 (`scalar` has the arithmetic all paths share).
//!
//! F16 and BF16 rows are widened to f32 and multiplied in f32 instead
//! (`half_rows`, on `widen` and `dense`).
//!
//! Paths, chosen at compile time (wasm) or run time (x86_64):
//! - `wasm_simd`: wasm32 with `simd128` (the browser build), its nibble
//!   formats and Q8_0 on relaxed-simd's byte dot product where the build
//!   has it;
//! - `x86`: x86_64 with AVX2 + FMA + F16C, detected at run time;
//! - `scalar`: everything else, and the reference for tests.
//!
//! A large product is split into bands of weight rows across threads
//! (`crate::threads`): each output value is computed as on one thread, so the
//! results do not depend on the thread count. For several input rows (a
//! prompt) the SIMD paths reuse each unpacked weight block across a tile of
//! input rows, so the weights are not read once per row; for a single input
//! row (a decode step) they take the weight rows from several far-apart
//! parts of the matrix in turn (`STREAMS`), so that many reads from memory
//! are in flight.

mod activations;
pub mod attention;
pub mod dense;
mod format;
mod half_rows;
mod scalar;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm_simd;
#[cfg(target_arch = "x86_64")]
mod x86;
pub mod widen;

#[cfg(test)]
mod tests;
#[doc(hidden)]
pub mod test_support;

pub use format::BlockFormat;

/// y[m][r] = Σ_j W[r][j] · x[m][j] for m in 0..rows_x, r in 0..n.
///
/// - `weights`: n rows of k values, each row `format.row_bytes(k)` bytes,
///   rows consecutive (exactly `n * row_bytes` bytes).
/// - `x`: rows_x × k f32, row-major. `out`: rows_x × n f32, row-major (overwritten).
///
/// # Panics
/// If `k` is not a multiple of the format's `block_values()` or a slice
/// length does not match the shape: callers check these when they build
/// the matrix. Any byte values are accepted (no overflow is possible, see
/// the paths); nothing is read outside the slices.
pub fn matmul(format: BlockFormat, weights: &[u8], n: usize, k: usize, x: &[f32], rows_x: usize, out: &mut [f32]) {
    matmul_on(KernelPath::Fastest, &Product { format, weights, n, k, x, rows_x }, out)
}

/// One product `out = x · Wᵀ`: W is `n` rows of `k` values in `format`'s
/// blocks, x is `rows_x` rows of `k` values, `out` `rows_x` rows of `n`.
#[derive(Debug, Clone, Copy)]
pub struct Product<'a> {
    pub format: BlockFormat,
    pub weights: &'a [u8],
    pub n: usize,
    pub k: usize,
    pub x: &'a [f32],
    pub rows_x: usize,
}

/// Which kernels do a product: the fastest this machine has, or the
/// portable scalar ones (the tests compare the SIMD paths with them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelPath {
    Fastest,
    Scalar,
}

/// `matmul` through the chosen path.
///
/// # Panics
/// As `matmul`.
pub fn matmul_on(path: KernelPath, p: &Product, out: &mut [f32]) {
    if p.check_shapes(out) {
        return;
    }
    let row_bytes = p.format.row_bytes(p.k);
    crate::threads::split_columns(out, p.rows_x, p.n, p.weights.len() * p.rows_x, |rows, dst| {
        let band = Product { weights: &p.weights[rows.start * row_bytes..rows.end * row_bytes], n: rows.len(), ..*p };
        band_on(path, &band, dst)
    })
}

/// One band's product, on the calling thread.
fn band_on(path: KernelPath, p: &Product, out: &mut [f32]) {
    if p.format.is_float() {
        return half_rows::matmul(path, p, out);
    }
    if path == KernelPath::Scalar {
        return scalar::matmul(p, out);
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    return wasm_simd::matmul(p, out);
    #[cfg(target_arch = "x86_64")]
    if x86::available() {
        return x86::matmul(p, out);
    }
    #[allow(unreachable_code)]
    scalar::matmul(p, out)
}

/// Whether this x86_64 CPU takes the block kernels' AVX2 + FMA + F16C path
/// (the attention kernel's widening follows the same gate).
#[cfg(target_arch = "x86_64")]
pub(crate) fn x86_available() -> bool {
    x86::available()
}

/// The name of the path `matmul` takes on this machine ("wasm relaxed-simd",
/// "wasm simd128", "x86 avx2", "scalar").
pub fn path_name() -> &'static str {
    if cfg!(all(target_arch = "wasm32", target_feature = "relaxed-simd")) {
        return "wasm relaxed-simd";
    }
    if cfg!(all(target_arch = "wasm32", target_feature = "simd128")) {
        return "wasm simd128";
    }
    #[cfg(target_arch = "x86_64")]
    if x86::available() {
        return "x86 avx2";
    }
    "scalar"
}

impl Product<'_> {
    /// Panics on a mismatch; true (with `out` zeroed) when there is nothing to multiply.
    fn check_shapes(&self, out: &mut [f32]) -> bool {
        let Product { format, weights, n, k, x, rows_x } = *self;
        assert_eq!(weights.len(), n * format.row_bytes(k), "{} weights for {n} rows of {k} values", format.name());
        assert_eq!(x.len(), rows_x * k, "input for {rows_x} rows of {k} values");
        assert_eq!(out.len(), rows_x * n, "output for {rows_x} rows of {n} values");
        let empty = n == 0 || k == 0 || rows_x == 0;
        if empty {
            out.fill(0.0);
        }
        empty
    }
}

/// The weight bytes a multi-row product takes at a time: every tile of
/// input rows passes over one band before the next band is read, so a band
/// comes from memory once and from the cache (L2) for the other tiles, where
/// a whole matrix larger than the cache (an LM head: 30 MB for SmolLM2's,
/// run over 31 rows by the logit lens) would come from memory once per tile.
const WEIGHT_BAND_BYTES: usize = 256 * 1024;

/// The bands of whole weight rows, in order: `WEIGHT_BAND_BYTES` each, or one row.
fn weight_bands(n: usize, row_bytes: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    let per_band = (WEIGHT_BAND_BYTES / row_bytes.max(1)).max(1);
    (0..n).step_by(per_band).map(move |i| i..(i + per_band).min(n))
}

/// Weight rows a single input row (a decode step's product) reads at a time,
/// each from its own part of the matrix.
///
/// A decode step's weights come from memory, and one row after another is
/// one stream of reads: the processor's prefetcher ran it at about a third
/// of what a plain read of the same bytes gets, with the arithmetic waiting
/// on it. Interleaving rows from several far-apart places keeps that many
/// streams in flight. Measured in Node on a Q8_0 matrix of 262,144 rows of
/// 640 values (Gemma 3's output head): 31 ms one row after another reading
/// ahead (`touch_ahead`; 36-40 without), 24.5 in 2 streams, 22.4 in 4, 20.9
/// in 6, 21.1 in 8, 22.1 in 16, none reading ahead; the same product from
/// cache takes 11 ms. Natively
/// (`nexttoken bench`, one thread, x86 with AVX-512) 8 streams took Gemma 3's
/// decode from 27.9 to 34.1-35.4 tok/s and SmolLM2's from 64.8 to 82.6-83.2
/// with each row still prefetched ahead (a prefetch does not wait, a wasm
/// read does), 28.5 and 70.4 without.
const STREAMS: usize = 8;

/// Sets every `out[r]` to `row(r)`, taking the rows from `STREAMS` equal
/// parts of `out` in turn (only the last part may be shorter).
#[inline(always)]
pub(super) fn fill_in_streams(out: &mut [f32], mut row: impl FnMut(usize) -> f32) {
    let n = out.len();
    let per_stream = n.div_ceil(STREAMS);
    for i in 0..per_stream {
        for stream in 0..STREAMS {
            let r = stream * per_stream + i;
            if r >= n {
                break;
            }
            out[r] = row(r);
        }
    }
}

/// How far ahead of the row being multiplied `touch_ahead` reads.
const AHEAD_BYTES: usize = 4096;
/// A cache line.
const LINE: usize = 64;

/// The offsets, one per cache line, of `bytes[at + AHEAD_BYTES..][..len]`
/// that lie inside a slice of `size` bytes: what the row at `at` asks for
/// ahead of itself (`touch_ahead` in wasm, `x86::prefetch_ahead`).
#[inline(always)]
fn lines_ahead(size: usize, at: usize, len: usize) -> core::iter::StepBy<core::ops::Range<usize>> {
    ((at + AHEAD_BYTES).min(size)..(at + AHEAD_BYTES + len).min(size)).step_by(LINE)
}

/// Reads one byte of each cache line of `lines_ahead`, so that those lines
/// start coming from memory while the row at `at` is multiplied. wasm has
/// no prefetch instruction, and without these reads a product whose weights
/// come from memory ran at a third of its speed from cache: its own loads,
/// spread over the row's arithmetic, kept too few lines in flight. A
/// cluster of plain reads keeps a row's lines in flight at once. Measured
/// in Node on Q8_0 and Q5_0 rows of 640 values, 262,144 rows: 42.8 -> 31.0
/// and 59.8 -> 28.3 ms; 4 to 16 rows ahead did about the same. The
/// K-quants' kernels do more arithmetic per byte and did not gain (Q6_K
/// lost), so only the 32-value formats' tiles of input rows read ahead; a
/// single input row's product takes its rows from several streams instead
/// (`STREAMS`), which reading ahead only slowed.
#[cfg_attr(not(all(target_arch = "wasm32", target_feature = "simd128")), allow(dead_code))]
#[inline(always)]
fn touch_ahead(bytes: &[u8], at: usize, len: usize) {
    for i in lines_ahead(bytes.len(), at, len) {
        // SAFETY: i < bytes.len(). Volatile, so the unused value's read is
        // not removed.
        unsafe { core::ptr::read_volatile(bytes.as_ptr().add(i)) };
    }
}
