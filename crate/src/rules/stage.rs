//! One column of the rules panel: the distribution after a rule, and what it kept.
//!
//! (Over 400 lines: one type, every way a stage is built (from logits, from
//! a shared softmax, renormalised over the whole vocabulary or over a few
//! kept tokens, one-hot) and the passes they share, which must give the same
//! bits whichever way; and the tests that hold them to it.)

use std::sync::Arc;

use serde::Serialize;

use super::probs::Probs;
use super::softmax::{Nearby, Softmax, entropy_nats_from_logits, entropy_nats_of, entropy_term, softmax_near, softmax_parts};
use super::vocab_sum::{sum_of_ids, total_of_chunks};
use crate::threads::{self, VOCAB_CHUNK};

/// The distribution after one stage of the pipeline (or one rule alone).
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Stage {
    /// "raw", "penalties", "bias_bans", "temperature", "top_k", "top_p",
    /// "min_p", "final"; rules alone: "greedy", "temperature", "top_k", "top_p", "min_p".
    pub name: String,
    /// Every token's probability after this stage (shared: a stage that
    /// changes nothing, and a kept stage reused by the next preview, point to
    /// the same numbers). A stage that keeps few tokens (`is_few`) holds
    /// only those.
    pub probs: Probs,
    /// `kept[i] = probs[i] > 0`: the token is still possible.
    #[serde(serialize_with = "serialize_shared")]
    pub kept: Arc<Vec<bool>>,
    pub kept_count: usize,
    /// Mass of the kept set under the raw distribution softmax(raw logits).
    pub kept_mass: f64,
    pub entropy_bits: f64,
    pub entropy_nats: f64,
}

/// Whether `count` kept tokens out of `vocab` are few enough to hold alone
/// (`Probs::few`); the same rule whichever way a stage was built.
pub(crate) fn is_few(count: usize, vocab: usize) -> bool {
    count * 16 <= vocab
}

/// Serialises the shared vector as the plain one it holds.
fn serialize_shared<T: Serialize, S: serde::Serializer>(shared: &Arc<Vec<T>>, serializer: S) -> Result<S::Ok, S::Error> {
    shared.as_slice().serialize(serializer)
}

impl Stage {
    /// Measures the distribution `softmax(logits)` against the raw probabilities.
    pub fn from_logits(name: &str, logits: &[f64], raw_probs: &[f64]) -> Self {
        Self::from_logits_with_norm(name, logits, raw_probs).0
    }

    /// `from_logits`, also returning the softmax's normaliser (`ln p_i =
    /// logits_i - log_norm`), which later truncations need for their entropy.
    pub fn from_logits_with_norm(name: &str, logits: &[f64], raw_probs: &[f64]) -> (Self, f64) {
        Self::from_softmax(name, softmax_parts(logits), logits, raw_probs)
    }

    /// `from_logits_with_norm`, computed from a nearby distribution (see `softmax_near`).
    pub fn from_logits_near(name: &str, logits: &[f64], base: &Nearby, raw_probs: &[f64]) -> (Self, f64) {
        Self::from_softmax(name, softmax_near(logits, base), logits, raw_probs)
    }

    /// Measures `softmax`, the softmax of `logits`; returns it with its normaliser.
    pub(crate) fn from_softmax(name: &str, softmax: Softmax, logits: &[f64], raw_probs: &[f64]) -> (Self, f64) {
        let Softmax { probs, log_norm } = softmax;
        let nats = entropy_nats_from_logits(&probs, logits, log_norm);
        (Self::with_entropy(name, probs, nats, raw_probs), log_norm)
    }

    /// `from_softmax` of a softmax already held elsewhere (`probs`, whole),
    /// sharing its numbers instead of copying them.
    pub(crate) fn from_shared_softmax(name: &str, probs: &Probs, log_norm: f64, logits: &[f64], raw_probs: &[f64]) -> Self {
        let nats = entropy_nats_from_logits(probs, logits, log_norm);
        let (kept, kept_count, kept_mass) = kept_set(probs, raw_probs);
        let held = if is_few(kept_count, probs.len()) { Self::held(probs.to_vec(), &kept, kept_count) } else { probs.clone() };
        Self::assemble(name, held, kept, kept_count, kept_mass, nats)
    }

