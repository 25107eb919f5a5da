//! The wasm simd128 kernels, run in wasm: `pkg-scripts/test-wasm-kernels`
//! builds this file for wasm32-unknown-unknown with `+simd128`, and again
//! with `+relaxed-simd` (the nibble formats' byte dot products), and runs
//! each in Node under `wasm-bindgen-test-runner`. Natively it is empty (the
//! kernels' own tests compare the AVX2 path with the scalar one there).
//!
//! Every test first checks that `matmul` really takes the simd128 path, so
//! a build without `+simd128` (the scalar fallback) fails instead of passing.
//!
//! The random blocks and inputs, and the checks shared with the native unit
//! tests (tiles, inf/NaN scales, dense products), are `kernels::test_support`.
//!
//! What is compared, and why the tolerances are what they are (u = 2^-24):
//! - One (sub-)block alone, every format: bit for bit. Both paths quantise
//!   the activations to the same numbers (`quantize_simd128` computes
//!   `Activations::quantize`'s), the integer dot product is exact in i32 on
//!   both, and the block's value is `(d_w·d_x)·isum [+ m_w·s_x]` in the same
//!   f32 operations; a lone block leaves no sum to reorder (the other lanes
//!   add exact zeros). Q4_K's and Q5_K's `d·sc·d_x·isum` is associated differently
//!   (simd128 `((d·sc)·d_x)·isum`, scalar `(d·d_x)·(sc·isum)`); with
//!   `d_x` a power of two (the block's largest |x| is 127·2^e) both round
//!   only once, so it is bit for bit as well. Q2_K, Q3_K and Q6_K take their
//!   group scales in integers on both paths, so their blocks are the same
//!   f32 operations anyway.
//! - Whole rows: the paths add the same per-block values in other orders
//!   (scalar one after another; simd128 in four lanes, blocks ≡ j mod 4,
//!   then lane sums). Each order is within `(nb + 3)·u·Σ|v_b|` of the exact
//!   sum of the values `v_b`, so they are within twice that. Q4_K's and Q5_K's values
//!   themselves may differ: each association rounds twice (`d·sc` is exact),
//!   so by `4u·|a_b|` with `a_b` the block's product without its `dmin`
//!   term, plus one rounding of the subtraction on each side (`2u·|v_b|`).
//!   The `v_b` and `a_b` are measured through the public scalar path, one
//!   block at a time (activations are quantised per 32-value block, so a
//!   block alone gets the numbers it gets in the row).
//! - Tiles of input rows (4 at a time, and the 1–3 left over) against the
//!   same rows one at a time: bit for bit.
//! - The relaxed-simd build runs the kernels this machine's lowering of the
//!   byte dot product picks (`wasm_simd/relaxed.rs`, `unfused_x86`): on x86
//!   without AVX-VNNI the 16-bit form and simd128's Q8_0, elsewhere the
//!   32-bit form; each against the scalar one as above.
//! - inf/NaN scales (a broken file): the same outputs are non-finite as on
//!   the scalar path, and no other.
//! - The dense f32 products (`dense::xw`, `dense::xwt`, same simd128 gate):
//!   against the f64 sum, within `(k + 2)·u·Σ|x·w|` (any order of k f32
//!   products and sums; simd128 has no fused multiply-add).
//! - F16 and BF16 rows (widened, then `dense::xwt`; a single input row
//!   widened in registers, `half_rows`): simd128 and scalar
//!   both against the f64 product of the widened weights, within the same
//!   bound; the widening itself bit for bit on every 16-bit pattern.
#![cfg(target_arch = "wasm32")]

use nexttoken::quant::kernels::test_support::{self, BLOCK, Style, U, fast, random_weights, random_x, scalar};
use nexttoken::quant::kernels::widen::{Half, widen, widen_scalar};
use nexttoken::quant::kernels::{BlockFormat, path_name};
use nexttoken::rng::Rng;
use wasm_bindgen_test::wasm_bindgen_test;

fn assert_simd128() {
    assert!(cfg!(target_feature = "simd128"), "built without +simd128: the kernels would be the scalar ones");
    let path = if cfg!(target_feature = "relaxed-simd") { "wasm relaxed-simd" } else { "wasm simd128" };
    assert_eq!(path_name(), path, "matmul does not take the {path} path");
}

