//! The one entry point of the rules: `run_rules` runs the pipeline in the
//! chosen order, every stage reported, and every rule alone beside it.
//!
//! The raw logits are only read, never written: every stage works on its own
//! copy, so the page can re-run the rules on the same logits at every slider
//! move. What a move leaves unchanged comes from the position's `StageMemo`.

use super::alone::rules_alone;
use super::memo::StageMemo;
use super::min_p::min_p_mask;
use super::penalties::select_recent;
use super::prefix::Prefix;
use super::raw::RawDistribution;
use super::settings::{Order, RuleSettings};
use super::stage::Stage;
use super::temperature::{Tempered, scale_by_temperature};
use super::top_k::top_k_mask_hinted;
use super::top_p::top_p_mask;
use crate::error::Result;

/// Every rule on one position: the pipeline's stages in `s.order` and each
/// rule alone (what the panels show). The stages read top to bottom:
///
/// 1. "raw": softmax of the raw logits (measured once, in `raw`);
/// 2. "penalties" on the last `s.penalty_window` tokens of `history`;
/// 3. "bias_bans";
/// 4. Hugging Face order: "temperature", "top_k", "top_p", "min_p";
///    llama.cpp order: "top_k", "top_p", "min_p", then "temperature" on the
///    surviving logits;
/// 5. "final": what the draw uses.
///
/// Rules that are off are still reported (identical to the stage before) so
/// the page's columns never move. Stages 2-3 and the rules alone at tau = 1
/// come from `memo` when it holds them for the same settings (a fresh
/// `StageMemo::default()` computes everything).
///
/// The settings are validated here, once per call. Errors (never panics): a
/// setting out of range, a token id outside the vocabulary, or bans that
/// leave no token possible (`RawDistribution::new` refused broken logits).
pub fn run_rules(
    raw: &RawDistribution,
    history: &[u32],
    s: &RuleSettings,
    memo: &StageMemo,
) -> Result<(Vec<Stage>, Vec<Stage>)> {
    s.validate(raw.logits.len())?;
    check_history(history, raw.logits.len())?;
    let tempered = Tempered::new(raw, s.temperature);
    let prefix = memo.prefix(history, s, || Prefix::new(raw, history, s))?;
    let pipeline = pipeline_from(raw, &tempered, history, s, prefix);
    Ok((pipeline, rules_alone(raw, &tempered, s, memo)))
}

/// The pipeline's stages on a logits slice (the CLI's `dist`, the tests).
pub fn run_pipeline(raw_logits: &[f64], history: &[u32], s: &RuleSettings) -> Result<Vec<Stage>> {
    let raw = RawDistribution::new(raw_logits.to_vec())?;
    Ok(run_rules(&raw, history, s, &StageMemo::default())?.0)
}

/// Each rule alone on a logits slice: "greedy", "temperature", "top_k",
/// "top_p", "min_p" (no history: the pipeline's penalties are not among them).
pub fn run_rules_alone(raw_logits: &[f64], s: &RuleSettings) -> Result<Vec<Stage>> {
    let raw = RawDistribution::new(raw_logits.to_vec())?;
    s.validate(raw.logits.len())?;
    Ok(rules_alone(&raw, &Tempered::new(&raw, s.temperature), s, &StageMemo::default()))
}

