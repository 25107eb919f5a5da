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

use super::activations::{Activations, Layout};
use super::format::{BLOCK, BlockFormat, f16_at, u32_at};
use super::Product;

/// The 32 codes of a block in value order: Q4 0..=15, Q5 0..=31, Q8 −128..=127.
pub(super) fn codes(format: BlockFormat, blk: &[u8]) -> [i8; BLOCK] {
    let mut c = [0i8; BLOCK];
    let at = format.codes_at();
    match format {
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

pub(super) fn matmul(p: &Product, out: &mut [f32]) {
    let Product { format, weights, n, k, x, rows_x } = *p;
    let a = Activations::quantize(x, rows_x, k, Layout::Natural);
    let bs = format.block_bytes();
    let row_bytes = format.row_bytes(k);
    // Weight rows outside, input rows inside: a weight row is read from
    // memory once and stays in L1 for all the input rows.
    for (i, row) in weights.chunks_exact(row_bytes).take(n).enumerate() {
        for r in 0..rows_x {
            let base = r * a.stride;
            let mut acc = 0f32;
            for (b, blk) in row.chunks_exact(bs).enumerate() {
                acc += block_dot(format, blk, &a, base + b);
            }
            out[r * n + i] = acc;
        }
    }
}
