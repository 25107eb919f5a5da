//! Random blocks and inputs for the kernel tests, and the checks that every
//! path must pass, in one place: the unit tests (`tests.rs`,
//! `attention/tests.rs`) and the wasm run of the simd128 path
//! (`crate/tests/wasm_kernels.rs`, which cannot reach `#[cfg(test)]` items)
//! use the same data and the same assertions. Not part of the engine's API.

use half::{bf16, f16};

use super::{BlockFormat, KernelPath, Product, dense, matmul, matmul_on};
use crate::rng::Rng;

/// f32's unit roundoff, 2^-24.
pub const U: f64 = 1.0 / (1u64 << 24) as f64;
/// Values per activation block (and per block of the 32-value formats).
pub const BLOCK: usize = 32;

/// What the weight blocks look like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Scales around 0.01, random codes: a real model's weights.
    Typical,
    /// Any finite f16 scale (subnormal to ±65504), random codes.
    AnyScale,
    /// The largest codes (all bits set; Q8_0's and Q6_K's scales −128 or
    /// 127; Q3_K's bytes all set or all clear, so codes and scales reach
    /// −4 and −32 as well as 3 and 31; IQ4's codes and IQ4_XS's scales all
    /// bits clear or all set),
    /// scales ±65504 or any finite one; for F16 and BF16, values of the
    /// largest magnitude whose products stay finite.
    Extreme,
    /// Every byte 0: zero scales and zero codes.
    Zero,
}

/// Uniform in (−1, 1).
pub fn symmetric(rng: &mut Rng) -> f32 {
    ((rng.next_f64() - 0.5) * 2.0) as f32
}

/// Byte offsets of a block's f16 scale `d` and of its second f16 (`m`,
/// Q4_K's `dmin`); for F16 and BF16 the value itself.
pub fn f16_fields(f: BlockFormat) -> (usize, Option<usize>) {
    match f {
        BlockFormat::Q6K => (208, None),
        BlockFormat::Q3K => (108, None),
        BlockFormat::Q2K => (80, Some(82)),
        BlockFormat::Q4_1 | BlockFormat::Q5_1 | BlockFormat::Q4K | BlockFormat::Q5K => (0, Some(2)),
        _ => (0, None),
    }
}

fn finite_f16(rng: &mut Rng) -> u16 {
    loop {
        let b = rng.next_u64() as u16;
        if b & 0x7C00 != 0x7C00 {
            return b;
        }
    }
}

fn f16_bits(rng: &mut Rng, style: Style) -> u16 {
    match style {
        Style::Typical => f16::from_f64((rng.next_f64() - 0.3) * 0.02).to_bits(),
        // Exponent 31 (inf/NaN) excluded: `poison_scales` tests those apart.
        Style::AnyScale => finite_f16(rng),
        Style::Extreme => match rng.next_u64() % 3 {
            0 => f16::MAX.to_bits(),
            1 => f16::MIN.to_bits(),
            _ => finite_f16(rng),
        },
        Style::Zero => 0,
    }
}

/// The bits of `v` in a 16-bit float format (F16 or BF16), rounded to nearest.
pub fn float_bits(f: BlockFormat, v: f32) -> u16 {
    match f {
        BlockFormat::BF16 => bf16::from_f32(v).to_bits(),
        _ => f16::from_f32(v).to_bits(),
    }
}

/// One F16 or BF16 value: the `Style` of a weight (`Extreme`: ±65504 in
/// F16, ±2^100 in BF16, whose products with `random_x`'s inputs, k ≤ 2^11
/// of them, stay below f32's 2^128).
fn random_float(rng: &mut Rng, f: BlockFormat, style: Style) -> u16 {
    let sign = |rng: &mut Rng| if rng.next_u64() % 2 == 0 { 1f32 } else { -1f32 };
    match (style, f) {
        (Style::Typical, _) => float_bits(f, 0.05 * symmetric(rng)),
        (Style::AnyScale, BlockFormat::F16) => finite_f16(rng),
        // Any sign and mantissa, exponents 2^-126 (subnormals, zero) to 2^60.
        (Style::AnyScale, _) => loop {
            let b = rng.next_u64() as u16;
            if (b >> 7) & 0xFF <= 127 + 60 {
                return b;
            }
        },
        (Style::Extreme, BlockFormat::F16) => float_bits(f, sign(rng) * 65504.0),
        (Style::Extreme, _) => float_bits(f, sign(rng) * 2f32.powi(100)),
        (Style::Zero, _) => 0,
    }
}

