//! wasm32 with `simd128`: the browser build (its nibble formats' kernels
//! in a build with relaxed-simd too: `relaxed`).
//!
//! One file for the target, over 400 lines: every format's kernel (the
//! 32-value formats and the K-quants) rests on the same `Layout::Wide`
//! activations, nibble unpacking and i16 dot helpers below and on the one
//! `cfg` gate; split by format, each file would need all of them.
//!
//! simd128 has no u8 × i8 multiply-add, but it has `i32x4.dot_i16x8_s`
//! (`pmaddwd` underneath). So the activations are widened to i16 once per
//! input row (`Layout::Wide`), and each weight block is split into four
//! i16x8 vectors whose lane order that layout matches: for the nibble
//! formats, the 16 bytes read as eight u16 lanes hold four nibbles each,
//! masked/shifted out in place (no byte shuffles, no widening).
//!
//! Why nothing overflows: codes are at most 31 (Q4/Q5) or −128..=127 (Q8_0)
//! and activations −127..=127, so an i16 lane is exact and a dot pair is at
//! most 2·128·127 < 2^31; a block sums 16 such pairs, < 2^20.
//!
//! Four blocks are done together: their four i32x4 partial sums are folded
//! into one vector with one lane per block, so the f16 scales, the
//! activation scales and the `m`/offset terms of four blocks are handled in
//! single vector operations, each block's value computed as in `scalar`.
//!
//! The K-quants go a super-block at a time, four sub-blocks per fold: a
//! Q4_K sub-block's 32 code bytes, read as u16 lanes, hold values 2i and
//! 2i + 1 in bytes 0 and 1 of lane i, which is `Layout::Wide`'s order once
//! the nibble is shifted down; Q5_K ors in its fifth bits, read from the
//! same lanes of its 32 high-bit bytes (codes ≤ 31, as Q5_1's). A Q6_K
//! sub-block's codes are built the same way from a nibble and two high
//! bits, shifted to −32..=31 and multiplied by their group's i8 scale in
//! i16 (|(c − 32)·sc| ≤ 32·128 = 4096; a dot pair ≤ 2·4096·127 < 2^20);
//! Q3_K's from two low bits and a high bit, −4..=3, times scales −32..=31
//! (≤ 128; a pair ≤ 2·128·127 < 2^16); Q2_K's from two bits, 0..=3, times
//! 4-bit scales (≤ 45), and its min term is one more dot product per
//! 16-value group: the group's activations added pairwise in i16 (≤ 254)
//! against the 4-bit min (a pair ≤ 2·254·15 < 2^13). Every sum of a
//! 32-value block stays below 2^20, exact in i32 and in f32. The
//! super-block's f16 scales are widened in scalar code (two per 256
//! values), so inf and NaN pass through as in `scalar`.
//!
//! IQ4 codes are table values (−127..=113): `i8x16.swizzle` looks the 16
//! nibbles of each half-block up in the table, and the bytes are
//! sign-extended in place into `Layout::Wide`'s order as Q8_0's are (a dot
//! pair ≤ 2·127·127). An IQ4_XS sub-block is an IQ4_NL block whose scale
//! is `d·(ls_j − 32)`, four sub-blocks per fold as Q4_K's.

use core::arch::wasm32::*;

use super::activations::{Activations, Layout, quantize_simd128};
use super::format::{BLOCK, BlockFormat, IQ4_VALUES, SUPER, f16_at, iq4_xs_scale, q3k_scales, q4k_scales_mins};
use super::Product;

/// Input rows per tile: each unpacked weight block is used this many times.
const TILE: usize = 4;

/// The nibble formats' kernels for a build with relaxed-simd.
#[cfg(target_feature = "relaxed-simd")]
mod relaxed;

pub(super) fn matmul(p: &Product, out: &mut [f32]) {
    let Product { format, weights, n, k, x, rows_x } = *p;
    // The relaxed-simd build's byte kernels, in the form this machine runs
    // fastest (`relaxed::unfused_x86`).
    #[cfg(target_feature = "relaxed-simd")]
    {
        let done = if relaxed::unfused_x86() { relaxed_bytes::<true>(p, out) } else { relaxed_bytes::<false>(p, out) };
        if done {
            return;
        }
    }
    match format {
        BlockFormat::Q4_0 => run::<Q4<2, 8>>(weights, n, k, x, rows_x, out),
        BlockFormat::Q4_1 => run::<Q4<4, 0>>(weights, n, k, x, rows_x, out),
        BlockFormat::Q5_0 => run::<Q5<2, 6, 16>>(weights, n, k, x, rows_x, out),
        BlockFormat::Q5_1 => run::<Q5<4, 8, 0>>(weights, n, k, x, rows_x, out),
        BlockFormat::Q8_0 => run::<Q8>(weights, n, k, x, rows_x, out),
        BlockFormat::Q2K => run_k::<Q2K>(weights, n, k, x, rows_x, out),
        BlockFormat::Q3K => run_k::<Q3K>(weights, n, k, x, rows_x, out),
        BlockFormat::Q4K => run_k::<ScaleMin<false, false>>(weights, n, k, x, rows_x, out),
        BlockFormat::Q5K => run_k::<ScaleMin<true, false>>(weights, n, k, x, rows_x, out),
        BlockFormat::Q6K => run_k::<Q6K>(weights, n, k, x, rows_x, out),
        BlockFormat::IQ4NL => run::<IQ4NL>(weights, n, k, x, rows_x, out),
        BlockFormat::IQ4XS => run_k::<IQ4XS>(weights, n, k, x, rows_x, out),
        BlockFormat::F16 | BlockFormat::BF16 => unreachable!("16-bit rows are multiplied in f32 (half_rows)"),
    }
}