/// The scalar value of 32-value activation block `b` of `xr` (one input
/// row) against weight row `row`: its (super-)block alone, the other
/// activations of a super-block zero (they add exact zeros).
fn block_value(f: BlockFormat, row: &[u8], xr: &[f32], b: usize) -> f32 {
    let per = f.block_values() / BLOCK;
    let blk = &row[b / per * f.block_bytes()..][..f.block_bytes()];
    let mut xs = vec![0f32; f.block_values()];
    let sub = b % per;
    xs[sub * BLOCK..][..BLOCK].copy_from_slice(&xr[b * BLOCK..][..BLOCK]);
    scalar(f, blk, 1, f.block_values(), &xs, 1)[0]
}

/// The bound on |simd128 − scalar| for output (row `m` of x, row `r` of W), from the header.
fn bound(f: BlockFormat, w: &[u8], k: usize, x: &[f32], m: usize, r: usize) -> f64 {
    let row = &w[r * f.row_bytes(k)..][..f.row_bytes(k)];
    let xr = &x[m * k..][..k];
    let nb = k / BLOCK;
    let (mut v, mut a) = (0f64, 0f64);
    for b in 0..nb {
        v += (block_value(f, row, xr, b) as f64).abs();
        if matches!(f, BlockFormat::Q4K | BlockFormat::Q5K) {
            let mut no_min = row.to_vec();
            let blk = b / 8 * f.block_bytes();
            no_min[blk + 2..blk + 4].fill(0); // dmin = 0: the block's value is its product alone
            a += (block_value(f, &no_min, xr, b) as f64).abs();
        }
    }
    let t = 2.0 * (nb as f64 + 4.0) * U * v + 4.0 * U * a;
    t * 1.01 // the O(u²) terms the bound above leaves out
}

fn shapes(f: BlockFormat) -> Vec<(usize, usize, usize)> {
    // (k, n, rows): blocks per row not a multiple of 4 (1, 3, 5, 7, 18, 48
    // of 32 values; 1–6 super-blocks), rows 1–5 and 17 (tiles of 4 and what
    // is left); one input row against 19 and 37 weight rows (its product
    // takes them from 8 streams, the last short or empty).
    if f.is_k() {
        vec![(256, 1, 1), (256, 3, 2), (512, 5, 3), (768, 4, 4), (1536, 3, 5), (512, 2, 17), (512, 19, 1), (256, 37, 1)]
    } else {
        vec![(32, 1, 1), (96, 3, 2), (160, 5, 3), (224, 4, 4), (256, 7, 5), (576, 6, 17), (1536, 3, 2), (96, 19, 1), (160, 37, 1)]
    }
}

#[wasm_bindgen_test]
fn matmul_takes_the_simd128_path() {
    assert_simd128();
}

#[wasm_bindgen_test]
fn every_format_matches_scalar_within_the_summation_order() {
    assert_simd128();
    let mut seed = 1000;
    for f in BlockFormat::ALL.into_iter().filter(|f| !f.is_float()) {
        for style in [Style::Typical, Style::AnyScale, Style::Extreme, Style::Zero] {
            for (k, n, rows) in shapes(f) {
                seed += 1;
                let mut rng = Rng::new(seed);
                let w = random_weights(&mut rng, f, n, k, style);
                let x = random_x(&mut rng, rows, k);
                let (y, ys) = (fast(f, &w, n, k, &x, rows), scalar(f, &w, n, k, &x, rows));
                for (i, (&y, &ys)) in y.iter().zip(&ys).enumerate() {
                    let (m, r) = (i / n, i % n);
                    let what = format!("{} {style:?} k={k} n={n} rows={rows} output [{m}][{r}]", f.name());
                    assert!(y.is_finite() && ys.is_finite(), "{what}: simd128 {y}, scalar {ys}");
                    let b = bound(f, &w, k, &x, m, r);
                    assert!((y as f64 - ys as f64).abs() <= b, "{what}: simd128 {y} vs scalar {ys}, bound {b}");
                    if matches!(style, Style::Zero) || (rows >= 2 && m == 1) {
                        assert_eq!((y, ys), (0.0, 0.0), "{what}: zero weights or a zero input row");
                    }
                }
                if matches!(style, Style::Typical) {
                    assert!(y.iter().any(|&v| v != 0.0), "{} k={k}: every output 0, nothing was compared", f.name());
                }
            }
        }
    }
}

