//! x86_64 with AVX2, FMA and F16C (detected at run time).
//!
//! One file for the target, over 400 lines: every format's kernel (the
//! 32-value formats and the K-quants) shares the `#[target_feature]`
//! helpers below (code unpacking, `vpmaddubsw`/`vpmaddwd` sums, horizontal
//! adds) that only compile under the run-time feature check.
//!
//! A block's 32 codes fill one 256-bit register in value order (low nibbles,
//! then high nibbles), as do its 32 activation codes, so one `vpmaddubsw`
//! (u8 × i8, adjacent pairs summed to i16) and one `vpmaddwd` with ones (pairs
//! to i32) give eight partial sums. Why nothing overflows or saturates:
//! - Q4/Q5 codes are 0..=31 and activations −127..=127: a pair is at most
//!   2·31·127 = 7874 < 32767.
//! - Q8_0 codes are −128..=127 and signed, so they go in as |w| (≤ 128, a
//!   valid u8) with the sign moved onto the activation (`vpsignb`, which
//!   never sees −128 there): a pair is at most 2·128·127 = 32512 < 32767.
//! - `vpmaddwd` of two such i16 with 1 cannot overflow i32.
//!
//! - IQ4 codes are table values −127..=113, looked up from the nibbles with
//!   one `vpshufb` (the 16-entry table in each 128-bit lane) and multiplied
//!   as Q8_0's: a pair is at most 2·127·127 = 32258 < 32767.
//!
//! Q4_0/Q5_0's offset (`− offset · Σ q_x`) is subtracted from lane 0 in
//! integers; Q4_1/Q5_1's `m · s_x` is a scalar FMA per block.
//!
//! The K-quants run a super-block at a time (`KKernel`): Q4_K's 32 bytes of
//! a 64-value chunk give two sub-blocks' codes in value order (low nibbles,
//! high nibbles), multiplied as Q4_1's; Q5_K adds each sub-block's fifth
//! bit (codes 0..=31, pairs ≤ 2·31·127 = 7874, as Q5_1's). A Q6_K
//! sub-block's 6-bit codes (0..=63) are assembled from a nibble and two
//! high bits, and `vpmaddubsw(c, x) − vpmaddubsw(32, x)` gives Σ (c − 32)·x
//! per pair (each at most 2·63·127 = 16002 and 2·32·127 = 8128, so neither
//! saturates); one `vpmaddwd` with the two groups' i8 scales (lanes 0..8
//! from values 0..16, 8..16 from 16..32) then scales and sums the pairs
//! (≤ 2·8128·128 < 2^21). Q3_K's codes (−4..=3) go in as Q8_0's do, |c| ≤ 4
//! with the sign moved onto the activation (pairs ≤ 2·4·127 = 1016), then
//! the same `vpmaddwd` with scales −32..=31 (≤ 2·1016·32 < 2^16). Q2_K's
//! codes (0..=3, pairs ≤ 762) take their 4-bit scales the same way
//! (≤ 2·762·15 < 2^15), and its min term is a second `vpmaddwd` of the
//! activation pairs `vpmaddubsw(1, x)` (≤ 254) with the 4-bit mins
//! (≤ 2·254·15 < 2^13), scaled by `−dmin·d_x`.
//! An IQ4_XS sub-block is an IQ4_NL block whose f32 scale is `d·(ls_j − 32)`
//! (exact: an f16 times a 6-bit integer).

use core::arch::x86_64::*;

use super::activations::{Activations, quantize_natural_avx2};
use super::format::{BLOCK, BlockFormat, IQ4_VALUES, SUPER, iq4_xs_scale, q3k_scales, q4k_scales_mins};
use super::scalar;
use super::Product;

/// Input rows per tile: each unpacked weight block is used this many times.
const TILE: usize = 4;

pub(super) fn available() -> bool {
    is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") && is_x86_feature_detected!("f16c")
}