/// The relaxed-simd build's byte kernels for `p`'s format, their dot
/// products in the 16-bit form where `PAIRS`; Q8_0's only in the 32-bit
/// form (with the 16-bit one, simd128's kernel is as fast: see
/// `relaxed::unfused_x86`). False, with nothing done, for the other formats.
#[cfg(target_feature = "relaxed-simd")]
fn relaxed_bytes<const PAIRS: bool>(p: &Product, out: &mut [f32]) -> bool {
    let Product { format, weights, n, k, x, rows_x } = *p;
    match format {
        BlockFormat::Q4_0 => run::<relaxed::Q4Bytes<2, 8, PAIRS>>(weights, n, k, x, rows_x, out),
        BlockFormat::Q4_1 => run::<relaxed::Q4Bytes<4, 0, PAIRS>>(weights, n, k, x, rows_x, out),
        BlockFormat::Q5_0 => run::<relaxed::Q5Bytes<2, 6, 16, PAIRS>>(weights, n, k, x, rows_x, out),
        BlockFormat::Q5_1 => run::<relaxed::Q5Bytes<4, 8, 0, PAIRS>>(weights, n, k, x, rows_x, out),
        BlockFormat::Q8_0 if !PAIRS => run::<relaxed::Q8Split>(weights, n, k, x, rows_x, out),
        BlockFormat::Q4K => run_k::<ScaleMin<false, PAIRS>>(weights, n, k, x, rows_x, out),
        BlockFormat::Q5K => run_k::<ScaleMin<true, PAIRS>>(weights, n, k, x, rows_x, out),
        _ => return false,
    }
    true
}

/// One block format: how its codes are unpacked, and which layout of the
/// activations they meet in a dot product.
trait Kernel {
    const FORMAT: BlockFormat;
    /// `Wide`: the codes are four i16x8 vectors in that order (`dot4`);
    /// `Natural` and `Split`: two vectors of bytes in value order
    /// (relaxed-simd's).
    const LAYOUT: Layout;
    type Codes: Copy;
    /// # Safety
    /// `blk` points at a whole block.
    unsafe fn load(blk: *const u8) -> Self::Codes;
    /// An i32x4 whose lanes add up to the block's codes times the
    /// activation block at `x`, exactly.
    /// # Safety
    /// A whole block of codes in `LAYOUT` is readable at `x`.
    unsafe fn dot(w: Self::Codes, x: *const v128) -> v128;
}

/// Where activation block `at`'s codes in `layout` start.
/// # Safety
/// Block `at` is inside `a`, which holds `layout`'s codes.
#[inline(always)]
unsafe fn act_codes(a: &Activations, layout: Layout, at: usize) -> *const v128 {
    // SAFETY: the caller's contract.
    unsafe {
        match layout {
            Layout::Wide => a.q16.as_ptr().add(at * BLOCK) as *const v128,
            Layout::Natural | Layout::Split => a.q8.as_ptr().add(at * layout.block_bytes()) as *const v128,
        }
    }
}

/// The v128 vectors one block of activation codes takes in `layout`.
const fn vectors_per_block(layout: Layout) -> usize {
    layout.block_bytes() / 16
}

/// Kernels that unpack to `Layout::Wide` codes.
macro_rules! wide_kernel {
    () => {
        const LAYOUT: Layout = Layout::Wide;
        type Codes = [v128; 4];
        #[inline(always)]
        unsafe fn dot(w: [v128; 4], x: *const v128) -> v128 {
            // SAFETY: the caller's contract.
            unsafe { dot4(w, x) }
        }
    };
}

/// Q4_0 (codes at 2, offset 8) and Q4_1 (codes at 4).
struct Q4<const AT: usize, const OFFSET: i32>;
/// Q5_0 and Q5_1: where the high bits and the nibbles start, and the offset.
struct Q5<const HIGH: usize, const AT: usize, const OFFSET: i32>;
struct Q8;
struct IQ4NL;

impl<const AT: usize, const OFFSET: i32> Kernel for Q4<AT, OFFSET> {
    const FORMAT: BlockFormat = if OFFSET == 8 { BlockFormat::Q4_0 } else { BlockFormat::Q4_1 };
    wide_kernel!();
    #[inline(always)]
    unsafe fn load(blk: *const u8) -> [v128; 4] {
        // SAFETY: a block holds 16 nibble bytes from AT on; v128_load is unaligned.
        let v = unsafe { v128_load(blk.add(AT) as *const v128) };
        // u16 lane i = byte 2i | byte 2i+1 << 8: nibbles of values 2i, 2i+16, 2i+1, 2i+17.
        let m = u16x8_splat(0x000F);
        [v128_and(v, m), v128_and(u16x8_shr(v, 4), m), v128_and(u16x8_shr(v, 8), m), u16x8_shr(v, 12)]
    }
}

impl<const HIGH: usize, const AT: usize, const OFFSET: i32> Kernel for Q5<HIGH, AT, OFFSET> {
    const FORMAT: BlockFormat = if OFFSET == 16 { BlockFormat::Q5_0 } else { BlockFormat::Q5_1 };
    wide_kernel!();
    #[inline(always)]
    unsafe fn load(blk: *const u8) -> [v128; 4] {
        // SAFETY: the caller's contract.
        let [lo, hi] = unsafe { q5_bytes::<HIGH, AT>(blk) };
        let even = u16x8_splat(0x00FF);
        [v128_and(lo, even), v128_and(hi, even), u16x8_shr(lo, 8), u16x8_shr(hi, 8)]
    }
}

/// A Q5 block's 32 codes (0..=31) as bytes in value order: values 0..16, then 16..32.
/// # Safety
/// `blk` points at a whole block: the u32 at HIGH and 16 nibble bytes at AT.
#[inline(always)]
unsafe fn q5_bytes<const HIGH: usize, const AT: usize>(blk: *const u8) -> [v128; 2] {
    // SAFETY: a block holds the u32 at HIGH and 16 nibble bytes at AT.
    let (v, high) =
        unsafe { (v128_load(blk.add(AT) as *const v128), (blk.add(HIGH) as *const u32).read_unaligned()) };
    // Bytes in value order: values 0..16, then 16..32. Each byte of the
    // high word becomes eight bytes of fifth bits by a table lookup: the
    // index work runs on the scalar units, beside the vector arithmetic.
    let t = FIFTH_BITS.as_ptr();
    let byte = |i: u32| ((high >> (8 * i)) & 0xFF) as usize;
    // SAFETY: every index is below 256, the table's length.
    let (lo_fifth, hi_fifth) = unsafe {
        (
            v128_load64_lane::<1>(v128_load64_zero(t.add(byte(0))), t.add(byte(1))),
            v128_load64_lane::<1>(v128_load64_zero(t.add(byte(2))), t.add(byte(3))),
        )
    };
    let lo = v128_or(v128_and(v, u8x16_splat(0x0F)), lo_fifth);
    let hi = v128_or(v128_and(u16x8_shr(v, 4), u8x16_splat(0x0F)), hi_fifth);
    [lo, hi]
}

