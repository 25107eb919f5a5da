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
//! defines them (Q4_K: `|d·sc_j·d_x|·Σ|c·q| + |dmin·m_j·s_x|`; Q6_K:
//! `|d·d_x|·(|sc_a|·Σ_{l<16}|(c − 32)·q| + |sc_b|·Σ_{l≥16}|(c − 32)·q|)`), each
//! with a few more roundings than the 32-value formats' (a scale product,
//! `dmin·m`), which the 16 in `nb + 16` covers; dequantize rounds each
//! value once (`d·sc·q − dmin·m`, `d·sc·(q − 32)`), within the `4u` above.

use super::activations::{Activations, Layout};
use super::format::{BLOCK, f16_at, q4k_scales_mins, q6k_code};
use super::scalar::codes;
use super::{BlockFormat, KernelPath, Product, matmul, matmul_on};
use crate::gguf::quant::{GgmlType, dequantize};

const U: f64 = 1.0 / (1u64 << 24) as f64;

/// xorshift64*: deterministic data without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn uniform(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What the weight blocks look like.
#[derive(Clone, Copy, Debug)]
enum Style {
    /// Scales around 0.01, random codes: a real model's weights.
    Typical,
    /// Any finite f16 scale (subnormal to 65504, either sign), random codes.
    AnyScale,
    /// The largest codes: all-15 nibbles, all fifth bits set, −128 in Q8_0.
    Extreme,
}

fn ggml_type(f: BlockFormat) -> GgmlType {
    match f {
        BlockFormat::Q4_0 => GgmlType::Q4_0,
        BlockFormat::Q4_1 => GgmlType::Q4_1,
        BlockFormat::Q5_0 => GgmlType::Q5_0,
        BlockFormat::Q5_1 => GgmlType::Q5_1,
        BlockFormat::Q8_0 => GgmlType::Q8_0,
        BlockFormat::Q4K => GgmlType::Q4K,
        BlockFormat::Q6K => GgmlType::Q6K,
    }
}

/// Where a block's f16 scale `d` is, and its second f16 (m, or Q4_K's dmin).
fn f16_fields(f: BlockFormat) -> (usize, Option<usize>) {
    match f {
        BlockFormat::Q6K => (208, None),
        BlockFormat::Q4K => (0, Some(2)),
        _ => (0, f.has_min().then_some(2)),
    }
}

/// Shapes for the product tests: K-quant rows are whole 256-value super-blocks.
fn shapes(f: BlockFormat) -> Vec<(usize, usize, usize)> {
    if f.is_k() {
        vec![(256, 1, 1), (256, 7, 3), (512, 7, 1), (1536, 64, 3), (768, 1, 17), (1536, 7, 17), (1536, 64, 1)]
    } else {
        vec![(32, 1, 1), (32, 7, 3), (576, 7, 1), (576, 64, 3), (576, 1, 17), (1536, 7, 17), (1536, 64, 1)]
    }
}

fn f16_bits(rng: &mut Rng, style: Style) -> u16 {
    match style {
        Style::Typical => half::f16::from_f32((rng.uniform() - 0.3) * 0.02).to_bits(),
        // Exponent 31 (inf/NaN) excluded: such files are garbage in, garbage out.
        Style::AnyScale | Style::Extreme => loop {
            let b = rng.next() as u16;
            if b & 0x7C00 != 0x7C00 {
                break b;
            }
        },
    }
}

fn random_weights(rng: &mut Rng, f: BlockFormat, n: usize, k: usize, style: Style) -> Vec<u8> {
    let mut w = Vec::with_capacity(f.row_bytes(k) * n);
    if f.is_k() {
        for _ in 0..n * k / f.block_values() {
            let start = w.len();
            for _ in 0..f.block_bytes() {
                w.push(if matches!(style, Style::Extreme) { 0xFF } else { rng.next() as u8 });
            }
            let blk = &mut w[start..];
            if f == BlockFormat::Q6K && matches!(style, Style::Extreme) {
                for s in &mut blk[192..208] {
                    *s = [0x80, 0x7F][rng.below(2) as usize];
                }
            }
            let (d, second) = f16_fields(f);
            for at in std::iter::once(d).chain(second) {
                blk[at..at + 2].copy_from_slice(&f16_bits(rng, style).to_le_bytes());
            }
        }
        return w;
    }
    for _ in 0..n * k / BLOCK {
        let start = w.len();
        w.extend(f16_bits(rng, style).to_le_bytes());
        if f.has_min() {
            w.extend(f16_bits(rng, style).to_le_bytes());
        }
        let rest = f.block_bytes() - (w.len() - start);
        for _ in 0..rest {
            let b = match (style, f) {
                (Style::Extreme, BlockFormat::Q8_0) => [0x80, 0x7F, 0x80, 0x81][rng.below(4) as usize],
                (Style::Extreme, _) => 0xFF,
                _ => rng.next() as u8,
            };
            w.push(b);
        }
    }
    w
}

