//! The visible pipeline: every rule in order, each reported as a `Stage`.
//!
//! The raw logits are only read, never written: every stage works on its own
//! copy, so the page can re-run the rules on the same logits at every slider
//! move.

use super::bias::apply_bias_and_bans;
use super::min_p::min_p_mask;
use super::penalties::{penalize_presence_frequency, penalize_repetition, select_recent};
use super::raw::RawDistribution;
use super::settings::{Order, RuleSettings};
use super::softmax::{Nearby, Softmax, argmax, softmax_parts};
use super::stage::Stage;
use super::temperature::scale_by_temperature;
use super::top_k::top_k_mask_hinted;
use super::top_p::top_p_mask;
use crate::error::Result;

/// Runs the pipeline in `s.order` and returns one stage per rule: first "raw"
/// (softmax of the raw logits), last "final" (what the draw uses).
///
/// - HF order: penalties → bias_bans → temperature → top_k → top_p → min_p.
/// - llama.cpp order: penalties → bias_bans → top_k → top_p → min_p →
///   temperature (applied last, to the surviving logits).
///
/// Rules that are off are still reported (identical to the stage before) so
/// the page's columns never move. `history` is every token so far; the
/// penalties look at its last `s.penalty_window` tokens.
///
/// Errors (never panics): empty logits, a NaN or +inf logit, every raw logit
/// -inf, a setting out of range, a token id outside the vocabulary, or
/// bans that leave no token possible.
pub fn run_pipeline(raw_logits: &[f64], history: &[u32], s: &RuleSettings) -> Result<Vec<Stage>> {
    run_pipeline_on(&RawDistribution::new(raw_logits.to_vec())?, history, s)
}

/// `run_pipeline` on a raw distribution measured beforehand (once per
/// position, however many times the settings change).
pub fn run_pipeline_on(raw_dist: &RawDistribution, history: &[u32], s: &RuleSettings) -> Result<Vec<Stage>> {
    s.validate(raw_dist.logits.len())?;
    pipeline(raw_dist, &Tempered::new(raw_dist, s.temperature), history, s)
}

/// The pipeline and every rule alone (what the panels show), sharing the
/// work they have in common.
pub fn run_pipeline_and_rules_alone(
    raw_dist: &RawDistribution,
    history: &[u32],
    s: &RuleSettings,
) -> Result<(Vec<Stage>, Vec<Stage>)> {
    s.validate(raw_dist.logits.len())?;
    let tempered = Tempered::new(raw_dist, s.temperature);
    Ok((pipeline(raw_dist, &tempered, history, s)?, rules_alone(raw_dist, &tempered, s)))
}

/// softmax(raw / tau) with the scaled logits, for tau other than 0 and 1: the
/// "temperature" rule alone, and the distribution the pipeline's temperature
/// stage is near (the penalties and biases change only a few tokens).
pub(crate) struct Tempered {
    logits: Vec<f64>,
    softmax: Softmax,
}

impl Tempered {
    pub(crate) fn new(raw: &RawDistribution, tau: f64) -> Option<Self> {
        if tau == 0.0 || tau == 1.0 {
            return None;
        }
        let logits = scale_by_temperature(&raw.logits, tau);
        let softmax = softmax_parts(&logits);
        Some(Self { logits, softmax })
    }

    fn nearby(&self) -> Nearby<'_> {
        Nearby { logits: &self.logits, probs: &self.softmax.probs, log_norm: self.softmax.log_norm }
    }
}

fn pipeline(
    raw_dist: &RawDistribution,
    tempered: &Option<Tempered>,
    history: &[u32],
    s: &RuleSettings,
) -> Result<Vec<Stage>> {
    check_history(history, raw_dist.logits.len())?;
    let prefix = Prefix::new(raw_dist, history, s)?;
    Ok(pipeline_after_prefix(raw_dist, tempered, history, s, prefix))
}

/// The stages no temperature, top-k, top-p or min-p changes: the penalties
/// and the bias and bans, with the logits they leave.
#[derive(Clone, Debug)]
pub(crate) struct Prefix {
    penalties: Stage,
    bias_bans: Stage,
    z: Vec<f64>,
    log_norm: f64,
}

