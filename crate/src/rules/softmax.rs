//! Softmax, entropy and argmax: the measurements every stage reports.

/// Numerically stable softmax over a logits slice.
///
/// - `-inf` logits get probability exactly 0 (banned or truncated tokens).
/// - If every logit is `-inf` nothing is possible: the result is all zeros.
///   The pipeline turns that case into a clear error before it reaches here.
/// - If some logits are `+inf`, they share the mass equally (the limit of the
///   finite case); the pipeline refuses `+inf` input, so this is a guard only.
/// - NaN inputs are refused by the pipeline; here a NaN makes no promise.
pub fn softmax(logits: &[f64]) -> Vec<f64> {
    let max = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if max == f64::NEG_INFINITY {
        return vec![0.0; logits.len()];
    }
    if max == f64::INFINITY {
        let ties = logits.iter().filter(|&&z| z == f64::INFINITY).count() as f64;
        return logits
            .iter()
            .map(|&z| if z == f64::INFINITY { 1.0 / ties } else { 0.0 })
            .collect();
    }
    // Subtracting the max keeps every exponent <= 0: no overflow at tau = 1e-4.
    let exps: Vec<f64> = logits.iter().map(|&z| (z - max).exp()).collect();
    let total: f64 = exps.iter().sum();
    exps.into_iter().map(|e| e / total).collect()
}

/// Shannon entropy in nats, with the convention 0 · ln 0 = 0.
pub fn entropy_nats(p: &[f64]) -> f64 {
    let h: f64 = p
        .iter()
        .filter(|&&pi| pi > 0.0)
        .map(|&pi| -pi * pi.ln())
        .sum();
    // A one-hot gives -0.0 (or a last-bit negative): report a clean 0.
    // (`f64::max` may keep -0.0, hence the comparison.)
    if h > 0.0 { h } else { 0.0 }
}

/// Shannon entropy in bits.
pub fn entropy_bits(p: &[f64]) -> f64 {
    entropy_nats(p) / std::f64::consts::LN_2
}

/// Index of the largest value; ties break toward the first index, as in the
/// course ("argmax breaks the tie toward the first index"). NaNs are never
/// chosen. An empty slice gives 0 (the pipeline refuses empty logits).
pub fn argmax(logits: &[f64]) -> usize {
    let mut best = 0;
    let mut best_value = f64::NEG_INFINITY;
    let mut found = false;
    for (i, &z) in logits.iter().enumerate() {
        if z.is_nan() {
            continue;
        }
        if !found || z > best_value {
            best = i;
            best_value = z;
            found = true;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_of_equal_logits_is_uniform() {
        let p = softmax(&[2.0, 2.0, 2.0, 2.0]);
        for pi in p {
            assert!((pi - 0.25).abs() < 1e-15);
        }
    }

    #[test]
    fn softmax_gives_zero_to_minus_infinity_and_handles_all_banned() {
        let p = softmax(&[0.0, f64::NEG_INFINITY, 0.0]);
        assert_eq!(p[1], 0.0);
        assert!((p[0] - 0.5).abs() < 1e-15);
        assert_eq!(softmax(&[f64::NEG_INFINITY; 3]), vec![0.0; 3]);
    }

    #[test]
    fn softmax_survives_huge_logits() {
        let p = softmax(&[1e300, 0.0]);
        assert_eq!(p, vec![1.0, 0.0]);
    }

    #[test]
    fn entropy_of_uniform_is_log_n() {
        let p = vec![0.125; 8];
        assert!((entropy_bits(&p) - 3.0).abs() < 1e-12);
        assert!((entropy_nats(&p) - 8f64.ln()).abs() < 1e-12);
        assert_eq!(entropy_bits(&[0.0, 1.0, 0.0]), 0.0);
        assert!(
            entropy_nats(&[1.0]).is_sign_positive(),
            "a one-hot must report +0, not -0"
        );
    }

    #[test]
    fn argmax_breaks_ties_toward_first_index() {
        assert_eq!(argmax(&[1.0, 3.0, 3.0, 2.0]), 1);
        assert_eq!(argmax(&[f64::NEG_INFINITY, f64::NEG_INFINITY]), 0);
        assert_eq!(argmax(&[f64::NAN, -5.0]), 1);
    }
}
