//! Min-p: keep the tokens at least `min_p` times as likely as the top one.

/// Returns the mask `p_i >= min_p * p_max` (and `p_i > 0`). `min_p = 0` keeps
/// every possible token; the top token always passes since `min_p <= 1`.
pub fn min_p_mask(probs: &[f64], min_p: f64) -> Vec<bool> {
    let p_max = super::softmax::max_value(probs).max(0.0);
    let threshold = min_p * p_max;
    probs.iter().map(|&p| p > 0.0 && p >= threshold).collect()
}

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
