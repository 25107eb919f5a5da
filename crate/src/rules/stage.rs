//! One column of the rules panel: the distribution after a rule, and what it kept.

use std::sync::Arc;

use serde::Serialize;

use super::softmax::{Nearby, Softmax, entropy_nats_from_logits, softmax_near, softmax_parts};

/// The distribution after one stage of the pipeline (or one rule alone).
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Stage {
    /// "raw", "penalties", "bias_bans", "temperature", "top_k", "top_p",
    /// "min_p", "final"; rules alone: "greedy", "temperature", "top_k", "top_p", "min_p".
    pub name: String,
    /// Full-vocabulary distribution after this stage (shared: a stage that
    /// changes nothing, and a kept stage reused by the next preview, point to
    /// the same numbers instead of copying a vocabulary's worth).
    #[serde(serialize_with = "serialize_shared")]
    pub probs: Arc<Vec<f64>>,
    /// `kept[i] = probs[i] > 0`: the token is still possible.
    #[serde(serialize_with = "serialize_shared")]
    pub kept: Arc<Vec<bool>>,
    pub kept_count: usize,
    /// Mass of the kept set under the raw distribution softmax(raw logits).
    pub kept_mass: f64,
    pub entropy_bits: f64,
    pub entropy_nats: f64,
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

    /// A distribution whose entropy (in nats) is already known.
    pub(crate) fn with_entropy(name: &str, probs: Vec<f64>, entropy_nats: f64, raw_probs: &[f64]) -> Self {
        let kept: Vec<bool> = probs.iter().map(|&p| p > 0.0).collect();
        // One pass for the kept set's size and raw mass.
        let (mut kept_count, mut kept_mass) = (0, 0.0);
        for (&k, &raw) in kept.iter().zip(raw_probs) {
            if k {
                kept_count += 1;
                kept_mass += raw;
            }
        }
        Self {
            name: name.to_string(),
            entropy_bits: entropy_nats / std::f64::consts::LN_2,
            entropy_nats,
            probs: Arc::new(probs),
            kept: Arc::new(kept),
            kept_count,
            kept_mass,
        }
    }

    /// The same distribution under another name (an "off" stage, or "final").
    pub fn renamed(&self, name: &str) -> Self {
        Self {
            name: name.to_string(),
            ..self.clone()
        }
    }
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
