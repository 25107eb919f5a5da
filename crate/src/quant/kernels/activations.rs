//! The f32 input rows quantised to 8 bits per 32-value block, so that every
//! weight block meets its activations in an integer dot product.
//!
//! Per block: `d = amax / 127`, `q_j = round(x_j / d)` (ties to even) in
//! −127..=127, so `|x_j − q_j·d| ≤ d/2`. Each block also keeps `Σ q_j` (for the
//! `−8`/`−16` offsets of Q4_0/Q5_0, exact in integers) and `s = d · Σ q_j` (for
//! the `m` term of Q4_1/Q5_1). Every kernel path reads the same numbers, so
//! they differ from each other only in the order of their f32 sums.
//!
//! Rows are padded to a multiple of `PAD` blocks with zero scales and codes:
//! the SIMD paths load the per-block fields of several blocks at once and a
//! padded block contributes exactly 0.
//!
//! `Activations::quantize` is the portable definition; `quantize_simd128`
//! (every layout) and `quantize_natural_avx2` compute the same numbers bit
//! for bit (tested), because the kernels run on their output.
//!
//! (Over 400 lines: the definition, its two SIMD twins that must give its
//! bits, and the tests that hold them to it, in one place.)

use super::format::BLOCK;

/// Blocks per row are rounded up to this, so group loads never leave the row.
pub(super) const PAD: usize = 8;

/// The order of the codes inside a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Layout {
    /// i8 in value order (the scalar and AVX2 paths, and the wasm kernels
    /// built with relaxed-simd, whose dot product takes bytes).
    Natural,
    /// i16, in the order the wasm kernel gets its weights when it splits the
    /// 16 nibble bytes as eight u16 lanes: lane i of the four 8-lane groups is
    /// value `2i`, `2i + 16`, `2i + 1`, `2i + 17`. Widening here, once per
    /// input row, saves the widening in every weight row's inner loop.
    #[cfg_attr(not(all(target_arch = "wasm32", target_feature = "simd128")), allow(dead_code))]
    Wide,
    /// i8 in value order, split by sign: a block's 32 positive parts
    /// `max(q, 0)`, then its 32 negative parts `max(−q, 0)`, all 0..=127.
    /// relaxed-simd's dot product takes one operand as bytes of 0..=127
    /// only, and a Q8_0 block's codes are any i8: `w·q = w·q⁺ − w·q⁻` keeps
    /// both products exact.
    #[cfg_attr(not(all(target_arch = "wasm32", target_feature = "relaxed-simd")), allow(dead_code))]
    Split,
}

impl Layout {
    /// Code bytes a block takes in this layout.
    pub(super) const fn block_bytes(self) -> usize {
        match self {
            Layout::Natural => BLOCK,
            Layout::Wide | Layout::Split => 2 * BLOCK,
        }
    }
}

/// The wasm order: `WIDE_ORDER[p]` is the value at position `p` of a block.
pub(super) const WIDE_ORDER: [usize; BLOCK] = {
    let mut order = [0; BLOCK];
    let mut i = 0;
    while i < 8 {
        order[i] = 2 * i;
        order[8 + i] = 2 * i + 16;
        order[16 + i] = 2 * i + 1;
        order[24 + i] = 2 * i + 17;
        i += 1;
    }
    order
};

/// Input rows, quantised.
pub(super) struct Activations {
    /// Blocks per row, padded to a multiple of `PAD`.
    pub stride: usize,
    /// Scale per block: (rows, stride).
    pub d: Vec<f32>,
    /// `d · Σ q` per block: (rows, stride).
    pub s: Vec<f32>,
    /// `Σ q` per block: (rows, stride).
    pub qsum: Vec<i32>,
    /// Codes for `Layout::Natural`: (rows, stride, 32); for `Layout::Split`:
    /// (rows, stride, 64); empty otherwise.
    pub q8: Vec<i8>,
    /// Codes for `Layout::Wide`: (rows, stride, 32); empty otherwise.
    pub q16: Vec<i16>,
}

/// Below this the block is treated as zero: `127 / amax` would overflow to
/// infinity and turn every value of the block into ±127.
const TINY: f32 = 1e-30;

