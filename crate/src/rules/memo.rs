//! The stages a slider move leaves alone, kept from the previous preview.
//!
//! Moving the temperature changes only the temperature columns and what
//! follows them; the penalties, the bias and bans, and the top-k, top-p and
//! min-p columns of the rules alone (measured at tau = 1) stay the same. At
//! 49,152 tokens each of those is several passes over the vocabulary, so a
//! position keeps the last one of each with the settings it was made for, and
//! a preview with equal settings reuses it. Results are identical to
//! recomputing (the same functions on the same inputs).

use std::cell::RefCell;

use super::pipeline::{Prefix, Tempered, greedy_alone, pipeline_after_prefix, temperature_alone};
use super::raw::RawDistribution;
use super::min_p::min_p_mask;
use super::settings::{PenaltyMode, RuleSettings};
use super::stage::Stage;
use crate::error::Result;

/// Memoised stages of one position (one `RawDistribution`).
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
    top_p: Option<(u64, Stage)>,
    min_p: Option<(u64, Stage)>,
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
}

impl PrefixKey {
    fn new(history: &[u32], s: &RuleSettings) -> Self {
        Self {
            history: history.to_vec(),
            window: s.penalty_window,
            mode: s.penalty_mode,
            rho: s.repetition_penalty.to_bits(),
            presence: s.presence_penalty.to_bits(),
            frequency: s.frequency_penalty.to_bits(),
            bias: s.logit_bias.iter().map(|&(id, b)| (id, b.to_bits())).collect(),
            banned: s.banned.clone(),
        }
    }
}

/// `run_pipeline_and_rules_alone`, reusing what `memo` holds from earlier
/// calls on the same raw distribution.
pub fn run_pipeline_and_rules_alone_memo(
    raw: &RawDistribution,
    memo: &StageMemo,
    history: &[u32],
    s: &RuleSettings,
) -> Result<(Vec<Stage>, Vec<Stage>)> {
    s.validate(raw.logits.len())?;
    super::pipeline::check_history(history, raw.logits.len())?;
    let tempered = Tempered::new(raw, s.temperature);
    let mut m = memo.inner.borrow_mut();

    let key = PrefixKey::new(history, s);
    let prefix = match &m.prefix {
        Some((k, p)) if *k == key => p.clone(),
        _ => {
            let p = Prefix::new(raw, history, s)?;
            m.prefix = Some((key, p.clone()));
            p
        }
    };
    let stages = pipeline_after_prefix(raw, &tempered, history, s, prefix);

    let greedy = m.greedy.get_or_insert_with(|| greedy_alone(raw)).clone();
    let top_k = remembered(&mut m.top_k, s.top_k, || raw.truncated("top_k", &raw.top_k_mask(s.top_k)));
    let top_p = remembered(&mut m.top_p, s.top_p.to_bits(), || raw.truncated("top_p", &raw.top_p_mask(s.top_p)));
    let min_p =
        remembered(&mut m.min_p, s.min_p.to_bits(), || raw.truncated("min_p", &min_p_mask(&raw.probs, s.min_p)));
    let alone = vec![greedy, temperature_alone(raw, &tempered, s.temperature), top_k, top_p, min_p];
    Ok((stages, alone))
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
    use crate::rules::{Order, run_pipeline_and_rules_alone};

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
            base.clone(),
        ];
        for (i, s) in moves.iter().enumerate() {
            let fresh = run_pipeline_and_rules_alone(&raw, &history, s).unwrap();
            let reused = run_pipeline_and_rules_alone_memo(&raw, &memo, &history, s).unwrap();
            assert_eq!(reused, fresh, "move {i}");
        }
        // A different history is a different prefix.
        let other: Vec<u32> = vec![1, 2, 3];
        assert_eq!(
            run_pipeline_and_rules_alone_memo(&raw, &memo, &other, &base).unwrap(),
            run_pipeline_and_rules_alone(&raw, &other, &base).unwrap()
        );
    }
}