    /// The raw distribution's own stage: `softmax` of `logits`, its kept
    /// mass measured against itself.
    pub(crate) fn measured_against_itself(name: &str, softmax: Softmax, logits: &[f64]) -> Self {
        let Softmax { probs, log_norm } = softmax;
        // The entropy summed in the kept set's own pass (Gemma 3: one pass
        // of 262,144 fewer per step): `entropy_nats_from_logits`'s terms,
        // added the same way, so its bits.
        let (kept, kept_count, kept_mass, h) = kept_set_summing(&probs, &probs, |i| entropy_term(probs[i], logits[i], log_norm));
        let nats = match log_norm.is_finite() {
            true if h > 0.0 => h,
            true => 0.0,
            false => entropy_nats_from_logits(&probs, logits, log_norm),
        };
        Self::assemble(name, Self::held(probs, &kept, kept_count), kept, kept_count, kept_mass, nats)
    }

    /// `probs` (softmax of `logits`, normaliser `log_norm`) restricted to
    /// `mask` and renormalised, measured without a logarithm per token: the
    /// kept tokens' log-probabilities are `logits_i - log_norm - ln(kept mass)`.
    /// Returns the stage and that new normaliser.
    pub(crate) fn renormalized(
        name: &str,
        probs: &[f64],
        mask: &[bool],
        logits: &[f64],
        log_norm: f64,
        raw_probs: &[f64],
    ) -> (Self, f64) {
        let (kept, mass) = renormalize_with_mass(probs, mask);
        let log_norm = log_norm + mass.ln();
        let nats = entropy_nats_from_logits(&kept, logits, log_norm);
        (Self::with_entropy(name, kept, nats, raw_probs), log_norm)
    }

    /// `renormalized`, given `support`: ascending ids among which are all
    /// the tokens `mask` keeps with probability > 0 (the previous stage's
    /// few tokens, or the mask's own ids). Only those are read; the sums add
    /// the same terms in the same order, so the result is bit for bit
    /// `renormalized`'s.
    pub(crate) fn renormalized_among(
        name: &str,
        probs: &Probs,
        mask: &[bool],
        support: &[u32],
        logits: &[f64],
        log_norm: f64,
        raw_probs: &[f64],
    ) -> (Self, f64) {
        let chosen: Vec<(u32, f64)> =
            support.iter().filter(|&&i| mask[i as usize]).map(|&i| (i, probs.get(i as usize))).collect();
        let mass: f64 = chosen.iter().map(|c| c.1).sum();
        let kept: Vec<(u32, f64)> = if mass > 0.0 {
            chosen.iter().map(|&(i, p)| (i, p / mass)).filter(|c| c.1 > 0.0).collect()
        } else {
            Vec::new()
        };
        let log_norm = log_norm + mass.ln();
        let nats = entropy_nats_of(&kept, logits, log_norm);
        (Self::from_kept(name, probs.len(), kept, nats, raw_probs), log_norm)
    }

    /// A distribution whose entropy (in nats) is already known.
    pub(crate) fn with_entropy(name: &str, probs: Vec<f64>, entropy_nats: f64, raw_probs: &[f64]) -> Self {
        let (kept, kept_count, kept_mass) = kept_set(&probs, raw_probs);
        Self::assemble(name, Self::held(probs, &kept, kept_count), kept, kept_count, kept_mass, entropy_nats)
    }

    /// All the mass on token `best` of `len`: `with_entropy` of the one-hot
    /// vector, without building it (over Gemma's vocabulary that vector, and
    /// the softmax of one-hot logits that gives it, were 2 MB each of a
    /// wasm memory that never gives its peak back).
    pub(crate) fn one_hot(name: &str, len: usize, best: usize, raw_probs: &[f64]) -> Self {
        Self::from_kept(name, len, vec![(best as u32, 1.0)], 0.0, raw_probs)
    }

    /// `probs` as a stage holds them: only the kept ones when they are few.
    fn held(probs: Vec<f64>, kept: &[bool], kept_count: usize) -> Probs {
        if is_few(kept_count, probs.len()) {
            let ids = ids_of(kept);
            let values = ids.iter().map(|&i| probs[i as usize]).collect();
            Probs::few(probs.len(), ids, values)
        } else {
            Probs::whole(probs)
        }
    }

