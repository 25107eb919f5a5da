//! `matmul` (whichever SIMD path this machine takes) against the scalar path (`matmul_on(KernelPath::Scalar, ..)`),
//! and both against the f32 product of `crate::gguf::quant::dequantize`.
//!
//! Tolerances are computed per output from the data, not fixed:
//! - SIMD vs scalar: the integer sums are exact in both; only the f32 sums
//!   differ in order. With `u = 2^-24`, `nb` blocks and
//!   `T = Σ_b |d_w·d_x|·(Σ_j |c_j·q_j| + offset·|Σ_j q_j|) + |m_w·s_x|` (the
//!   magnitudes of every term either path adds), each path is within
//!   `(nb + 16)·u·T` of the exact sum of its terms, so they are within twice that.
//! - Against the f32 product: each activation moves by at most `d_x/2` when
//!   quantised (plus `127·2u` relative for the reciprocal), so
//!   `|err| ≤ Σ_j |w_j|·0.5001·d_x + (f32 sums as above) + 4u·Σ_j |w_j·x_j|`
//!   (the last for dequantize's own f32 rounding of `q·d + m`).
//!
//! The K-quants' terms are per 32-value activation block as `scalar`
//! defines them (Q4_K, Q5_K: `|d·sc_j·d_x|·Σ|c·q| + |dmin·m_j·s_x|`; Q2_K:
//! `|d·d_x|·Σ|sc·c·q| + |dmin·d_x|·Σ|m·q|`; Q3_K, Q6_K:
//! `|d·d_x|·(|sc_a|·Σ_{l<16}|c·q| + |sc_b|·Σ_{l≥16}|c·q|)` with Q6_K's c less 32), each
//! with a few more roundings than the 32-value formats' (a scale product,
//! `dmin·m`), which the 16 in `nb + 16` covers; dequantize rounds each
//! value once (`d·sc·q − dmin·m`, `d·sc·(q − 32)`), within the `4u` above.

use super::activations::{Activations, Layout};
use super::format::{f16_at, iq4_codes, iq4_xs_scale, q2k_code, q3k_code, q3k_scales, q4k_scales_mins, q5k_code, q6k_code};
use super::scalar::codes;
use super::test_support::{self, BLOCK, Style, U, fast, random_weights, random_x, scalar};
use super::{BlockFormat, matmul};
use crate::gguf::quant::dequantize;
use crate::quant::ggml_type;
use crate::rng::Rng;

/// Shapes for the product tests: K-quant rows are whole 256-value super-blocks.
fn shapes(f: BlockFormat) -> Vec<(usize, usize, usize)> {
    if f.is_k() {
        vec![(256, 1, 1), (256, 7, 3), (512, 7, 1), (1536, 64, 3), (768, 1, 17), (1536, 7, 17), (1536, 64, 1)]
    } else {
        vec![(32, 1, 1), (32, 7, 3), (576, 7, 1), (576, 64, 3), (576, 1, 17), (1536, 7, 17), (1536, 64, 1)]
    }
}

/// Per output (m, r): (T, Σ_j |w_j|·0.5001·d_x, Σ_j |w_j·x_j|), and the f64 product.
fn reference(f: BlockFormat, w: &[u8], n: usize, k: usize, x: &[f32], rows: usize) -> Vec<[f64; 4]> {
    let a = Activations::quantize(x, rows, k, Layout::Natural);
    let rb = f.row_bytes(k);
    let bs = f.block_bytes();
    let mut out = Vec::new();
    for m in 0..rows {
        for r in 0..n {
            let row = &w[r * rb..][..rb];
            let wf = dequantize(ggml_type(f), row, k).unwrap();
            let (mut t, mut quant, mut mag, mut exact) = (0f64, 0f64, 0f64, 0f64);
            for b in 0..k / BLOCK {
                let at = m * a.stride + b;
                let q = &a.q8[at * BLOCK..][..BLOCK];
                let dx = a.d[at] as f64;
                if f.is_k() {
                    t += k_terms(f, &row[b / 8 * bs..][..bs], b % 8, q, dx, a.s[at] as f64);
                } else {
                    let blk = &row[b * bs..][..bs];
                    let c = codes(f, blk);
                    let cq: f64 = c.iter().zip(q).map(|(&c, &q)| (c as f64 * q as f64).abs()).sum();
                    let dw = f16_at(blk, 0) as f64;
                    t += (dw * dx).abs() * (cq + f.offset() as f64 * (a.qsum[at] as f64).abs());
                    if f.has_min() {
                        t += (f16_at(blk, 2) as f64 * a.s[at] as f64).abs();
                    }
                }
                for j in 0..BLOCK {
                    let (wj, xj) = (wf[b * BLOCK + j] as f64, x[m * k + b * BLOCK + j] as f64);
                    quant += wj.abs() * 0.5001 * dx;
                    mag += (wj * xj).abs();
                    exact += wj * xj;
                }
            }
            out.push([t, quant, mag, exact]);
        }
    }
    out
}

