//! The raw distribution of one position, measured once.
//!
//! Every slider move re-runs the rules on the same raw logits; the softmax of
//! those logits, its normaliser and the tokens' ranking do not depend on any
//! setting, so they are computed once (the softmax when the logits arrive,
//! the ranking when a truncation first needs it) and reused by every
//! preview (at 49,152 tokens they are most of a preview's work otherwise).

use std::sync::{Arc, OnceLock};

use super::probs::Probs;
use super::ranking::{mask_of_ids, rank_descending};
use super::softmax::{argmax, softmax_parts};
use super::stage::Stage;
use crate::error::Result;

/// Raw logits with their softmax, entropy and ranking.
#[derive(Clone, Debug)]
pub struct RawDistribution {
    /// Shared with the chain's leading modifiers (`Prefix::z`) while they
    /// leave the logits as they are: a vocabulary-sized copy less per
    /// preview (Gemma 3: 2 MB, in memories that never shrink).
    pub logits: Arc<Vec<f64>>,
    /// softmax(logits), bit for bit what `softmax` returns (the "raw"
    /// stage's own numbers, shared).
    pub probs: Probs,
    /// `ln p_i = logits_i - log_norm` for every token with `p_i > 0`.
    pub log_norm: f64,
    /// `order()`, made the first time a truncation asks for it: with every
    /// cut off (the defaults, greedy) no step ranks its vocabulary (a radix
    /// sort of Gemma 3's 262,144 tokens: about 5 ms of a step in wasm, and
    /// 1 MB more of memories that never shrink).
    order: OnceLock<Vec<u32>>,
    /// `argmax(logits)`, found once for the greedy column and a greedy chain.
    argmax: OnceLock<usize>,
    /// The "raw" stage: the distribution itself, all of it kept.
    pub stage: Stage,
}

impl RawDistribution {
    /// Refuses logits no distribution can come from (empty, NaN, +inf, all -inf).
    pub fn new(logits: Vec<f64>) -> Result<Self> {
        check_logits(&logits)?;
        Ok(Self::from_checked(logits))
    }

    /// `new`, for logits `check_logits` has just accepted (a step's: the
    /// position checks them first, to keep broken ones; a second pass over
    /// Gemma 3's 262,144 would find nothing more).
    pub(crate) fn from_checked(logits: Vec<f64>) -> Self {
        let softmax = softmax_parts(&logits);
        let log_norm = softmax.log_norm;
        let stage = Stage::measured_against_itself("raw", softmax, &logits);
        let probs = stage.probs.clone();
        Self { logits: Arc::new(logits), probs, log_norm, order: OnceLock::new(), argmax: OnceLock::new(), stage }
    }

    /// The logits' buffer back, to be filled with the next position's,
    /// when nothing else shares it (no prefix kept elsewhere).
    pub fn into_logits(self) -> Option<Vec<f64>> {
        Arc::try_unwrap(self.logits).ok()
    }

    /// Token ids by descending probability, ties by lower id: the order
    /// every truncation rule ranks by (zero-probability tokens last). A radix
    /// sort, the same permutation as the comparison sort (`ranking`'s tests).
    pub fn order(&self) -> &[u32] {
        self.order.get_or_init(|| rank_descending(&self.probs))
    }

    /// The first index of the highest logit (`softmax::argmax`).
    pub fn argmax(&self) -> usize {
        *self.argmax.get_or_init(|| argmax(&self.logits))
    }

    /// The first id of a ranking of these logits (`ranking::top_indices`:
    /// the highest, ties by lower id), which is their argmax: `argmax()`
    /// then needs no pass of its own.
    pub(crate) fn ranked_first(&self, id: usize) {
        debug_assert_eq!(id, argmax(&self.logits), "the ranking's first is the argmax");
        let _ = self.argmax.set(id);
    }

    /// How many tokens have probability > 0 (they come first in `order`).
    fn possible(&self) -> usize {
        self.stage.kept_count
    }

    /// `top_k_mask(&self.probs, k)`, read off the ranking.
    pub fn top_k_mask(&self, k: usize) -> Vec<bool> {
        let take = if k == 0 { self.possible() } else { k.min(self.possible()) };
        self.mask_of_first(take)
    }

