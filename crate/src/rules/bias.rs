//! Logit bias and banned tokens.

use super::fields::{Field, Range, Slot};
use super::saturate::saturated;
use super::settings::MAX_ABS_BIAS;
use super::spec::{Apply, StageSpec, Takes};

/// Adds each `(id, b)` bias to its logit (repeated ids add up), then sets every
/// banned id to `-inf` so it gets probability exactly 0. Ids outside the
/// vocabulary are skipped here; `RuleSettings::validate` refuses them.
pub fn apply_bias_and_bans(logits: &[f64], bias: &[(u32, f64)], banned: &[u32]) -> Vec<f64> {
    let mut out = logits.to_vec();
    for &(id, b) in bias {
        if let Some(z) = out.get_mut(id as usize) {
            *z = saturated(*z + b, *z);
        }
    }
    for &id in banned {
        if let Some(z) = out.get_mut(id as usize) {
            *z = f64::NEG_INFINITY;
        }
    }
    out
}

/// The settings the stage owns (logit_bias).
const FIELDS: &[Field] = &[
    Field::new(
        "logit_bias",
        Slot::List,
        Range::closed(-MAX_ABS_BIAS, MAX_ABS_BIAS),
        "",
        "Each logit bias",
    ),
];

/// The stage: the logit biases, then the bans.
pub(crate) const SPEC: StageSpec = StageSpec {
    name: "bias_bans",
    label: "bias / bans",
    what: "adds each logit bias, then gives banned tokens probability 0",
    engines: "OpenAI logit_bias; llama.cpp logit_bias (applied first in its chain); Hugging Face suppress_tokens (= banned)",
    reads: &["logit_bias", "banned"],
    switches: &["logit_bias", "banned"],
    fields: FIELDS,
    is_on: |s| !s.logit_bias.is_empty() || !s.banned.is_empty(),
    apply: Apply::Modifier(|z, _, s, _| Some((apply_bias_and_bans(z, &s.logit_bias, &s.banned), s.logit_bias.len() + s.banned.len()))),
    alone: None,
    takes: Takes::Nothing,
    shown_when_off: true,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bias_adds_and_bans_win() {
        let out = apply_bias_and_bans(&[1.0, 2.0, 3.0], &[(0, 0.5), (2, 10.0)], &[2]);
        assert_eq!(out, vec![1.5, 2.0, f64::NEG_INFINITY]);
    }
}
