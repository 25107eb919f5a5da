//! XTC, "exclude top choices" (llama.cpp's `xtc`): at a step where its coin
//! comes up (`coin <= probability`), every token with probability at least
//! `threshold` is removed except the least likely of them, so the model's
//! most obvious continuation gives way to another plausible one. It does
//! nothing when fewer than two tokens reach the threshold (so a threshold
//! above 0.5 never acts), or when the cut would leave fewer than `min_keep`.
//! The coin comes from the session's seeded RNG (`StepInputs::xtc_coin`).

use super::fields::{Control, Field, Group, Range, slot};
use super::spec::{AloneCut, Apply, StageSpec, Takes};

use super::ranking::{collect_candidates, compare_candidates};

/// The tokens XTC keeps. `coin = None` (a preview with no session, the rule
/// alone) shows the cut as if the coin came up.
pub fn xtc_mask(probs: &[f64], threshold: f64, probability: f64, coin: Option<f64>, min_keep: usize) -> Vec<bool> {
    let kept: Vec<bool> = probs.iter().map(|&p| p > 0.0).collect();
    if probability <= 0.0 || threshold > 0.5 || coin.is_some_and(|c| c > probability) {
        return kept;
    }
    let mut above: Vec<(f64, u32)> = collect_candidates(probs).into_iter().filter(|c| c.0 >= threshold).collect();
    let possible = kept.iter().filter(|&&k| k).count();
    if above.len() < 2 || possible - (above.len() - 1) < min_keep {
        return kept;
    }
    above.sort_unstable_by(compare_candidates);
    let mut mask = kept;
    for c in &above[..above.len() - 1] {
        mask[c.1 as usize] = false;
    }
    mask
}

/// The settings the stage owns (xtc_probability, xtc_threshold).
const FIELDS: &[Field] = &[
    Field::new(
        "xtc_probability",
        slot!(xtc_probability: f64),
        Range::closed(0.0, 1.0),
        "0 = off",
        "XTC: the chance it removes the top choices at a step",
    )
    .control(Control::slider("XTC probability", "chance per step that XTC removes the top choices; 0 = off", 1.0, 0.01, Group::Samplers)),
    Field::new(
        "xtc_threshold",
        slot!(xtc_threshold: f64),
        Range::closed(0.0, 1.0),
        "above 0.5 XTC does nothing",
        "XTC: the top choices are the tokens at least this likely",
    )
    .control(Control::slider("XTC threshold", "tokens at least this likely are top choices; all but the least likely of them go", 1.0, 0.01, Group::Samplers)),
];

/// The stage: XTC, with the step's coin (alone, as if it came up when there is none).
pub(crate) const SPEC: StageSpec = StageSpec {
    name: "xtc",
    label: "XTC",
    what: "exclude top choices: with probability xtc_probability (a coin from the seeded RNG) removes every token above xtc_threshold except the least likely of them",
    engines: "llama.cpp (xtc_probability, xtc_threshold; a threshold above 0.5 does nothing)",
    reads: &["xtc_probability", "xtc_threshold", "min_keep"],
    switches: &["xtc_probability"],
    fields: FIELDS,
    is_on: |s| s.xtc_probability > 0.0 && s.xtc_threshold <= 0.5,
    apply: Apply::Cut(|c| xtc_mask(c.probs, c.s.xtc_threshold, c.s.xtc_probability, c.inputs.xtc_coin, c.s.min_keep)),
    alone: Some(AloneCut {
        always: false,
        key: |s, inputs| vec![s.xtc_threshold, s.xtc_probability, inputs.xtc_coin.unwrap_or(-1.0)],
        mask: |raw, s, inputs| xtc_mask(&raw.probs, s.xtc_threshold, s.xtc_probability, inputs.xtc_coin, s.min_keep),
    }),
    takes: Takes::Coin,
    shown_when_off: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_the_top_choices_but_the_last_one_above_the_threshold() {
        let probs = [0.1, 0.4, 0.05, 0.3, 0.15];
        // 0.4, 0.3 and 0.15 reach 0.15: 0.4 and 0.3 go, 0.15 stays.
        assert_eq!(xtc_mask(&probs, 0.15, 1.0, Some(0.5), 1), vec![true, false, true, false, true]);
        // The coin did not come up.
        assert_eq!(xtc_mask(&probs, 0.15, 0.3, Some(0.5), 1), vec![true; 5]);
        // Only one token reaches 0.35: nothing to exclude.
        assert_eq!(xtc_mask(&probs, 0.35, 1.0, None, 1), vec![true; 5]);
        // min_keep larger than what would stay.
        assert_eq!(xtc_mask(&probs, 0.15, 1.0, None, 4), vec![true; 5]);
        // Above 0.5 XTC never acts.
        assert_eq!(xtc_mask(&[0.5, 0.5], 0.6, 1.0, None, 1), vec![true, true]);
    }
}
