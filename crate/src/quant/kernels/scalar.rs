//! The portable path: one block at a time, plain integer arithmetic. It is
//! the reference the SIMD paths are tested against and the fallback on
//! targets without one, so it defines the per-block arithmetic they share:
//!
//! ```text
//! isum    = Σ_j c_j · q_j − offset · Σ_j q_j        (i32, exact)
//! block   = (d_w · d_x) · isum  [ + m_w · s_x ]     (f32; m only for Q4_1/Q5_1)
//! ```
//! where `c_j` is the unsigned code (Q4/Q5) or the signed byte (Q8_0) and
//! `q_j`, `d_x`, `s_x` come from `Activations`. |isum| ≤ 32·128·127 + 16·32·127
//! < 2^20, so it is exact in i32 and in f32.
//!
//! The K-quants, per 32-value activation block (sub-block j of a Q4_K or
//! Q5_K super-block; groups 2b and 2b + 1 of a Q2_K, Q3_K or Q6_K one),
//! with `Σ_lo`, `Σ_hi` the sums over its first and second 16 values:
//!
//! ```text
//! Q4_K, Q5_K  isum = Σ_l c_l · q_l               (c 0..=15 or 0..=31)
//!             block = (d · d_x) · (sc_j · isum) − (dmin · m_j) · s_x
//! Q2_K        isum = sc_2b · Σ_lo c_l·q_l + sc_2b+1 · Σ_hi c_l·q_l     (c 0..=3, sc 0..=15)
//!             msum = m_2b · Σ_lo q_l + m_2b+1 · Σ_hi q_l               (m 0..=15)
//!             block = (d · d_x) · isum − (dmin · d_x) · msum
//! Q3_K        isum = sc_2b · Σ_lo c_l·q_l + sc_2b+1 · Σ_hi c_l·q_l     (c −4..=3, sc −32..=31)
//! Q6_K        isum = sc_2b · Σ_lo (c_l − 32)·q_l + sc_2b+1 · Σ_hi (c_l − 32)·q_l
//!             block = (d · d_x) · isum                 (c 0..=63, sc −128..=127)
//! ```
//! Q2_K's min term needs its own sum: its mins change every 16 values, so
//! `s_x` (one per 32) cannot carry it. None of these overflows or rounds
//! (|q| ≤ 127, and i32 and f32 hold every integer below 2^24 exactly):
//! - Q4_K: `sc_j · isum` ≤ 63 · 32·15·127 < 2^22; Q5_K: 63 · 32·31·127 < 2^23.
//! - Q2_K: isum ≤ 32·15·3·127 < 2^18 and msum ≤ 32·15·127 < 2^16.
//! - Q3_K: |isum| ≤ 32·32·4·127 < 2^19.
//! - Q6_K: |isum| ≤ 2·128·16·32·127 < 2^24.
//!
//! The IQ4 formats' codes are their table values `T[q]` (−127..=113), so
//! IQ4_NL is a 32-value block as above (no offset, no `m`), and IQ4_XS's
//! sub-block j:
//!
//! ```text
//! IQ4_XS isum = Σ_l T[c_l] · q_l                 (|isum| ≤ 32·127·127 < 2^19)
//!        block = (d · d_x) · ((ls_j − 32) · isum)  (|ls_j − 32| ≤ 32: < 2^24, exact)
//! ```
//!
//! F16 and BF16 rows do not come here: `half_rows` multiplies them in f32.

use super::activations::{Activations, Layout};
use super::format::{
    BLOCK, BlockFormat, SUPER, f16_at, iq4_codes, iq4_xs_scale, q2k_code, q3k_code, q3k_scales, q4k_scales_mins, q5k_code,
    q6k_code, u32_at,
};
use super::Product;