/// Rounds to the nearest integer, ties to even, for |t| < 2^22: adding
/// 1.5·2^23 leaves no fraction bits. Unlike `round_ties_even` this needs no
/// SSE4.1 on baseline x86_64 (where that is a library call per value).
fn round_small(t: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0;
    (t + MAGIC) - MAGIC
}

impl Activations {
    /// All-zero rows of `k` values (a multiple of 32) for `layout`.
    pub fn zeroed(rows: usize, k: usize, layout: Layout) -> Self {
        let stride = (k / BLOCK).div_ceil(PAD) * PAD;
        let codes = rows * stride * BLOCK;
        Activations {
            stride,
            d: vec![0.0; rows * stride],
            s: vec![0.0; rows * stride],
            qsum: vec![0; rows * stride],
            q8: match layout {
                Layout::Natural | Layout::Split => vec![0; rows * stride * layout.block_bytes()],
                Layout::Wide => Vec::new(),
            },
            q16: if layout == Layout::Wide { vec![0; codes] } else { Vec::new() },
        }
    }

    /// Records block `at`'s scale and code sum.
    pub fn set_block(&mut self, at: usize, d: f32, qsum: i32) {
        self.d[at] = d;
        self.qsum[at] = qsum;
        self.s[at] = d * qsum as f32;
    }

    /// `x`: (rows, k) row-major, `k` a multiple of 32.
    pub fn quantize(x: &[f32], rows: usize, k: usize, layout: Layout) -> Self {
        debug_assert_eq!(x.len(), rows * k);
        let mut a = Self::zeroed(rows, k, layout);
        for r in 0..rows {
            for b in 0..k / BLOCK {
                let mut q = [0i8; BLOCK];
                let (d, sum) = quantize_block(&x[r * k + b * BLOCK..][..BLOCK], &mut q);
                let at = r * a.stride + b;
                a.set_block(at, d, sum);
                match layout {
                    Layout::Natural => a.q8[at * BLOCK..][..BLOCK].copy_from_slice(&q),
                    Layout::Split => {
                        let (pos, neg) = a.q8[at * 2 * BLOCK..][..2 * BLOCK].split_at_mut(BLOCK);
                        for ((p, n), &v) in pos.iter_mut().zip(neg).zip(&q) {
                            (*p, *n) = (v.max(0), (-v).max(0));
                        }
                    }
                    Layout::Wide => {
                        let dst = &mut a.q16[at * BLOCK..][..BLOCK];
                        for (p, &v) in WIDE_ORDER.iter().enumerate() {
                            dst[p] = q[v] as i16;
                        }
                    }
                }
            }
        }
        a
    }
}

/// The scale `d` of a block and the factor `id` its values are multiplied
/// by before rounding. A zero, tiny or non-finite block gets `id = 0`, so
/// all its codes are 0; an infinite one gets `d = NaN`, so its
/// contribution is NaN, as the f32 product would be.
fn block_scale(amax: f32) -> (f32, f32) {
    if amax.is_infinite() {
        (f32::NAN, 0.0)
    } else if amax >= TINY {
        (amax / 127.0, 127.0 / amax)
    } else {
        (0.0, 0.0)
    }
}

/// One block: fills `q`, returns (d, Σ q).
fn quantize_block(xs: &[f32], q: &mut [i8; BLOCK]) -> (f32, i32) {
    // Comparisons rather than f32::max (a libm call on wasm); NaN compares
    // false, so it never becomes the maximum, and quantises to 0 (`as`).
    let amax = xs.iter().fold(0f32, |m, v| if v.abs() > m { v.abs() } else { m });
    let (d, id) = block_scale(amax);
    let mut sum = 0i32;
    for (qj, &xj) in q.iter_mut().zip(xs) {
        // |xj·id| ≤ 127·(1 + 2⁻²³)², which rounds to at most 127; the clamp
        // only guards against that reasoning being wrong.
        let v = (round_small(xj * id) as i32).clamp(-127, 127);
        *qj = v as i8;
        sum += v;
    }
    (d, sum)
}

