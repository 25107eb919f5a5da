//! `min_keep`: every truncation keeps at least this many tokens (Hugging
//! Face's `min_tokens_to_keep`, llama.cpp's `min_keep`).

use super::ranking::{collect_candidates, partition_best};

/// `mask`, with the `min_keep` most probable tokens of `probs` added when it
/// keeps fewer (ties by lower id; never more than the possible tokens).
/// Costs one count when the mask already keeps enough, the usual case.
pub fn keep_at_least(mut mask: Vec<bool>, probs: &[f64], min_keep: usize) -> Vec<bool> {
    if keeps_enough(&mask, min_keep) {
        return mask;
    }
    let want = min_keep.max(1);
    let mut candidates = collect_candidates(probs);
    let take = want.min(candidates.len());
    partition_best(&mut candidates, take);
    for c in &candidates[..take] {
        mask[c.1 as usize] = true;
    }
    mask
}

/// Whether `mask` keeps at least `min_keep` tokens (and at least one).
pub(crate) fn keeps_enough(mask: &[bool], min_keep: usize) -> bool {
    mask.iter().filter(|&&k| k).count() >= min_keep.max(1)
}

/// The `k`-th largest probability (k >= 1) among the possible tokens, or 0
/// when fewer are possible: Hugging Face's ε and η keep every token at or
/// above it (ties with the k-th kept).
pub fn kth_largest(probs: &[f64], k: usize) -> f64 {
    let mut candidates = collect_candidates(probs);
    if k == 0 || candidates.len() < k {
        return 0.0;
    }
    partition_best(&mut candidates, k);
    candidates[..k].iter().map(|c| c.0).fold(f64::INFINITY, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_the_most_probable_when_too_few_are_kept() {
        let probs = [0.1, 0.4, 0.3, 0.2, 0.0];
        let mask = vec![false, true, false, false, false];
        assert_eq!(keep_at_least(mask.clone(), &probs, 3), vec![false, true, true, true, false]);
        assert_eq!(keep_at_least(mask.clone(), &probs, 1), mask);
        // More than the possible tokens: all of them, never a zero-probability one.
        assert_eq!(keep_at_least(mask, &probs, 9), vec![true, true, true, true, false]);
        assert_eq!(kth_largest(&probs, 2), 0.3);
        assert_eq!(kth_largest(&probs, 5), 0.0);
    }
}