/// The 32 codes of a block in value order: Q4 0..=15, Q5 0..=31, Q8
/// −128..=127, IQ4_NL its table values.
pub(super) fn codes(format: BlockFormat, blk: &[u8]) -> [i8; BLOCK] {
    let mut c = [0i8; BLOCK];
    let at = format.codes_at();
    match format {
        BlockFormat::IQ4NL => return iq4_codes(&blk[at..at + 16]),
        BlockFormat::Q8_0 => {
            for (cj, &b) in c.iter_mut().zip(&blk[at..at + BLOCK]) {
                *cj = b as i8;
            }
        }
        _ => {
            let nib = &blk[at..at + 16];
            for j in 0..16 {
                c[j] = (nib[j] & 0xF) as i8;
                c[j + 16] = (nib[j] >> 4) as i8;
            }
            if matches!(format, BlockFormat::Q5_0 | BlockFormat::Q5_1) {
                let high = u32_at(blk, format.high_bits_at());
                for (j, cj) in c.iter_mut().enumerate() {
                    *cj |= (((high >> j) & 1) << 4) as i8;
                }
            }
        }
    }
    c
}

/// One block's contribution to one output.
pub(super) fn block_dot(format: BlockFormat, blk: &[u8], a: &Activations, at: usize) -> f32 {
    let c = codes(format, blk);
    let qx = &a.q8[at * BLOCK..][..BLOCK];
    let dot: i32 = c.iter().zip(qx).map(|(&c, &q)| c as i32 * q as i32).sum();
    let isum = dot - format.offset() * a.qsum[at];
    let mut v = (f16_at(blk, 0) * a.d[at]) * isum as f32;
    if format.has_min() {
        v += f16_at(blk, 2) * a.s[at];
    }
    v
}

/// Activation blocks per K-quant super-block.
pub(super) const SUBS: usize = SUPER / BLOCK;

/// A Q4_K or Q5_K super-block against the eight activation blocks from
/// `at` on, `code(j, l)` giving value `32j + l`'s code.
fn scale_min_dot(blk: &[u8], a: &Activations, at: usize, code: impl Fn(usize, usize) -> u8) -> f32 {
    let (d, dmin) = (f16_at(blk, 0), f16_at(blk, 2));
    let (sc, m) = q4k_scales_mins(&blk[4..16]);
    let mut acc = 0f32;
    for j in 0..SUBS {
        let qx = &a.q8[(at + j) * BLOCK..][..BLOCK];
        let isum: i32 = qx.iter().enumerate().map(|(l, &q)| code(j, l) as i32 * q as i32).sum();
        acc += (d * a.d[at + j]) * (sc[j] as i32 * isum) as f32 - (dmin * m[j] as f32) * a.s[at + j];
    }
    acc
}

/// One Q4_K super-block against the eight activation blocks from `at` on.
pub(super) fn q4k_dot(blk: &[u8], a: &Activations, at: usize) -> f32 {
    scale_min_dot(blk, a, at, |j, l| (blk[16 + 32 * (j / 2) + l] >> (4 * (j % 2))) & 0xF)
}

/// One Q5_K super-block against the eight activation blocks from `at` on.
pub(super) fn q5k_dot(blk: &[u8], a: &Activations, at: usize) -> f32 {
    scale_min_dot(blk, a, at, |j, l| q5k_code(blk, j, l))
}

/// A Q3_K or Q6_K super-block (scale `d`, group scales `sc`) against the
/// eight activation blocks from `at` on, `code(h, t, l)` giving value
/// `128h + 32t + l`'s signed code.
fn group_dot(d: f32, sc: [i8; 16], a: &Activations, at: usize, code: impl Fn(usize, usize, usize) -> i32) -> f32 {
    let mut acc = 0f32;
    for b in 0..SUBS {
        let (h, t) = (b / 4, b % 4);
        let qx = &a.q8[(at + b) * BLOCK..][..BLOCK];
        let mut half = [0i32; 2];
        for (l, &q) in qx.iter().enumerate() {
            half[l / 16] += code(h, t, l) * q as i32;
        }
        let isum = sc[2 * b] as i32 * half[0] + sc[2 * b + 1] as i32 * half[1];
        acc += (d * a.d[at + b]) * isum as f32;
    }
    acc
}

