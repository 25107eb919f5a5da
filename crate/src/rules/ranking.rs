//! The one order every truncation rule agrees on: higher probability first,
//! and among equal probabilities the lower token id first. Because the order
//! is total, "the k best" and "the smallest nucleus" are unique sets.

use std::cmp::Ordering;

/// Orders token ids by descending probability, then ascending id.
pub(crate) fn compare_by_prob_then_id(probs: &[f64], a: u32, b: u32) -> Ordering {
    probs[b as usize]
        .total_cmp(&probs[a as usize])
        .then_with(|| a.cmp(&b))
}

/// Ids of the tokens that are still possible (probability > 0).
pub(crate) fn collect_possible_ids(probs: &[f64]) -> Vec<u32> {
    probs
        .iter()
        .enumerate()
        .filter(|(_, p)| **p > 0.0)
        .map(|(i, _)| i as u32)
        .collect()
}

/// Moves the `m` best ids (in the shared order) to the front of `ids`, sorted;
/// the rest stay behind in no particular order. Linear selection plus a sort
/// of only the `m` winners: no full sort of a 49k vocabulary.
pub(crate) fn partition_best(probs: &[f64], ids: &mut [u32], m: usize) {
    let m = m.min(ids.len());
    if m == 0 {
        return;
    }
    if m < ids.len() {
        ids.select_nth_unstable_by(m - 1, |&a, &b| compare_by_prob_then_id(probs, a, b));
    }
    ids[..m].sort_unstable_by(|&a, &b| compare_by_prob_then_id(probs, a, b));
}