    /// `top_p_mask(&self.probs, p)`, read off the ranking: the definition's
    /// running sum in descending order, first prefix with mass >= p.
    pub fn top_p_mask(&self, p: f64) -> Vec<bool> {
        let possible = self.possible();
        if p >= 1.0 {
            return self.mask_of_first(possible);
        }
        let mut mass = 0.0;
        let mut take = possible;
        for (n, &id) in self.order()[..possible].iter().enumerate() {
            mass += self.probs[id as usize];
            if mass >= p {
                take = n + 1;
                break;
            }
        }
        self.mask_of_first(take)
    }

    fn mask_of_first(&self, n: usize) -> Vec<bool> {
        if n == self.possible() {
            // Every possible token: the raw stage's own set, no ranking needed.
            return self.stage.kept.to_vec();
        }
        mask_of_ids(self.order()[..n].iter().copied(), self.logits.len())
    }

    /// The raw distribution restricted to `mask` and renormalised, measured
    /// without a logarithm per token. A mask that keeps every possible token
    /// gives the raw numbers bit for bit.
    pub fn truncated(&self, name: &str, mask: &[bool]) -> Stage {
        if mask == self.stage.kept.as_slice() {
            return self.stage.renamed(name);
        }
        Stage::renormalized(name, &self.probs, mask, &self.logits, self.log_norm, &self.probs).0
    }
}

