//! Hugging Face's truncation sampling (Hewitt et al., 2022): ε-sampling drops
//! tokens below a fixed probability, η-sampling below one that falls with
//! the entropy. Both keep every token at or above the `min_keep`-th largest
//! probability (ties with it kept, as `TopKLogitsWarper` does).

use super::fields::{Control, Field, Group, Range, slot};
use super::spec::{AloneCut, Apply, StageSpec, Takes};

use super::min_keep::kth_largest;

/// Keeps `p_i >= epsilon`, and at least the `min_keep` most probable.
pub fn epsilon_mask(probs: &[f64], epsilon: f64, min_keep: usize) -> Vec<bool> {
    cut_below(probs, epsilon, min_keep)
}

/// The η threshold: `min(eta, sqrt(eta) * exp(-H))`, H in nats.
pub fn eta_threshold(probs: &[f64], eta: f64) -> f64 {
    let entropy: f64 = probs.iter().filter(|&&p| p > 0.0).map(|&p| -p * p.ln()).sum();
    eta.min(eta.sqrt() * (-entropy).exp())
}

/// Keeps `p_i >= eta_threshold`, and at least the `min_keep` most probable.
pub fn eta_mask(probs: &[f64], eta: f64, min_keep: usize) -> Vec<bool> {
    cut_below(probs, eta_threshold(probs, eta), min_keep)
}

fn cut_below(probs: &[f64], threshold: f64, min_keep: usize) -> Vec<bool> {
    let floor = kth_largest(probs, min_keep.max(1));
    probs.iter().map(|&p| p > 0.0 && (p >= threshold || p >= floor)).collect()
}

/// The settings the stage owns (epsilon_cutoff).
const FIELDS_EPSILON: &[Field] = &[
    Field::new(
        "epsilon_cutoff",
        slot!(epsilon_cutoff: f64),
        Range { max_excluded: true, ..Range::closed(0.0, 1.0) },
        "0 = off",
        "Drop tokens below this probability",
    )
    .control(Control::slider("ε-cutoff", "drop tokens with p below ε; 0 = off", 0.1, 0.001, Group::Samplers)),
];

/// The stage: epsilon sampling.
pub(crate) const SPEC_EPSILON: StageSpec = StageSpec {
    name: "epsilon_cutoff",
    label: "ε-cutoff",
    what: "drops tokens with probability below epsilon (at least min_keep stay)",
    engines: "Hugging Face (epsilon_cutoff)",
    reads: &["epsilon_cutoff", "min_keep"],
    switches: &["epsilon_cutoff"],
    fields: FIELDS_EPSILON,
    is_on: |s| s.epsilon_cutoff > 0.0,
    apply: Apply::Cut(|c| epsilon_mask(c.probs, c.s.epsilon_cutoff, c.s.min_keep)),
    alone: Some(AloneCut {
        always: false,
        key: |s, _| vec![s.epsilon_cutoff],
        mask: |raw, s, _| epsilon_mask(&raw.probs, s.epsilon_cutoff, s.min_keep),
    }),
    takes: Takes::Nothing,
    shown_when_off: false,
};

/// The settings the stage owns (eta_cutoff).
const FIELDS_ETA: &[Field] = &[
    Field::new(
        "eta_cutoff",
        slot!(eta_cutoff: f64),
        Range { max_excluded: true, ..Range::closed(0.0, 1.0) },
        "0 = off",
        "Eta sampling: drop below min(eta, sqrt(eta) exp(-H))",
    )
    .control(Control::slider("η-cutoff", "drop tokens with p below min(η, √η·e^−H); 0 = off", 0.1, 0.001, Group::Samplers)),
];

/// The stage: eta sampling.
pub(crate) const SPEC_ETA: StageSpec = StageSpec {
    name: "eta_cutoff",
    label: "η-cutoff",
    what: "drops tokens below min(eta, sqrt(eta) * exp(-entropy)) (at least min_keep stay)",
    engines: "Hugging Face (eta_cutoff)",
    reads: &["eta_cutoff", "min_keep"],
    switches: &["eta_cutoff"],
    fields: FIELDS_ETA,
    is_on: |s| s.eta_cutoff > 0.0,
    apply: Apply::Cut(|c| eta_mask(c.probs, c.s.eta_cutoff, c.s.min_keep)),
    alone: Some(AloneCut {
        always: false,
        key: |s, _| vec![s.eta_cutoff],
        mask: |raw, s, _| eta_mask(&raw.probs, s.eta_cutoff, s.min_keep),
    }),
    takes: Takes::Nothing,
    shown_when_off: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epsilon_drops_below_the_cutoff_but_keeps_min_keep() {
        let probs = [0.6, 0.3, 0.06, 0.04];
        assert_eq!(epsilon_mask(&probs, 0.05, 1), vec![true, true, true, false]);
        assert_eq!(epsilon_mask(&probs, 0.9, 1), vec![true, false, false, false]);
        assert_eq!(epsilon_mask(&probs, 0.9, 2), vec![true, true, false, false]);
    }

    /// By hand: p = (0.6, 0.3, 0.06, 0.04), H = 0.96525 nats; with eta = 0.1,
    /// sqrt(0.1) * exp(-0.96525) = 0.12045 > 0.1, so the threshold is 0.1.
    /// With eta = 0.5: sqrt(0.5) * 0.38089 = 0.26933 < 0.5.
    #[test]
    fn eta_threshold_worked_example() {
        let probs = [0.6, 0.3, 0.06, 0.04];
        assert!((eta_threshold(&probs, 0.1) - 0.1).abs() < 1e-12);
        assert!((eta_threshold(&probs, 0.5) - 0.26933).abs() < 1e-5);
        assert_eq!(eta_mask(&probs, 0.5, 1), vec![true, true, false, false]);
    }
}
