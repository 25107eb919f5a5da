//! Products with F16 and BF16 matrices kept at 16 bits: a few weight rows
//! at a time are widened to f32 (`widen`, exactly) into a buffer that stays
//! in L1, and multiplied by every input row there in f32 (`dense::xwt`):
//!
//! ```text
//! for each chunk of C weight rows:  widen → buf [C][k] f32
//!                                   out[r][chunk] = x[r] · bufᵀ   (every input row r)
//! ```
//! So the product is the f32 product of the widened weights, within f32
//! summation-order rounding (no 8-bit rounding of the activations, as the
//! quantised formats have), and the weights are read from memory once per
//! product however many input rows there are. Each output is one `xwt` dot
//! product whose order depends only on its weight row's place in the chunk,
//! so an input row gets the same numbers alone as in a prompt.
//!
//! A single input row (a decode step) does not go through the buffer: the
//! SIMD paths widen eight values at a time in registers and multiply them
//! there, in the same order of sums as `dense::xwt` on the widened row, so
//! the numbers are those of the chunked product. Such a product is a read
//! of the whole matrix from memory, and one row after another is a single
//! stream of reads, which the browser's wasm cannot prefetch; so the rows
//! are taken four at a time from the four quarters of the matrix, four
//! streams in flight. Measured on an F16 copy of SmolLM2, one thread, x86
//! with AVX-512: decode in headless Chromium (`pkg-scripts/bench-engine-wasm.mjs
//! FILE 3`) 6.2 tok/s through the buffer, 17.8-18.1 this way; natively
//! (`nexttoken bench --model FILE`) 18.3 and 38-41.

use super::widen::{self, Half};
use super::{BlockFormat, KernelPath, Product, dense};

/// f32 values the widened chunk aims at (16 KB: half of the smallest L1
/// data cache of the machines this runs on, beside the input rows).
const CHUNK_VALUES: usize = 4096;

/// `dense::xwt` (whose simd128 path takes four weight rows at a time) works
/// on whole groups of this many rows where the chunk allows.
const GROUP: usize = 4;

pub(super) fn matmul(path: KernelPath, p: &Product, out: &mut [f32]) {
    let Product { format, weights, n, k, x, rows_x } = *p;
    let kind = match format {
        BlockFormat::F16 => Half::F16,
        BlockFormat::BF16 => Half::BF16,
        _ => unreachable!("{} rows are not 16-bit floats", format.name()),
    };
    if rows_x == 1 && path == KernelPath::Fastest && one_row(kind, weights, n, k, x, out) {
        return;
    }
    let chunk = (CHUNK_VALUES / k / GROUP * GROUP).max(GROUP).min(n);
    let row_bytes = format.row_bytes(k);
    let mut buf = vec![0f32; chunk * k];
    let mut part = vec![0f32; rows_x * chunk];
    for (c, rows) in weights.chunks(chunk * row_bytes).enumerate() {
        let m = rows.len() / row_bytes;
        let (w, y) = (&mut buf[..m * k], &mut part[..rows_x * m]);
        match path {
            KernelPath::Fastest => {
                widen::widen(kind, rows, w);
                dense::xwt_band(w, m, k, x, rows_x, y); // already within a band of matmul_on's
            }
            KernelPath::Scalar => {
                widen::widen_scalar(kind, rows, w);
                dense::xwt_portable(w, m, k, x, rows_x, y);
            }
        }
        for r in 0..rows_x {
            out[r * n + c * chunk..][..m].copy_from_slice(&y[r * m..][..m]);
        }
    }
}

/// `out = x · Wᵀ` for one input row on this machine's SIMD path; false
/// where there is none (the chunked product then does it).
#[allow(unused_variables)]
fn one_row(kind: Half, w: &[u8], n: usize, k: usize, x: &[f32], out: &mut [f32]) -> bool {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        match kind {
            Half::F16 => simd128::one_row::<false>(w, n, k, x, out),
            Half::BF16 => simd128::one_row::<true>(w, n, k, x, out),
        }
        return true;
    }
    #[cfg(target_arch = "x86_64")]
    if super::x86_available() {
        // SAFETY: the CPU has AVX2, FMA and F16C.
        unsafe {
            match kind {
                Half::F16 => avx2::one_row::<false>(w, n, k, x, out),
                Half::BF16 => avx2::one_row::<true>(w, n, k, x, out),
            }
        }
        return true;
    }
    #[allow(unreachable_code)]
    false
}