/// `n` rows of `k` values in format `f`, as a GGUF tensor holds them.
pub fn random_weights(rng: &mut Rng, f: BlockFormat, n: usize, k: usize, style: Style) -> Vec<u8> {
    if f.is_float() {
        return (0..n * k).flat_map(|_| random_float(rng, f, style).to_le_bytes()).collect();
    }
    let (bs, blocks) = (f.block_bytes(), n * k / f.block_values());
    let mut w = vec![0u8; bs * blocks];
    let pick = |rng: &mut Rng| [0x80, 0x7F][(rng.next_u64() % 2) as usize];
    let clear_or_set = |rng: &mut Rng| [0x00, 0xFF][(rng.next_u64() % 2) as usize];
    for blk in w.chunks_exact_mut(bs) {
        for (i, b) in blk.iter_mut().enumerate() {
            *b = match (style, f) {
                (Style::Zero, _) => 0,
                (Style::Extreme, BlockFormat::Q8_0) => pick(rng),
                (Style::Extreme, BlockFormat::Q6K) if (192..208).contains(&i) => pick(rng),
                (Style::Extreme, BlockFormat::Q3K | BlockFormat::IQ4NL | BlockFormat::IQ4XS) => clear_or_set(rng),
                (Style::Extreme, _) => 0xFF,
                _ => rng.next_u64() as u8,
            };
        }
        let (d, second) = f16_fields(f);
        for at in std::iter::once(d).chain(second) {
            blk[at..at + 2].copy_from_slice(&f16_bits(rng, style).to_le_bytes());
        }
    }
    w
}

/// Uniform in (−2, 2), with (when k allows) a zero block, a block with one
/// large value, a block of ±1000 (codes ±127 everywhere), and an all-zero
/// second row.
pub fn random_x(rng: &mut Rng, rows: usize, k: usize) -> Vec<f32> {
    let mut x: Vec<f32> = (0..rows * k).map(|_| 2.0 * symmetric(rng)).collect();
    if k >= 3 * BLOCK {
        x[..BLOCK].fill(0.0);
        x[BLOCK + 5] = 300.0;
        for (j, v) in x[2 * BLOCK..3 * BLOCK].iter_mut().enumerate() {
            *v = if j % 3 == 0 { -1000.0 } else { 1000.0 };
        }
    }
    if rows >= 2 {
        x[k..2 * k].fill(0.0);
    }
    x
}

/// `matmul` on whichever path this build takes.
pub fn fast(f: BlockFormat, weights: &[u8], n: usize, k: usize, x: &[f32], rows_x: usize) -> Vec<f32> {
    let mut out = vec![f32::NAN; rows_x * n];
    matmul(f, weights, n, k, x, rows_x, &mut out);
    out
}

/// The scalar path, the reference the others are held to.
pub fn scalar(f: BlockFormat, weights: &[u8], n: usize, k: usize, x: &[f32], rows_x: usize) -> Vec<f32> {
    let mut out = vec![f32::NAN; rows_x * n];
    matmul_on(KernelPath::Scalar, &Product { format: f, weights, n, k, x, rows_x }, &mut out);
    out
}

