//! The pipeline's first two stages, which no temperature, top-k, top-p or
//! min-p changes: the penalties, then the bias and bans. A slider move on
//! any of those reuses them (see `memo`).

use super::bias::apply_bias_and_bans;
use super::penalties::{penalize_presence_frequency, penalize_repetition, select_recent};
use super::raw::RawDistribution;
use super::settings::RuleSettings;
use super::softmax::Nearby;
use super::stage::Stage;
use crate::error::Result;

/// The "penalties" and "bias_bans" stages, with the logits they leave and
/// the softmax normaliser of those logits.
#[derive(Clone, Debug)]
pub(crate) struct Prefix {
    pub(crate) penalties: Stage,
    pub(crate) bias_bans: Stage,
    pub(crate) z: Vec<f64>,
    pub(crate) log_norm: f64,
}

impl Prefix {
    /// Errors when the bans leave no token possible.
    pub(crate) fn new(raw_dist: &RawDistribution, history: &[u32], s: &RuleSettings) -> Result<Self> {
        let raw_logits = raw_dist.logits.as_slice();
        let raw_probs = &raw_dist.probs;
        let mut log_norm = raw_dist.log_norm;

        // 1. Penalties on the tokens of the window (an "off" stage is the raw one).
        let recent = select_recent(history, s.penalty_window);
        let mut z = raw_logits.to_vec();
        let penalties_on = !recent.is_empty()
            && (s.repetition_penalty != 1.0 || s.presence_penalty != 0.0 || s.frequency_penalty != 0.0);
        if penalties_on {
            z = penalize_repetition(&z, recent, s.repetition_penalty, s.penalty_mode);
            z = penalize_presence_frequency(&z, recent, s.presence_penalty, s.frequency_penalty);
        }
        let raw_near = Nearby { logits: raw_logits, probs: raw_probs, log_norm: raw_dist.log_norm };
        let penalties = if penalties_on {
            let (stage, norm) = Stage::from_logits_near("penalties", &z, &raw_near, raw_probs);
            log_norm = norm;
            stage
        } else {
            raw_dist.stage.renamed("penalties")
        };

        // 2. Bias and bans.
        let bias_on = !s.logit_bias.is_empty() || !s.banned.is_empty();
        let bias_bans = if bias_on {
            let before = z;
            z = apply_bias_and_bans(&before, &s.logit_bias, &s.banned);
            if z.iter().all(|&v| v == f64::NEG_INFINITY) {
                crate::bail!(
                    "every token is banned (or has logit -inf): at least one of the {} tokens must stay allowed",
                    z.len()
                );
            }
            let near = Nearby { logits: &before, probs: &penalties.probs, log_norm };
            let (stage, norm) = Stage::from_logits_near("bias_bans", &z, &near, raw_probs);
            log_norm = norm;
            stage
        } else {
            penalties.renamed("bias_bans")
        };
        Ok(Self { penalties, bias_bans, z, log_norm })
    }
}
