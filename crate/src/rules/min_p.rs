//! Min-p: keep the tokens at least `min_p` times as likely as the top one.

use super::fields::{Control, Field, Group, Range, slot};
use super::settings::UNBOUNDED;
use super::min_keep::keep_at_least;
use super::probs::Probs;
use super::spec::{AloneCut, Apply, StageSpec, Takes};

/// Returns the mask `p_i >= min_p * p_max` (and `p_i > 0`). `min_p = 0` keeps
/// every possible token; above 1 none passes (`min_keep` then keeps the top).
pub fn min_p_mask(probs: &[f64], min_p: f64) -> Vec<bool> {
    let p_max = super::softmax::max_value(probs).max(0.0);
    let threshold = min_p * p_max;
    probs.iter().map(|&p| p > 0.0 && p >= threshold).collect()
}

/// `min_p_mask` where `probs` is 0 outside `ids`: only those are read.
fn min_p_mask_among(probs: &Probs, min_p: f64, ids: &[u32]) -> Vec<bool> {
    let p_max = ids.iter().map(|&i| probs.get(i as usize)).fold(0.0, |max, p| if p > max { p } else { max });
    let threshold = min_p * p_max;
    let mut mask = vec![false; probs.len()];
    for &i in ids {
        let p = probs.get(i as usize);
        mask[i as usize] = p > 0.0 && p >= threshold;
    }
    mask
}

/// The settings the stage owns (min_p).
const FIELDS: &[Field] = &[
    Field::new(
        "min_p",
        slot!(min_p: f64),
        Range::closed(0.0, UNBOUNDED),
        "0 = off; above 1 only min_keep tokens stay, as in llama.cpp",
        "Keep tokens with p >= min_p * p_max",
    )
    .control(Control::slider("Min-p", "drop tokens below min-p × p_max; 0 = off", 1.0, 0.01, Group::Rules)),
];

/// The stage: min-p (its alone column is measured whatever min_p, as the course shows it).
pub(crate) const SPEC: StageSpec = StageSpec {
    name: "min_p",
    label: "min-p",
    what: "keeps tokens at least min_p times as likely as the top one (at least min_keep)",
    engines: "llama.cpp, Hugging Face",
    reads: &["min_p", "min_keep"],
    switches: &["min_p"],
    fields: FIELDS,
    is_on: |s| s.min_p > 0.0,
    apply: Apply::Cut(|c| {
        c.at_least(match c.support {
            Some(ids) => min_p_mask_among(c.probs, c.s.min_p, ids),
            None => min_p_mask(c.probs, c.s.min_p),
        })
    }),
    alone: Some(AloneCut {
        always: true,
        key: |s, _| vec![s.min_p],
        mask: |raw, s, _| keep_at_least(min_p_mask(&raw.probs, s.min_p), &raw.probs, s.min_keep),
    }),
    takes: Takes::Nothing,
    shown_when_off: true,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_tokens_above_the_scaled_threshold() {
        let kept = min_p_mask(&[0.5, 0.3, 0.15, 0.05], 0.3);
        assert_eq!(kept, vec![true, true, true, false]);
    }

    #[test]
    fn min_p_one_keeps_only_the_tied_maxima() {
        assert_eq!(min_p_mask(&[0.4, 0.2, 0.4], 1.0), vec![true, false, true]);
    }
}