/// 17 input rows are four full tiles and a remainder: every row gets the
/// numbers it gets alone, bit for bit.
pub fn check_tiles_agree_with_single_rows(seed: u64) {
    let mut rng = Rng::new(seed);
    for f in BlockFormat::ALL {
        // 23 weight rows: a single input row's product takes them from
        // several streams (8 in wasm for the block formats, 4 for 16-bit
        // rows), the last one short or empty.
        // 16-bit rows of 101 values: a single row's SIMD loops leave four,
        // then one, for their tails.
        let k = if f.is_k() { 512 } else if f.is_float() { 101 } else { 96 };
        let (n, rows) = (23, 17);
        let w = random_weights(&mut rng, f, n, k, Style::Typical);
        let x = random_x(&mut rng, rows, k);
        let all = fast(f, &w, n, k, &x, rows);
        for m in 0..rows {
            let one = fast(f, &w, n, k, &x[m * k..][..k], 1);
            assert_eq!(one, all[m * n..][..n], "{} row {m}", f.name());
        }
    }
}

/// A matrix of three bands of weight rows (`weight_bands`) times more
/// input rows than a tile gives, bit for bit, what each band's rows give as
/// a matrix of their own: the bands only reorder which outputs are computed
/// when.
pub fn check_bands_agree_with_their_parts(seed: u64) {
    let mut rng = Rng::new(seed);
    for (f, k) in [(BlockFormat::Q8_0, 32), (BlockFormat::Q4_1, 64), (BlockFormat::Q4K, 256)] {
        let rb = f.row_bytes(k);
        let n = 2 * super::WEIGHT_BAND_BYTES / rb + 37;
        let bands: Vec<_> = super::weight_bands(n, rb).collect();
        assert_eq!(bands.len(), 3, "{}: three bands", f.name());
        let rows = 6;
        let w = random_weights(&mut rng, f, n, k, Style::Typical);
        let x = random_x(&mut rng, rows, k);
        let all = fast(f, &w, n, k, &x, rows);
        for band in bands {
            let part = fast(f, &w[band.start * rb..band.end * rb], band.len(), k, &x, rows);
            for m in 0..rows {
                assert_eq!(part[m * band.len()..][..band.len()], all[m * n + band.start..][..band.len()], "{} rows {band:?}", f.name());
            }
        }
    }
}

/// A broken file: inf in `d` of row 0, −inf in row 1, NaN in row 2, inf in
/// the second f16 of row 4 (its `d` where there is none; for F16 and BF16,
/// in a value of the row, in the format's own bits). The outputs that
/// use such a block are not finite on this path exactly where the scalar
/// path's are not (inf or NaN: a SIMD path may multiply inf by a partial sum
/// of 0, as dequantize's `q·d` does), and rows 3 and 5 stay finite.
pub fn check_inf_and_nan_scales(seed: u64) {
    let mut rng = Rng::new(seed);
    // Five input rows (tiles) and one (a decode step's own path).
    for (f, rows) in BlockFormat::ALL.into_iter().flat_map(|f| [(f, 5), (f, 1)]) {
        let (n, k) = (6, if f.is_k() { 768 } else { 160 });
        let mut w = random_weights(&mut rng, f, n, k, Style::Typical);
        let rb = f.row_bytes(k);
        for (row, at, bits) in [(0, 0, 0x7C00u16), (1, 2, 0xFC00), (2, 1, 0x7E00), (4, 2, 0x7C00)] {
            let (d, second) = f16_fields(f);
            let field = if row == 4 { second.unwrap_or(d) } else { d };
            let o = row * rb + at * f.block_bytes() + field;
            let bits = if f.is_float() { float_bits(f, f16::from_bits(bits).to_f32()) } else { bits };
            w[o..o + 2].copy_from_slice(&bits.to_le_bytes());
        }
        let x = random_x(&mut rng, rows, k);
        let (y, ys) = (fast(f, &w, n, k, &x, rows), scalar(f, &w, n, k, &x, rows));
        for (i, (&y, &ys)) in y.iter().zip(&ys).enumerate() {
            assert_eq!(y.is_finite(), ys.is_finite(), "{} output {i}: {y} vs scalar {ys}", f.name());
            if i % n == 3 || i % n == 5 {
                assert!(y.is_finite(), "{} output {i}: a row with finite scales stays finite", f.name());
            }
        }
        assert!(!y[0].is_finite(), "{}: an inf scale gave a finite output", f.name());
    }
}