pub(super) fn matmul(p: &Product, out: &mut [f32]) {
    let Product { format, weights, n, k, x, rows_x } = *p;
    if !available() {
        return scalar::matmul(p, out);
    }
    // SAFETY: available() checked AVX2.
    let a = unsafe { quantize_natural_avx2(x, rows_x, k) };
    match format {
        BlockFormat::Q4_0 => run::<Q4<2, 8>>(weights, n, k, &a, rows_x, out),
        BlockFormat::Q4_1 => run::<Q4<4, 0>>(weights, n, k, &a, rows_x, out),
        BlockFormat::Q5_0 => run::<Q5<2, 6, 16>>(weights, n, k, &a, rows_x, out),
        BlockFormat::Q5_1 => run::<Q5<4, 8, 0>>(weights, n, k, &a, rows_x, out),
        BlockFormat::Q8_0 => run::<Q8>(weights, n, k, &a, rows_x, out),
        BlockFormat::Q2K => run_k::<Q2K>(weights, n, k, &a, rows_x, out),
        BlockFormat::Q3K => run_k::<Q3K>(weights, n, k, &a, rows_x, out),
        BlockFormat::Q4K => run_k::<ScaleMin<false>>(weights, n, k, &a, rows_x, out),
        BlockFormat::Q5K => run_k::<ScaleMin<true>>(weights, n, k, &a, rows_x, out),
        BlockFormat::Q6K => run_k::<Q6K>(weights, n, k, &a, rows_x, out),
        BlockFormat::IQ4NL => run::<IQ4NL>(weights, n, k, &a, rows_x, out),
        BlockFormat::IQ4XS => run_k::<IQ4XS>(weights, n, k, &a, rows_x, out),
        BlockFormat::F16 | BlockFormat::BF16 => unreachable!("16-bit rows are multiplied in f32 (half_rows)"),
    }
}

/// One block format: how its codes are loaded and multiplied.
trait Kernel {
    const FORMAT: BlockFormat;
    /// The codes of the block at `blk`, as (multiplicand, sign source).
    /// # Safety
    /// `blk` points at a whole block; the CPU has AVX2.
    unsafe fn load(blk: *const u8) -> (__m256i, __m256i);
    /// Adjacent-pair sums (i16) of codes × activations.
    /// # Safety
    /// The CPU has AVX2.
    unsafe fn pairs(w: (__m256i, __m256i), x: __m256i) -> __m256i;
}

/// Q4_0 (codes at 2, offset 8) and Q4_1 (codes at 4, no offset).
struct Q4<const AT: usize, const OFFSET: i32>;
/// Q5_0 and Q5_1: where the high bits and the nibbles start, and the offset.
struct Q5<const HIGH: usize, const AT: usize, const OFFSET: i32>;
struct Q8;
struct IQ4NL;

#[target_feature(enable = "avx2")]
#[inline]
unsafe fn nibbles(p: *const u8) -> __m256i {
    // SAFETY: the caller guarantees 16 readable bytes at p; unaligned load.
    let v = unsafe { _mm_loadu_si128(p as *const __m128i) };
    _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(v, 4), v), _mm256_set1_epi8(0x0F))
}

impl<const AT: usize, const OFFSET: i32> Kernel for Q4<AT, OFFSET> {
    const FORMAT: BlockFormat = if OFFSET == 8 { BlockFormat::Q4_0 } else { BlockFormat::Q4_1 };
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn load(blk: *const u8) -> (__m256i, __m256i) {
        // SAFETY: a block holds 16 nibble bytes from AT on.
        let w = unsafe { nibbles(blk.add(AT)) };
        (w, w)
    }
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn pairs(w: (__m256i, __m256i), x: __m256i) -> __m256i {
        _mm256_maddubs_epi16(w.0, x)
    }
}

