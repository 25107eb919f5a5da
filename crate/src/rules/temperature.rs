//! Temperature: divide the logits by tau before the softmax.

use super::fields::{Control, Field, Group, Range, slot};
use super::settings::{MAX_TEMPERATURE, MIN_TEMPERATURE};
use super::spec::{Apply, StageSpec, Takes};

use super::probs::Probs;
use super::raw::RawDistribution;
use super::saturate::saturated;
use super::softmax::{Nearby, Softmax, argmax, softmax_parts};

/// Returns `logits / tau`. `tau = 0` means greedy: the argmax keeps its logit
/// and every other token becomes `-inf` (a one-hot after the softmax; ties go
/// to the first index, like `argmax`). `-inf` stays `-inf` at any tau.
///
/// tau is validated to be 0 or at least `MIN_TEMPERATURE` (1e-100) by
/// `RuleSettings::validate`; f32 model output divided by it stays finite in
/// f64, a larger logit is held finite (`saturated`), and the softmax
/// subtracts the max, so neither end produces NaN.
pub fn scale_by_temperature(logits: &[f64], tau: f64) -> Vec<f64> {
    if tau == 0.0 {
        let best = argmax(logits);
        return logits
            .iter()
            .enumerate()
            .map(|(i, &z)| if i == best { z } else { f64::NEG_INFINITY })
            .collect();
    }
    logits.iter().map(|&z| saturated(z / tau, z)).collect()
}

/// softmax(raw / tau) with the scaled logits, for tau other than 0 and 1,
/// measured once per call of the rules: the "temperature" rule alone, and
/// the distribution the pipeline's temperature stage is near (the penalties
/// and biases change only a few tokens).
pub(crate) struct Tempered {
    pub(crate) logits: Vec<f64>,
    /// softmax(logits), shared with the "temperature" rule alone's stage.
    pub(crate) probs: Probs,
    pub(crate) log_norm: f64,
}

impl Tempered {
    pub(crate) fn new(raw: &RawDistribution, tau: f64) -> Option<Self> {
        if tau == 0.0 || tau == 1.0 {
            return None;
        }
        let logits = scale_by_temperature(&raw.logits, tau);
        let Softmax { probs, log_norm } = softmax_parts(&logits);
        Some(Self { logits, probs: Probs::whole(probs), log_norm })
    }

    pub(crate) fn nearby(&self) -> Nearby<'_> {
        Nearby { logits: &self.logits, probs: &self.probs, log_norm: self.log_norm }
    }
}

/// The settings the stage owns (temperature).
const FIELDS: &[Field] = &[
    Field::new(
        "temperature",
        slot!(temperature: f64),
        Range { smallest_positive: Some(MIN_TEMPERATURE), ..Range::closed(0.0, MAX_TEMPERATURE) },
        "0 = greedy",
        "Temperature",
    )
    .control(Control::slider("Temperature τ", "0 = greedy; 1 = the model's own distribution", 3.0, 0.01, Group::Rules)),
];

/// The stage: temperature (the pipeline measures it from `Tempered`).
pub(crate) const SPEC: StageSpec = StageSpec {
    name: "temperature",
    label: "temperature",
    what: "divides the logits by tau (0 = greedy)",
    engines: "every engine; Hugging Face applies it first, llama.cpp last",
    reads: &["temperature"],
    switches: &["temperature"],
    fields: FIELDS,
    is_on: |s| s.temperature != 1.0,
    apply: Apply::Temperature,
    alone: None,
    takes: Takes::Nothing,
    shown_when_off: true,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::softmax::softmax;

    #[test]
    fn zero_temperature_is_one_hot_at_first_argmax() {
        let p = softmax(&scale_by_temperature(&[1.0, 4.0, 4.0, -2.0], 0.0));
        assert_eq!(p, vec![0.0, 1.0, 0.0, 0.0]);
    }

    #[test]
    fn temperature_one_is_the_identity() {
        let z = [0.3, -1.7, 2.25];
        assert_eq!(scale_by_temperature(&z, 1.0), z.to_vec());
    }

    #[test]
    fn extreme_temperatures_stay_finite() {
        let z = [30.0, -30.0, 0.0, f64::NEG_INFINITY];
        for tau in [1e-4, 100.0] {
            let p = softmax(&scale_by_temperature(&z, tau));
            assert!(p.iter().all(|x| x.is_finite()));
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
    }
}
