//! The draw: one categorical sample by walking the CDF.

use super::probs::Probs;

/// Returns the first token whose cumulative probability exceeds `coin`
/// (`coin` from `Rng::next_f64`, in [0, 1)). Zero-probability tokens are
/// skipped, and if rounding leaves the total mass below `coin` the last
/// possible token is returned, so a zero-probability token is never drawn.
/// If no token is possible at all (every probability 0), returns 0; the
/// pipeline never produces such a distribution.
pub fn sample_inverse_cdf(probs: &[f64], coin: f64) -> usize {
    inverse_cdf(probs.iter().copied().enumerate(), coin)
}

/// `sample_inverse_cdf` of a stage's probabilities: over its few possible
/// tokens when it holds only those (the same sum in the same order: the
/// zeros it skips add nothing), else over the whole vector.
pub fn sample_inverse_cdf_of(probs: &Probs, coin: f64) -> usize {
    match probs.few_held() {
        Some((ids, values)) => inverse_cdf(ids.iter().map(|&i| i as usize).zip(values.iter().copied()), coin),
        None => sample_inverse_cdf(probs, coin),
    }
}

/// The first token, in id order, where the running sum of the positive
/// probabilities passes `coin`; the last possible one when rounding leaves
/// the whole sum at or below it.
fn inverse_cdf(probs: impl Iterator<Item = (usize, f64)>, coin: f64) -> usize {
    let mut cdf = 0.0;
    let mut last_possible = None;
    for (i, p) in probs {
        if p <= 0.0 {
            continue;
        }
        cdf += p;
        last_possible = Some(i);
        if coin < cdf {
            return i;
        }
    }
    last_possible.unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coin_selects_the_bucket_it_falls_in() {
        let probs = [0.25, 0.0, 0.5, 0.25];
        assert_eq!(sample_inverse_cdf(&probs, 0.0), 0);
        assert_eq!(sample_inverse_cdf(&probs, 0.2499), 0);
        assert_eq!(sample_inverse_cdf(&probs, 0.25), 2);
        assert_eq!(sample_inverse_cdf(&probs, 0.9999), 3);
    }

    #[test]
    fn float_tail_never_lands_on_a_zero_token() {
        // Mass sums to slightly under 1; a coin near 1 must still land on id 1.
        let probs = [0.3, 0.6999999, 0.0];
        assert_eq!(sample_inverse_cdf(&probs, 0.99999999), 1);
    }
}
