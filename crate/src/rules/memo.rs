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

use super::kind::StageKind;
use super::prefix::Prefix;
use super::settings::RuleSettings;
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
    /// The rules alone, by name, with the settings' bits they were made for.
    alone: Vec<(&'static str, Vec<u64>, Stage)>,
    prefix: Option<(PrefixKey, Prefix)>,
}

/// Everything the chain's leading modifiers depend on: the history, which
/// stages, the settings their specs read (`StageSpec::reads`) and DRY's
/// breaker ids.
#[derive(Debug, PartialEq)]
struct PrefixKey {
    history: Vec<u32>,
    kinds: Vec<StageKind>,
    read: Vec<serde_json::Value>,
    dry_breakers: Vec<u32>,
}

impl PrefixKey {
    fn new(history: &[u32], s: &RuleSettings, kinds: &[StageKind], inputs: &StepInputs) -> Self {
        let all = serde_json::to_value(s).expect("the settings serialise");
        let read = kinds.iter().flat_map(|k| k.spec().reads).map(|key| all[*key].clone()).collect();
        Self { history: history.to_vec(), kinds: kinds.to_vec(), read, dry_breakers: inputs.dry_breakers.clone() }
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

    /// A rule alone, `key` the bits of everything it depends on.
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