impl<const HIGH: usize, const AT: usize, const OFFSET: i32> Kernel for Q5<HIGH, AT, OFFSET> {
    const FORMAT: BlockFormat = if OFFSET == 16 { BlockFormat::Q5_0 } else { BlockFormat::Q5_1 };
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn load(blk: *const u8) -> (__m256i, __m256i) {
        // SAFETY: a block holds the u32 at HIGH and 16 nibble bytes at AT.
        let (low, high) = unsafe { (nibbles(blk.add(AT)), (blk.add(HIGH) as *const u32).read_unaligned()) };
        // Byte j gets byte j/8 of the high word, then keeps bit j%8 of it.
        let spread = _mm256_setr_epi8(
            0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3,
        );
        let bit = _mm256_set1_epi64x(0x8040_2010_0804_0201_u64 as i64);
        let hb = _mm256_and_si256(_mm256_shuffle_epi8(_mm256_set1_epi32(high as i32), spread), bit);
        let fifth = _mm256_and_si256(_mm256_cmpeq_epi8(hb, bit), _mm256_set1_epi8(0x10));
        let w = _mm256_or_si256(low, fifth);
        (w, w)
    }
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn pairs(w: (__m256i, __m256i), x: __m256i) -> __m256i {
        _mm256_maddubs_epi16(w.0, x)
    }
}

impl Kernel for Q8 {
    const FORMAT: BlockFormat = BlockFormat::Q8_0;
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn load(blk: *const u8) -> (__m256i, __m256i) {
        // SAFETY: a Q8_0 block holds 32 code bytes from 2 on.
        let w = unsafe { _mm256_loadu_si256(blk.add(2) as *const __m256i) };
        (_mm256_abs_epi8(w), w)
    }
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn pairs(w: (__m256i, __m256i), x: __m256i) -> __m256i {
        signed_pairs(w, x)
    }
}

/// Adjacent-pair sums of signed codes (given as |w| and w) × activations.
#[target_feature(enable = "avx2")]
#[inline]
fn signed_pairs(w: (__m256i, __m256i), x: __m256i) -> __m256i {
    _mm256_maddubs_epi16(w.0, _mm256_sign_epi8(x, w.1))
}

/// The 32 IQ4 codes (table values, in value order) of the 16 nibble bytes at `p`.
/// # Safety
/// 16 bytes are readable at `p`; the CPU has AVX2.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn iq4_codes(p: *const u8) -> __m256i {
    // SAFETY: the table holds 16 bytes; the caller's 16 at p.
    let (table, idx) = unsafe { (_mm_loadu_si128(IQ4_VALUES.as_ptr() as *const __m128i), nibbles(p)) };
    _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(table), idx)
}

impl Kernel for IQ4NL {
    const FORMAT: BlockFormat = BlockFormat::IQ4NL;
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn load(blk: *const u8) -> (__m256i, __m256i) {
        // SAFETY: an IQ4_NL block holds 16 nibble bytes from 2 on.
        let w = unsafe { iq4_codes(blk.add(2)) };
        (_mm256_abs_epi8(w), w)
    }
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn pairs(w: (__m256i, __m256i), x: __m256i) -> __m256i {
        signed_pairs(w, x)
    }
}

fn run<K: Kernel>(weights: &[u8], n: usize, k: usize, a: &Activations, rows_x: usize, out: &mut [f32]) {
    let row_bytes = K::FORMAT.row_bytes(k);
    let blocks = k / BLOCK;
    assert!(weights.len() >= n * row_bytes && a.q8.len() >= rows_x * a.stride * BLOCK && blocks <= a.stride);
    for_tiles(weights, n, row_bytes, rows_x, out, |row, r0, rows, y| {
        // SAFETY: available() was checked; `row` holds `blocks` blocks and
        // `a` holds rows r0..r0 + rows of `stride ≥ blocks` blocks (asserted above).
        unsafe {
            match rows {
                4 => tile::<K, 4>(row, blocks, a, r0, y),
                3 => tile::<K, 3>(row, blocks, a, r0, y),
                2 => tile::<K, 2>(row, blocks, a, r0, y),
                _ => tile::<K, 1>(row, blocks, a, r0, y),
            }
        }
    });
}