#[wasm_bindgen_test]
fn one_block_alone_is_bit_for_bit_the_scalar_value() {
    assert_simd128();
    let mut rng = Rng::new(7);
    for f in BlockFormat::ALL.into_iter().filter(|f| !f.is_float()) {
        for style in [Style::Typical, Style::AnyScale, Style::Extreme] {
            // 9 (super-)blocks a row: two full groups of four and one left over.
            let (k, n) = (9 * f.block_values(), 3);
            let w = random_weights(&mut rng, f, n, k, style);
            for rows in [1, 3, 4, 5] {
                for b in 0..k / BLOCK {
                    // Only block b of each input row is non-zero; its largest |x| is 127·2^-6.
                    let mut x = vec![0f32; rows * k];
                    for m in 0..rows {
                        let xs = &mut x[m * k + b * BLOCK..][..BLOCK];
                        for v in xs.iter_mut() {
                            *v = ((rng.next_f64() - 0.5) * 3.9) as f32;
                        }
                        let top = (rng.next_u64() % BLOCK as u64) as usize;
                        xs[top] = if rng.next_u64() % 2 == 0 { 127.0 / 64.0 } else { -127.0 / 64.0 };
                    }
                    let (y, ys) = (fast(f, &w, n, k, &x, rows), scalar(f, &w, n, k, &x, rows));
                    for (i, (&y, &ys)) in y.iter().zip(&ys).enumerate() {
                        assert!(
                            y == ys,
                            "{} {style:?} block {b} of {}, rows={rows}, output {i}: simd128 {y} vs scalar {ys}",
                            f.name(),
                            k / BLOCK
                        );
                    }
                }
            }
        }
    }
}

#[wasm_bindgen_test]
fn bands_of_weight_rows_agree_with_their_parts() {
    assert_simd128();
    test_support::check_bands_agree_with_their_parts(78);
}

#[wasm_bindgen_test]
fn tiles_of_input_rows_agree_with_single_rows() {
    assert_simd128();
    test_support::check_tiles_agree_with_single_rows(99);
}

#[wasm_bindgen_test]
fn inf_and_nan_scales_give_what_scalar_gives() {
    assert_simd128();
    test_support::check_inf_and_nan_scales(5);
}

#[wasm_bindgen_test]
fn dense_products_match_the_exact_sums() {
    assert_simd128();
    let shapes = [(1, 1, 1), (1, 7, 5), (2, 33, 21), (3, 64, 48), (1, 192, 192), (5, 130, 67), (1, 576, 1539), (4, 3, 9)];
    test_support::check_dense_products(11, &shapes);
}

#[wasm_bindgen_test]
fn float_rows_match_the_f64_product() {
    assert_simd128();
    let shapes = [(1, 1, 1), (7, 5, 3), (32, 9, 2), (576, 13, 1), (576, 7, 17), (1536, 3, 5), (101, 40, 4), (100, 9, 1), (13, 6, 1)];
    test_support::check_float_products(23, &shapes);
}

#[wasm_bindgen_test]
fn widening_is_exact_for_every_16_bit_pattern() {
    assert_simd128();
    // From an odd address, as a view into a file may be.
    let mut bytes = vec![0u8];
    bytes.extend((0..=u16::MAX).flat_map(|b| b.to_le_bytes()));
    for kind in [Half::F16, Half::BF16] {
        let (mut fast, mut slow) = (vec![0f32; 1 << 16], vec![0f32; 1 << 16]);
        widen(kind, &bytes[1..], &mut fast);
        widen_scalar(kind, &bytes[1..], &mut slow);
        for (bits, (&a, &b)) in fast.iter().zip(&slow).enumerate() {
            let want = match kind {
                Half::F16 => half::f16::from_bits(bits as u16).to_f32(),
                Half::BF16 => f32::from_bits((bits as u32) << 16),
            };
            for got in [a, b] {
                assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "{kind:?} {bits:#06x}: {got} vs {want}");
            }
        }
    }
}
