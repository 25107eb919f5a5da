//! The softmax's exponentials in f32, e^(s − max) over a run of scores, and
//! their sum: the attention kernel's, and the inside view's (its attention
//! rows and its logit lens).
//!
//! A polynomial (Cephes' `expf`: x = n·ln 2 + r with |r| ≤ ln 2 / 2, then
//! e^r to degree 7, times 2^n from the exponent bits), written as plain
//! loops with no branches so the compiler vectorises them: simd128 in the
//! browser build, AVX2 + FMA on x86_64 (compiled for them behind the
//! run-time check, as `dense`). Within 2 f32 ulps of e^x, where libm's
//! `expf`, one call per score, was the slowest part of a decode step's
//! attention in wasm.
//!
//! Inputs are s − max ≤ 0 (or NaN, which stays NaN, or −inf from the causal
//! mask, which gives 0). Below −87.3 the result would be subnormal; it is
//! 0, as it is for the masked scores: a weight under 2^-126 of the largest
//! changes no sum of them.

/// `xs[i] = e^(xs[i] − max)`; returns Σ xs[i] (after).
pub fn exp_shifted_sum(xs: &mut [f32], max: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has AVX2 and FMA.
        return unsafe { avx2(xs, max) };
    }
    portable(xs, max)
}

/// # Safety
/// The CPU has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn avx2(xs: &mut [f32], max: f32) -> f32 {
    portable(xs, max)
}

#[inline(always)]
fn portable(xs: &mut [f32], max: f32) -> f32 {
    for x in xs.iter_mut() {
        *x = exp(*x - max);
    }
    sum(xs)
}

/// Eight lanes of partial sums (so it vectorises; f32 addition is not associative).
#[inline(always)]
fn sum(xs: &[f32]) -> f32 {
    const LANES: usize = 8;
    let mut acc = [0f32; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for c in &mut chunks {
        for l in 0..LANES {
            acc[l] += c[l];
        }
    }
    let tail: f32 = chunks.remainder().iter().sum();
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

/// e^x for x ≤ 0 (NaN stays NaN; below −87.3, 0).
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    // ln 2 in two parts: n·C1 is exact for |n| < 2^9, so r keeps its low bits.
    const C1: f32 = 0.693_359_4;
    const C2: f32 = -2.121_944_4e-4;
    // 1.5·2^23: adding it rounds to an integer, which its low mantissa bits then hold.
    const MAGIC: f32 = 12_582_912.0;
    const LOWEST: f32 = -87.336_55; // ln 2^-126: 2^n stays a normal f32
    let under = x < LOWEST;
    // Written so that NaN passes (comparisons with NaN are false).
    let x = if under { LOWEST } else { x };
    let t = x * LOG2E + MAGIC;
    let n = t - MAGIC;
    let r = x - n * C1 - n * C2;
    let p = 1.987_569_1e-4;
    let p = p * r + 1.398_199_9e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 0.166_666_65;
    let p = p * r + 0.5;
    let e = p * (r * r) + r + 1.0;
    // t's bits are MAGIC's plus n (two's complement in the low bits).
    let two_n = f32::from_bits((t.to_bits().wrapping_sub(MAGIC.to_bits()).wrapping_add(127)) << 23);
    if under { 0.0 } else { e * two_n }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against f64's exp over [−87.3, 0]: within 2 ulps (relative 2^-22).
    #[test]
    fn exp_is_within_two_ulps() {
        let mut worst = 0f64;
        for i in 0..=200_000 {
            let x = -87.3 * i as f32 / 200_000.0;
            let want = (x as f64).exp();
            let got = exp(x) as f64;
            worst = worst.max((got - want).abs() / want);
        }
        assert!(worst <= 2.0 / (1u64 << 23) as f64, "relative error {worst}");
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp(-100.0), 0.0);
        assert!(exp(f32::NAN).is_nan());
    }

    #[test]
    fn the_sum_is_the_sum() {
        let mut xs: Vec<f32> = (0..37).map(|i| -(i as f32) * 0.25).collect();
        let want: f64 = xs.iter().map(|&x| ((x - 0.5) as f64).exp()).sum();
        let got = exp_shifted_sum(&mut xs, 0.5) as f64;
        assert!((got - want).abs() < 1e-5 * want, "{got} vs {want}");
    }
}