/// Calls `tile(row, r0, rows, y)` for every weight row and every tile of at
/// most `TILE` input rows (r0..r0 + rows), and writes its `y[..rows]` out,
/// a band of weight rows at a time (`super::weight_bands`).
fn for_tiles(
    weights: &[u8],
    n: usize,
    row_bytes: usize,
    rows_x: usize,
    out: &mut [f32],
    mut tile: impl FnMut(*const u8, usize, usize, &mut [f32; TILE]),
) {
    if rows_x == 1 {
        // Several streams of rows, each still asked for ahead (`super::STREAMS`).
        super::fill_in_streams(&mut out[..n], |i| {
            prefetch_ahead(weights, i * row_bytes, row_bytes);
            let mut y = [0f32; TILE];
            tile(weights[i * row_bytes..(i + 1) * row_bytes].as_ptr(), 0, 1, &mut y);
            y[0]
        });
        return;
    }
    for band in super::weight_bands(n, row_bytes) {
        let mut r0 = 0;
        while r0 < rows_x {
            let rows = (rows_x - r0).min(TILE);
            for i in band.clone() {
                if r0 == 0 {
                    // The band's later tiles of input rows find it in cache.
                    prefetch_ahead(weights, i * row_bytes, row_bytes);
                }
                let mut y = [0f32; TILE];
                tile(weights[i * row_bytes..(i + 1) * row_bytes].as_ptr(), r0, rows, &mut y);
                for (r, &v) in y[..rows].iter().enumerate() {
                    out[(r0 + r) * n + i] = v;
                }
            }
            r0 += rows;
        }
    }
}

/// Asks for the cache lines of `super::lines_ahead`, as `super::touch_ahead`
/// does in wasm, but with the prefetch instruction, which does not wait for
/// them.
#[inline(always)]
fn prefetch_ahead(bytes: &[u8], at: usize, len: usize) {
    for i in super::lines_ahead(bytes.len(), at, len) {
        // SAFETY: i < bytes.len(); a prefetch reads nothing.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(bytes.as_ptr().add(i) as *const i8) };
    }
}

/// One weight row against input rows r0..r0 + R.
/// # Safety
/// AVX2, FMA and F16C are available; `row` points at `blocks` whole blocks;
/// `a` holds rows r0..r0 + R.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn tile<K: Kernel, const R: usize>(
    row: *const u8,
    blocks: usize,
    a: &Activations,
    r0: usize,
    y: &mut [f32; TILE],
) {
    // Two accumulators per input row (even and odd blocks): consecutive
    // blocks do not wait on each other's FMA latency.
    let mut acc = [[_mm256_setzero_ps(); R]; 2];
    let mut acc_m = [0f32; R];
    let rows: [usize; R] = core::array::from_fn(|r| (r0 + r) * a.stride);
    let bs = K::FORMAT.block_bytes();
    let mut b = 0;
    while b + 2 <= blocks {
        // SAFETY: blocks b and b + 1 are inside the row and inside every
        // input row of the tile.
        unsafe {
            block::<K, R>(row.add(b * bs), a, &rows, b, &mut acc[0], &mut acc_m);
            block::<K, R>(row.add((b + 1) * bs), a, &rows, b + 1, &mut acc[1], &mut acc_m);
        }
        b += 2;
    }
    if b < blocks {
        // SAFETY: as above, for the last block.
        unsafe { block::<K, R>(row.add(b * bs), a, &rows, b, &mut acc[0], &mut acc_m) };
    }
    for r in 0..R {
        y[r] = hsum(_mm256_add_ps(acc[0][r], acc[1][r])) + acc_m[r];
    }
}

