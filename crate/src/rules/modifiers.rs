//! The stages that change logits from the history and the settings, never
//! from the distribution: the sequence bias, the penalties, no-repeat-ngram,
//! the bias and bans, DRY. One function says what each does to a logits
//! vector, for the memoised prefix and for a user's chain that puts one later.

use super::bias::apply_bias_and_bans;
use super::chain::StageKind;
use super::dry::Dry;
use super::no_repeat_ngram::banned_by_ngrams;
use super::penalties::{penalize_presence_frequency, penalize_repetition, select_recent};
use super::sequence_bias::sequence_biases;
use super::settings::RuleSettings;
use super::state::StepInputs;

/// The logits after `kind`, with how many tokens it touched; `None` when
/// the stage is off or changes nothing here (the stage is then the one before).
pub(crate) fn modified(kind: StageKind, z: &[f64], history: &[u32], s: &RuleSettings, inputs: &StepInputs) -> Option<(Vec<f64>, usize)> {
    match kind {
        StageKind::Penalties => {
            let recent = select_recent(history, s.penalty_window);
            let on = !recent.is_empty()
                && (s.repetition_penalty != 1.0 || s.presence_penalty != 0.0 || s.frequency_penalty != 0.0);
            on.then(|| {
                let z = penalize_repetition(z, recent, s.repetition_penalty, s.penalty_mode);
                (penalize_presence_frequency(&z, recent, s.presence_penalty, s.frequency_penalty), recent.len())
            })
        }
        StageKind::BiasBans => (!s.logit_bias.is_empty() || !s.banned.is_empty())
            .then(|| (apply_bias_and_bans(z, &s.logit_bias, &s.banned), s.logit_bias.len() + s.banned.len())),
        StageKind::SequenceBias => {
            let biases = sequence_biases(history, &s.sequence_bias);
            (!biases.is_empty()).then(|| (apply_bias_and_bans(z, &biases, &[]), biases.len()))
        }
        StageKind::NoRepeatNgram => {
            let banned: Vec<u32> = banned_by_ngrams(history, s.no_repeat_ngram_size).into_iter().collect();
            (!banned.is_empty()).then(|| (apply_bias_and_bans(z, &[], &banned), banned.len()))
        }
        StageKind::Dry => {
            let penalties = dry_of(s).penalties(history, &inputs.dry_breakers);
            (!penalties.is_empty()).then(|| {
                let minus: Vec<(u32, f64)> = penalties.iter().map(|&(id, p)| (id, -p)).collect();
                (apply_bias_and_bans(z, &minus, &[]), minus.len())
            })
        }
        _ => None,
    }
}

/// The DRY settings of `s`.
pub(crate) fn dry_of(s: &RuleSettings) -> Dry {
    Dry {
        multiplier: s.dry_multiplier,
        base: s.dry_base,
        allowed_length: s.dry_allowed_length,
        penalty_last_n: s.dry_penalty_last_n,
    }
}
