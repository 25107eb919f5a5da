//! Top-k: keep the k most likely tokens.

use super::ranking::{collect_candidates, mask_of, partition_best};

/// Returns the mask of the `k` most probable tokens among those with
/// probability > 0. `k = 0` means off: every possible token is kept.
///
/// Ties at the boundary are broken by token id (lower id kept), so the kept
/// set always has exactly `min(k, possible)` members and is reproducible.
/// One linear selection; no sort.
pub fn top_k_mask(probs: &[f64], k: usize) -> Vec<bool> {
    let mut candidates = collect_candidates(probs);
    let take = if k == 0 {
        candidates.len()
    } else {
        k.min(candidates.len())
    };
    partition_best(&mut candidates, take);
    mask_of(&candidates[..take], probs.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_k_largest() {
        let kept = top_k_mask(&[0.1, 0.4, 0.2, 0.3], 2);
        assert_eq!(kept, vec![false, true, false, true]);
    }

    #[test]
    fn ties_at_the_boundary_go_to_the_lower_id() {
        let kept = top_k_mask(&[0.2, 0.2, 0.4, 0.2], 2);
        assert_eq!(kept, vec![true, false, true, false]);
    }

    #[test]
    fn zero_probability_tokens_are_never_revived() {
        let kept = top_k_mask(&[0.0, 1.0, 0.0], 3);
        assert_eq!(kept, vec![false, true, false]);
        assert_eq!(top_k_mask(&[0.5, 0.0, 0.5], 0), vec![true, false, true]);
    }
}