/// One Q6_K super-block against the eight activation blocks from `at` on.
pub(super) fn q6k_dot(blk: &[u8], a: &Activations, at: usize) -> f32 {
    let sc = core::array::from_fn(|g| blk[192 + g] as i8);
    group_dot(f16_at(blk, 208), sc, a, at, |h, t, l| q6k_code(blk, h, t, l) as i32 - 32)
}

/// One Q3_K super-block against the eight activation blocks from `at` on.
pub(super) fn q3k_dot(blk: &[u8], a: &Activations, at: usize) -> f32 {
    let sc = q3k_scales(&blk[96..108]);
    group_dot(f16_at(blk, 108), sc, a, at, |h, s, l| q3k_code(blk, h, s, l) as i32)
}

/// One Q2_K super-block against the eight activation blocks from `at` on.
pub(super) fn q2k_dot(blk: &[u8], a: &Activations, at: usize) -> f32 {
    let (d, dmin) = (f16_at(blk, 80), f16_at(blk, 82));
    let mut acc = 0f32;
    for b in 0..SUBS {
        let (h, s) = (b / 4, b % 4);
        let qx = &a.q8[(at + b) * BLOCK..][..BLOCK];
        let (mut isum, mut msum) = (0i32, 0i32);
        for (l, &q) in qx.iter().enumerate() {
            let g = blk[2 * b + l / 16];
            isum += (g & 0xF) as i32 * q2k_code(blk, h, s, l) as i32 * q as i32;
            msum += (g >> 4) as i32 * q as i32;
        }
        let dx = a.d[at + b];
        acc += (d * dx) * isum as f32 - (dmin * dx) * msum as f32;
    }
    acc
}

/// One IQ4_XS super-block against the eight activation blocks from `at` on.
pub(super) fn iq4xs_dot(blk: &[u8], a: &Activations, at: usize) -> f32 {
    let d = f16_at(blk, 0);
    let mut acc = 0f32;
    for j in 0..SUBS {
        let c = iq4_codes(&blk[8 + 16 * j..][..16]);
        let qx = &a.q8[(at + j) * BLOCK..][..BLOCK];
        let isum: i32 = c.iter().zip(qx).map(|(&c, &q)| c as i32 * q as i32).sum();
        acc += (d * a.d[at + j]) * (iq4_xs_scale(blk, j) * isum) as f32;
    }
    acc
}

/// One (super-)block's contribution, whatever the format; `at` is the
/// block's first activation block.
pub(super) fn any_block_dot(format: BlockFormat, blk: &[u8], a: &Activations, at: usize) -> f32 {
    match format {
        BlockFormat::Q2K => q2k_dot(blk, a, at),
        BlockFormat::Q3K => q3k_dot(blk, a, at),
        BlockFormat::Q4K => q4k_dot(blk, a, at),
        BlockFormat::Q5K => q5k_dot(blk, a, at),
        BlockFormat::Q6K => q6k_dot(blk, a, at),
        BlockFormat::IQ4XS => iq4xs_dot(blk, a, at),
        _ => block_dot(format, blk, a, at),
    }
}

pub(super) fn matmul(p: &Product, out: &mut [f32]) {
    let Product { format, weights, n, k, x, rows_x } = *p;
    let a = Activations::quantize(x, rows_x, k, Layout::Natural);
    let per_block = format.block_values() / BLOCK;
    let bs = format.block_bytes();
    let row_bytes = format.row_bytes(k);
    // Weight rows outside, input rows inside: a weight row is read from
    // memory once and stays in L1 for all the input rows.
    for (i, row) in weights.chunks_exact(row_bytes).take(n).enumerate() {
        for r in 0..rows_x {
            let base = r * a.stride;
            let mut acc = 0f32;
            for (b, blk) in row.chunks_exact(bs).enumerate() {
                acc += any_block_dot(format, blk, &a, base + b * per_block);
            }
            out[r * n + i] = acc;
        }
    }
}
