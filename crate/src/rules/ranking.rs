//! The one order every truncation rule agrees on: higher probability first,
//! and among equal probabilities the lower token id first. Because the order
//! is total, "the k best" and "the smallest nucleus" are unique sets.

use std::cmp::Ordering;

/// A token still in play: its probability and its id, side by side so the
/// selections below compare without chasing indices.
pub(crate) type Candidate = (f64, u32);

/// Descending probability, then ascending id.
pub(crate) fn compare_candidates(a: &Candidate, b: &Candidate) -> Ordering {
    b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1))
}

/// The tokens that are still possible (probability > 0).
pub(crate) fn collect_candidates(probs: &[f64]) -> Vec<Candidate> {
    probs
        .iter()
        .enumerate()
        .filter(|(_, p)| **p > 0.0)
        .map(|(i, &p)| (p, i as u32))
        .collect()
}

/// Moves the `m` best candidates to the front of the slice (in no particular
/// order): one linear selection, no sort.
pub(crate) fn partition_best(candidates: &mut [Candidate], m: usize) {
    if m > 0 && m < candidates.len() {
        candidates.select_nth_unstable_by(m - 1, compare_candidates);
    }
}

/// A mask over `vocab_size` tokens marking the given candidates.
pub(crate) fn mask_of(candidates: &[Candidate], vocab_size: usize) -> Vec<bool> {
    let mut kept = vec![false; vocab_size];
    for &(_, id) in candidates {
        kept[id as usize] = true;
    }
    kept
}
