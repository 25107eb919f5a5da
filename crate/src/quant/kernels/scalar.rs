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
//! The K-quants, per 32-value activation block (sub-block j of a Q4_K
//! super-block; groups 2t and 2t + 1 of a Q6_K one):
//!
//! ```text
//! Q4_K   isum = Σ_l c_l · q_l                    (c 0..=15; |isum| < 2^16)
//!        block = (d · d_x) · (sc_j · isum) − (dmin · m_j) · s_x
//! Q6_K   isum = sc_2t · Σ_{l<16} (c_l − 32)·q_l + sc_2t+1 · Σ_{l≥16} (c_l − 32)·q_l
//!        block = (d · d_x) · isum                 (c 0..=63, sc −128..=127)
//! ```
//! `sc_j · isum` ≤ 63 · 32·15·127 < 2^22 and the Q6_K isum ≤ 2·128·16·32·127
//! < 2^24, so both are exact in i32 and in f32.
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
use super::format::{BLOCK, BlockFormat, SUPER, f16_at, iq4_codes, iq4_xs_scale, q4k_scales_mins, q6k_code, u32_at};
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

/// One Q4_K super-block against the eight activation blocks from `at` on.
pub(super) fn q4k_dot(blk: &[u8], a: &Activations, at: usize) -> f32 {
    let (d, dmin) = (f16_at(blk, 0), f16_at(blk, 2));
    let (sc, m) = q4k_scales_mins(&blk[4..16]);
    let mut acc = 0f32;
    for j in 0..SUBS {
        let bytes = &blk[16 + 32 * (j / 2)..][..32];
        let qx = &a.q8[(at + j) * BLOCK..][..BLOCK];
        let shift = 4 * (j % 2);
        let isum: i32 = bytes.iter().zip(qx).map(|(&b, &q)| ((b >> shift) & 0xF) as i32 * q as i32).sum();
        acc += (d * a.d[at + j]) * (sc[j] as i32 * isum) as f32 - (dmin * m[j] as f32) * a.s[at + j];
    }
    acc
}

/// One Q6_K super-block against the eight activation blocks from `at` on.
pub(super) fn q6k_dot(blk: &[u8], a: &Activations, at: usize) -> f32 {
    let d = f16_at(blk, 208);
    let sc = &blk[192..208];
    let mut acc = 0f32;
    for b in 0..SUBS {
        let (h, t) = (b / 4, b % 4);
        let qx = &a.q8[(at + b) * BLOCK..][..BLOCK];
        let mut half = [0i32; 2];
        for (l, &q) in qx.iter().enumerate() {
            half[l / 16] += (q6k_code(blk, h, t, l) as i32 - 32) * q as i32;
        }
        let isum = (sc[2 * b] as i8) as i32 * half[0] + (sc[2 * b + 1] as i8) as i32 * half[1];
        acc += (d * a.d[at + b]) * isum as f32;
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
        BlockFormat::Q4K => q4k_dot(blk, a, at),
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