/// For each byte of Q5 high bits, eight bytes: byte j is 16 where bit j is set.
static FIFTH_BITS: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut j = 0;
        while j < 8 {
            if b & (1 << j) != 0 {
                t[b] |= 0x10 << (8 * j);
            }
            j += 1;
        }
        b += 1;
    }
    t
};

impl Kernel for Q8 {
    const FORMAT: BlockFormat = BlockFormat::Q8_0;
    wide_kernel!();
    #[inline(always)]
    unsafe fn load(blk: *const u8) -> [v128; 4] {
        // SAFETY: a Q8_0 block holds 32 code bytes from 2 on.
        let (v0, v1) = unsafe { (v128_load(blk.add(2) as *const v128), v128_load(blk.add(18) as *const v128)) };
        // i16 lane i = byte 2i | byte 2i+1 << 8: sign-extend each byte in place.
        let even = |v: v128| i16x8_shr(i16x8_shl(v, 8), 8);
        [even(v0), even(v1), i16x8_shr(v0, 8), i16x8_shr(v1, 8)]
    }
}

/// 16 bytes of IQ4 nibbles as the block's 32 table values, in `Layout::Wide` order.
#[inline(always)]
fn iq4_wide(v: v128) -> [v128; 4] {
    let t = IQ4_VALUES;
    let table = i8x16(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11], t[12], t[13], t[14], t[15]);
    // Bytes in value order: values 0..16, then 16..32.
    let lo = u8x16_swizzle(table, v128_and(v, u8x16_splat(0x0F)));
    let hi = u8x16_swizzle(table, u8x16_shr(v, 4));
    // i16 lane i = byte 2i | byte 2i+1 << 8: sign-extend each byte in place.
    let even = |v: v128| i16x8_shr(i16x8_shl(v, 8), 8);
    [even(lo), even(hi), i16x8_shr(lo, 8), i16x8_shr(hi, 8)]
}

impl Kernel for IQ4NL {
    const FORMAT: BlockFormat = BlockFormat::IQ4NL;
    wide_kernel!();
    #[inline(always)]
    unsafe fn load(blk: *const u8) -> [v128; 4] {
        // SAFETY: an IQ4_NL block holds 16 nibble bytes from 2 on.
        iq4_wide(unsafe { v128_load(blk.add(2) as *const v128) })
    }
}

fn run<K: Kernel>(weights: &[u8], n: usize, k: usize, x: &[f32], rows_x: usize, out: &mut [f32]) {
    let a = &quantize_simd128(x, rows_x, k, K::LAYOUT);
    let row_bytes = K::FORMAT.row_bytes(k);
    let blocks = k / BLOCK;
    assert!(weights.len() >= n * row_bytes && blocks.div_ceil(4) * 4 <= a.stride);
    if rows_x == 1 {
        // SAFETY: the rows hold `blocks` blocks each and `a` one row of
        // `stride` blocks, at least `blocks` rounded up to 4 (asserted above).
        unsafe { rows_of_one::<K>(weights, blocks, a, &mut out[..n]) };
        return;
    }
    // A band of weight rows at a time (`super::weight_bands`).
    for band in super::weight_bands(n, row_bytes) {
        let mut r0 = 0;
        while r0 < rows_x {
            let rows = (rows_x - r0).min(TILE);
            for i in band.clone() {
                let row = &weights[i * row_bytes..(i + 1) * row_bytes];
                if r0 == 0 {
                    // The band's later tiles of input rows find it in cache.
                    super::touch_ahead(weights, i * row_bytes, row_bytes);
                }
                let mut y = [0f32; TILE];
                // SAFETY: `row` holds `blocks` blocks; `a` holds rows r0..r0 + rows
                // of `stride` blocks, at least `blocks` rounded up to 4 (asserted above).
                unsafe {
                    let special = match rows {
                        4 => tile::<K, 4, false>(row.as_ptr(), blocks, a, r0, &mut y),
                        3 => tile::<K, 3, false>(row.as_ptr(), blocks, a, r0, &mut y),
                        2 => tile::<K, 2, false>(row.as_ptr(), blocks, a, r0, &mut y),
                        _ => tile::<K, 1, false>(row.as_ptr(), blocks, a, r0, &mut y),
                    };
                    if special {
                        // An inf/NaN scale (a broken file): redo the row with
                        // the exact widening, one input row at a time.
                        for (r, yr) in y[..rows].iter_mut().enumerate() {
                            let mut one = [0f32; TILE];
                            tile::<K, 1, true>(row.as_ptr(), blocks, a, r0 + r, &mut one);
                            *yr = one[0];
                        }
                    }
                }
                for (r, &v) in y[..rows].iter().enumerate() {
                    out[(r0 + r) * n + i] = v;
                }
            }
            r0 += rows;
        }
    }
}

/// Every weight row against a single input row, the rows taken from
/// `STREAMS` parts of the matrix in turn (`super::fill_in_streams`),
/// `tile`'s body inline: a call of `tile` per row made Gemma 3's step
/// 1.5-2 ms slower in Chromium (51.3-51.5 against 49.1-49.9 ms, profiles of
/// 32 steps).
/// # Safety
/// `weights` holds `out.len()` rows of `blocks` blocks; `a` holds one row
/// of at least `blocks` rounded up to 4.
#[inline(never)]
unsafe fn rows_of_one<K: Kernel>(weights: &[u8], blocks: usize, a: &Activations, out: &mut [f32]) {
    let row_bytes = K::FORMAT.row_bytes(blocks * BLOCK);
    super::fill_in_streams(out, |r| {
        let mut y = [0f32; TILE];
        // SAFETY: row r < out.len() lies inside `weights` (the caller's contract).
        unsafe {
            let row = weights.as_ptr().add(r * row_bytes);
            if tile_inline::<K, 1, false>(row, blocks, a, 0, &mut y) {
                // An inf/NaN scale (a broken file): the row again, exactly.
                tile::<K, 1, true>(row, blocks, a, 0, &mut y);
            }
        }
        y[0]
    });
}

/// Where one input row's quantised blocks are, advanced group by group.
#[derive(Clone, Copy)]
struct RowPtrs {
    /// Codes, a block in the kernel's layout.
    x: *const v128,
    /// Scales.
    d: *const f32,
    /// `s` (formats with `m`) or `Σ q` (formats with an offset), per block.
    f: *const u8,
}