impl Prefix {
    pub(crate) fn new(raw_dist: &RawDistribution, history: &[u32], s: &RuleSettings) -> Result<Self> {
        let raw_logits = raw_dist.logits.as_slice();
        let raw_probs = &raw_dist.probs;
        let mut log_norm = raw_dist.log_norm;

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

/// The pipeline from its prefix on: temperature and the truncations in `s.order`.
pub(crate) fn pipeline_after_prefix(
    raw_dist: &RawDistribution,
    tempered: &Option<Tempered>,
    history: &[u32],
    s: &RuleSettings,
    prefix: Prefix,
) -> Vec<Stage> {
    let raw_probs = &raw_dist.probs;
    let Prefix { penalties, bias_bans, z, log_norm } = prefix;
    let raw = raw_dist.stage.clone();
    let recent = select_recent(history, s.penalty_window);
    let mut stages = vec![raw, penalties, bias_bans];
    // Tokens near the top now: the raw ranking's first k, plus room for every
    // token a penalty, bias or ban may have moved (temperature keeps the order).
    let moved = recent.len() + s.logit_bias.len() + s.banned.len();
    let near_top = &raw_dist.order[..(s.top_k + moved).min(raw_dist.order.len())];
    let mut walk = Walk { z, log_norm, raw_probs, tempered, near_top };
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

/// Each rule alone on the raw logits: "greedy", "temperature" (at
/// `s.temperature`), then "top_k", "top_p", "min_p" at tau = 1 with `s`'s
/// values (a rule that is off keeps every token).
pub fn run_rules_alone(raw_logits: &[f64], s: &RuleSettings) -> Result<Vec<Stage>> {
    run_rules_alone_on(&RawDistribution::new(raw_logits.to_vec())?, s)
}

/// `run_rules_alone` on a raw distribution measured beforehand.
pub fn run_rules_alone_on(raw: &RawDistribution, s: &RuleSettings) -> Result<Vec<Stage>> {
    s.validate(raw.logits.len())?;
    Ok(rules_alone(raw, &Tempered::new(raw, s.temperature), s))
}

fn rules_alone(raw: &RawDistribution, tempered: &Option<Tempered>, s: &RuleSettings) -> Vec<Stage> {
    vec![
        greedy_alone(raw),
        temperature_alone(raw, tempered, s.temperature),
        raw.truncated("top_k", &raw.top_k_mask(s.top_k)),
        raw.truncated("top_p", &raw.top_p_mask(s.top_p)),
        raw.truncated("min_p", &min_p_mask(&raw.probs, s.min_p)),
    ]
}

/// The "greedy" column: all the mass on the raw argmax.
pub(crate) fn greedy_alone(raw: &RawDistribution) -> Stage {
    let mut one_hot = vec![0.0; raw.probs.len()];
    one_hot[argmax(&raw.logits)] = 1.0;
    Stage::with_entropy("greedy", one_hot, 0.0, &raw.probs)
}

/// The "temperature" column: softmax(raw / tau).
pub(crate) fn temperature_alone(raw: &RawDistribution, tempered: &Option<Tempered>, tau: f64) -> Stage {
    match tempered {
        Some(t) => {
            let softmax = Softmax { probs: t.softmax.probs.clone(), log_norm: t.softmax.log_norm };
            Stage::from_softmax("temperature", softmax, &t.logits, &raw.probs).0
        }
        None if tau == 1.0 => raw.stage.renamed("temperature"),
        None => Stage::from_logits("temperature", &scale_by_temperature(&raw.logits, tau), &raw.probs),
    }
}

/// Zeroes the tokens outside `mask` and rescales the rest to sum to 1.
/// An empty mask gives all zeros (the truncation rules never produce one
/// from a distribution with a possible token).
pub fn renormalize_kept(probs: &[f64], mask: &[bool]) -> Vec<f64> {
    renormalize_with_mass(probs, mask).0
}

/// `renormalize_kept`, also returning the kept mass it divided by.
pub(crate) fn renormalize_with_mass(probs: &[f64], mask: &[bool]) -> (Vec<f64>, f64) {
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
    fn push_truncation(
        &mut self,
        stages: &mut Vec<Stage>,
        name: &str,
        mask_of: impl Fn(&[f64]) -> Vec<bool>,
    ) {
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

pub(crate) fn check_history(history: &[u32], vocab_size: usize) -> Result<()> {
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
