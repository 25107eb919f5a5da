//! The one entry point of the rules: `run_rules` runs the pipeline in the
//! chosen order, every stage reported, and every rule alone beside it.
//!
//! The raw logits are only read, never written: a stage that changes them
//! works on its own copy, so the page can re-run the rules on the same
//! logits at every slider move. What a move leaves unchanged comes from the
//! position's `StageMemo`.

use std::sync::Arc;

use super::alone::rules_alone;
use super::kind::StageKind;
use super::memo::StageMemo;
use super::prefix::Prefix;
use super::probs::Probs;
use super::raw::RawDistribution;
use super::settings::RuleSettings;
use super::softmax::argmax;
use super::spec::{Apply, Cut};
use super::stage::{Stage, ids_of, is_few};
use super::state::StepInputs;
use super::temperature::{Tempered, scale_by_temperature};
use crate::error::Result;

/// Every rule on one position: the pipeline's stages in the chain's order
/// (`RuleSettings::stages`: the user's `chain`, or the preset `order` names)
/// and each rule alone (what the panels show). The stages read top to bottom:
///
/// 1. "raw": softmax of the raw logits (measured once, in `raw`);
/// 2. one stage per entry of the chain, named as in `StageKind::name`
///    (the Hugging Face preset: "sequence_bias", "penalties",
///    "no_repeat_ngram", "bias_bans", "temperature", "top_k", "top_p",
///    "min_p", "typical_p", "epsilon_cutoff", "eta_cutoff"; llama.cpp's:
///    "penalties", "bias_bans", "dry", "top_n_sigma", "top_k",
///    "typical_p_llama", "top_p", "min_p", "xtc", "temperature", "mirostat");
/// 3. "final": what the draw uses.
///
/// Rules that are off are still reported (identical to the stage before) so
/// the page's columns never move, and cost nothing. The chain's leading
/// logit modifiers and the rules alone at tau = 1 come from `memo` when it
/// holds them for the same settings (a fresh `StageMemo::default()`
/// computes everything). Every truncation keeps at least `min_keep` tokens.
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
    run_rules_with(raw, history, s, memo, &StepInputs::default())
}

/// `run_rules` with a step's XTC coin, mirostat state and DRY breakers.
pub fn run_rules_with(
    raw: &RawDistribution,
    history: &[u32],
    s: &RuleSettings,
    memo: &StageMemo,
    inputs: &StepInputs,
) -> Result<(Vec<Stage>, Vec<Stage>)> {
    s.validate(raw.logits.len())?;
    check_history(history, raw.logits.len())?;
    let tempered = Tempered::new(raw, s.temperature);
    let kinds = s.stages();
    let lead = kinds.iter().take_while(|k| k.is_logit_modifier()).count();
    let prefix = memo.prefix(history, s, &kinds[..lead], inputs, || Prefix::new(raw, history, s, &kinds[..lead], inputs))?;
    let pipeline = pipeline_from(raw, &tempered, history, s, inputs, prefix, &kinds[lead..])?;
    Ok((pipeline, rules_alone(raw, &tempered, s, inputs, memo)))
}

/// The pipeline's stages on a logits slice (the CLI's `dist`, the tests).
pub fn run_pipeline(raw_logits: &[f64], history: &[u32], s: &RuleSettings) -> Result<Vec<Stage>> {
    let raw = RawDistribution::new(raw_logits.to_vec())?;
    Ok(run_rules(&raw, history, s, &StageMemo::default())?.0)
}

/// Each rule alone on a logits slice (no history: the pipeline's penalties
/// are not among them); see `alone`.
pub fn run_rules_alone(raw_logits: &[f64], s: &RuleSettings) -> Result<Vec<Stage>> {
    let raw = RawDistribution::new(raw_logits.to_vec())?;
    s.validate(raw.logits.len())?;
    Ok(rules_alone(&raw, &Tempered::new(&raw, s.temperature), s, &StepInputs::default(), &StageMemo::default()))
}

/// Every stage, given the leading modifiers' and the rest of the chain.
fn pipeline_from(
    raw_dist: &RawDistribution,
    tempered: &Option<Tempered>,
    history: &[u32],
    s: &RuleSettings,
    inputs: &StepInputs,
    prefix: Prefix,
    rest: &[StageKind],
) -> Result<Vec<Stage>> {
    let mut stages = vec![raw_dist.stage.clone()];
    stages.extend(prefix.stages.iter().cloned());
    let mut walk = Walk { prefix, raw: raw_dist, tempered, history, s, inputs, synced: false, owed: None };
    for &kind in rest {
        let previous = &stages[stages.len() - 1];
        let stage = walk.apply(kind, previous)?;
        stages.push(stage);
    }
    let last = stages[stages.len() - 1].renamed("final");
    stages.push(last);
    Ok(stages)
}

/// The logits as they flow through the chain after its leading modifiers
/// (`prefix.z`). A token dropped by a stage (probability 0, whether
/// truncated or underflowed) gets logit -inf, so no later stage (temperature
/// last, in llama order) can bring it back. The latest stage's probabilities
/// are always softmax(z), with `ln p_i = z_i - log_norm`: what its
/// truncations' entropies are measured from.
struct Walk<'a> {
    prefix: Prefix,
    raw: &'a RawDistribution,
    /// softmax(raw / tau): where the temperature stage starts from while
    /// nothing has been truncated yet (Hugging Face order).
    tempered: &'a Option<Tempered>,
    history: &'a [u32],
    s: &'a RuleSettings,
    inputs: &'a StepInputs,
    /// `z` is -inf wherever the latest stage has probability 0 (once
    /// `owed` is applied).
    synced: bool,
    /// A stage's kept set whose -inf's `z` does not hold yet: they are
    /// written just before a stage next reads `z`, so a chain whose later
    /// stages are off (greedy and the defaults) never copies or writes it.
    owed: Option<Arc<Vec<bool>>>,
}