/// One weight row against input rows r0..r0 + R. Without `EXACT`, an
/// inf/NaN f16 scale is widened to a finite value and the return value is
/// true: the caller must redo the row with `EXACT`.
/// # Safety
/// `row` points at `blocks` whole blocks; `a` holds rows r0..r0 + R with a
/// stride of at least `blocks` rounded up to 4.
#[inline(never)]
unsafe fn tile<K: Kernel, const R: usize, const EXACT: bool>(
    row: *const u8,
    blocks: usize,
    a: &Activations,
    r0: usize,
    y: &mut [f32; TILE],
) -> bool {
    // SAFETY: the caller's contract.
    unsafe { tile_inline::<K, R, EXACT>(row, blocks, a, r0, y) }
}

/// `tile`'s body, for callers that loop over rows themselves.
/// # Safety
/// As `tile`.
#[inline(always)]
unsafe fn tile_inline<K: Kernel, const R: usize, const EXACT: bool>(
    row: *const u8,
    blocks: usize,
    a: &Activations,
    r0: usize,
    y: &mut [f32; TILE],
) -> bool {
    let mut acc = [f32x4_splat(0.0); R];
    let mut special = i32x4_splat(0);
    let mut p: [RowPtrs; R] = core::array::from_fn(|r| {
        let at = (r0 + r) * a.stride;
        // SAFETY: row r0 + r of `a` starts at block `at`.
        unsafe {
            RowPtrs {
                x: act_codes(a, K::LAYOUT, at),
                d: a.d.as_ptr().add(at),
                f: if K::FORMAT.has_min() {
                    a.s.as_ptr().add(at) as *const u8
                } else {
                    a.qsum.as_ptr().add(at) as *const u8
                },
            }
        }
    });
    let step = 4 * K::FORMAT.block_bytes();
    let mut w = row;
    for _ in 0..blocks / 4 {
        // SAFETY: the four blocks at `w` lie inside the row, and the
        // pointers in `p` at the same blocks of their input rows.
        unsafe {
            group::<K, R, EXACT>(w, 4, &p, &mut acc, &mut special);
            w = w.add(step);
            for q in p.iter_mut() {
                *q = RowPtrs { x: q.x.add(4 * vectors_per_block(K::LAYOUT)), d: q.d.add(4), f: q.f.add(16) };
            }
        }
    }
    if !blocks.is_multiple_of(4) {
        // SAFETY: only blocks below `blocks` are read from the row; the
        // activations are padded past it.
        unsafe { group::<K, R, EXACT>(w, blocks % 4, &p, &mut acc, &mut special) };
    }
    for r in 0..R {
        let v = acc[r];
        y[r] = (f32x4_extract_lane::<0>(v) + f32x4_extract_lane::<1>(v))
            + (f32x4_extract_lane::<2>(v) + f32x4_extract_lane::<3>(v));
    }
    v128_any_true(special)
}

/// `count` (≤ 4) blocks of one weight row at `w` against R input rows at
/// `p`, added to `acc` (lane j holds the sum of the blocks ≡ j mod 4).
/// # Safety
/// `count` blocks at `w` are inside the row; four blocks at each `p` are
/// inside their (padded) input rows.
#[inline(always)]
unsafe fn group<K: Kernel, const R: usize, const EXACT: bool>(
    w: *const u8,
    count: usize,
    p: &[RowPtrs; R],
    acc: &mut [v128; R],
    special: &mut v128,
) {
    let bs = K::FORMAT.block_bytes();
    let zero = i32x4_splat(0);
    // s[r][j]: the four i32 partial sums of block j against input row r.
    let mut s = [[zero; 4]; R];
    // V8 issues a loop body's loads in program order but computes on them
    // as late as possible, which on 16 xmm registers spilled most of them:
    // a store after each block's dot product makes it finish that block
    // before loading the next.
    let mut sink = zero;
    for j in 0..count {
        // SAFETY: j < count, so block j at `w` is inside the row.
        let wj = unsafe { K::load(w.add(j * bs)) };
        for (q, sr) in p.iter().zip(s.iter_mut()) {
            // SAFETY: block j at `q` is inside the (padded) input row.
            unsafe {
                sr[j] = K::dot(wj, q.x.add(vectors_per_block(K::LAYOUT) * j));
                core::ptr::write_volatile(&mut sink, sr[j]);
            }
        }
    }
    // SAFETY: only the headers of blocks j < count are read.
    let (dw, mw) = unsafe { scales::<K, EXACT>(w, count, special) };
    for ((q, sr), acc) in p.iter().zip(s).zip(acc.iter_mut()) {
        // SAFETY: the four blocks at `q` are inside the (padded) input row.
        let (dx, fields) = unsafe { (v128_load(q.d as *const v128), v128_load(q.f as *const v128)) };
        let mut isum = fold4(sr);
        match K::FORMAT.offset() {
            8 => isum = i32x4_sub(isum, i32x4_shl(fields, 3)),
            16 => isum = i32x4_sub(isum, i32x4_shl(fields, 4)),
            _ => {}
        }
        let mut v = f32x4_mul(f32x4_mul(dw, dx), f32x4_convert_i32x4(isum));
        if K::FORMAT.has_min() {
            v = f32x4_add(v, f32x4_mul(mw, fields));
        }
        *acc = f32x4_add(*acc, v);
    }
}

/// Four i32x4 into one: lane j is the sum of the lanes of `s[j]`.
#[inline(always)]
fn fold4(s: [v128; 4]) -> v128 {
    let ab = i32x4_add(i32x4_shuffle::<0, 4, 1, 5>(s[0], s[1]), i32x4_shuffle::<2, 6, 3, 7>(s[0], s[1]));
    let cd = i32x4_add(i32x4_shuffle::<0, 4, 1, 5>(s[2], s[3]), i32x4_shuffle::<2, 6, 3, 7>(s[2], s[3]));
    i32x4_add(i32x4_shuffle::<0, 1, 4, 5>(ab, cd), i32x4_shuffle::<2, 3, 6, 7>(ab, cd))
}