fn random_x(rng: &mut Rng, rows: usize, k: usize) -> Vec<f32> {
    let mut x: Vec<f32> = (0..rows * k).map(|_| (rng.uniform() - 0.5) * 4.0).collect();
    // A block of zeros, a block of one large value, and a block of
    // extreme-magnitude activations (largest ±127 codes everywhere).
    if k >= 3 * BLOCK {
        x[..BLOCK].fill(0.0);
        x[BLOCK + 5] = 300.0;
        for (j, v) in x[2 * BLOCK..3 * BLOCK].iter_mut().enumerate() {
            *v = if j % 3 == 0 { -1000.0 } else { 1000.0 };
        }
    }
    x
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
    if f == BlockFormat::Q4K {
        let (sc, m) = q4k_scales_mins(&blk[4..16]);
        let bytes = &blk[16 + 32 * (sub / 2)..][..32];
        let cq: f64 = bytes.iter().zip(q).map(|(&b, &q)| (((b >> (4 * (sub % 2))) & 0xF) as f64 * q as f64).abs()).sum();
        (f16_at(blk, 0) as f64 * sc[sub] as f64 * dx).abs() * cq + (f16_at(blk, 2) as f64 * m[sub] as f64 * sx).abs()
    } else {
        let sc = |g: usize| (blk[192 + g] as i8) as f64;
        let (h, t) = (sub / 4, sub % 4);
        let mut half = [0f64; 2];
        for (l, &qv) in q.iter().enumerate() {
            half[l / 16] += ((q6k_code(blk, h, t, l) as f64 - 32.0) * qv as f64).abs();
        }
        (f16_at(blk, 208) as f64 * dx).abs() * (sc(2 * sub).abs() * half[0] + sc(2 * sub + 1).abs() * half[1])
    }
}

fn check(f: BlockFormat, n: usize, k: usize, rows: usize, style: Style, seed: u64) {
    let mut rng = Rng(seed);
    let w = random_weights(&mut rng, f, n, k, style);
    let x = random_x(&mut rng, rows, k);
    let (mut fast, mut slow) = (vec![f32::NAN; rows * n], vec![f32::NAN; rows * n]);
    matmul(f, &w, n, k, &x, rows, &mut fast);
    matmul_on(KernelPath::Scalar, &Product { format: f, weights: &w, n, k, x: &x, rows_x: rows }, &mut slow);
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
    for f in BlockFormat::ALL {
        for style in [Style::Typical, Style::AnyScale, Style::Extreme] {
            for (k, n, rows) in shapes(f) {
                seed += 1;
                check(f, n, k, rows, style, seed);
            }
        }
    }
}

#[test]
fn tiles_of_input_rows_agree_with_single_rows() {
    // 17 rows = four full tiles and a remainder: every row must get the
    // same numbers it gets alone.
    let mut rng = Rng(99);
    for f in BlockFormat::ALL {
        let (n, k, rows) = (5, if f.is_k() { 512 } else { 96 }, 17);
        let w = random_weights(&mut rng, f, n, k, Style::Typical);
        let x = random_x(&mut rng, rows, k);
        let mut all = vec![0f32; rows * n];
        matmul(f, &w, n, k, &x, rows, &mut all);
        for m in 0..rows {
            let mut one = vec![0f32; n];
            matmul(f, &w, n, k, &x[m * k..][..k], 1, &mut one);
            assert_eq!(one, all[m * n..][..n], "{} row {m}", f.name());
        }
    }
}

#[test]
fn inf_and_nan_scales_give_what_scalar_gives() {
    // A broken file: inf, −inf and NaN in d (and in m where there is one).
    // The outputs that use such a block are not finite on every path (inf
    // or NaN: the AVX2 path multiplies inf by partial sums that may be 0,
    // as dequantize's q·d does), and no other output is touched.
    let mut rng = Rng(5);
    for f in BlockFormat::ALL {
        let (n, k, rows) = (6, if f.is_k() { 768 } else { 160 }, 5);
        let mut w = random_weights(&mut rng, f, n, k, Style::Typical);
        let rb = f.row_bytes(k);
        for (row, at, bits) in [(0, 0, 0x7C00u16), (1, 2, 0xFC00), (2, 1, 0x7E00), (4, 2, 0x7C00)] {
            let (d, second) = f16_fields(f);
            let field = if row == 4 { second.unwrap_or(d) } else { d };
            let o = row * rb + at * f.block_bytes() + field;
            w[o..o + 2].copy_from_slice(&bits.to_le_bytes());
        }
        let x = random_x(&mut rng, rows, k);
        let (mut fast, mut slow) = (vec![0f32; rows * n], vec![0f32; rows * n]);
        matmul(f, &w, n, k, &x, rows, &mut fast);
        matmul_on(KernelPath::Scalar, &Product { format: f, weights: &w, n, k, x: &x, rows_x: rows }, &mut slow);
        for (i, (&y, &ys)) in fast.iter().zip(&slow).enumerate() {
            assert_eq!(y.is_finite(), ys.is_finite(), "{} output {i}: {y} vs {ys}", f.name());
            if i % n == 3 {
                assert!(y.is_finite(), "{} output {i}: a row with finite scales stays finite", f.name());
            }
        }
        assert!(fast[0].is_infinite() || fast[0].is_nan(), "{}", f.name());
    }
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
            ("Q4_K", 144, 864),
            ("Q6_K", 210, 1260)
        ]
    );
    for f in BlockFormat::ALL {
        assert_eq!(f.block_values(), if f.is_k() { 256 } else { 32 });
        assert_eq!(f.block_values() as u64, ggml_type(f).block_size());
        assert_eq!(f.block_bytes() as u64, ggml_type(f).block_bytes());
        assert_eq!(crate::quant::block_format(ggml_type(f)), Some(f));
    }
}
