//! The fused kernel against a plain attention in f64, on random inputs.
//!
//! Tolerances, per output from the data (u = 2^-24, f32's rounding; the
//! f16 pages add h = 2^-11, f16's relative rounding to nearest):
//! - a score s_j = Σ_i q_i·k_ij/√hd is off by at most
//!   δ_j ≤ ((hd + 2)·u + h_k)·Σ_i |q_i·k_ij|/√hd (the f32 sum in any order,
//!   the pre-scaling; h_k = h when the keys were rounded to f16, else 0);
//! - a weight w_j = e^{s_j}/Σ e^{s} then moves by at most a factor
//!   e^{2δ} − 1 ≈ 2δ (δ = max_j δ_j), plus exp's 2 ulps and the sums' (keys + 8)·u;
//! - the output Σ_j w_j·v_j by at most (2δ + (keys + 10)·u + h_v)·Σ_j w_j·|v_j|.
//!
//! The bound is first order in δ; the assertion allows 1.25 times it for
//! the second-order terms (δ ≤ 2^-8 here, so they are under 1% of it).
//! The f16 pages are also compared with the reference run on the same
//! f16-rounded keys and values, to f32 rounding: the kernel reads them exactly.

use half::f16;

use super::{Queries, paged_attention};
use crate::kv_cache::{LayerPages, LayerView, PAGE, PagesRef};
use crate::quant::kernels::test_support::{U, symmetric};
use crate::rng::Rng;

const H: f64 = 1.0 / (1u64 << 11) as f64;

struct Case {
    heads: usize,
    kvh: usize,
    hd: usize,
    start: usize,
    t: usize,
    window: Option<usize>,
}

/// The reference for one output row and its error bound's parts:
/// (out, Σ w|v| per feature, δ).
fn reference(q: &[f32], k: &[f32], v: &[f32], c: &Case, keys_held: usize, i: usize, head: usize, keys_f16: bool) -> (Vec<f64>, Vec<f64>, f64) {
    let (hd, group) = (c.hd, c.heads / c.kvh);
    let g = head / group;
    let qi = &q[(head * c.t + i) * hd..][..hd];
    let from = c.window.map_or(0, |w| (c.start + i + 1).saturating_sub(w));
    let visible = c.start + i + 1 - from;
    let scale = 1.0 / (hd as f64).sqrt();
    let key = |j: usize| &k[(g * keys_held + from + j) * hd..][..hd];
    let val = |j: usize| &v[(g * keys_held + from + j) * hd..][..hd];
    let scores: Vec<f64> = (0..visible).map(|j| qi.iter().zip(key(j)).map(|(&a, &b)| a as f64 * b as f64).sum::<f64>() * scale).collect();
    let hk = if keys_f16 { H } else { 0.0 };
    let delta = (0..visible)
        .map(|j| ((hd as f64 + 2.0) * U + hk) * qi.iter().zip(key(j)).map(|(&a, &b)| (a as f64 * b as f64).abs()).sum::<f64>() * scale)
        .fold(0.0, f64::max);
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
    let total: f64 = e.iter().sum();
    let mut out = vec![0.0; hd];
    let mut mag = vec![0.0; hd];
    for j in 0..visible {
        for (f, &x) in val(j).iter().enumerate() {
            out[f] += e[j] / total * x as f64;
            mag[f] += e[j] / total * (x as f64).abs();
        }
    }
    (out, mag, delta)
}