/// `d` and `m` (0 where absent) of blocks 0..count from `base`, as f32x4.
/// Without `EXACT`, lanes of `special` are set where a scale is inf/NaN
/// (checking once per row is cheaper than fixing each widening).
/// # Safety
/// The first 4 bytes of blocks 0..count at `base` are readable (every block
/// is at least 18 bytes).
#[inline(always)]
unsafe fn scales<K: Kernel, const EXACT: bool>(base: *const u8, count: usize, special: &mut v128) -> (v128, v128) {
    let bs = K::FORMAT.block_bytes();
    // SAFETY: lane j reads bytes 0..4 of block j < count.
    let h = unsafe {
        let mut h = v128_load32_zero(base as *const u32);
        if count > 1 {
            h = v128_load32_lane::<1>(h, base.add(bs) as *const u32);
        }
        if count > 2 {
            h = v128_load32_lane::<2>(h, base.add(2 * bs) as *const u32);
        }
        if count > 3 {
            h = v128_load32_lane::<3>(h, base.add(3 * bs) as *const u32);
        }
        h
    };
    if !EXACT {
        // Exponent bits all set, in d (low half) and, if present, m.
        let e = if K::FORMAT.has_min() {
            let e = u16x8_splat(0x7C00);
            i16x8_eq(v128_and(h, e), e)
        } else {
            let e = u32x4_splat(0x7C00);
            i32x4_eq(v128_and(h, e), e)
        };
        *special = v128_or(*special, e);
    }
    (f16_high_to_f32::<EXACT>(i32x4_shl(h, 16)), f16_high_to_f32::<EXACT>(h))
}

/// The f16 in the high 16 bits of each lane, widened exactly as
/// `half::f16::to_f32` does (NaN payloads aside); without `EXACT`, inf and
/// NaN become finite values of 65536 or more.
#[inline(always)]
pub(super) fn f16_high_to_f32<const EXACT: bool>(h: v128) -> v128 {
    // Sign to bit 31, exponent and mantissa to bits 27..13: the f32 bits of
    // the value times 2^-112, exact for normal and subnormal halves alike.
    let bits = v128_and(i32x4_shr(h, 3), u32x4_splat(0x8FFF_E000));
    let v = f32x4_mul(bits, f32x4_splat(f32::from_bits((127 + 112) << 23)));
    if !EXACT {
        return v;
    }
    // Exponent 31 (inf, NaN) must become exponent 255.
    let e = v128_and(bits, u32x4_splat(0x0F80_0000));
    v128_or(v, v128_and(i32x4_eq(e, u32x4_splat(0x0F80_0000)), u32x4_splat(0x7F80_0000)))
}

/// A K-quant format: one super-block against a tile of input rows.
trait KKernel {
    const FORMAT: BlockFormat;
    /// The activations' layout its sub-blocks' codes meet.
    const LAYOUT: Layout = Layout::Wide;
    /// Adds the super-block at `blk` times activation blocks `at[r]..at[r] + 8` to `acc[r]`.
    /// # Safety
    /// `blk` points at a whole block; the activation blocks are inside `a`.
    unsafe fn superblock<const R: usize>(blk: *const u8, a: &Activations, at: &[usize; R], acc: &mut [v128; R]);
}

/// Q4_K (`FIVE` false) and Q5_K: 6-bit scales and mins per 32 values;
/// `PAIRS`: in the relaxed-simd build, by `relaxed::dot_pairs`.
struct ScaleMin<const FIVE: bool, const PAIRS: bool>;
struct Q2K;
struct Q3K;
struct Q6K;
struct IQ4XS;

impl<const FIVE: bool, const PAIRS: bool> KKernel for ScaleMin<FIVE, PAIRS> {
    const FORMAT: BlockFormat = if FIVE { BlockFormat::Q5K } else { BlockFormat::Q4K };
    const LAYOUT: Layout = SCALE_MIN_LAYOUT;
    #[inline(always)]
    unsafe fn superblock<const R: usize>(blk: *const u8, a: &Activations, at: &[usize; R], acc: &mut [v128; R]) {
        // SAFETY: the caller's contract.
        unsafe { scale_min_superblock::<FIVE, PAIRS, R>(blk, a, at, acc) }
    }
}

impl KKernel for Q2K {
    const FORMAT: BlockFormat = BlockFormat::Q2K;
    #[inline(always)]
    unsafe fn superblock<const R: usize>(blk: *const u8, a: &Activations, at: &[usize; R], acc: &mut [v128; R]) {
        // SAFETY: the caller's contract.
        unsafe { q2k_superblock::<R>(blk, a, at, acc) }
    }
}

impl KKernel for Q3K {
    const FORMAT: BlockFormat = BlockFormat::Q3K;
    #[inline(always)]
    unsafe fn superblock<const R: usize>(blk: *const u8, a: &Activations, at: &[usize; R], acc: &mut [v128; R]) {
        // SAFETY: the caller's contract.
        unsafe { q3k_superblock::<R>(blk, a, at, acc) }
    }
}

impl KKernel for Q6K {
    const FORMAT: BlockFormat = BlockFormat::Q6K;
    #[inline(always)]
    unsafe fn superblock<const R: usize>(blk: *const u8, a: &Activations, at: &[usize; R], acc: &mut [v128; R]) {
        // SAFETY: the caller's contract.
        unsafe { q6k_superblock::<R>(blk, a, at, acc) }
    }
}

impl KKernel for IQ4XS {
    const FORMAT: BlockFormat = BlockFormat::IQ4XS;
    #[inline(always)]
    unsafe fn superblock<const R: usize>(blk: *const u8, a: &Activations, at: &[usize; R], acc: &mut [v128; R]) {
        // SAFETY: the caller's contract.
        unsafe { iq4xs_superblock::<R>(blk, a, at, acc) }
    }
}