/// The magnitudes of the terms `scalar` adds for activation block `sub` (0..8)
/// of a K-quant super-block `blk`, whose activation codes are `q`.
fn k_terms(f: BlockFormat, blk: &[u8], sub: usize, q: &[i8], dx: f64, sx: f64) -> f64 {
    let (h, t) = (sub / 4, sub % 4);
    // Σ_l |weight(l) · q_l| for a per-value integer weight.
    let sum = |w: &dyn Fn(usize) -> f64| -> f64 { q.iter().enumerate().map(|(l, &qv)| (w(l) * qv as f64).abs()).sum() };
    match f {
        BlockFormat::Q4K | BlockFormat::Q5K => {
            let (sc, m) = q4k_scales_mins(&blk[4..16]);
            let cq = if f == BlockFormat::Q4K {
                sum(&|l| ((blk[16 + 32 * (sub / 2) + l] >> (4 * (sub % 2))) & 0xF) as f64)
            } else {
                sum(&|l| q5k_code(blk, sub, l) as f64)
            };
            (f16_at(blk, 0) as f64 * sc[sub] as f64 * dx).abs() * cq + (f16_at(blk, 2) as f64 * m[sub] as f64 * sx).abs()
        }
        BlockFormat::Q2K => {
            let g = |l: usize| blk[2 * sub + l / 16];
            let scq = sum(&|l| ((g(l) & 0xF) * q2k_code(blk, h, t, l)) as f64);
            let mq = sum(&|l| (g(l) >> 4) as f64);
            (f16_at(blk, 80) as f64 * dx).abs() * scq + (f16_at(blk, 82) as f64 * dx).abs() * mq
        }
        BlockFormat::IQ4XS => {
            let c = iq4_codes(&blk[8 + 16 * sub..][..16]);
            (f16_at(blk, 0) as f64 * iq4_xs_scale(blk, sub) as f64 * dx).abs() * sum(&|l| c[l] as f64)
        }
        BlockFormat::Q3K => {
            let sc = q3k_scales(&blk[96..108]);
            (f16_at(blk, 108) as f64 * dx).abs() * sum(&|l| sc[2 * sub + l / 16] as f64 * q3k_code(blk, h, t, l) as f64)
        }
        _ => {
            let sc = |g: usize| (blk[192 + g] as i8) as f64;
            (f16_at(blk, 208) as f64 * dx).abs() * sum(&|l| sc(2 * sub + l / 16) * (q6k_code(blk, h, t, l) as f64 - 32.0))
        }
    }
}

fn check(f: BlockFormat, n: usize, k: usize, rows: usize, style: Style, seed: u64) {
    let mut rng = Rng::new(seed);
    let w = random_weights(&mut rng, f, n, k, style);
    let x = random_x(&mut rng, rows, k);
    let (fast, slow) = (fast(f, &w, n, k, &x, rows), scalar(f, &w, n, k, &x, rows));
    let nb = (k / BLOCK) as f64;
    for (i, [t, quant, mag, exact]) in reference(f, &w, n, k, &x, rows).into_iter().enumerate() {
        let what = || format!("{} {style:?} n={n} k={k} rows={rows} output {i}", f.name());
        let (y, ys) = (fast[i] as f64, slow[i] as f64);
        assert!(y.is_finite() && ys.is_finite(), "{}: {y} {ys}", what());
        let sums = (nb + 16.0) * U * t;
        assert!((y - ys).abs() <= 2.0 * sums, "{}: matmul {y} vs scalar {ys}, bound {}", what(), 2.0 * sums);
        let bound = quant + sums + 4.0 * U * mag + 1e-30;
        assert!((ys - exact).abs() <= bound, "{}: scalar {ys} vs f32 product {exact}, bound {bound}", what());
    }
}

