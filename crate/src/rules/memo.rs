//! The stages a slider move leaves alone, kept from the previous preview.
//!
//! Moving the temperature changes only the temperature columns and what
//! follows them; the penalties, the bias and bans, and the top-k, top-p and
//! min-p columns of the rules alone (measured at tau = 1) stay the same. At
//! 49,152 tokens each of those is several passes over the vocabulary, so a
//! position keeps the last one of each with the settings it was made for, and
//! a preview with equal settings reuses it. Results are identical to
//! recomputing (the same functions on the same inputs). The memo knows what
//! to keep, never how a stage is made: `run_rules` hands it the recipe.

use std::cell::RefCell;

use super::chain::StageKind;
use super::prefix::Prefix;
use super::settings::{PenaltyMode, RuleSettings};
use super::stage::Stage;
use super::state::StepInputs;
use crate::error::Result;

/// Memoised stages of one position (one `RawDistribution`): an argument of
/// `run_rules`, which asks it for each reusable stage and says how to make
/// one it does not hold.
#[derive(Debug, Default)]
pub struct StageMemo {
    inner: RefCell<Inner>,
}

impl Clone for StageMemo {
    /// A copy starts empty: the memo is a cache, not state.
    fn clone(&self) -> Self {
        Self::default()
    }
}

#[derive(Debug, Default)]
struct Inner {
    greedy: Option<Stage>,
    top_k: Option<(usize, Stage)>,
    /// Keyed by the threshold's bits and `min_keep`, which both decide the set.
    top_p: Option<((u64, usize), Stage)>,
    min_p: Option<((u64, usize), Stage)>,
    /// The other rules alone, by name, with the settings' bits they were made for.
    alone: Vec<(&'static str, Vec<u64>, Stage)>,
    prefix: Option<(PrefixKey, Prefix)>,
}

/// Everything the penalties and the bias and bans depend on.
#[derive(Debug, PartialEq)]
struct PrefixKey {
    history: Vec<u32>,
    window: usize,
    mode: PenaltyMode,
    rho: u64,
    presence: u64,
    frequency: u64,
    bias: Vec<(u32, u64)>,
    banned: Vec<u32>,
    kinds: Vec<StageKind>,
    sequence_bias: Vec<(Vec<u32>, u64)>,
    ngram: usize,
    dry: [u64; 4],
    dry_breakers: Vec<u32>,
}

impl PrefixKey {
    fn new(history: &[u32], s: &RuleSettings, kinds: &[StageKind], inputs: &StepInputs) -> Self {
        Self {
            history: history.to_vec(),
            window: s.penalty_window,
            mode: s.penalty_mode,
            rho: s.repetition_penalty.to_bits(),
            presence: s.presence_penalty.to_bits(),
            frequency: s.frequency_penalty.to_bits(),
            bias: s.logit_bias.iter().map(|&(id, b)| (id, b.to_bits())).collect(),
            banned: s.banned.clone(),
            kinds: kinds.to_vec(),
            sequence_bias: s.sequence_bias.iter().map(|(ids, b)| (ids.clone(), b.to_bits())).collect(),
            ngram: s.no_repeat_ngram_size,
            dry: [s.dry_multiplier.to_bits(), s.dry_base.to_bits(), s.dry_allowed_length as u64, s.dry_penalty_last_n as u64],
            dry_breakers: inputs.dry_breakers.clone(),
        }
    }
}

impl StageMemo {
    /// The chain's leading modifiers `kinds` for `history` and `s`.
    pub(crate) fn prefix(
        &self,
        history: &[u32],
        s: &RuleSettings,
        kinds: &[StageKind],
        inputs: &StepInputs,
        make: impl FnOnce() -> Result<Prefix>,
    ) -> Result<Prefix> {
        let mut m = self.inner.borrow_mut();
        let key = PrefixKey::new(history, s, kinds, inputs);
        match &m.prefix {
            Some((k, p)) if *k == key => Ok(p.clone()),
            _ => {
                let p = make()?;
                m.prefix = Some((key, p.clone()));
                Ok(p)
            }
        }
    }