fn run_k<K: KKernel>(weights: &[u8], n: usize, k: usize, x: &[f32], rows_x: usize, out: &mut [f32]) {
    let a = &quantize_simd128(x, rows_x, k, K::LAYOUT);
    let row_bytes = K::FORMAT.row_bytes(k);
    let supers = k / SUPER;
    assert!(weights.len() >= n * row_bytes && supers * 8 <= a.stride);
    if rows_x == 1 {
        super::fill_in_streams(&mut out[..n], |i| {
            let mut y = [0f32; TILE];
            // SAFETY: row i < n holds `supers` whole blocks; `a` holds one
            // row of `stride ≥ 8 · supers` blocks (asserted above).
            unsafe { tile_k::<K, 1>(weights[i * row_bytes..].as_ptr(), supers, a, 0, &mut y) };
            y[0]
        });
        return;
    }
    for (i, row) in weights.chunks_exact(row_bytes).take(n).enumerate() {
        // Tiles of input rows inside the weight row: the K rows are long
        // (a super-block is 84 to 210 bytes), so a row stays in L1 anyway.
        let mut r0 = 0;
        while r0 < rows_x {
            let rows = (rows_x - r0).min(TILE);
            let tile = match rows {
                4 => tile_k::<K, 4>,
                3 => tile_k::<K, 3>,
                2 => tile_k::<K, 2>,
                _ => tile_k::<K, 1>,
            };
            let mut y = [0f32; TILE];
            // SAFETY: `row` holds `supers` whole blocks; `a` holds rows
            // r0..r0 + rows of `stride ≥ 8 · supers` blocks (asserted above).
            unsafe { tile(row.as_ptr(), supers, a, r0, &mut y) };
            for (r, &v) in y[..rows].iter().enumerate() {
                out[(r0 + r) * n + i] = v;
            }
            r0 += rows;
        }
    }
}

/// One K-quant weight row against input rows r0..r0 + R.
/// # Safety
/// `row` points at `supers` whole blocks; `a` holds rows r0..r0 + R of at
/// least `8 · supers` blocks.
#[inline(never)]
unsafe fn tile_k<K: KKernel, const R: usize>(
    row: *const u8,
    supers: usize,
    a: &Activations,
    r0: usize,
    y: &mut [f32; TILE],
) {
    let mut acc = [f32x4_splat(0.0); R];
    let bs = K::FORMAT.block_bytes();
    for s in 0..supers {
        // SAFETY: super-block s is inside the row; its eight activation
        // blocks are inside every input row of the tile.
        unsafe {
            let at: [usize; R] = core::array::from_fn(|r| (r0 + r) * a.stride + s * (SUPER / BLOCK));
            K::superblock::<R>(row.add(s * bs), a, &at, &mut acc);
        }
    }
    for r in 0..R {
        let v = acc[r];
        y[r] = (f32x4_extract_lane::<0>(v) + f32x4_extract_lane::<1>(v))
            + (f32x4_extract_lane::<2>(v) + f32x4_extract_lane::<3>(v));
    }
}

/// The four i32x4 partial dot products of a sub-block's codes `w` (in
/// `Layout::Wide` order) with the activation codes at `x`, summed.
/// # Safety
/// 32 i16 are readable at `x`.
#[inline(always)]
unsafe fn dot4(w: [v128; 4], x: *const v128) -> v128 {
    // SAFETY: four loads of eight i16 within the 32 at `x`.
    unsafe {
        i32x4_add(
            i32x4_add(i32x4_dot_i16x8(w[0], v128_load(x)), i32x4_dot_i16x8(w[1], v128_load(x.add(1)))),
            i32x4_add(i32x4_dot_i16x8(w[2], v128_load(x.add(2))), i32x4_dot_i16x8(w[3], v128_load(x.add(3)))),
        )
    }
}

/// One Q4_K (`FIVE` false) or Q5_K super-block at `blk` against activation
/// blocks `at[r]..at[r] + 8`.
/// # Safety
/// `blk` points at a whole block (144 or 176 bytes); the activation blocks are inside `a`.
#[inline(always)]
unsafe fn scale_min_superblock<const FIVE: bool, const PAIRS: bool, const R: usize>(
    blk: *const u8,
    a: &Activations,
    at: &[usize; R],
    acc: &mut [v128; R],
) {
    // SAFETY: d, dmin and the 12 scale bytes are the block's first 16
    // bytes; Q5_K's 32 fifth-bit bytes follow them.
    let (d, dmin, sc, m, high) = unsafe {
        let head = core::slice::from_raw_parts(blk, 16);
        let (sc, m) = q4k_scales_mins(&head[4..16]);
        let high = if FIVE {
            [v128_load(blk.add(16) as *const v128), v128_load(blk.add(32) as *const v128)]
        } else {
            [i32x4_splat(0); 2]
        };
        (f16_at(head, 0), f16_at(head, 2), sc, m, high)
    };
    let codes_at = if FIVE { 48 } else { 16 };
    for g in 0..2 {
        let mut s = [[i32x4_splat(0); 4]; R];
        for jj in 0..4 {
            let j = 4 * g + jj;
            // SAFETY: the sub-block's 32 code bytes are inside the block.
            let (v0, v1) = unsafe {
                let p = blk.add(codes_at + 32 * (j / 2));
                (v128_load(p as *const v128), v128_load(p.add(16) as *const v128))
            };
            let w = scale_min_codes::<FIVE>([v0, v1], &high, j);
            for r in 0..R {
                // SAFETY: activation block at[r] + j is inside `a`, in SCALE_MIN_LAYOUT.
                s[r][jj] = unsafe { scale_min_dot::<PAIRS>(w, act_codes(a, SCALE_MIN_LAYOUT, at[r] + j)) };
            }
        }
        let q = 4 * g;
        let dsc = f32x4(d * sc[q] as f32, d * sc[q + 1] as f32, d * sc[q + 2] as f32, d * sc[q + 3] as f32);
        let dm = f32x4(dmin * m[q] as f32, dmin * m[q + 1] as f32, dmin * m[q + 2] as f32, dmin * m[q + 3] as f32);
        for r in 0..R {
            // SAFETY: blocks at[r] + q .. + 4 are inside `a`.
            let (dx, sx) =
                unsafe { (v128_load(a.d.as_ptr().add(at[r] + q) as *const v128), v128_load(a.s.as_ptr().add(at[r] + q) as *const v128)) };
            let v = f32x4_mul(f32x4_mul(dsc, dx), f32x4_convert_i32x4(fold4(s[r])));
            acc[r] = f32x4_add(acc[r], f32x4_sub(v, f32x4_mul(dm, sx)));
        }
    }
}

/// Q4_K/Q5_K sub-blocks meet the activations in this layout.
#[cfg(not(target_feature = "relaxed-simd"))]
const SCALE_MIN_LAYOUT: Layout = Layout::Wide;
#[cfg(target_feature = "relaxed-simd")]
use relaxed::{SCALE_MIN_LAYOUT, scale_min_codes, scale_min_dot};