impl Walk<'_> {
    /// One stage of the chain, as its spec says: a modifier through the
    /// prefix, temperature, or a truncation while it is on; an off stage is
    /// the one before, renamed.
    fn apply(&mut self, kind: StageKind, previous: &Stage) -> Result<Stage> {
        let (s, inputs) = (self.s, self.inputs);
        let spec = kind.spec();
        Ok(match spec.apply {
            Apply::Modifier(_) => {
                self.pay_owed();
                let stage = self.prefix.apply(kind, previous, &self.raw.probs, self.history, s, inputs)?;
                self.synced &= Probs::same(&stage.probs, &previous.probs);
                stage
            }
            Apply::Temperature => self.apply_temperature(previous, s.temperature),
            Apply::Cut(mask_of) if (spec.is_on)(s) => {
                self.pay_owed();
                let (raw, moved) = (self.raw, self.prefix.moved);
                let raw_order = raw.order();
                let support = previous.support();
                self.truncation(spec.name, previous, |probs, logits| mask_of(&Cut { probs, logits, support, s, inputs, raw_order, moved }))
            }
            Apply::Cut(_) => {
                // Off: the stage before, renamed. Its underflowed tokens still
                // get -inf (once), so a later temperature cannot revive them.
                if !self.synced {
                    self.owed = Some(Arc::clone(&previous.kept));
                    self.synced = true;
                }
                previous.renamed(spec.name)
            }
        })
    }

    /// Writes the -inf's an earlier stage left owed, before `z` is read.
    fn pay_owed(&mut self) {
        if let Some(kept) = self.owed.take() {
            drop_unkept(&mut self.prefix.z, &kept);
        }
    }

    fn apply_temperature(&mut self, previous: &Stage, tau: f64) -> Stage {
        if tau == 1.0 {
            // Exactly the identity: reuse the numbers so HF and llama orders agree bit for bit.
            return previous.renamed("temperature");
        }
        self.pay_owed();
        let p = &mut self.prefix;
        if tau == 0.0 {
            let best = if Arc::ptr_eq(&p.z, &self.raw.logits) { self.raw.argmax() } else { argmax(&p.z) };
            if p.z[best].is_finite() {
                // Greedy: softmax(z / 0) is all the mass on the first argmax,
                // made without the one-hot logits and their softmax (two
                // vocabulary-sized vectors); the same stage and normaliser.
                let stage = Stage::one_hot("temperature", p.z.len(), best, &self.raw.probs);
                p.log_norm = p.z[best];
                self.owed = Some(Arc::clone(&stage.kept));
                self.synced = true;
                return stage;
            }
        }
        p.z = Arc::new(scale_by_temperature(&p.z, tau));
        let raw_probs = &self.raw.probs;
        let (stage, log_norm) = match self.tempered {
            Some(t) => Stage::from_logits_near("temperature", &p.z, &t.nearby(), raw_probs),
            None => Stage::from_logits_with_norm("temperature", &p.z, raw_probs),
        };
        p.log_norm = log_norm;
        drop_unkept(&mut p.z, &stage.kept);
        self.synced = true;
        stage
    }

    /// Applies one truncation rule to the latest stage's probabilities
    /// (and logits, for the rules that read them).
    fn truncation(&mut self, name: &str, previous: &Stage, mask_of: impl Fn(&Probs, &[f64]) -> Vec<bool>) -> Stage {
        let p = &mut self.prefix;
        let mask = mask_of(&previous.probs, &p.z);
        let raw_probs = &self.raw.probs;
        let stage = if mask == *previous.kept {
            previous.renamed(name)
        } else {
            // Only the tokens the cut keeps are read: those of the previous
            // stage's support, or of the mask itself when it keeps few.
            let few_kept = || Some(ids_of(&mask)).filter(|ids| is_few(ids.len(), mask.len()));
            let listed = previous.support().map(<[u32]>::to_vec).or_else(few_kept);
            let (stage, log_norm) = match listed {
                Some(ids) => Stage::renormalized_among(name, &previous.probs, &mask, &ids, &p.z, p.log_norm, raw_probs),
                None => Stage::renormalized(name, &previous.probs, &mask, &p.z, p.log_norm, raw_probs),
            };
            p.log_norm = log_norm;
            stage
        };
        match previous.support() {
            // z is already -inf wherever the previous stage has probability 0.
            Some(ids) if self.synced => drop_unkept_among(&mut p.z, &mask, ids),
            _ => drop_unkept(&mut p.z, &mask),
        }
        self.synced = true;
        stage
    }
}

/// Sets -inf where `kept` is false. `z` is copied first only when it is
/// shared (the raw logits, or the memo's prefix) and something changes.
fn drop_unkept(z: &mut Arc<Vec<f64>>, kept: &[bool]) {
    let changes = |(v, k): (&f64, &bool)| !*k && *v != f64::NEG_INFINITY;
    let Some(first) = z.iter().zip(kept).position(changes) else { return };
    for (v, &k) in Arc::make_mut(z)[first..].iter_mut().zip(&kept[first..]) {
        if !k {
            *v = f64::NEG_INFINITY;
        }
    }
}

/// `drop_unkept` for a `z` that is already -inf outside `ids`.
fn drop_unkept_among(z: &mut Arc<Vec<f64>>, kept: &[bool], ids: &[u32]) {
    let mut dropped = ids.iter().filter(|&&i| !kept[i as usize]).peekable();
    if dropped.peek().is_none() {
        return;
    }
    let z = Arc::make_mut(z);
    for &i in dropped {
        z[i as usize] = f64::NEG_INFINITY;
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