    /// The "greedy" rule alone (no setting changes it).
    pub(crate) fn greedy(&self, make: impl FnOnce() -> Stage) -> Stage {
        self.inner.borrow_mut().greedy.get_or_insert_with(make).clone()
    }

    /// Top-k alone at `k`.
    pub(crate) fn top_k(&self, k: usize, make: impl FnOnce() -> Stage) -> Stage {
        remembered(&mut self.inner.borrow_mut().top_k, k, make)
    }

    /// Top-p alone at `p`, keeping at least `min_keep`.
    pub(crate) fn top_p(&self, p: f64, min_keep: usize, make: impl FnOnce() -> Stage) -> Stage {
        remembered(&mut self.inner.borrow_mut().top_p, (p.to_bits(), min_keep), make)
    }

    /// Min-p alone at `m`, keeping at least `min_keep`.
    pub(crate) fn min_p(&self, m: f64, min_keep: usize, make: impl FnOnce() -> Stage) -> Stage {
        remembered(&mut self.inner.borrow_mut().min_p, (m.to_bits(), min_keep), make)
    }

    /// Any other rule alone, `key` the bits of everything it depends on.
    pub(crate) fn alone(&self, name: &'static str, key: Vec<u64>, make: impl FnOnce() -> Stage) -> Stage {
        let mut m = self.inner.borrow_mut();
        if let Some((_, _, stage)) = m.alone.iter().find(|(n, k, _)| *n == name && *k == key) {
            return stage.clone();
        }
        let stage = make();
        m.alone.retain(|(n, _, _)| *n != name);
        m.alone.push((name, key, stage.clone()));
        stage
    }
}

/// The stage kept for `key`, or a fresh one (kept from now on).
fn remembered<K: PartialEq + Copy>(slot: &mut Option<(K, Stage)>, key: K, make: impl FnOnce() -> Stage) -> Stage {
    match slot {
        Some((k, stage)) if *k == key => stage.clone(),
        _ => {
            let stage = make();
            *slot = Some((key, stage.clone()));
            stage
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Order, RawDistribution, run_rules};

    #[test]
    fn reused_stages_equal_fresh_ones_whatever_the_order_of_moves() {
        let mut rng = crate::rng::Rng::new(3);
        let logits: Vec<f64> = (0..400).map(|_| rng.next_normal() * 2.0).collect();
        let raw = RawDistribution::new(logits).unwrap();
        let memo = StageMemo::default();
        let history: Vec<u32> = (0..20).map(|i| (i * 17) % 400).collect();
        let base = RuleSettings { top_k: 40, top_p: 0.9, min_p: 0.05, repetition_penalty: 1.3, ..Default::default() };
        // A walk of slider moves, coming back to earlier values, with a ban and an order change.
        let moves = [
            RuleSettings { temperature: 0.7, ..base.clone() },
            RuleSettings { temperature: 1.3, ..base.clone() },
            RuleSettings { temperature: 1.3, top_p: 0.5, ..base.clone() },
            RuleSettings { temperature: 0.7, banned: vec![5], ..base.clone() },
            RuleSettings { temperature: 0.7, order: Order::LlamaCpp, ..base.clone() },
            RuleSettings { temperature: 0.0, repetition_penalty: 1.0, ..base.clone() },
            // min_keep alone changes the truncations' sets (top-p and min-p keep a few dozen here).
            RuleSettings { min_keep: 200, ..base.clone() },
            base.clone(),
        ];
        for (i, s) in moves.iter().enumerate() {
            let fresh = run_rules(&raw, &history, s, &StageMemo::default()).unwrap();
            let reused = run_rules(&raw, &history, s, &memo).unwrap();
            assert_eq!(reused, fresh, "move {i}");
        }
        // A different history is a different prefix.
        let other: Vec<u32> = vec![1, 2, 3];
        assert_eq!(
            run_rules(&raw, &other, &base, &memo).unwrap(),
            run_rules(&raw, &other, &base, &StageMemo::default()).unwrap()
        );
    }
}