    /// A distribution of `len` tokens of which only `kept` (ids ascending,
    /// probabilities > 0) are possible, its entropy known: the stage
    /// `with_entropy` makes of the same numbers.
    fn from_kept(name: &str, len: usize, kept: Vec<(u32, f64)>, entropy_nats: f64, raw_probs: &[f64]) -> Self {
        let mut mask = vec![false; len];
        for &(i, _) in &kept {
            mask[i as usize] = true;
        }
        // `kept_set`'s sum, over the kept tokens alone.
        let kept_mass = sum_of_ids(kept.iter().map(|&(i, _)| (i, raw_probs[i as usize])));
        let kept_count = kept.len();
        let probs = if is_few(kept_count, len) {
            let (ids, values) = kept.into_iter().unzip();
            Probs::few(len, ids, values)
        } else {
            let mut whole = vec![0.0; len];
            for (i, p) in kept {
                whole[i as usize] = p;
            }
            Probs::whole(whole)
        };
        Self::assemble(name, probs, mask, kept_count, kept_mass, entropy_nats)
    }

    fn assemble(name: &str, probs: Probs, kept: Vec<bool>, kept_count: usize, kept_mass: f64, entropy_nats: f64) -> Self {
        Self {
            name: name.to_string(),
            entropy_bits: entropy_nats / std::f64::consts::LN_2,
            entropy_nats,
            probs,
            kept: Arc::new(kept),
            kept_count,
            kept_mass,
        }
    }

    /// The kept tokens' ids, ascending, when the stage holds only those:
    /// the stages after it then read a few dozen tokens instead of the
    /// whole vocabulary.
    pub fn support(&self) -> Option<&[u32]> {
        self.probs.few_held().map(|(ids, _)| ids)
    }

    /// The same distribution under another name (an "off" stage, or "final").
    pub fn renamed(&self, name: &str) -> Self {
        Self {
            name: name.to_string(),
            ..self.clone()
        }
    }
}

/// The kept set of `probs` (`p > 0`), its size and its mass under
/// `raw_probs`, in one pass on the threads in force, the mass summed as
/// `vocab_sum` says. Adding 0.0 for a dropped token leaves the sum's bits as
/// skipping it would (the sum starts at +0.0 and raw probabilities are not
/// negative), and keeps the loop free of branches.
fn kept_set(probs: &[f64], raw_probs: &[f64]) -> (Vec<bool>, usize, f64) {
    // Terms of -0.0 leave the second sum at +0.0, and the compiler drops it.
    let (kept, count, mass, _) = kept_set_summing(probs, raw_probs, |_| -0.0);
    (kept, count, mass)
}

/// `kept_set`, and in the same pass the sum of `term(i)` over the kept
/// tokens, taken the same way.
fn kept_set_summing(probs: &[f64], raw_probs: &[f64], term: impl Fn(usize) -> f64 + Sync) -> (Vec<bool>, usize, f64, f64) {
    let mut kept = vec![false; probs.len()];
    let parts = threads::map_chunks_mut(&mut kept, VOCAB_CHUNK, |range, out| {
        let (mut count, mut mass, mut sum) = (0, 0.0, 0.0);
        let pairs = probs[range.clone()].iter().zip(&raw_probs[range.clone()]);
        for ((k, (&p, &raw)), i) in out.iter_mut().zip(pairs).zip(range) {
            *k = p > 0.0;
            count += *k as usize;
            mass += if *k { raw } else { 0.0 };
            sum += if *k { term(i) } else { -0.0 };
        }
        (count, mass, sum)
    });
    let count = parts.iter().map(|p| p.0).sum();
    let mass = total_of_chunks(parts.iter().map(|p| p.1));
    let sum = total_of_chunks(parts.iter().map(|p| p.2));
    (kept, count, mass, sum)
}

/// The ids where `kept` is true, ascending.
pub(crate) fn ids_of(kept: &[bool]) -> Vec<u32> {
    kept.iter().enumerate().filter(|(_, k)| **k).map(|(i, _)| i as u32).collect()
}

/// Zeroes the tokens outside `mask` and rescales the rest to sum to 1: what
/// every truncation does to the distribution before it. An empty mask gives
/// all zeros (the truncation rules never produce one from a distribution
/// with a possible token).
pub fn renormalize_kept(probs: &[f64], mask: &[bool]) -> Vec<f64> {
    renormalize_with_mass(probs, mask).0
}