/// Block `b` (at `blk`) against the tile's input rows, which start at
/// block `rows[r]` of `a`.
/// # Safety
/// As `tile`, and `blk` points at a whole block.
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn block<K: Kernel, const R: usize>(
    blk: *const u8,
    a: &Activations,
    rows: &[usize; R],
    b: usize,
    acc: &mut [__m256; R],
    acc_m: &mut [f32; R],
) {
    let ones = _mm256_set1_epi16(1);
    let offset = K::FORMAT.offset();
    // SAFETY: the block is whole; d (and m) are its first 4 bytes.
    let (w, dw, mw) = unsafe {
        let w = K::load(blk);
        let dm = _mm_cvtph_ps(_mm_cvtsi32_si128((blk as *const i32).read_unaligned()));
        (w, _mm_cvtss_f32(dm), _mm_cvtss_f32(_mm_movehdup_ps(dm)))
    };
    for r in 0..R {
        let at = rows[r] + b;
        // SAFETY: `at` is a block of an input row of the tile (the caller's bounds).
        let (xq, dx, sx, qsum) = unsafe {
            (
                _mm256_loadu_si256(a.q8.as_ptr().add(at * BLOCK) as *const __m256i),
                *a.d.get_unchecked(at),
                *a.s.get_unchecked(at),
                *a.qsum.get_unchecked(at),
            )
        };
        // SAFETY: AVX2 is available (the caller's contract).
        let mut p = _mm256_madd_epi16(unsafe { K::pairs(w, xq) }, ones);
        if offset != 0 {
            p = _mm256_sub_epi32(p, _mm256_setr_epi32(offset * qsum, 0, 0, 0, 0, 0, 0, 0));
        }
        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(dw * dx), acc[r]);
        if K::FORMAT.has_min() {
            acc_m[r] = mw.mul_add(sx, acc_m[r]);
        }
    }
}

#[target_feature(enable = "avx2")]
#[inline]
fn hsum(v: __m256) -> f32 {
    let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)))
}

/// A K-quant format: one 256-value super-block against a tile of input rows.
trait KKernel {
    const FORMAT: BlockFormat;
    /// Adds the super-block at `blk` times activation blocks `rows[r] + at ..
    /// + 8` to `acc[·][r]` (vector lanes) and `acc_m[r]` (scalar terms).
    /// # Safety
    /// AVX2, FMA and F16C are available; `blk` points at a whole block; the
    /// eight activation blocks of every row are inside `a`.
    unsafe fn superblock<const R: usize>(
        blk: *const u8,
        a: &Activations,
        rows: &[usize; R],
        at: usize,
        acc: &mut [[__m256; R]; 2],
        acc_m: &mut [f32; R],
    );
}

/// Q4_K (`FIVE` false) and Q5_K: 6-bit scales and mins per 32 values.
struct ScaleMin<const FIVE: bool>;
struct Q2K;
struct Q3K;
struct Q6K;
struct IQ4XS;

/// The f16 at `p`, widened exactly.
/// # Safety
/// F16C is available; 2 bytes are readable at `p`.
#[target_feature(enable = "avx2,f16c")]
#[inline]
unsafe fn f16_at(p: *const u8) -> f32 {
    // SAFETY: two readable bytes (the caller's contract).
    let bits = unsafe { (p as *const u16).read_unaligned() };
    _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(bits as i32)))
}

/// The activation codes, scale and `s` of block `at`.
/// # Safety
/// `at` is a block of `a`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn activation(a: &Activations, at: usize) -> (__m256i, f32, f32) {
    // SAFETY: the caller's bounds.
    unsafe {
        (
            _mm256_loadu_si256(a.q8.as_ptr().add(at * BLOCK) as *const __m256i),
            *a.d.get_unchecked(at),
            *a.s.get_unchecked(at),
        )
    }
}

