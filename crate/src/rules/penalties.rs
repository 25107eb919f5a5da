//! Penalties from recent history: the repetition penalty (HF / the course)
//! and OpenAI-style presence and frequency penalties.

use super::kind::StageKind;
use super::spec::{Apply, StageSpec, Takes};

use std::collections::BTreeMap;

use super::settings::PenaltyMode;

/// The last `window` tokens of `history`; `window = 0` means the whole history.
pub fn select_recent(history: &[u32], window: usize) -> &[u32] {
    if window == 0 || window >= history.len() {
        history
    } else {
        &history[history.len() - window..]
    }
}

/// How often each token id occurs in `recent`, ignoring ids outside the
/// vocabulary (the pipeline refuses those before calling).
fn count_occurrences(recent: &[u32], vocab_size: usize) -> BTreeMap<usize, u32> {
    let mut counts = BTreeMap::new();
    for &id in recent {
        if (id as usize) < vocab_size {
            *counts.entry(id as usize).or_insert(0) += 1;
        }
    }
    counts
}

/// Pushes the logit of every recent token away from the top: divided by `rho`
/// when positive, multiplied when negative (so it always becomes less likely;
/// a zero logit stays zero). `PerToken` applies this once per distinct recent
/// token (HF `RepetitionPenaltyLogitsProcessor`); `PerOccurrence` once per
/// occurrence, as the course's demo does (a token seen twice is penalised twice).
pub fn penalize_repetition(
    logits: &[f64],
    recent: &[u32],
    rho: f64,
    mode: PenaltyMode,
) -> Vec<f64> {
    let mut out = logits.to_vec();
    for (id, count) in count_occurrences(recent, logits.len()) {
        let times = match mode {
            PenaltyMode::PerToken => 1,
            PenaltyMode::PerOccurrence => count,
        };
        for _ in 0..times {
            let z = out[id];
            out[id] = if z > 0.0 { z / rho } else { z * rho };
        }
    }
    out
}

/// Subtracts `presence` once from every distinct recent token and
/// `frequency * count` for its number of occurrences (OpenAI's definition).
pub fn penalize_presence_frequency(
    logits: &[f64],
    recent: &[u32],
    presence: f64,
    frequency: f64,
) -> Vec<f64> {
    let mut out = logits.to_vec();
    for (id, count) in count_occurrences(recent, logits.len()) {
        out[id] -= presence + frequency * count as f64;
    }
    out
}

/// The stage: the repetition penalty, then presence and frequency.
pub(crate) const SPEC: StageSpec = StageSpec {
    kind: StageKind::Penalties,
    name: "penalties",
    label: "penalties",
    what: "repetition penalty (divide positive, multiply negative logits of recent tokens), then presence and frequency penalties, over the last penalty_window tokens",
    engines: "llama.cpp penalties (repeat_penalty over penalty_last_n = penalty_window, default 64); Hugging Face repetition_penalty looks at the whole input: penalty_window = 0; OpenAI presence/frequency",
    reads: &["repetition_penalty", "penalty_window", "penalty_mode", "presence_penalty", "frequency_penalty"],
    switches: &["repetition_penalty", "presence_penalty", "frequency_penalty"],
    is_on: |s| s.repetition_penalty != 1.0 || s.presence_penalty != 0.0 || s.frequency_penalty != 0.0,
    apply: Apply::Modifier(|z, history, s, _| {
        let recent = select_recent(history, s.penalty_window);
        (!recent.is_empty()).then(|| {
            let z = penalize_repetition(z, recent, s.repetition_penalty, s.penalty_mode);
            (penalize_presence_frequency(&z, recent, s.presence_penalty, s.frequency_penalty), recent.len())
        })
    }),
    alone: None,
    takes: Takes::Nothing,
    shown_when_off: true,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_window_takes_the_tail() {
        let h = [1, 2, 3, 4, 5];
        assert_eq!(select_recent(&h, 2), &[4, 5]);
        assert_eq!(select_recent(&h, 0), &h);
        assert_eq!(select_recent(&h, 9), &h);
    }

    #[test]
    fn repetition_penalty_divides_positive_and_multiplies_negative() {
        let z = [4.0, -3.0, 1.0, 0.0];
        let out = penalize_repetition(&z, &[0, 1, 3], 2.0, PenaltyMode::PerToken);
        assert_eq!(out, vec![2.0, -6.0, 1.0, 0.0]);
    }

    #[test]
    fn per_occurrence_penalises_each_repeat() {
        let z = [8.0, 1.0];
        let once = penalize_repetition(&z, &[0, 0], 2.0, PenaltyMode::PerToken);
        let twice = penalize_repetition(&z, &[0, 0], 2.0, PenaltyMode::PerOccurrence);
        assert_eq!(once[0], 4.0);
        assert_eq!(twice[0], 2.0);
    }

    #[test]
    fn presence_once_frequency_per_count() {
        let out = penalize_presence_frequency(&[1.0, 1.0, 1.0], &[0, 0, 2], 0.5, 0.25);
        assert_eq!(out, vec![1.0 - 0.5 - 0.5, 1.0, 1.0 - 0.5 - 0.25]);
    }

    #[test]
    fn out_of_vocabulary_history_is_ignored_not_a_panic() {
        let out = penalize_repetition(&[1.0], &[7], 2.0, PenaltyMode::PerToken);
        assert_eq!(out, vec![1.0]);
    }
}
