//! The entropy of softmax(z / τ) at many temperatures: the curve the
//! entropy panel draws for every position.
//!
//! Exactly (`entropy_nats_at_temperature`, f64) that is one exponential per
//! token and temperature: 41 × 49,152 for SmolLM2, about 37 ms natively,
//! more than the model's own step. The curve is a picture, and the numbers
//! the page prints come from the stages, so for a large vocabulary it is
//! computed in f32 in a loop that vectorises (four or eight lanes), summed in
//! chunks into f64. Small vocabularies (the course's models) keep the exact
//! f64 path (up to 256 tokens), so every printed digit of the lessons stays exact.

use super::softmax::entropy_nats_at_temperature;

/// Vocabularies up to this size take the exact path.
pub const EXACT_UP_TO: usize = 256;

/// Lanes of the f32 accumulators (independent, so the loop vectorises).
const LANES: usize = 8;
/// Tokens summed in f32 before the sum goes into f64.
const CHUNK: usize = 512;

/// Entropy in nats of softmax(logits / τ) for each τ (each > 0). `order`
/// ranks the tokens by logit, highest first (a `RawDistribution`'s).
pub fn entropy_nats_at_temperatures(logits: &[f64], order: &[u32], taus: &[f64]) -> Vec<f64> {
    debug_assert_eq!(order.len(), logits.len());
    let max = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if logits.len() <= EXACT_UP_TO || !max.is_finite() {
        return taus.iter().map(|&t| entropy_nats_at_temperature(logits, t)).collect();
    }
    // Distances below the top, ≤ 0, highest first; -inf (banned) becomes a
    // number whose exponential is 0 at every τ.
    let d: Vec<f32> = order.iter().map(|&i| ((logits[i as usize] - max) as f32).max(-1e30)).collect();
    taus.iter()
        .map(|&tau| {
            let beta = (1.0 / tau) as f32;
            // Past this prefix every term is below e^-87 and counts as 0:
            // at a low τ only the tokens near the top are summed.
            let n = d.partition_point(|&x| x * beta > -87.0);
            entropy_f32(&d[..n.max(1)], beta)
        })
        .collect()
}

/// H = ln T − Σ e^u u / T with u = β d, T = Σ e^u.
fn entropy_f32(d: &[f32], beta: f32) -> f64 {
    let (mut total, mut weighted) = (0f64, 0f64);
    for chunk in d.chunks(CHUNK) {
        let (mut t, mut w) = ([0f32; LANES], [0f32; LANES]);
        let mut lanes = chunk.chunks_exact(LANES);
        for group in &mut lanes {
            for j in 0..LANES {
                let u = group[j] * beta;
                let e = exp_nonpositive(u);
                t[j] += e;
                w[j] += e * u;
            }
        }
        for &x in lanes.remainder() {
            let u = x * beta;
            let e = exp_nonpositive(u);
            t[0] += e;
            w[0] += e * u;
        }
        total += t.iter().map(|&v| v as f64).sum::<f64>();
        weighted += w.iter().map(|&v| v as f64).sum::<f64>();
    }
    let h = total.ln() - weighted / total;
    if h > 0.0 { h } else { 0.0 }
}

/// e^u for u ≤ 0 in f32, without branches or calls: u = (k + f) ln 2 with
/// k an integer (rounded with the 1.5 · 2^23 trick, which needs no floor
/// instruction) and |f| ≤ 1/2, 2^f by its Taylor series in f ln 2 to the
/// 7th power (first omitted term below 2e-9 relative), 2^k from the
/// exponent bits. Below -87 (where 2^k would leave the normal range) it
/// gives 0, which is below every term that matters (the top token's is 1).
#[inline(always)]
fn exp_nonpositive(u: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0; // 1.5 · 2^23
    let uc = u.max(-87.0);
    let t = uc * std::f32::consts::LOG2_E;
    let k = (t + MAGIC) - MAGIC;
    let r = (t - k) * std::f32::consts::LN_2; // |r| ≤ ln 2 / 2
    let p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
    let scale = f32::from_bits(((k as i32 + 127) as u32) << 23);
    if u > -87.0 { p * scale } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn the_exponential_is_within_f32_rounding() {
        // u ln2e in f32 is off by up to |u| · 2^-24 · ln2e, which moves the
        // result by that much relative; the polynomial and 2^k add ~2 ulp.
        for i in 0..200_000 {
            let u = -87.0 * i as f32 / 200_000.0;
            let exact = (u as f64).exp();
            let bound = (1.0 + u.abs() as f64) * 2f64.powi(-22);
            let err = (exp_nonpositive(u) as f64 - exact).abs() / exact;
            assert!(err < bound, "e^{u}: relative error {err}, bound {bound}");
        }
        assert_eq!(exp_nonpositive(0.0), 1.0);
        assert_eq!(exp_nonpositive(-100.0), 0.0);
        assert_eq!(exp_nonpositive(f32::NEG_INFINITY), 0.0);
    }

    /// Against the exact f64 curve on 49,152 logits spread like a language
    /// model's (and a few banned). Each term is within ~4e-7 relative, each
    /// f32 chunk sum of 512 terms within 512 · 2^-24 ≈ 3e-5 relative, so
    /// ln T and the weighted mean are both within about 1e-4 nats.
    #[test]
    fn the_fast_curve_matches_the_exact_one() {
        let mut rng = Rng::new(11);
        let mut logits: Vec<f64> = (0..49_152).map(|_| rng.next_normal() * 3.0 + 2.0).collect();
        logits[17] = 25.0;
        logits[99] = f64::NEG_INFINITY;
        let taus: Vec<f64> = (0..41).map(|i| (0.05f64.ln() + (20f64.ln() - 0.05f64.ln()) * i as f64 / 40.0).exp()).collect();
        let order = crate::rules::RawDistribution::new(logits.clone()).unwrap().order;
        let fast = entropy_nats_at_temperatures(&logits, &order, &taus);
        for (tau, h) in taus.iter().zip(&fast) {
            let exact = entropy_nats_at_temperature(&logits, *tau);
            assert!((h - exact).abs() < 2e-4, "τ = {tau}: {h} vs exact {exact}");
        }
    }

    #[test]
    fn small_vocabularies_are_exact() {
        let logits = [1.0, 2.0, 0.5, -1.0];
        let h = entropy_nats_at_temperatures(&logits, &[1, 0, 2, 3], &[0.5, 1.0, 2.0]);
        for (tau, v) in [0.5, 1.0, 2.0].iter().zip(h) {
            assert_eq!(v, entropy_nats_at_temperature(&logits, *tau));
        }
    }
}