impl<const FIVE: bool> KKernel for ScaleMin<FIVE> {
    const FORMAT: BlockFormat = if FIVE { BlockFormat::Q5K } else { BlockFormat::Q4K };
    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn superblock<const R: usize>(
        blk: *const u8,
        a: &Activations,
        rows: &[usize; R],
        at: usize,
        acc: &mut [[__m256; R]; 2],
        acc_m: &mut [f32; R],
    ) {
        // SAFETY: both formats start with d, dmin and 12 scale bytes; Q4_K's
        // 128 code bytes follow (144 bytes), Q5_K's 32 fifth-bit bytes and
        // then its 128 code bytes (176 bytes).
        let (d, dmin, packed, high) = unsafe {
            let high = if FIVE { _mm256_loadu_si256(blk.add(16) as *const __m256i) } else { _mm256_setzero_si256() };
            (f16_at(blk), f16_at(blk.add(2)), core::slice::from_raw_parts(blk.add(4), 12), high)
        };
        let (sc, m) = q4k_scales_mins(packed);
        let codes_at = K_CODES_AT[FIVE as usize];
        let mask = _mm256_set1_epi8(0x0F);
        let ones = _mm256_set1_epi16(1);
        for c in 0..4 {
            // SAFETY: chunk c's 32 code bytes are inside the block.
            let q = unsafe { _mm256_loadu_si256(blk.add(codes_at + 32 * c) as *const __m256i) };
            let codes = [_mm256_and_si256(q, mask), _mm256_and_si256(_mm256_srli_epi16(q, 4), mask)];
            for (half, mut w) in codes.into_iter().enumerate() {
                let j = 2 * c + half;
                if FIVE {
                    // Bit j of each fifth-bit byte, as 16.
                    let bit = _mm256_set1_epi8((1u8 << j) as i8);
                    let fifth = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(high, bit), bit), _mm256_set1_epi8(0x10));
                    w = _mm256_or_si256(w, fifth);
                }
                let (ds, dm) = (d * sc[j] as f32, dmin * m[j] as f32);
                for r in 0..R {
                    // SAFETY: block rows[r] + at + j is one of the eight (the caller's bounds).
                    let (xq, dx, sx) = unsafe { activation(a, rows[r] + at + j) };
                    let p = _mm256_madd_epi16(_mm256_maddubs_epi16(w, xq), ones);
                    acc[half][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(ds * dx), acc[half][r]);
                    acc_m[r] = (-dm).mul_add(sx, acc_m[r]);
                }
            }
        }
    }
}

/// Where Q4_K's and Q5_K's nibbles start.
const K_CODES_AT: [usize; 2] = [16, 48];

/// Two i16 scales as `vpmaddwd` wants them for one activation block: `a`
/// for pairs of values 0..16 (lanes 0..8), `b` for 16..32.
#[target_feature(enable = "avx2")]
#[inline]
fn group_scales(a: i16, b: i16) -> __m256i {
    _mm256_set_m128i(_mm_set1_epi16(b), _mm_set1_epi16(a))
}

impl KKernel for Q2K {
    const FORMAT: BlockFormat = BlockFormat::Q2K;
    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn superblock<const R: usize>(
        blk: *const u8,
        a: &Activations,
        rows: &[usize; R],
        at: usize,
        acc: &mut [[__m256; R]; 2],
        _acc_m: &mut [f32; R],
    ) {
        // SAFETY: a Q2_K block is 84 bytes: 16 scale bytes, 64 code bytes, d at 80, dmin at 82.
        let (d, dmin, sc) =
            unsafe { (f16_at(blk.add(80)), f16_at(blk.add(82)), core::slice::from_raw_parts(blk, 16)) };
        let (low2, ones8) = (_mm256_set1_epi8(3), _mm256_set1_epi8(1));
        for h in 0..2 {
            // SAFETY: half h's 32 code bytes are inside the block.
            let q = unsafe { _mm256_loadu_si256(blk.add(16 + 32 * h) as *const __m256i) };
            for s in 0..4 {
                let w = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2 * s as i32)), low2);
                let b = 4 * h + s;
                let (ga, gb) = (sc[2 * b], sc[2 * b + 1]);
                let scales = group_scales((ga & 0xF) as i16, (gb & 0xF) as i16);
                let mins = group_scales((ga >> 4) as i16, (gb >> 4) as i16);
                for r in 0..R {
                    // SAFETY: block rows[r] + at + b is one of the eight (the caller's bounds).
                    let (xq, dx, _) = unsafe { activation(a, rows[r] + at + b) };
                    let p = _mm256_madd_epi16(_mm256_maddubs_epi16(w, xq), scales);
                    let pm = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, xq), mins);
                    acc[0][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(d * dx), acc[0][r]);
                    acc[1][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(pm), _mm256_set1_ps(-(dmin * dx)), acc[1][r]);
                }
            }
        }
    }
}

