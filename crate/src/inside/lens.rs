//! The logit lens's summary of one layer's logits: its top tokens, its
//! entropy, and where two tracked tokens rank, in one pass over the
//! vocabulary without a sorted or normalised copy (the lens summarises
//! `layers + 1` full rows a step: 31 × 49,152 logits for SmolLM2, 19 ×
//! 262,144 for Gemma 3).

/// e^x for x <= 0 in f32 (0 below -87, where f32 underflows anyway).
///
/// The lens and the attention weights take millions of exponentials a step,
/// and in wasm `f32::exp` is a library call of several nanoseconds; this is
/// inline arithmetic. x = k ln 2 + r with |r| <= ln 2 / 2 (ln 2 split in two
/// so k·ln 2 is exact), e^r by its Taylor series to r^6 (the first omitted
/// term is below 2e-7 relative), times 2^k from the exponent bits. Plain IEEE
/// operations only, so every target gives the same bits.
#[inline]
pub fn exp_nonpositive(x: f32) -> f32 {
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    if x < -87.0 || x.is_nan() {
        return if x.is_nan() { x } else { 0.0 };
    }
    let k = (x * std::f32::consts::LOG2_E + 0.5).floor();
    let r = x - k * LN2_HI - k * LN2_LO;
    let p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    p * f32::from_bits(((k as i32 + 127) as u32) << 23)
}

/// One layer's distribution, softmax of its logits, summarised.
#[derive(Debug, Clone, PartialEq)]
pub struct LensSummary {
    /// The most likely tokens with their probabilities, most likely first
    /// (ties by lower id, as the rules rank).
    pub top: Vec<(u32, f64)>,
    /// Entropy in nats.
    pub entropy: f64,
    /// For each tracked token: its rank (1 = most likely, ties by lower id)
    /// and probability.
    pub tracked: Vec<(usize, f64)>,
}

/// Summarises softmax(`logits`): the `k` most likely tokens, the entropy, and
/// the rank and probability of each of `tracked`.
pub fn summarize(logits: &[f32], k: usize, tracked: &[u32]) -> LensSummary {
    let max = logits.iter().fold(f32::NEG_INFINITY, |m, &z| m.max(z));
    // Σ e^(z-max) and Σ e^(z-max)(z-max), for H = ln S - (Σ e^u u) / S.
    let (mut sum, mut weighted) = (0f64, 0f64);
    let mut top: Vec<(f32, u32)> = Vec::with_capacity(k + 1);
    let mut ahead = vec![0usize; tracked.len()];
    let mine: Vec<f32> = tracked.iter().map(|&t| logits[t as usize]).collect();
    for (i, &z) in logits.iter().enumerate() {
        let u = z - max;
        let e = exp_nonpositive(u);
        sum += e as f64;
        weighted += (e * u) as f64;
        for (t, (&me, &id)) in mine.iter().zip(tracked).enumerate() {
            ahead[t] += usize::from(z > me || (z == me && (i as u32) < id));
        }
        if top.len() < k || z > top[top.len() - 1].0 {
            // Insertion keeps the list sorted; a tie stays behind the lower id met first.
            let at = top.iter().position(|&(v, _)| z > v).unwrap_or(top.len());
            top.insert(at, (z, i as u32));
            top.truncate(k);
        }
    }
    let prob = |z: f32| exp_nonpositive(z - max) as f64 / sum;
    LensSummary {
        top: top.into_iter().map(|(z, id)| (id, prob(z))).collect(),
        entropy: sum.ln() - weighted / sum,
        tracked: ahead.iter().zip(&mine).map(|(&a, &z)| (a + 1, prob(z))).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Within 3e-7 relative of f64's exp over the range the lens uses.
    #[test]
    fn the_exponential_is_accurate() {
        let mut worst = 0f64;
        for i in 0..=200_000 {
            let x = -87.0 * i as f32 / 200_000.0;
            let want = (x as f64).exp();
            worst = worst.max(((exp_nonpositive(x) as f64) - want).abs() / want);
        }
        assert!(worst < 3e-7, "relative error {worst}");
        assert_eq!(exp_nonpositive(-100.0), 0.0);
        assert_eq!(exp_nonpositive(0.0), 1.0);
    }

    /// Against the definitions on a row with ties: softmax in f64, the top
    /// by a full sort (ties by id), the rank as `rules::rank_of` counts it.
    #[test]
    fn the_summary_is_the_softmax_by_definition() {
        let mut rng = crate::rng::Rng::new(4);
        let mut logits: Vec<f32> = (0..5000).map(|_| (rng.next_normal() * 3.0) as f32).collect();
        logits[17] = logits[4000];
        logits[3] = logits.iter().cloned().fold(f32::MIN, f32::max);
        logits[9] = logits[3];
        let tracked = [4000u32, 17, 9, 3];
        let s = summarize(&logits, 5, &tracked);
        let max = logits.iter().cloned().fold(f32::MIN, f32::max) as f64;
        let z: f64 = logits.iter().map(|&l| (l as f64 - max).exp()).sum();
        let p: Vec<f64> = logits.iter().map(|&l| (l as f64 - max).exp() / z).collect();
        let entropy: f64 = -p.iter().filter(|&&q| q > 0.0).map(|q| q * q.ln()).sum::<f64>();
        assert!((s.entropy - entropy).abs() < 1e-5, "{} against {entropy}", s.entropy);
        let wide: Vec<f64> = logits.iter().map(|&l| l as f64).collect();
        let mut order: Vec<usize> = (0..logits.len()).collect();
        order.sort_by(|&a, &b| wide[b].total_cmp(&wide[a]).then(a.cmp(&b)));
        for (i, &(id, prob)) in s.top.iter().enumerate() {
            assert_eq!(id as usize, order[i], "top {i}");
            assert!((prob - p[order[i]]).abs() < 1e-6);
        }
        assert_eq!(s.top[0].0, 3, "a tie at the top goes to the lower id");
        for (&t, &(rank, prob)) in tracked.iter().zip(&s.tracked) {
            assert_eq!(rank, crate::rules::rank_of(&wide, t as usize), "rank of {t}");
            assert!((prob - p[t as usize]).abs() < 1e-6);
        }
    }
}
