//! Top-n-σ (Tang et al., 2024; llama.cpp's `top_n_sigma`): keep the tokens
//! whose logit lies within `n` standard deviations of the largest logit. The
//! mean and the (population) standard deviation are taken over the finite
//! logits, as llama.cpp does; on logits, so it reads the stage's logits.

use super::fields::{Control, Field, Group, Range, slot};
use super::settings::MAX_TOP_N_SIGMA;
use super::min_keep::keep_at_least;
use super::spec::{AloneCut, Apply, StageSpec, Takes};

/// Keeps `z_i >= max - n * std` (finite `z_i`); `n <= 0` keeps every finite logit.
pub fn top_n_sigma_mask(logits: &[f64], n: f64) -> Vec<bool> {
    let finite = || logits.iter().copied().filter(|z| z.is_finite());
    let count = finite().count();
    if n <= 0.0 || count <= 1 {
        return logits.iter().map(|z| z.is_finite()).collect();
    }
    let max = finite().fold(f64::NEG_INFINITY, f64::max);
    let mean = finite().sum::<f64>() / count as f64;
    let var = finite().map(|z| (z - mean) * (z - mean)).sum::<f64>() / count as f64;
    let floor = max - n * var.sqrt();
    logits.iter().map(|&z| z.is_finite() && z >= floor).collect()
}

/// The settings the stage owns (top_n_sigma).
const FIELDS: &[Field] = &[
    Field::new(
        "top_n_sigma",
        slot!(top_n_sigma: f64),
        Range::closed(0.0, MAX_TOP_N_SIGMA),
        "0 = off",
        "Keep logits within n standard deviations of the top one",
    )
    .with_flag("top-nsigma")
    .with_param("top_nsigma")
    .control(Control::slider("Top-n-σ", "keep logits within n standard deviations of the largest; 0 = off", 5.0, 0.05, Group::Samplers)),
];

/// The stage: top-n-sigma, on the logits as they flow.
pub(crate) const SPEC: StageSpec = StageSpec {
    name: "top_n_sigma",
    label: "top-n-σ",
    what: "keeps tokens whose logit is within n standard deviations of the largest logit",
    engines: "llama.cpp (top_n_sigma; <= 0 = off there, 0 = off here)",
    reads: &["top_n_sigma", "min_keep"],
    switches: &["top_n_sigma"],
    fields: FIELDS,
    is_on: |s| s.top_n_sigma > 0.0,
    apply: Apply::Cut(|c| c.at_least(top_n_sigma_mask(c.logits, c.s.top_n_sigma))),
    alone: Some(AloneCut {
        always: false,
        key: |s, _| vec![s.top_n_sigma],
        mask: |raw, s, _| keep_at_least(top_n_sigma_mask(&raw.logits, s.top_n_sigma), &raw.probs, s.min_keep),
    }),
    takes: Takes::Nothing,
    shown_when_off: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: logits (4, 2, 0, -2): mean 1, variance (9+1+1+9)/4 = 5,
    /// std 2.2361; n = 1 keeps z >= 1.7639: tokens 0 and 1.
    #[test]
    fn worked_example() {
        let z = [4.0, 2.0, 0.0, -2.0, f64::NEG_INFINITY];
        assert_eq!(top_n_sigma_mask(&z, 1.0), vec![true, true, false, false, false]);
        assert_eq!(top_n_sigma_mask(&z, 2.0), vec![true, true, true, false, false]);
        assert_eq!(top_n_sigma_mask(&z, 0.0), vec![true, true, true, true, false]);
    }
}