#[test]
fn every_format_matches_scalar_and_the_f32_product() {
    let mut seed = 1;
    for f in BlockFormat::ALL.into_iter().filter(|f| !f.is_float()) {
        for style in [Style::Typical, Style::AnyScale, Style::Extreme, Style::Zero] {
            for (k, n, rows) in shapes(f) {
                seed += 1;
                check(f, n, k, rows, style, seed);
            }
        }
    }
}

#[test]
fn float_rows_match_the_f64_product() {
    // (k, n, rows): k not a multiple of 8 or of 4 too (the SIMD loops' tails),
    // rows in tiles and one by one, a chunk of rows and what is left of it.
    let shapes = [(1, 1, 1), (7, 5, 3), (32, 9, 2), (576, 13, 1), (576, 7, 17), (1536, 3, 5), (101, 40, 4), (100, 9, 1), (13, 6, 1)];
    test_support::check_float_products(17, &shapes);
}

#[test]
fn tiles_of_input_rows_agree_with_single_rows() {
    test_support::check_tiles_agree_with_single_rows(99);
}

#[test]
fn inf_and_nan_scales_give_what_scalar_gives() {
    test_support::check_inf_and_nan_scales(5);
}

#[test]
fn empty_shapes_write_nothing_or_zeros() {
    let f = BlockFormat::Q4_1;
    let mut out = vec![1f32; 3];
    matmul(f, &[], 3, 0, &[], 1, &mut out);
    assert_eq!(out, [0.0; 3]);
    matmul(f, &[0; 20], 1, 32, &[], 0, &mut []);
}

#[test]
#[should_panic(expected = "weights")]
fn a_short_weight_slice_panics_instead_of_reading_past_it() {
    matmul(BlockFormat::Q8_0, &[0; 33], 1, 32, &[0.0; 32], 1, &mut [0.0]);
}

#[test]
fn formats_know_their_sizes() {
    let sizes: Vec<_> = BlockFormat::ALL.iter().map(|f| (f.name(), f.block_bytes(), f.row_bytes(1536))).collect();
    assert_eq!(
        sizes,
        [
            ("Q4_0", 18, 864),
            ("Q4_1", 20, 960),
            ("Q5_0", 22, 1056),
            ("Q5_1", 24, 1152),
            ("Q8_0", 34, 1632),
            ("Q2_K", 84, 504),
            ("Q3_K", 110, 660),
            ("Q4_K", 144, 864),
            ("Q5_K", 176, 1056),
            ("Q6_K", 210, 1260),
            ("IQ4_NL", 18, 864),
            ("IQ4_XS", 136, 816),
            ("F16", 2, 3072),
            ("BF16", 2, 3072)
        ]
    );
    for f in BlockFormat::ALL {
        assert_eq!(f.block_values(), if f.is_k() { 256 } else if f.is_float() { 1 } else { 32 });
        assert_eq!(crate::quant::block_format(ggml_type(f)), Some(f));
    }
}

/// A matrix of more than one band of weight rows (`weight_bands`), times
/// more input rows than a tile: within the bounds of the scalar product,
/// and bit for bit each band's part.
#[test]
fn several_bands_of_weight_rows_match_scalar() {
    for (f, k) in [(BlockFormat::Q8_0, 32), (BlockFormat::Q4K, 256)] {
        check(f, 2 * super::WEIGHT_BAND_BYTES / f.row_bytes(k) + 37, k, 6, Style::Typical, 77);
    }
    test_support::check_bands_agree_with_their_parts(78);
}