/// Calls `streams` on the rows a single input row's product takes
/// together, row `i` of each quarter of the first `n / 4 · 4` rows (four
/// streams of reads, and a whole group for `dense::xwt`'s order), and
/// writes what it returns; then `one` on each row left.
///
/// Four streams, not eight as the block kernels take: measured on the F16
/// copy of SmolLM2 in Chromium (`bench-engine-wasm.mjs`, one thread), eight
/// rows at a time decoded at 14.7-15.2 tok/s against 17.4-17.9 for four;
/// natively (`nexttoken bench`) 41.4 against 40.6, the same.
#[inline(always)]
fn in_streams(n: usize, out: &mut [f32], mut streams: impl FnMut([usize; GROUP]) -> [f32; GROUP], mut one: impl FnMut(usize) -> f32) {
    let per = n / GROUP;
    for i in 0..per {
        let rows = core::array::from_fn(|s| s * per + i);
        for (y, r) in streams(rows).into_iter().zip(rows) {
            out[r] = y;
        }
    }
    for (r, y) in out.iter_mut().enumerate().skip(per * GROUP) {
        *y = one(r);
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128 {
    use super::super::dense::simd128::lane_sums;
    use super::super::widen::{self, Half};
    use super::{GROUP, in_streams};
    use core::arch::wasm32::*;

    /// `dense::xwt`'s simd128 sums: per row, a vector of partial sums four
    /// values at a time, its lane sums, then the values past `k / 4 · 4`;
    /// the rows past the last whole group of four, as `xwt` does them, a
    /// plain sum.
    pub(super) fn one_row<const BF16: bool>(w: &[u8], n: usize, k: usize, x: &[f32], out: &mut [f32]) {
        let kind = if BF16 { Half::BF16 } else { Half::F16 };
        let row = |r: usize| &w[r * 2 * k..][..2 * k];
        in_streams(
            n,
            out,
            |rows| dots::<BF16>(rows.map(row), k, x),
            |r| (0..k).map(|j| x[j] * widen::one(kind, row(r), j)).sum(),
        );
    }

    #[inline(always)]
    fn dots<const BF16: bool>(rows: [&[u8]; GROUP], k: usize, x: &[f32]) -> [f32; GROUP] {
        let kind = if BF16 { Half::BF16 } else { Half::F16 };
        let k4 = k / 4 * 4;
        let mut acc = [f32x4_splat(0.0); GROUP];
        let mut j = 0;
        while j + 8 <= k4 {
            // SAFETY: j + 8 <= k: eight f32 of x, and sixteen bytes of each row (2k bytes).
            unsafe {
                let x0 = v128_load(x.as_ptr().add(j) as *const v128);
                let x1 = v128_load(x.as_ptr().add(j + 4) as *const v128);
                for (a, row) in acc.iter_mut().zip(rows) {
                    let (lo, hi) = widen::eight_simd128::<BF16, true>(v128_load(row.as_ptr().add(2 * j) as *const v128));
                    *a = f32x4_add(f32x4_add(*a, f32x4_mul(x0, lo)), f32x4_mul(x1, hi));
                }
            }
            j += 8;
        }
        if j < k4 {
            // SAFETY: j + 4 <= k: four f32 of x, and eight bytes of each row.
            unsafe {
                let x0 = v128_load(x.as_ptr().add(j) as *const v128);
                for (a, row) in acc.iter_mut().zip(rows) {
                    let (lo, _) = widen::eight_simd128::<BF16, true>(v128_load64_zero(row.as_ptr().add(2 * j) as *const u64));
                    *a = f32x4_add(*a, f32x4_mul(x0, lo));
                }
            }
        }
        let sums = lane_sums(acc);
        core::array::from_fn(|q| sums[q] + (k4..k).map(|j| x[j] * widen::one(kind, rows[q], j)).sum::<f32>())
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::super::dense::lane_sums_8;
    use super::super::widen::{self, Half};
    use super::{GROUP, in_streams};
    use core::arch::x86_64::*;

    /// The portable `dense::xwt`'s sums (as it compiles for AVX2): per row,
    /// eight lanes of partial sums eight values at a time, their sum, then
    /// the values past `k / 8 · 8`; every row alike.
    /// # Safety
    /// The CPU has AVX2, FMA and F16C.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub(super) unsafe fn one_row<const BF16: bool>(w: &[u8], n: usize, k: usize, x: &[f32], out: &mut [f32]) {
        let row = |r: usize| &w[r * 2 * k..][..2 * k];
        // SAFETY (each call): the caller's contract; every row holds 2k bytes.
        in_streams(
            n,
            out,
            |rows| unsafe { dots::<GROUP, BF16>(rows.map(row), k, x) },
            |r| unsafe { dots::<1, BF16>([row(r)], k, x) }[0],
        );
    }

    /// # Safety
    /// The CPU has AVX2, FMA and F16C; each row holds 2k bytes, x k values.
    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn dots<const R: usize, const BF16: bool>(rows: [&[u8]; R], k: usize, x: &[f32]) -> [f32; R] {
        let kind = if BF16 { Half::BF16 } else { Half::F16 };
        let k8 = k / 8 * 8;
        let mut acc = [_mm256_setzero_ps(); R];
        let mut j = 0;
        while j < k8 {
            // SAFETY: j + 8 <= k: eight f32 of x, sixteen bytes of each row; unaligned loads.
            unsafe {
                let xv = _mm256_loadu_ps(x.as_ptr().add(j));
                for (a, row) in acc.iter_mut().zip(rows) {
                    *a = _mm256_add_ps(*a, _mm256_mul_ps(xv, widen::eight_x86::<BF16>(row.as_ptr().add(2 * j))));
                }
            }
            j += 8;
        }
        core::array::from_fn(|q| {
            let mut lanes = [0f32; 8];
            // SAFETY: eight f32 into a local array.
            unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), acc[q]) };
            let tail: f32 = (k8..k).map(|j| x[j] * widen::one(kind, rows[q], j)).sum();
            lane_sums_8(&lanes) + tail
        })
    }
}