/// Refuses logits no distribution can come from, with the offending index.
pub(crate) fn check_logits(logits: &[f64]) -> Result<()> {
    if logits.is_empty() {
        crate::bail!("the logits are empty: at least one token is needed");
    }
    // Sound logits, every step: one pass without early exits (it
    // vectorises; by chunks across threads), where the three searches below
    // read a vocabulary each.
    let parts = crate::threads::map_chunks(logits.len(), crate::threads::VOCAB_CHUNK, |range| {
        let (mut broken, mut possible) = (false, false);
        for &z in &logits[range] {
            broken |= z.is_nan() | (z == f64::INFINITY);
            possible |= z != f64::NEG_INFINITY;
        }
        (broken, possible)
    });
    let broken = parts.iter().any(|p| p.0);
    let possible = parts.iter().any(|p| p.1);
    if !broken && possible {
        return Ok(());
    }
    if let Some(i) = logits.iter().position(|z| z.is_nan()) {
        crate::bail!("logit {i} is NaN: the model output is broken");
    }
    if let Some(i) = logits.iter().position(|&z| z == f64::INFINITY) {
        crate::bail!("logit {i} is +inf: logits must be finite or -inf");
    }
    if logits.iter().all(|&z| z == f64::NEG_INFINITY) {
        crate::bail!("every logit is -inf: no token is possible");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use crate::rules::{entropy_nats, softmax, top_k_mask, top_p_mask};

    /// Logits with ties, -inf entries and a long flat tail.
    fn logits(rng: &mut Rng, n: usize) -> Vec<f64> {
        (0..n)
            .map(|_| match rng.next_u64() % 10 {
                0 => f64::NEG_INFINITY,
                1 | 2 => 1.5,
                _ => (rng.next_f64() * 8.0 - 4.0).round() / 2.0,
            })
            .collect()
    }

    #[test]
    fn the_raw_stage_measures_as_the_definitions_do_bit_for_bit() {
        use crate::rules::{entropy_nats_from_logits, softmax_parts};
        let mut rng = Rng::new(5);
        for trial in 0..100 {
            let n = 1 + (rng.next_u64() % 3000) as usize;
            let mut z = logits(&mut rng, n);
            z[n / 2] = 0.0;
            if trial % 3 == 0 {
                z.iter_mut().for_each(|v| *v *= 40.0); // tokens that underflow to 0
            }
            let raw = RawDistribution::new(z.clone()).unwrap();
            let sm = softmax_parts(&z);
            let nats = entropy_nats_from_logits(&sm.probs, &z, sm.log_norm);
            assert_eq!(raw.stage.entropy_nats.to_bits(), nats.to_bits(), "trial {trial}: entropy");
            let kept: Vec<bool> = sm.probs.iter().map(|&p| p > 0.0).collect();
            let mass: f64 = sm.probs.iter().filter(|&&p| p > 0.0).sum();
            assert_eq!(*raw.stage.kept, kept, "trial {trial}: kept");
            assert_eq!(raw.stage.kept_count, kept.iter().filter(|&&k| k).count(), "trial {trial}: count");
            // The kept mass sums from +0.0, `sum()` from -0.0: the same bits but for an empty sum.
            assert_eq!(raw.stage.kept_mass.to_bits(), (0.0 + mass).to_bits(), "trial {trial}: mass");
        }
    }

    /// Over several chunks (`vocab_sum`), as Gemma 3's vocabulary: the raw
    /// stage's one pass gives the bits of a stage measured the general way,
    /// on any thread count.
    #[test]
    fn the_raw_stage_of_several_chunks_is_the_general_stage_bit_for_bit() {
        use crate::rules::Stage;
        use crate::test_util::on_threads;
        let mut rng = Rng::new(6);
        let n = 2 * crate::threads::VOCAB_CHUNK + 4321;
        let mut z = logits(&mut rng, n);
        z[n - 1] = 9.0;
        let expected = on_threads(1, || {
            let probs = crate::rules::softmax(&z);
            Stage::from_logits("raw", &z, &probs)
        });
        for threads in [1, 2, 4] {
            let raw = on_threads(threads, || RawDistribution::new(z.clone()).unwrap());
            assert_eq!(raw.stage, expected, "{threads} threads");
            assert_eq!(raw.stage.entropy_nats.to_bits(), expected.entropy_nats.to_bits());
            assert_eq!(raw.stage.kept_mass.to_bits(), expected.kept_mass.to_bits());
        }
    }

    #[test]
    fn the_ranking_gives_the_same_sets_as_the_rules() {
        let mut rng = Rng::new(21);
        for trial in 0..200 {
            let n = 1 + (rng.next_u64() % 300) as usize;
            let mut z = logits(&mut rng, n);
            z[0] = 0.0; // at least one possible token
            let raw = RawDistribution::new(z.clone()).unwrap();
            assert_eq!(raw.probs.to_vec(), softmax(&z));
            for k in [0, 1, 2, 5, n / 2, n, n + 3] {
                assert_eq!(raw.top_k_mask(k), top_k_mask(&raw.probs, k), "trial {trial}, k {k}");
            }
            for p in [1e-9, 0.1, 0.5, 0.9, 0.999, 1.0] {
                assert_eq!(raw.top_p_mask(p), top_p_mask(&raw.probs, p), "trial {trial}, p {p}");
            }
        }
    }

    #[test]
    fn a_large_vocabulary_is_ranked_like_the_definition() {
        let mut rng = Rng::new(22);
        let z = logits(&mut rng, 49_152);
        let raw = RawDistribution::new(z).unwrap();
        let mut expected: Vec<u32> = (0..raw.probs.len() as u32).collect();
        expected.sort_by(|&a, &b| {
            crate::rules::ranking::compare_candidates(&(raw.probs[a as usize], a), &(raw.probs[b as usize], b))
        });
        assert!(raw.order() == expected);
        for k in [0, 1, 40, 1000] {
            assert_eq!(raw.top_k_mask(k), top_k_mask(&raw.probs, k), "k {k}");
        }
        for p in [0.5, 0.9, 0.999999] {
            assert_eq!(raw.top_p_mask(p), top_p_mask(&raw.probs, p), "p {p}");
        }
    }

    #[test]
    fn a_truncated_stage_measures_like_the_definition() {
        let z = vec![3.0, 2.5, 2.0, 1.5, 1.0, f64::NEG_INFINITY, 0.0];
        let raw = RawDistribution::new(z).unwrap();
        let st = raw.truncated("top_k", &raw.top_k_mask(3));
        assert_eq!(st.kept_count, 3);
        assert!((st.probs.iter().sum::<f64>() - 1.0).abs() < 1e-15);
        assert!((st.entropy_nats - entropy_nats(&st.probs)).abs() < 1e-14);
        let all = raw.truncated("top_p", &raw.top_p_mask(1.0));
        assert_eq!(all.probs, raw.probs);
        assert!((raw.stage.entropy_nats - entropy_nats(&raw.probs)).abs() < 1e-14);
    }

    #[test]
    fn broken_logits_are_refused_with_the_reason() {
        assert!(RawDistribution::new(vec![]).unwrap_err().to_string().contains("empty"));
        assert!(RawDistribution::new(vec![0.0, f64::NAN]).unwrap_err().to_string().contains("logit 1 is NaN"));
        assert!(RawDistribution::new(vec![f64::NEG_INFINITY]).unwrap_err().to_string().contains("-inf"));
    }
}
