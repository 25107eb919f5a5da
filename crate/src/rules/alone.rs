//! Each rule alone on the raw logits (the rules panel's left half): what a
//! rule does by itself, to compare with what it does inside the pipeline.

use super::memo::StageMemo;
use super::min_p::min_p_mask;
use super::raw::RawDistribution;
use super::settings::RuleSettings;
use super::softmax::{Softmax, argmax};
use super::stage::Stage;
use super::temperature::{Tempered, scale_by_temperature};

/// "greedy", "temperature" (at `s.temperature`), then "top_k", "top_p",
/// "min_p" at tau = 1 with `s`'s values (a rule that is off keeps every
/// token). The columns no temperature changes come from `memo` when it holds
/// them for the same values.
pub(crate) fn rules_alone(raw: &RawDistribution, tempered: &Option<Tempered>, s: &RuleSettings, memo: &StageMemo) -> Vec<Stage> {
    vec![
        memo.greedy(|| greedy(raw)),
        temperature(raw, tempered, s.temperature),
        memo.top_k(s.top_k, || raw.truncated("top_k", &raw.top_k_mask(s.top_k))),
        memo.top_p(s.top_p, || raw.truncated("top_p", &raw.top_p_mask(s.top_p))),
        memo.min_p(s.min_p, || raw.truncated("min_p", &min_p_mask(&raw.probs, s.min_p))),
    ]
}

/// The "greedy" column: all the mass on the raw argmax.
fn greedy(raw: &RawDistribution) -> Stage {
    let mut one_hot = vec![0.0; raw.probs.len()];
    one_hot[argmax(&raw.logits)] = 1.0;
    Stage::with_entropy("greedy", one_hot, 0.0, &raw.probs)
}

/// The "temperature" column: softmax(raw / tau).
fn temperature(raw: &RawDistribution, tempered: &Option<Tempered>, tau: f64) -> Stage {
    match tempered {
        Some(t) => {
            let softmax = Softmax { probs: t.softmax.probs.clone(), log_norm: t.softmax.log_norm };
            Stage::from_softmax("temperature", softmax, &t.logits, &raw.probs).0
        }
        None if tau == 1.0 => raw.stage.renamed("temperature"),
        None => Stage::from_logits("temperature", &scale_by_temperature(&raw.logits, tau), &raw.probs),
    }
}
