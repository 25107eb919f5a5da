//! Penalties from recent history: the repetition penalty (HF / the course)
//! and OpenAI-style presence and frequency penalties.

use super::fields::{Control, Field, Group, Range, slot};
use super::settings::{MAX_PENALTY_WINDOW, MAX_PRESENCE_FREQUENCY, MAX_REPETITION_PENALTY};
use super::spec::{Apply, StageSpec, Takes};

use std::collections::BTreeMap;

use super::saturate::saturated;
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
            out[id] = saturated(if z > 0.0 { z / rho } else { z * rho }, z);
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
        out[id] = saturated(out[id] - (presence + frequency * count as f64), out[id]);
    }
    out
}

/// The settings the stage owns (repetition_penalty, penalty_window, presence_penalty, frequency_penalty).
const FIELDS: &[Field] = &[
    Field::new(
        "repetition_penalty",
        slot!(repetition_penalty: f64),
        Range { min_excluded: true, ..Range::closed(0.0, MAX_REPETITION_PENALTY) },
        "1 = off; below 1 rewards repetition",
        "Divide positive / multiply negative logits of recent tokens",
    )
    .control(Control::slider("Repetition penalty ρ", "1 = off; divides positive logits, multiplies negative ones", 3.0, 0.05, Group::Penalties)),
    Field::new(
        "penalty_window",
        slot!(penalty_window: usize),
        Range::integers(0.0, MAX_PENALTY_WINDOW as f64),
        "0 = the whole history",
        "How many of the latest tokens the penalties look at",
    )
    .with_flag("window")
    .control(Control::slider("Penalty window", "last w tokens (prompt included); 0 = all", 256.0, 1.0, Group::Penalties)),
    Field::new(
        "presence_penalty",
        slot!(presence_penalty: f64),
        Range::closed(-MAX_PRESENCE_FREQUENCY, MAX_PRESENCE_FREQUENCY),
        "0 = off; OpenAI takes [-2, 2], llama.cpp and vLLM any value",
        "Subtract this once from each distinct recent token",
    )
    .control(Control::slider("Presence penalty", "subtracted once from every token already seen", 2.0, 0.05, Group::Penalties)),
    Field::new(
        "frequency_penalty",
        slot!(frequency_penalty: f64),
        Range::closed(-MAX_PRESENCE_FREQUENCY, MAX_PRESENCE_FREQUENCY),
        "0 = off; OpenAI takes [-2, 2], llama.cpp and vLLM any value",
        "Subtract this per occurrence of a recent token",
    )
    .control(Control::slider("Frequency penalty", "subtracted per occurrence", 2.0, 0.05, Group::Penalties)),
];

/// The stage: the repetition penalty, then presence and frequency.
pub(crate) const SPEC: StageSpec = StageSpec {
    name: "penalties",
    label: "penalties",
    what: "repetition penalty (divide positive, multiply negative logits of recent tokens), then presence and frequency penalties, over the last penalty_window tokens",
    engines: "llama.cpp penalties (repeat_penalty over penalty_last_n = penalty_window, default 64); Hugging Face repetition_penalty looks at the whole input: penalty_window = 0; OpenAI presence/frequency",
    reads: &["repetition_penalty", "penalty_window", "penalty_mode", "presence_penalty", "frequency_penalty"],
    switches: &["repetition_penalty", "presence_penalty", "frequency_penalty"],
    fields: FIELDS,
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