/// Sub-block `j`'s codes, from the 32 code bytes `v` it shares with its
/// neighbour (the low nibbles are sub-block 2i's, the high ones 2i + 1's)
/// and, for Q5_K, the super-block's 32 fifth-bit bytes `high`.
#[cfg(not(target_feature = "relaxed-simd"))]
#[inline(always)]
fn scale_min_codes<const FIVE: bool>(v: [v128; 2], high: &[v128; 2], j: usize) -> [v128; 4] {
    let (mask, one) = (u16x8_splat(0x000F), u16x8_splat(1));
    let shift = 4 * (j % 2) as u32;
    let w = [
        v128_and(u16x8_shr(v[0], shift), mask),
        v128_and(u16x8_shr(v[1], shift), mask),
        v128_and(u16x8_shr(v[0], shift + 8), mask),
        v128_and(u16x8_shr(v[1], shift + 8), mask),
    ];
    if !FIVE {
        return w;
    }
    // Bit j of the high byte of each value, as 16.
    let fifth = |h: v128, sh: u32| i16x8_shl(v128_and(u16x8_shr(h, sh), one), 4);
    let j = j as u32;
    [
        v128_or(w[0], fifth(high[0], j)),
        v128_or(w[1], fifth(high[1], j)),
        v128_or(w[2], fifth(high[0], j + 8)),
        v128_or(w[3], fifth(high[1], j + 8)),
    ]
}

/// A Q4_K or Q5_K sub-block's codes times the activation block at `x`.
/// # Safety
/// As `dot4`.
#[cfg(not(target_feature = "relaxed-simd"))]
#[inline(always)]
unsafe fn scale_min_dot<const PAIRS: bool>(w: [v128; 4], x: *const v128) -> v128 {
    // SAFETY: the caller's contract.
    unsafe { dot4(w, x) }
}

/// One Q2_K super-block at `blk` against activation blocks `at[r]..at[r] + 8`.
/// # Safety
/// `blk` points at a whole block (84 bytes); the activation blocks are inside `a`.
#[inline(always)]
unsafe fn q2k_superblock<const R: usize>(blk: *const u8, a: &Activations, at: &[usize; R], acc: &mut [v128; R]) {
    // SAFETY: the 16 scale bytes start the block, d and dmin end it.
    let (sc, d, dmin) = unsafe {
        let b = core::slice::from_raw_parts(blk, 84);
        (&b[..16], f16_at(b, 80), f16_at(b, 82))
    };
    let low2 = u16x8_splat(0x0003);
    let (dv, mv) = (f32x4_splat(d), f32x4_splat(dmin));
    for h in 0..2 {
        // SAFETY: half h's 32 code bytes are inside the block.
        let (v0, v1) = unsafe {
            let p = blk.add(16 + 32 * h);
            (v128_load(p as *const v128), v128_load(p.add(16) as *const v128))
        };
        let mut s = [[i32x4_splat(0); 4]; R];
        let mut sm = [[i32x4_splat(0); 4]; R];
        for t in 0..4 {
            let b = 4 * h + t;
            let sh = 2 * t as u32;
            let (ga, gb) = (sc[2 * b], sc[2 * b + 1]);
            let (sa, sb) = (i16x8_splat((ga & 0xF) as i16), i16x8_splat((gb & 0xF) as i16));
            let (ma, mb) = (i16x8_splat((ga >> 4) as i16), i16x8_splat((gb >> 4) as i16));
            let w = [
                i16x8_mul(v128_and(u16x8_shr(v0, sh), low2), sa),
                i16x8_mul(v128_and(u16x8_shr(v1, sh), low2), sb),
                i16x8_mul(v128_and(u16x8_shr(v0, sh + 8), low2), sa),
                i16x8_mul(v128_and(u16x8_shr(v1, sh + 8), low2), sb),
            ];
            for r in 0..R {
                // SAFETY: activation block at[r] + b is inside `a`; 32 i16 from `x`.
                unsafe {
                    let x = a.q16.as_ptr().add((at[r] + b) * BLOCK) as *const v128;
                    s[r][t] = dot4(w, x);
                    // Layout::Wide: vectors 0 and 2 hold values 0..16, 1 and 3 values 16..32.
                    let (lo, hi) = (i16x8_add(v128_load(x), v128_load(x.add(2))), i16x8_add(v128_load(x.add(1)), v128_load(x.add(3))));
                    sm[r][t] = i32x4_add(i32x4_dot_i16x8(lo, ma), i32x4_dot_i16x8(hi, mb));
                }
            }
        }
        for r in 0..R {
            // SAFETY: blocks at[r] + 4h .. + 4 are inside `a`.
            let dx = unsafe { v128_load(a.d.as_ptr().add(at[r] + 4 * h) as *const v128) };
            let v = f32x4_mul(f32x4_mul(dv, dx), f32x4_convert_i32x4(fold4(s[r])));
            let vm = f32x4_mul(f32x4_mul(mv, dx), f32x4_convert_i32x4(fold4(sm[r])));
            acc[r] = f32x4_add(acc[r], f32x4_sub(v, vm));
        }
    }
}

