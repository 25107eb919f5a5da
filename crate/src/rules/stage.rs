//! One column of the rules panel: the distribution after a rule, and what it kept.

use serde::Serialize;

use super::softmax::{entropy_bits, entropy_nats, softmax};

/// The distribution after one stage of the pipeline (or one rule alone).
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Stage {
    /// "raw", "penalties", "bias_bans", "temperature", "top_k", "top_p",
    /// "min_p", "final"; rules alone: "greedy", "temperature", "top_k", "top_p", "min_p".
    pub name: String,
    /// Full-vocabulary distribution after this stage.
    pub probs: Vec<f64>,
    /// `kept[i] = probs[i] > 0`: the token is still possible.
    pub kept: Vec<bool>,
    pub kept_count: usize,
    /// Mass of the kept set under the raw distribution softmax(raw logits).
    pub kept_mass: f64,
    pub entropy_bits: f64,
    pub entropy_nats: f64,
}

impl Stage {
    /// Measures the distribution `softmax(logits)` against the raw probabilities.
    pub fn from_logits(name: &str, logits: &[f64], raw_probs: &[f64]) -> Self {
        Self::from_probs(name, softmax(logits), raw_probs)
    }

    /// Measures an already normalised distribution against the raw probabilities.
    pub fn from_probs(name: &str, probs: Vec<f64>, raw_probs: &[f64]) -> Self {
        let kept: Vec<bool> = probs.iter().map(|&p| p > 0.0).collect();
        let kept_count = kept.iter().filter(|&&k| k).count();
        let kept_mass = raw_probs
            .iter()
            .zip(&kept)
            .filter(|(_, k)| **k)
            .map(|(p, _)| p)
            .sum();
        Self {
            name: name.to_string(),
            entropy_bits: entropy_bits(&probs),
            entropy_nats: entropy_nats(&probs),
            probs,
            kept,
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
