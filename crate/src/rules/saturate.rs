//! Arithmetic on a logit that keeps a finite logit finite.
//!
//! In the rules, `-inf` means "ruled out" (a ban, a cut); only a rule that
//! rules a token out may write it. A penalty or a temperature applied to a
//! finite but huge logit (an f64 from a caller, not a model's f32) can
//! overflow to an infinity instead: every possible token then became `-inf`
//! and the stage's probabilities summed to 0, or one became `+inf` and the
//! softmax gave NaN (found by `pipeline_props`: logits down to -4.5e299, a
//! repetition penalty of 51 applied per occurrence, temperature 1e-4). Such
//! a result is held at the largest finite value of its sign instead.

/// `y`, the result of arithmetic on the logit `z`: held at ±`f64::MAX` where
/// a finite `z` overflowed to an infinity.
pub(crate) fn saturated(y: f64, z: f64) -> f64 {
    if y.is_infinite() && z.is_finite() { f64::MAX.copysign(y) } else { y }
}

#[cfg(test)]
mod tests {
    use super::saturated;

    #[test]
    fn only_an_overflow_of_a_finite_logit_is_held() {
        assert_eq!(saturated(-4.5e299 * 1e10, -4.5e299), -f64::MAX);
        assert_eq!(saturated(1e300 / 1e-100, 1e300), f64::MAX);
        assert_eq!(saturated(f64::NEG_INFINITY * 2.0, f64::NEG_INFINITY), f64::NEG_INFINITY);
        assert_eq!(saturated(-3.0 * 2.0, -3.0), -6.0);
    }
}