impl KKernel for Q3K {
    const FORMAT: BlockFormat = BlockFormat::Q3K;
    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn superblock<const R: usize>(
        blk: *const u8,
        a: &Activations,
        rows: &[usize; R],
        at: usize,
        acc: &mut [[__m256; R]; 2],
        _acc_m: &mut [f32; R],
    ) {
        // SAFETY: a Q3_K block is 110 bytes: high bits 0..32, codes 32..96, scales 96..108, d at 108.
        let (d, sc, hmask) = unsafe {
            (
                f16_at(blk.add(108)),
                q3k_scales(core::slice::from_raw_parts(blk.add(96), 12)),
                _mm256_loadu_si256(blk as *const __m256i),
            )
        };
        let (low2, four) = (_mm256_set1_epi8(3), _mm256_set1_epi8(4));
        for h in 0..2 {
            // SAFETY: half h's 32 code bytes are inside the block.
            let q = unsafe { _mm256_loadu_si256(blk.add(32 + 32 * h) as *const __m256i) };
            for s in 0..4 {
                let b = 4 * h + s;
                let low = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2 * s as i32)), low2);
                let bit = _mm256_set1_epi8((1u8 << b) as i8);
                let high = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hmask, bit), bit), four);
                // low + 4·high − 4: −4..=3, as |c| (≤ 4) and its sign.
                let c = _mm256_sub_epi8(_mm256_or_si256(low, high), four);
                let abs = _mm256_abs_epi8(c);
                let scales = group_scales(sc[2 * b] as i16, sc[2 * b + 1] as i16);
                for r in 0..R {
                    // SAFETY: block rows[r] + at + b is one of the eight (the caller's bounds).
                    let (xq, dx, _) = unsafe { activation(a, rows[r] + at + b) };
                    let p = _mm256_madd_epi16(_mm256_maddubs_epi16(abs, _mm256_sign_epi8(xq, c)), scales);
                    acc[s % 2][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(d * dx), acc[s % 2][r]);
                }
            }
        }
    }
}

impl KKernel for Q6K {
    const FORMAT: BlockFormat = BlockFormat::Q6K;
    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn superblock<const R: usize>(
        blk: *const u8,
        a: &Activations,
        rows: &[usize; R],
        at: usize,
        acc: &mut [[__m256; R]; 2],
        _acc_m: &mut [f32; R],
    ) {
        // SAFETY: a Q6_K block is 210 bytes: ql 0..128, qh 128..192, scales 192..208, d 208.
        let (d, sc) = unsafe { (f16_at(blk.add(208)), core::slice::from_raw_parts(blk.add(192) as *const i8, 16)) };
        let (low4, low2, c32) = (_mm256_set1_epi8(0x0F), _mm256_set1_epi8(3), _mm256_set1_epi8(32));
        for h in 0..2 {
            // SAFETY: these 32-byte runs are inside the block.
            let (ql, qh) = unsafe {
                let p = blk.add(64 * h);
                (
                    [_mm256_loadu_si256(p as *const __m256i), _mm256_loadu_si256(p.add(32) as *const __m256i)],
                    _mm256_loadu_si256(blk.add(128 + 32 * h) as *const __m256i),
                )
            };
            for t in 0..4 {
                let nib = if t < 2 { ql[t % 2] } else { _mm256_srli_epi16(ql[t % 2], 4) };
                let high = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * t as i32)), low2);
                let w = _mm256_or_si256(_mm256_and_si256(nib, low4), _mm256_slli_epi16(high, 4));
                let b = 4 * h + t;
                let scales = group_scales(sc[2 * b] as i16, sc[2 * b + 1] as i16);
                for r in 0..R {
                    // SAFETY: block rows[r] + at + b is one of the eight (the caller's bounds).
                    let (xq, dx, _) = unsafe { activation(a, rows[r] + at + b) };
                    let pairs = _mm256_sub_epi16(_mm256_maddubs_epi16(w, xq), _mm256_maddubs_epi16(c32, xq));
                    let p = _mm256_madd_epi16(pairs, scales);
                    acc[t % 2][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(d * dx), acc[t % 2][r]);
                }
            }
        }
    }
}