fn check(c: Case, seed: u64) {
    let keys = c.start + c.t;
    let mut rng = Rng::new(seed);
    // Queries three times the keys' size: some rows' softmax is sharp.
    let q: Vec<f32> = (0..c.heads * c.t * c.hd).map(|_| 3.0 * symmetric(&mut rng)).collect();
    let k: Vec<f32> = (0..c.kvh * keys * c.hd).map(|_| symmetric(&mut rng)).collect();
    let v: Vec<f32> = (0..c.kvh * keys * c.hd).map(|_| symmetric(&mut rng)).collect();
    let rounded = |x: &[f32]| x.iter().map(|&x| f16::from_f32(x).to_f32()).collect::<Vec<_>>();
    let (k16, v16) = (rounded(&k), rounded(&v));
    for f16_pages in [false, true] {
        let mut pages = if f16_pages { LayerPages::F16(Vec::new()) } else { LayerPages::F32(Vec::new()) };
        // Written in two chunks, as a cache is: the prefix, then the chunk.
        pages.reserve(keys, keys + 3, c.kvh, c.hd);
        let part = |x: &[f32], from: usize, to: usize| -> Vec<f32> {
            (0..c.kvh).flat_map(|g| x[(g * keys + from) * c.hd..(g * keys + to) * c.hd].to_vec()).collect()
        };
        if c.start > 0 {
            pages.write(0, c.start, c.hd, &part(&k, 0, c.start), &part(&v, 0, c.start));
        }
        pages.write(c.start, c.t, c.hd, &part(&k, c.start, keys), &part(&v, c.start, keys));
        let view = LayerView { pages: pages.as_ref(), kv_heads: c.kvh, head_dim: c.hd };
        let mut out = vec![f32::NAN; c.heads * c.t * c.hd];
        paged_attention(Queries { q: &q, heads: c.heads, t: c.t, start: c.start, window: c.window }, view, &mut out);
        for i in 0..c.t {
            for head in 0..c.heads {
                let got = &out[(i * c.heads + head) * c.hd..][..c.hd];
                let (want, mag, delta) = reference(&q, &k, &v, &c, keys, i, head, f16_pages);
                let hv = if f16_pages { H } else { 0.0 };
                let what = format!("f16 {f16_pages}, {} heads / {} kv, hd {}, start {}, t {}, window {:?}: row {i}, head {head}", c.heads, c.kvh, c.hd, c.start, c.t, c.window);
                for f in 0..c.hd {
                    let bound = 1.25 * (2.0 * delta + (keys as f64 + 10.0) * U + hv) * mag[f];
                    let err = (got[f] as f64 - want[f]).abs();
                    assert!(err <= bound, "{what}, feature {f}: {} vs {} (error {err:e}, bound {bound:e})", got[f], want[f]);
                }
                if f16_pages {
                    // The same data as the pages hold: f32 rounding only.
                    let (exact, mag, delta) = reference(&q, &k16, &v16, &c, keys, i, head, false);
                    for f in 0..c.hd {
                        let bound = 1.25 * (2.0 * delta + (keys as f64 + 10.0) * U) * mag[f];
                        let err = (got[f] as f64 - exact[f]).abs();
                        assert!(err <= bound, "{what}, feature {f} on the rounded data: error {err:e}, bound {bound:e}");
                    }
                }
            }
        }
    }
}

/// Decode (one query at the last position) at lengths around the page size.
#[test]
fn decode_matches_the_reference_across_page_boundaries() {
    for (n, len) in [1, PAGE - 1, PAGE, PAGE + 1, 2 * PAGE + 1, 1024].into_iter().enumerate() {
        // SmolLM2's shape: 9 query heads over 3 KV heads of 64.
        check(Case { heads: 9, kvh: 3, hd: 64, start: len - 1, t: 1, window: None }, 11 + n as u64);
    }
}

/// Prefill chunks, causal from `start`: from empty, across a boundary, to 1,024.
#[test]
fn prefill_matches_the_reference_causally() {
    let cases = [(0, 1), (0, PAGE + 1), (PAGE - 3, 7), (PAGE - 1, PAGE + 2), (1000, 24), (0, 37)];
    for (n, (start, t)) in cases.into_iter().enumerate() {
        check(Case { heads: 9, kvh: 3, hd: 64, start, t, window: None }, 101 + n as u64);
    }
}

/// Other shapes: plain multi-head, a group of 4, head sizes that leave tails in every loop.
#[test]
fn other_head_shapes_match() {
    check(Case { heads: 4, kvh: 4, hd: 8, start: 5, t: 20, window: None }, 7);
    check(Case { heads: 8, kvh: 2, hd: 12, start: PAGE - 2, t: 5, window: None }, 8);
    check(Case { heads: 3, kvh: 1, hd: 5, start: 0, t: PAGE + 3, window: None }, 9);
}

/// Sliding windows (Gemma 3's local layers): each query sees its last
/// `window` keys only, across page edges, in decode and in prefill chunks
/// that start before, at and past the window's length, and with windows
/// shorter than, equal to and longer than a page.
#[test]
fn windows_hide_the_keys_before_them() {
    let cases = [
        (PAGE + 40, 1, 50),
        (3 * PAGE + 7, 1, PAGE),
        (3 * PAGE, 1, 2 * PAGE + 1),
        (0, PAGE + 9, 20),
        (PAGE - 3, 40, PAGE),
        (500, 30, 512),
        (5, 3, 1),
        (2 * PAGE + 1, 2 * PAGE, 300),
    ];
    for (n, (start, t, window)) in cases.into_iter().enumerate() {
        check(Case { heads: 4, kvh: 1, hd: 16, start, t, window: Some(window) }, 301 + n as u64);
    }
}

/// A page that was given an inf is widened with the fix-up (the path that
/// knows its pages finite would turn it into a large finite number).
#[test]
fn a_page_remembers_an_inf() {
    let mut pages = LayerPages::F16(Vec::new());
    pages.reserve(2, 2, 1, 8);
    pages.write(0, 1, 8, &[1.0; 8], &[1.0; 8]);
    let LayerPages::F16(p) = &pages else { unreachable!() };
    assert!(p[0].finite);
    pages.write(1, 1, 8, &[1e6; 8], &[1.0; 8]);
    let LayerPages::F16(p) = &pages else { unreachable!() };
    assert!(!p[0].finite, "1e6 is inf in f16");
    assert_eq!(PagesRef::F16(p).key(0, 1, 8), vec![f32::INFINITY; 8]);
}