/// `Activations::quantize(x, rows, k, layout)`, the same numbers eight
/// lanes at a time (the portable loop took about 7% of a decode step).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(super) fn quantize_simd128(x: &[f32], rows: usize, k: usize, layout: Layout) -> Activations {
    let mut a = Activations::zeroed(rows, k, layout);
    for r in 0..rows {
        for b in 0..k / BLOCK {
            let xs = &x[r * k + b * BLOCK..][..BLOCK];
            let at = r * a.stride + b;
            // SAFETY: `xs` holds 32 f32, and the block's codes 32 values.
            let (d, sum) = unsafe {
                match layout {
                    Layout::Wide => quantize_block_simd128::<WIDE>(xs.as_ptr(), a.q16[at * BLOCK..][..BLOCK].as_mut_ptr() as *mut u8),
                    Layout::Natural => quantize_block_simd128::<NATURAL>(xs.as_ptr(), a.q8[at * BLOCK..][..BLOCK].as_mut_ptr() as *mut u8),
                    Layout::Split => quantize_block_simd128::<SPLIT>(xs.as_ptr(), a.q8[at * 2 * BLOCK..][..2 * BLOCK].as_mut_ptr() as *mut u8),
                }
            };
            a.set_block(at, d, sum);
        }
    }
    a
}

/// `quantize_block_simd128`'s layouts (a const parameter cannot be an enum).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
const NATURAL: u8 = 0;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
const WIDE: u8 = 1;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
const SPLIT: u8 = 2;

/// One block of 32 values at `xs` to codes at `dst` in the layout `LAYOUT`
/// names (32 i16, 32 i8 or 64 i8); returns (d, Σ q).
/// # Safety
/// 32 f32 are readable at `xs` and the layout's block of codes writable at `dst`.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
unsafe fn quantize_block_simd128<const LAYOUT: u8>(xs: *const f32, dst: *mut u8) -> (f32, i32) {
    use core::arch::wasm32::*;
    // SAFETY: eight loads of four f32 within the 32 at `xs`.
    let v: [v128; 8] = core::array::from_fn(|i| unsafe { v128_load(xs.add(4 * i) as *const v128) });
    // pmax(m, a) keeps m when a is NaN, as the portable fold does.
    let mut m = f32x4_splat(0.0);
    for vi in v {
        m = f32x4_pmax(m, f32x4_abs(vi));
    }
    m = f32x4_pmax(m, i32x4_shuffle::<2, 3, 0, 1>(m, m));
    m = f32x4_pmax(m, i32x4_shuffle::<1, 0, 3, 2>(m, m));
    let (d, id) = block_scale(f32x4_extract_lane::<0>(m));
    let id = f32x4_splat(id);
    // nearest = ties to even, as the portable rounding; NaN becomes 0.
    let q = v.map(|vi| i32x4_trunc_sat_f32x4(f32x4_nearest(f32x4_mul(vi, id))));
    let (lo, hi) = (i16x8_splat(-127), i16x8_splat(127));
    let clamp = |a: v128, b: v128| i16x8_min(i16x8_max(i16x8_narrow_i32x4(a, b), lo), hi);
    // n[i] holds values 8i..8i + 8.
    let n = [clamp(q[0], q[1]), clamp(q[2], q[3]), clamp(q[4], q[5]), clamp(q[6], q[7])];
    if LAYOUT == WIDE {
        // The layout wants evens and odds apart.
        let g = [
            i16x8_shuffle::<0, 2, 4, 6, 8, 10, 12, 14>(n[0], n[1]),
            i16x8_shuffle::<0, 2, 4, 6, 8, 10, 12, 14>(n[2], n[3]),
            i16x8_shuffle::<1, 3, 5, 7, 9, 11, 13, 15>(n[0], n[1]),
            i16x8_shuffle::<1, 3, 5, 7, 9, 11, 13, 15>(n[2], n[3]),
        ];
        for (i, gi) in g.into_iter().enumerate() {
            // SAFETY: four stores of eight i16 within the 32 at `dst`.
            unsafe { v128_store(dst.add(16 * i) as *mut v128, gi) };
        }
    } else {
        // The codes are within −127..=127, so the narrowing does not saturate.
        let bytes = [i8x16_narrow_i16x8(n[0], n[1]), i8x16_narrow_i16x8(n[2], n[3])];
        // SAFETY: two stores of 16 i8 within the 32 at `dst`, or four within the 64.
        unsafe {
            if LAYOUT == SPLIT {
                let zero = i8x16_splat(0);
                for (i, b) in bytes.into_iter().enumerate() {
                    v128_store(dst.add(16 * i) as *mut v128, i8x16_max(b, zero));
                    v128_store(dst.add(32 + 16 * i) as *mut v128, i8x16_max(i8x16_neg(b), zero));
                }
            } else {
                v128_store(dst as *mut v128, bytes[0]);
                v128_store(dst.add(16) as *mut v128, bytes[1]);
            }
        }
    }
    // |Σ| of four codes ≤ 508 fits i16 before widening.
    let s = i32x4_extadd_pairwise_i16x8(i16x8_add(i16x8_add(n[0], n[1]), i16x8_add(n[2], n[3])));
    let sum = i32x4_extract_lane::<0>(s)
        + i32x4_extract_lane::<1>(s)
        + i32x4_extract_lane::<2>(s)
        + i32x4_extract_lane::<3>(s);
    (d, sum)
}