/// Stages 1 to 5, given stages 2 and 3.
fn pipeline_from(
    raw_dist: &RawDistribution,
    tempered: &Option<Tempered>,
    history: &[u32],
    s: &RuleSettings,
    prefix: Prefix,
) -> Vec<Stage> {
    let Prefix { penalties, bias_bans, z, log_norm } = prefix;
    let mut stages = vec![raw_dist.stage.clone(), penalties, bias_bans];
    // Tokens near the top now: the raw ranking's first k, plus room for every
    // token a penalty, bias or ban may have moved (temperature keeps the order).
    let moved = select_recent(history, s.penalty_window).len() + s.logit_bias.len() + s.banned.len();
    let near_top = &raw_dist.order[..(s.top_k + moved).min(raw_dist.order.len())];
    let mut walk = Walk { z, log_norm, raw_probs: &raw_dist.probs, tempered, near_top };
    match s.order {
        Order::HuggingFace => {
            stages.push(walk.apply_temperature(&stages[stages.len() - 1], s.temperature));
            walk.push_truncations(&mut stages, s);
        }
        Order::LlamaCpp => {
            walk.push_truncations(&mut stages, s);
            stages.push(walk.apply_temperature(&stages[stages.len() - 1], s.temperature));
        }
    }
    let last = stages[stages.len() - 1].renamed("final");
    stages.push(last);
    stages
}

/// The logits as they flow through the sampling rules. A token dropped by a
/// stage (probability 0, whether truncated or underflowed) gets logit -inf,
/// so no later stage (temperature last, in llama order) can bring it back.
/// The latest stage's probabilities are always softmax(z), with
/// `ln p_i = z_i - log_norm`: what its truncations' entropies are measured from.
struct Walk<'a> {
    z: Vec<f64>,
    log_norm: f64,
    raw_probs: &'a [f64],
    /// softmax(raw / tau): where the temperature stage starts from while
    /// nothing has been truncated yet (Hugging Face order).
    tempered: &'a Option<Tempered>,
    /// A hint for top-k (see `top_k_mask_hinted`).
    near_top: &'a [u32],
}

impl Walk<'_> {
    fn apply_temperature(&mut self, previous: &Stage, tau: f64) -> Stage {
        if tau == 1.0 {
            // Exactly the identity: reuse the numbers so HF and llama orders agree bit for bit.
            return previous.renamed("temperature");
        }
        self.z = scale_by_temperature(&self.z, tau);
        let (stage, log_norm) = match self.tempered {
            Some(t) => Stage::from_logits_near("temperature", &self.z, &t.nearby(), self.raw_probs),
            None => Stage::from_logits_with_norm("temperature", &self.z, self.raw_probs),
        };
        self.log_norm = log_norm;
        self.drop_unkept(&stage.kept);
        stage
    }

    fn push_truncations(&mut self, stages: &mut Vec<Stage>, s: &RuleSettings) {
        let near_top = self.near_top;
        self.push_truncation(stages, "top_k", |p| top_k_mask_hinted(p, s.top_k, near_top));
        self.push_truncation(stages, "top_p", |p| top_p_mask(p, s.top_p));
        self.push_truncation(stages, "min_p", |p| min_p_mask(p, s.min_p));
    }

    /// Applies one truncation rule to the latest stage's probabilities.
    fn push_truncation(&mut self, stages: &mut Vec<Stage>, name: &str, mask_of: impl Fn(&[f64]) -> Vec<bool>) {
        let previous = &stages[stages.len() - 1];
        let mask = mask_of(&previous.probs);
        let stage = if mask == *previous.kept {
            previous.renamed(name)
        } else {
            let (stage, log_norm) =
                Stage::renormalized(name, &previous.probs, &mask, &self.z, self.log_norm, self.raw_probs);
            self.log_norm = log_norm;
            stage
        };
        self.drop_unkept(&mask);
        stages.push(stage);
    }

    fn drop_unkept(&mut self, kept: &[bool]) {
        for (z, &k) in self.z.iter_mut().zip(kept) {
            if !k {
                *z = f64::NEG_INFINITY;
            }
        }
    }
}

fn check_history(history: &[u32], vocab_size: usize) -> Result<()> {
    if let Some((pos, id)) = history
        .iter()
        .enumerate()
        .find(|(_, id)| **id as usize >= vocab_size)
    {
        crate::bail!(
            "history token {id} at position {pos} is outside the vocabulary (ids 0..{})",
            vocab_size - 1
        );
    }
    Ok(())
}