/// One Q3_K super-block at `blk` against activation blocks `at[r]..at[r] + 8`.
/// # Safety
/// `blk` points at a whole block (110 bytes); the activation blocks are inside `a`.
#[inline(always)]
unsafe fn q3k_superblock<const R: usize>(blk: *const u8, a: &Activations, at: &[usize; R], acc: &mut [v128; R]) {
    // SAFETY: the 32 high-bit bytes start the block; the scales and d end it.
    let (hm, sc, d) = unsafe {
        let b = core::slice::from_raw_parts(blk, 110);
        ([v128_load(blk as *const v128), v128_load(blk.add(16) as *const v128)], q3k_scales(&b[96..108]), f16_at(b, 108))
    };
    let (low2, one, four) = (u16x8_splat(0x0003), u16x8_splat(1), i16x8_splat(4));
    let dv = f32x4_splat(d);
    for h in 0..2 {
        // SAFETY: half h's 32 code bytes are inside the block.
        let (v0, v1) = unsafe {
            let p = blk.add(32 + 32 * h);
            (v128_load(p as *const v128), v128_load(p.add(16) as *const v128))
        };
        let mut s = [[i32x4_splat(0); 4]; R];
        for t in 0..4 {
            let b = 4 * h + t;
            let (sh, hb) = (2 * t as u32, b as u32);
            // Two low bits, plus 4 where the high bit is set, less 4: −4..=3.
            let code = |q: v128, hq: v128, extra: u32| {
                let low = v128_and(u16x8_shr(q, sh + extra), low2);
                let high = i16x8_shl(v128_and(u16x8_shr(hq, hb + extra), one), 2);
                i16x8_sub(v128_or(low, high), four)
            };
            let (sa, sb) = (i16x8_splat(sc[2 * b] as i16), i16x8_splat(sc[2 * b + 1] as i16));
            let w = [
                i16x8_mul(code(v0, hm[0], 0), sa),
                i16x8_mul(code(v1, hm[1], 0), sb),
                i16x8_mul(code(v0, hm[0], 8), sa),
                i16x8_mul(code(v1, hm[1], 8), sb),
            ];
            for r in 0..R {
                // SAFETY: activation block at[r] + b is inside `a`.
                s[r][t] = unsafe { dot4(w, a.q16.as_ptr().add((at[r] + b) * BLOCK) as *const v128) };
            }
        }
        for r in 0..R {
            // SAFETY: blocks at[r] + 4h .. + 4 are inside `a`.
            let dx = unsafe { v128_load(a.d.as_ptr().add(at[r] + 4 * h) as *const v128) };
            acc[r] = f32x4_add(acc[r], f32x4_mul(f32x4_mul(dv, dx), f32x4_convert_i32x4(fold4(s[r]))));
        }
    }
}

/// One Q6_K super-block at `blk` against activation blocks `at[r]..at[r] + 8`.
/// # Safety
/// `blk` points at a whole block (210 bytes); the activation blocks are inside `a`.
#[inline(always)]
unsafe fn q6k_superblock<const R: usize>(blk: *const u8, a: &Activations, at: &[usize; R], acc: &mut [v128; R]) {
    // SAFETY: the 16 scale bytes and d end the block.
    let (d, sc) = unsafe {
        let tail = core::slice::from_raw_parts(blk.add(192), 18);
        (f16_at(tail, 16), tail)
    };
    let (low4, low2, c32) = (u16x8_splat(0x000F), u16x8_splat(0x0003), i16x8_splat(32));
    let dv = f32x4_splat(d);
    for h in 0..2 {
        // SAFETY: ql bytes 64h..64h + 64 and qh bytes 128 + 32h.. + 32 are inside the block.
        let (ql, qh) = unsafe {
            let p = blk.add(64 * h);
            let hp = blk.add(128 + 32 * h);
            (
                [v128_load(p as *const v128), v128_load(p.add(16) as *const v128), v128_load(p.add(32) as *const v128), v128_load(p.add(48) as *const v128)],
                [v128_load(hp as *const v128), v128_load(hp.add(16) as *const v128)],
            )
        };
        let mut s = [[i32x4_splat(0); 4]; R];
        for t in 0..4 {
            let (qa, qb) = (ql[2 * (t % 2)], ql[2 * (t % 2) + 1]);
            let (ns, hs) = (4 * (t / 2) as u32, 2 * t as u32);
            let code = |q: v128, hq: v128, extra: u32| {
                let nib = v128_and(u16x8_shr(q, ns + extra), low4);
                let high = i16x8_shl(v128_and(u16x8_shr(hq, hs + extra), low2), 4);
                i16x8_sub(v128_or(nib, high), c32)
            };
            let b = 4 * h + t;
            let (sa, sb) = (i16x8_splat(sc[2 * b] as i8 as i16), i16x8_splat(sc[2 * b + 1] as i8 as i16));
            let w = [
                i16x8_mul(code(qa, qh[0], 0), sa),
                i16x8_mul(code(qb, qh[1], 0), sb),
                i16x8_mul(code(qa, qh[0], 8), sa),
                i16x8_mul(code(qb, qh[1], 8), sb),
            ];
            for r in 0..R {
                // SAFETY: activation block at[r] + b is inside `a`.
                s[r][t] = unsafe { dot4(w, a.q16.as_ptr().add((at[r] + b) * BLOCK) as *const v128) };
            }
        }
        for r in 0..R {
            // SAFETY: blocks at[r] + 4h .. + 4 are inside `a`.
            let dx = unsafe { v128_load(a.d.as_ptr().add(at[r] + 4 * h) as *const v128) };
            acc[r] = f32x4_add(acc[r], f32x4_mul(f32x4_mul(dv, dx), f32x4_convert_i32x4(fold4(s[r]))));
        }
    }
}

/// One IQ4_XS super-block at `blk` against activation blocks `at[r]..at[r] + 8`.
/// # Safety
/// `blk` points at a whole block (136 bytes); the activation blocks are inside `a`.
#[inline(always)]
unsafe fn iq4xs_superblock<const R: usize>(blk: *const u8, a: &Activations, at: &[usize; R], acc: &mut [v128; R]) {
    // SAFETY: d, scales_h and the 4 scales_l bytes are the block's first 8 bytes.
    let head = unsafe { core::slice::from_raw_parts(blk, 8) };
    let d = f16_at(head, 0);
    for g in 0..2 {
        let mut s = [[i32x4_splat(0); 4]; R];
        for jj in 0..4 {
            let j = 4 * g + jj;
            // SAFETY: sub-block j's 16 nibble bytes are inside the block.
            let w = iq4_wide(unsafe { v128_load(blk.add(8 + 16 * j) as *const v128) });
            for r in 0..R {
                // SAFETY: activation block at[r] + j is inside `a`.
                s[r][jj] = unsafe { dot4(w, a.q16.as_ptr().add((at[r] + j) * BLOCK) as *const v128) };
            }
        }
        let q = 4 * g;
        let sc = |j: usize| d * iq4_xs_scale(head, j) as f32;
        let ds = f32x4(sc(q), sc(q + 1), sc(q + 2), sc(q + 3));
        for r in 0..R {
            // SAFETY: blocks at[r] + q .. + 4 are inside `a`.
            let dx = unsafe { v128_load(a.d.as_ptr().add(at[r] + q) as *const v128) };
            acc[r] = f32x4_add(acc[r], f32x4_mul(f32x4_mul(ds, dx), f32x4_convert_i32x4(fold4(s[r]))));
        }
    }
}