impl KKernel for IQ4XS {
    const FORMAT: BlockFormat = BlockFormat::IQ4XS;
    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn superblock<const R: usize>(
        blk: *const u8,
        a: &Activations,
        rows: &[usize; R],
        at: usize,
        acc: &mut [[__m256; R]; 2],
        _acc_m: &mut [f32; R],
    ) {
        // SAFETY: an IQ4_XS block is 136 bytes: d, scales_h, 4 scales_l bytes, 128 nibble bytes.
        let (d, head) = unsafe { (f16_at(blk), core::slice::from_raw_parts(blk, 8)) };
        let ones = _mm256_set1_epi16(1);
        for j in 0..SUPER / BLOCK {
            // SAFETY: sub-block j's 16 nibble bytes are inside the block.
            let w = unsafe { iq4_codes(blk.add(8 + 16 * j)) };
            let w = (_mm256_abs_epi8(w), w);
            let ds = d * iq4_xs_scale(head, j) as f32;
            for r in 0..R {
                // SAFETY: block rows[r] + at + j is one of the eight (the caller's bounds).
                let (xq, dx, _) = unsafe { activation(a, rows[r] + at + j) };
                let p = _mm256_madd_epi16(signed_pairs(w, xq), ones);
                acc[j % 2][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(ds * dx), acc[j % 2][r]);
            }
        }
    }
}

fn run_k<K: KKernel>(weights: &[u8], n: usize, k: usize, a: &Activations, rows_x: usize, out: &mut [f32]) {
    let row_bytes = K::FORMAT.row_bytes(k);
    let supers = k / SUPER;
    assert!(weights.len() >= n * row_bytes && a.q8.len() >= rows_x * a.stride * BLOCK && supers * 8 <= a.stride);
    for_tiles(weights, n, row_bytes, rows_x, out, |row, r0, rows, y| {
        // SAFETY: available() was checked; `row` holds `supers` blocks and
        // `a` holds rows r0..r0 + rows of `stride ≥ 8 · supers` blocks (asserted above).
        unsafe {
            match rows {
                4 => tile_k::<K, 4>(row, supers, a, r0, y),
                3 => tile_k::<K, 3>(row, supers, a, r0, y),
                2 => tile_k::<K, 2>(row, supers, a, r0, y),
                _ => tile_k::<K, 1>(row, supers, a, r0, y),
            }
        }
    });
}

/// One K-quant weight row against input rows r0..r0 + R.
/// # Safety
/// As `tile`, with `supers` super-blocks at `row`.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn tile_k<K: KKernel, const R: usize>(
    row: *const u8,
    supers: usize,
    a: &Activations,
    r0: usize,
    y: &mut [f32; TILE],
) {
    let mut acc = [[_mm256_setzero_ps(); R]; 2];
    let mut acc_m = [0f32; R];
    let rows: [usize; R] = core::array::from_fn(|r| (r0 + r) * a.stride);
    let bs = K::FORMAT.block_bytes();
    for s in 0..supers {
        // SAFETY: super-block s is inside the row, its activation blocks inside every row of the tile.
        unsafe { K::superblock::<R>(row.add(s * bs), a, &rows, s * (SUPER / BLOCK), &mut acc, &mut acc_m) };
    }
    for r in 0..R {
        y[r] = hsum(_mm256_add_ps(acc[0][r], acc[1][r])) + acc_m[r];
    }
}