/// The dense f32 products `dense::xw` and `dense::xwt` against the f64 sum,
/// within `(k + 2)·u·Σ|x·w|`: any order of k f32 products and sums (a fused
/// multiply-add only rounds less).
pub fn check_dense_products(seed: u64, shapes: &[(usize, usize, usize)]) {
    let mut rng = Rng::new(seed);
    for &(rows, k, n) in shapes {
        let x: Vec<f32> = (0..rows * k).map(|_| symmetric(&mut rng)).collect();
        let w: Vec<f32> = (0..k * n).map(|_| symmetric(&mut rng)).collect(); // [k, n]
        let wt: Vec<f32> = (0..n * k).map(|t| w[(t % k) * n + t / k]).collect(); // [n, k]
        let (mut a, mut b) = (vec![f32::NAN; rows * n], vec![f32::NAN; rows * n]);
        dense::xw(&w, k, n, &x, rows, &mut a);
        dense::xwt(&wt, n, k, &x, rows, &mut b);
        for r in 0..rows {
            for j in 0..n {
                let terms = (0..k).map(|i| x[r * k + i] as f64 * w[i * n + j] as f64);
                let exact: f64 = terms.clone().sum();
                let bound = (k as f64 + 2.0) * U * terms.map(f64::abs).sum::<f64>();
                for (what, got) in [("xw", a[r * n + j]), ("xwt", b[r * n + j])] {
                    assert!(
                        (got as f64 - exact).abs() <= bound,
                        "{what} rows={rows} k={k} n={n} [{r}][{j}]: {got} vs {exact}, bound {bound}"
                    );
                }
            }
        }
    }
}

/// F16 and BF16 products against the f64 sum of the widened weights
/// (`dequantize`, exact) times the inputs, on this build's path and the
/// scalar one, within `(k + 2)·u·Σ|w·x|` (as `check_dense_products`: any
/// order of k f32 products and sums) plus `k·2^-150` (a product that
/// underflows f32's subnormals is off by half their spacing).
pub fn check_float_products(seed: u64, shapes: &[(usize, usize, usize)]) {
    let mut rng = Rng::new(seed);
    for f in BlockFormat::ALL.into_iter().filter(|f| f.is_float()) {
        for style in [Style::Typical, Style::AnyScale, Style::Extreme, Style::Zero] {
            for &(k, n, rows) in shapes {
                let w = random_weights(&mut rng, f, n, k, style);
                let x = random_x(&mut rng, rows, k);
                let wf = crate::gguf::quant::dequantize(crate::quant::ggml_type(f), &w, n * k).expect("16-bit rows dequantise");
                let (y, ys) = (fast(f, &w, n, k, &x, rows), scalar(f, &w, n, k, &x, rows));
                for m in 0..rows {
                    for r in 0..n {
                        let terms = (0..k).map(|j| wf[r * k + j] as f64 * x[m * k + j] as f64);
                        let exact: f64 = terms.clone().sum();
                        let bound = (k as f64 + 2.0) * U * terms.map(f64::abs).sum::<f64>() + k as f64 * 2f64.powi(-150);
                        for (what, got) in [("fast", y[m * n + r]), ("scalar", ys[m * n + r])] {
                            assert!(
                                got.is_finite() && (got as f64 - exact).abs() <= bound,
                                "{} {style:?} {what} k={k} n={n} rows={rows} [{m}][{r}]: {got} vs {exact}, bound {bound}",
                                f.name()
                            );
                        }
                    }
                }
                if style == Style::Typical {
                    assert!(y.iter().any(|&v| v != 0.0), "{} k={k}: every output 0", f.name());
                }
            }
        }
    }
}