/// `renormalize_kept`, also returning the kept mass it divided by.
fn renormalize_with_mass(probs: &[f64], mask: &[bool]) -> (Vec<f64>, f64) {
    let kept_sum: f64 = probs
        .iter()
        .zip(mask)
        .filter(|(_, k)| **k)
        .map(|(p, _)| p)
        .sum();
    let renormalized = probs
        .iter()
        .zip(mask)
        .map(|(&p, &k)| {
            if k && kept_sum > 0.0 {
                p / kept_sum
            } else {
                0.0
            }
        })
        .collect();
    (renormalized, kept_sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use crate::rules::{Order, RuleSettings, entropy_nats, run_pipeline};
    use crate::test_util::{on_threads, same_bits};

    #[test]
    fn a_stage_read_from_its_support_is_the_stage_read_from_the_whole_vocabulary() {
        let mut rng = Rng::new(11);
        for round in 0..50 {
            // Every tenth round a vocabulary of several chunks, as Gemma 3's
            // (`vocab_sum`), its whole-vocabulary passes on 1, 2 or 4 threads.
            let (n, threads) = match round % 10 {
                0 => (2 * VOCAB_CHUNK + 1000, [1, 2, 4][round / 10 % 3]),
                _ => (2048, 1),
            };
            // A truncated distribution: a few dozen possible tokens (one of them
            // rounded to 0), -inf logits elsewhere; a mask that also marks
            // impossible tokens, as a cut's mask may.
            let mut support: Vec<u32> = (0..n as u32).filter(|_| rng.next_f64() < 0.03).collect();
            support.push(n as u32 - 1);
            support.dedup();
            let mut logits = vec![f64::NEG_INFINITY; n];
            for &i in &support {
                logits[i as usize] = rng.next_normal() * 3.0;
            }
            let soft = crate::rules::softmax::softmax_parts(&logits);
            let mut probs = soft.probs.clone();
            probs[support[round % support.len()] as usize] = 0.0;
            let mask: Vec<bool> = (0..n).map(|_| rng.next_f64() < 0.5).collect();
            let raw: Vec<f64> = (0..n).map(|_| rng.next_f64() / n as f64).collect();
            let dense = on_threads(threads, || Stage::renormalized("cut", &probs, &mask, &logits, soft.log_norm, &raw));
            let among = Stage::renormalized_among("cut", &Probs::whole(probs.clone()), &mask, &support, &logits, soft.log_norm, &raw);
            assert!(same_bits(&dense.0.probs, &among.0.probs), "round {round}");
            assert_eq!(dense.0.kept, among.0.kept);
            assert_eq!((dense.0.kept_count, dense.0.kept_mass.to_bits()), (among.0.kept_count, among.0.kept_mass.to_bits()));
            assert_eq!(dense.0.entropy_nats.to_bits(), among.0.entropy_nats.to_bits());
            assert_eq!(dense.1.to_bits(), among.1.to_bits());
            assert_eq!(dense.0.probs.few_held(), among.0.probs.few_held());
            let listed: Vec<u32> = (0..n as u32).filter(|&i| dense.0.kept[i as usize]).collect();
            assert_eq!(dense.0.support(), Some(&listed[..]));

            // A whole distribution cut by a mask of few tokens, read through the mask's ids.
            let all: Vec<f64> = (0..n).map(|_| rng.next_normal() * 3.0).collect();
            let whole = crate::rules::softmax::softmax_parts(&all);
            let few: Vec<bool> = (0..n).map(|_| rng.next_f64() < 0.02).collect();
            let dense = on_threads(threads, || Stage::renormalized("cut", &whole.probs, &few, &all, whole.log_norm, &raw));
            let among = Stage::renormalized_among("cut", &Probs::whole(whole.probs.clone()), &few, &ids_of(&few), &all, whole.log_norm, &raw);
            assert_eq!(dense, among, "round {round}");
            assert_eq!(dense.1.to_bits(), among.1.to_bits());
        }
    }

    #[test]
    fn a_one_hot_stage_is_the_softmax_of_greedy_logits_bit_for_bit() {
        use crate::rules::softmax::argmax;
        use crate::rules::temperature::scale_by_temperature;
        let mut rng = Rng::new(3);
        // Both ways a stage holds its numbers: whole (a toy vocabulary) and
        // few; and a vocabulary of several chunks (`vocab_sum`) on 2 threads.
        for n in [3, 10, 15, 16, 2048, 3 * VOCAB_CHUNK + 5] {
            let mut logits: Vec<f64> = (0..n).map(|_| (rng.next_normal() * 4.0).round()).collect();
            logits[n - 1] = f64::NEG_INFINITY;
            let raw = crate::rules::softmax::softmax(&logits);
            let greedy_logits = scale_by_temperature(&logits, 0.0);
            let (expected, log_norm) = on_threads(2, || Stage::from_logits_with_norm("t", &greedy_logits, &raw));
            let best = argmax(&logits);
            let stage = Stage::one_hot("t", n, best, &raw);
            assert_eq!(stage, expected, "n = {n}");
            assert_eq!(stage.entropy_nats.to_bits(), expected.entropy_nats.to_bits());
            assert_eq!(stage.probs.few_held(), expected.probs.few_held());
            assert_eq!(log_norm.to_bits(), logits[best].to_bits(), "n = {n}: the normaliser the pipeline keeps");
        }
    }

    #[test]
    fn greedy_in_either_order_is_the_one_hot_at_the_first_argmax_after_the_modifiers() {
        let mut rng = Rng::new(9);
        let mut logits: Vec<f64> = (0..3000).map(|_| (rng.next_normal() * 3.0).round()).collect();
        logits[7] = 40.0;
        logits[1200] = 40.0;
        let history = [7u32, 19, 7];
        for order in [Order::HuggingFace, Order::LlamaCpp] {
            let s = RuleSettings { temperature: 0.0, top_k: 40, repetition_penalty: 1.5, order, ..Default::default() };
            let stages = run_pipeline(&logits, &history, &s).unwrap();
            let t = stages.iter().find(|st| st.name == "temperature").unwrap();
            let last = stages.last().unwrap();
            // The penalty moves token 7 below token 1200, the next of the tied top logits.
            for st in [t, last] {
                assert_eq!((st.kept_count, st.support()), (1, Some(&[1200u32][..])), "{order:?} {}", st.name);
                assert_eq!((st.probs.get(1200), st.entropy_nats), (1.0, 0.0));
                assert_eq!(st.kept_mass.to_bits(), stages[0].probs[1200].to_bits());
            }
        }
        let alone = crate::rules::run_rules_alone(&logits, &RuleSettings { temperature: 0.0, ..Default::default() }).unwrap();
        let (greedy, temperature) = (&alone[0], alone.iter().find(|st| st.name == "temperature").unwrap());
        assert_eq!((greedy.name.as_str(), greedy.support()), ("greedy", Some(&[7u32][..])));
        assert_eq!(temperature.renamed("greedy"), *greedy);
    }

    #[test]
    fn every_truncation_in_the_pipeline_renormalises_what_it_keeps_and_lists_few_tokens() {
        let mut rng = Rng::new(5);
        let logits: Vec<f64> = (0..5000).map(|_| rng.next_normal() * 2.5).collect();
        let history: Vec<u32> = (0..30).map(|i| (i * 37) % 5000).collect();
        for order in [Order::HuggingFace, Order::LlamaCpp] {
            let s = RuleSettings { temperature: 0.8, top_k: 60, top_p: 0.9, min_p: 0.03, repetition_penalty: 1.3, order, ..Default::default() };
            let stages = run_pipeline(&logits, &history, &s).unwrap();
            for pair in stages.windows(2) {
                let (before, after) = (&pair[0], &pair[1]);
                let listed: Vec<u32> = (0..5000).filter(|&i| after.kept[i as usize]).collect();
                match after.support() {
                    Some(ids) => assert_eq!(ids, listed, "{}", after.name),
                    None => assert!(listed.len() * 16 > 5000, "{} keeps {} tokens but lists none", after.name, listed.len()),
                }
                if ["top_k", "top_p", "min_p"].contains(&after.name.as_str()) {
                    // A cut that drops nothing passes the stage before on untouched.
                    let expected = if after.kept == before.kept { before.probs.to_vec() } else { renormalize_kept(&before.probs, &after.kept) };
                    assert!(same_bits(&after.probs, &expected), "{}", after.name);
                    assert!((after.entropy_nats - entropy_nats(&after.probs)).abs() < 1e-12, "{}", after.name);
                    let mass: f64 = listed.iter().map(|&i| stages[0].probs[i as usize]).sum();
                    assert!((after.kept_mass - mass).abs() < 1e-15, "{}", after.name);
                }
            }
            let min_p = stages.iter().find(|st| st.name == "min_p").unwrap();
            assert!(min_p.support().is_some() && min_p.kept_count <= 60, "{order:?}: the cuts leave at most k tokens");
        }
    }
}