/// `Activations::quantize(x, rows, k, Layout::Natural)`, the same numbers
/// eight lanes at a time.
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn quantize_natural_avx2(x: &[f32], rows: usize, k: usize) -> Activations {
    use core::arch::x86_64::*;
    let mut a = Activations::zeroed(rows, k, Layout::Natural);
    let abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFF_FFFF));
    for r in 0..rows {
        for b in 0..k / BLOCK {
            let xs = &x[r * k + b * BLOCK..][..BLOCK];
            let at = r * a.stride + b;
            // SAFETY: four loads of eight f32 within the 32 of `xs`.
            let v: [__m256; 4] = core::array::from_fn(|i| unsafe { _mm256_loadu_ps(xs.as_ptr().add(8 * i)) });
            // max(a, m) is m when a is NaN, as the portable fold.
            let mut m = _mm256_setzero_ps();
            for vi in v {
                m = _mm256_max_ps(_mm256_and_ps(vi, abs), m);
            }
            let m = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
            let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
            let m = _mm_max_ss(m, _mm_movehdup_ps(m));
            let (d, id) = block_scale(_mm_cvtss_f32(m));
            let id = _mm256_set1_ps(id);
            let q = v.map(|vi| {
                let t = _mm256_mul_ps(vi, id);
                // NaN lanes to 0, as `as i32` does; then ties to even.
                let t = _mm256_and_ps(t, _mm256_cmp_ps(t, t, _CMP_ORD_Q));
                let q = _mm256_cvtps_epi32(_mm256_round_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
                _mm256_max_epi32(_mm256_min_epi32(q, _mm256_set1_epi32(127)), _mm256_set1_epi32(-127))
            });
            // The packs interleave 128-bit halves; the permute puts values back in order.
            let bytes = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
            let bytes = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            let dst = &mut a.q8[at * BLOCK..][..BLOCK];
            // SAFETY: 32 bytes written within `dst`.
            unsafe { _mm256_storeu_si256(dst.as_mut_ptr() as *mut __m256i, bytes) };
            let s = _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
            let s = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
            let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b01_00_11_10));
            let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b10_11_00_01));
            a.set_block(at, d, _mm_cvtsi128_si32(s));
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_reconstruct_within_half_a_step() {
        let x: Vec<f32> = (0..64).map(|i| ((i * 37 % 19) as f32 - 9.3) * 0.173).collect();
        let a = Activations::quantize(&x, 1, 64, Layout::Natural);
        for b in 0..2 {
            let d = a.d[b];
            let mut sum = 0;
            for j in 0..BLOCK {
                let q = a.q8[b * BLOCK + j] as i32;
                assert!(q.abs() <= 127);
                assert!((x[b * BLOCK + j] - q as f32 * d).abs() <= d * 0.5001, "block {b} value {j}");
                sum += q;
            }
            assert_eq!(sum, a.qsum[b]);
            assert_eq!(a.s[b], d * sum as f32);
        }
        // padding blocks are zero
        assert!(a.d[2..].iter().all(|&d| d == 0.0) && a.q8[64..].iter().all(|&q| q == 0));
    }

    #[test]
    fn wide_layout_is_a_permutation_of_natural() {
        let x: Vec<f32> = (0..32).map(|i| i as f32 - 15.5).collect();
        let n = Activations::quantize(&x, 1, 32, Layout::Natural);
        let w = Activations::quantize(&x, 1, 32, Layout::Wide);
        for (p, &v) in WIDE_ORDER.iter().enumerate() {
            assert_eq!(w.q16[p], n.q8[v] as i16);
        }
        let mut seen = WIDE_ORDER;
        seen.sort();
        assert_eq!(seen, core::array::from_fn(|i| i));
    }

    #[test]
    fn split_layout_is_natural_as_positive_minus_negative_parts() {
        let x: Vec<f32> = (0..64).map(|i| ((i * 53 % 29) as f32 - 14.2) * 0.61).collect();
        let n = Activations::quantize(&x, 1, 64, Layout::Natural);
        let s = Activations::quantize(&x, 1, 64, Layout::Split);
        assert_eq!(s.q8.len(), 2 * n.q8.len());
        for b in 0..2 {
            let (pos, neg) = s.q8[b * 2 * BLOCK..][..2 * BLOCK].split_at(BLOCK);
            for j in 0..BLOCK {
                assert!((0..=127).contains(&pos[j]) && (0..=127).contains(&neg[j]), "block {b} value {j}");
                assert!(pos[j] == 0 || neg[j] == 0);
                assert_eq!(pos[j] - neg[j], n.q8[b * BLOCK + j]);
            }
        }
        assert_eq!((&s.d, &s.qsum), (&n.d, &n.qsum));
    }

    #[test]
    fn zero_and_non_finite_blocks_have_no_codes() {
        let mut x = vec![0f32; 96];
        x[40] = f32::INFINITY;
        x[70] = f32::NAN;
        x[71] = 2.0;
        let a = Activations::quantize(&x, 1, 96, Layout::Natural);
        assert_eq!((a.d[0], a.qsum[0]), (0.0, 0));
        assert!(a.d[1].is_nan() && a.q8[32..64].iter().all(|&q| q == 0));
        assert_eq!(a.q8[70], 0); // the NaN
        assert_eq!(a.q8[71], 127);
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[test]
    fn simd_quantisation_gives_the_portable_numbers() {
        // Ties (k + 0.5 steps of 127/amax = 1), zeros, NaN, infinity, tiny values.
        let mut x: Vec<f32> = (0..32 * 6).map(|i| ((i * 7919) % 255) as f32 - 127.0 + 0.5 * (i % 2) as f32).collect();
        x[32..64].fill(0.0);
        x[70] = f32::NAN;
        x[100] = f32::INFINITY;
        x[130..160].fill(1e-35);
        x[31] = 127.0;
        for layout in [Layout::Wide, Layout::Natural, Layout::Split] {
            let (fast, slow) = (quantize_simd128(&x, 2, 96, layout), Activations::quantize(&x, 2, 96, layout));
            assert_eq!((&fast.q16, &fast.q8), (&slow.q16, &slow.q8), "{layout:?}");
            assert_eq!(fast.qsum, slow.qsum);
            assert_eq!(
                fast.d.iter().map(|d| d.to_bits()).collect::<Vec<_>>(),
                slow.d.iter().map(|d| d.to_bits()).collect::<Vec<_>>()
            );
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_quantisation_gives_the_portable_numbers() {
        if !is_x86_feature_detected!("avx2") {
            return;
        }
        let mut x: Vec<f32> = (0..32 * 6).map(|i| ((i * 7919) % 255) as f32 - 127.0 + 0.5 * (i % 2) as f32).collect();
        x[32..64].fill(0.0);
        x[70] = f32::NAN;
        x[100] = f32::INFINITY;
        x[130..160].fill(1e-35);
        // SAFETY: AVX2 was detected.
        let fast = unsafe { quantize_natural_avx2(&x, 2, 96) };
        let slow = Activations::quantize(&x, 2, 96, Layout::Natural);
        assert_eq!(fast.q8, slow.q8);
        assert_eq!(fast.qsum, slow.qsum);
        assert_eq!(
            fast.d.iter().map(|d| d.to_bits()).collect::<Vec<_>>(),
            slow.d.iter().map(|d| d.to_bits()).collect::<Vec<_>>()
        );
    }
}
