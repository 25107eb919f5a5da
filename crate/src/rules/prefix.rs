//! The chain's leading run of logit modifiers (the stages whose spec applies
//! an `Apply::Modifier`: the sequence bias, the penalties, no-repeat-ngram,
//! the bias and bans, DRY),
//! which no temperature or truncation changes. A slider move on any of those
//! reuses them (see `memo`).

use std::sync::Arc;

use super::kind::StageKind;
use super::raw::RawDistribution;
use super::settings::RuleSettings;
use super::softmax::Nearby;
use super::spec::Apply;
use super::stage::Stage;
use super::state::StepInputs;
use crate::error::Result;

/// The modifiers' stages, with the logits they leave, the softmax
/// normaliser of those logits and how many tokens they touched.
#[derive(Clone, Debug)]
pub(crate) struct Prefix {
    pub(crate) stages: Vec<Stage>,
    /// The raw logits themselves until a modifier changes them. The memo
    /// keeps the prefix that the chain's walk then cuts, so the walk writes
    /// through `Arc::make_mut` (copy on write, `pipeline::drop_unkept`).
    pub(crate) z: Arc<Vec<f64>>,
    pub(crate) log_norm: f64,
    pub(crate) moved: usize,
}

impl Prefix {
    /// Runs `kinds` (logit modifiers) from the raw logits. Errors when they
    /// leave no token possible.
    pub(crate) fn new(raw: &RawDistribution, history: &[u32], s: &RuleSettings, kinds: &[StageKind], inputs: &StepInputs) -> Result<Self> {
        let mut prefix = Prefix { stages: Vec::new(), z: Arc::clone(&raw.logits), log_norm: raw.log_norm, moved: 0 };
        for &kind in kinds {
            let previous = prefix.stages.last().unwrap_or(&raw.stage).clone();
            let stage = prefix.apply(kind, &previous, &raw.probs, history, s, inputs)?;
            prefix.stages.push(stage);
        }
        Ok(prefix)
    }

    /// One modifier on the current logits: its stage (the previous one
    /// renamed when it is off), the logits and normaliser updated.
    pub(crate) fn apply(
        &mut self,
        kind: StageKind,
        previous: &Stage,
        raw_probs: &[f64],
        history: &[u32],
        s: &RuleSettings,
        inputs: &StepInputs,
    ) -> Result<Stage> {
        let spec = kind.spec();
        let modified = match spec.apply {
            Apply::Modifier(modify) if (spec.is_on)(s) => modify(&self.z, history, s, inputs),
            _ => None,
        };
        let Some((z, touched)) = modified else {
            return Ok(previous.renamed(kind.name()));
        };
        if z.iter().all(|&v| v == f64::NEG_INFINITY) {
            crate::bail!(
                "every token is banned (or has logit -inf) after '{}': at least one of the {} tokens must stay allowed",
                kind.name(),
                z.len()
            );
        }
        let near = Nearby { logits: &self.z, probs: &previous.probs, log_norm: self.log_norm };
        let (stage, norm) = Stage::from_logits_near(kind.name(), &z, &near, raw_probs);
        self.z = Arc::new(z);
        self.log_norm = norm;
        self.moved += touched;
        Ok(stage)
    }
}
