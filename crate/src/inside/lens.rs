//! The logit lens's summary of one layer's logits: its top tokens, its
//! entropy, and where two tracked tokens rank, in a few linear passes over
//! the vocabulary without a sorted or normalised copy of it (the lens
//! summarises `layers + 1` full rows a step: 31 × 49,152 logits for
//! SmolLM2, 19 × 262,144 for Gemma 3).

use crate::f32_exp::exp_shifted_sum;

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
///
/// Each pass is a plain loop the compiler vectorises (the exponentials are
/// the attention kernel's, `exp_shifted_sum`), but the top k's, whose
/// insertion is rare once k tokens are in.
pub fn summarize(logits: &[f32], k: usize, tracked: &[u32]) -> LensSummary {
    let max = logits.iter().fold(f32::NEG_INFINITY, |m, &z| m.max(z));
    // Σ e^u and Σ e^u·u over u = z - max, for H = ln S - (Σ e^u u) / S: in
    // f32 per block of 1,024, the blocks added in f64 (262,144 terms in one
    // f32 sum would lose digits).
    let (mut sum, mut weighted) = (0f64, 0f64);
    let mut e = [0f32; BLOCK];
    for block in logits.chunks(BLOCK) {
        let e = &mut e[..block.len()];
        e.copy_from_slice(block);
        sum += exp_shifted_sum(e, max) as f64;
        weighted += weighted_sum(e, block, max) as f64;
    }
    let prob = |z: f32| {
        let mut e = [z];
        exp_shifted_sum(&mut e, max) as f64 / sum
    };
    LensSummary {
        top: top_k(logits, k).into_iter().map(|(z, id)| (id, prob(z))).collect(),
        entropy: sum.ln() - weighted / sum,
        tracked: tracked.iter().map(|&t| (rank(logits, t as usize), prob(logits[t as usize]))).collect(),
    }
}

const BLOCK: usize = 1024;

/// Σ e[i]·(z[i] - max) in eight lanes.
fn weighted_sum(e: &[f32], z: &[f32], max: f32) -> f32 {
    let mut lanes = [0f32; 8];
    let (ec, zc) = (e.chunks_exact(8), z.chunks_exact(8));
    let tail: f32 = ec.remainder().iter().zip(zc.remainder()).map(|(&e, &z)| e * (z - max)).sum();
    for (e, z) in ec.zip(zc) {
        for i in 0..8 {
            lanes[i] += e[i] * (z[i] - max);
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// 1 + the tokens ranked ahead of `id`: a higher logit, or the same one
/// and a lower id (as `rules::rank_of` ranks).
fn rank(logits: &[f32], id: usize) -> usize {
    let me = logits[id];
    let before = logits[..id].iter().filter(|&&z| z >= me).count();
    let after = logits[id + 1..].iter().filter(|&&z| z > me).count();
    1 + before + after
}

/// The `k` largest logits with their ids, largest first, ties by lower id.
fn top_k(logits: &[f32], k: usize) -> Vec<(f32, u32)> {
    let mut top: Vec<(f32, u32)> = Vec::with_capacity(k + 1);
    let mut floor = f32::NEG_INFINITY;
    for (i, &z) in logits.iter().enumerate() {
        if z > floor || top.len() < k {
            // A tie stays behind the lower id met first.
            let at = top.iter().position(|&(v, _)| z > v).unwrap_or(top.len());
            top.insert(at, (z, i as u32));
            top.truncate(k);
            if top.len() == k {
                floor = top[k - 1].0;
            }
        }
    }
    top
}

#[cfg(test)]
mod tests {
    use super::*;

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
