//! Top-p (nucleus): keep the smallest set of most likely tokens whose mass
//! reaches p.
//!
//! The definition (course, lesson 21) sorts the probabilities, takes the
//! running sum, and stops at the first prefix with sum >= p. Sorting 49,152
//! tokens on every slider move is too slow, so the size of that prefix is
//! found by a selection on mass instead (quickselect that keeps whichever
//! half holds the boundary: linear time). Its float sums add the same numbers
//! in another order, so when a prefix's mass lies within rounding of p the
//! sorted running sum is taken on that prefix to decide exactly as the
//! definition does.

use super::fields::{Control, Field, Group, Range, slot};
use super::min_keep::keep_at_least;
use super::spec::{AloneCut, Apply, StageSpec, Takes};

use super::ranking::{Candidate, collect_candidates, compare_candidates, mask_of_ids, partition_best};

/// Below this many candidates a slice is simply sorted.
const SORT_BELOW: usize = 32;

/// Returns the mask of the smallest top set (in descending probability,
/// ties by lower id) whose mass is `>= p`. The top token is always kept, so
/// `p = 0` keeps exactly one token (as llama.cpp and Hugging Face do with
/// their min_keep of 1). `p >= 1` keeps every possible token (also the float
/// tail where all probabilities sum to a hair under 1).
pub fn top_p_mask(probs: &[f64], p: f64) -> Vec<bool> {
    top_p_mask_of(collect_candidates(probs), p, probs.len())
}

/// `top_p_mask` over the possible tokens `candidates` (ascending by id) of a
/// vocabulary of `vocab_size`.
fn top_p_mask_of(mut candidates: Vec<Candidate>, p: f64, vocab_size: usize) -> Vec<bool> {
    let count = if p >= 1.0 || candidates.is_empty() {
        candidates.len()
    } else if p <= 0.0 {
        partition_best(&mut candidates, 1);
        1
    } else {
        count_nucleus(&mut candidates, p)
    };
    mask_of_ids(candidates[..count].iter().map(|c| c.1), vocab_size)
}

/// Reorders `candidates` so the nucleus comes first and returns its size.
fn count_nucleus(candidates: &mut [Candidate], p: f64) -> usize {
    let (count, mass_before, mass_with) = select_by_mass(candidates, p);
    // Any two summation orders of these n terms (each <= 1, total <= 1)
    // differ by at most about 2 n eps; outside that band the sorted running
    // sum makes the same decision, so no sort is needed.
    let band = 2.0 * candidates.len() as f64 * f64::EPSILON;
    if count < candidates.len() && p - mass_before > band && mass_with - p > band {
        return count;
    }
    if count == candidates.len() && p - mass_before > band {
        return count;
    }
    count_nucleus_sorted(candidates, p, count)
}

/// Quickselect on mass. Returns the nucleus size `n` (the first `n`
/// candidates are then the best `n`, unsorted), the mass of the best `n - 1`
/// and the mass of the best `n`, as summed here.
fn select_by_mass(candidates: &mut [Candidate], p: f64) -> (usize, f64, f64) {
    // Invariant: candidates[..lo] are taken (better than everything after
    // them) with mass `taken` < p; the boundary lies in candidates[lo..hi].
    let (mut lo, mut hi, mut taken) = (0, candidates.len(), 0.0);
    while hi - lo > SORT_BELOW {
        let half = (hi - lo) / 2;
        partition_best(&mut candidates[lo..hi], half);
        let upper: f64 = candidates[lo..lo + half].iter().map(|c| c.0).sum();
        if taken + upper >= p {
            hi = lo + half;
        } else {
            taken += upper;
            lo += half;
        }
    }
    candidates[lo..hi].sort_unstable_by(compare_candidates);
    for (n, c) in candidates.iter().enumerate().take(hi).skip(lo) {
        let with = taken + c.0;
        if with >= p {
            return (n + 1, taken, with);
        }
        taken = with;
    }
    // Rounding left the whole mass below p: everything is the nucleus.
    (candidates.len(), taken, taken)
}

/// The definition itself: sort the best `hint + 1` candidates (the nucleus
/// can only be a few entries off the hint, but a longer prefix is sorted if
/// needed) and walk their running sum.
fn count_nucleus_sorted(candidates: &mut [Candidate], p: f64, hint: usize) -> usize {
    let mut prefix = (hint + 1).min(candidates.len());
    loop {
        partition_best(candidates, prefix);
        candidates[..prefix].sort_unstable_by(compare_candidates);
        let mut mass = 0.0;
        for (n, c) in candidates[..prefix].iter().enumerate() {
            mass += c.0;
            if mass >= p {
                return n + 1;
            }
        }
        if prefix == candidates.len() {
            return prefix;
        }
        prefix = (prefix * 2).min(candidates.len());
    }
}

/// The settings the stage owns (top_p).
const FIELDS: &[Field] = &[
    Field::new(
        "top_p",
        slot!(top_p: f64),
        Range::closed(0.0, 1.0),
        "1 = off; 0 = only the most likely token",
        "Keep the smallest set reaching this mass",
    )
    .control(Control::slider("Top-p (nucleus)", "smallest set with this much mass; 1 = off", 1.0, 0.01, Group::Rules)),
];

/// The stage: top-p (its alone column is measured whatever p, as the course shows it).
pub(crate) const SPEC: StageSpec = StageSpec {
    name: "top_p",
    label: "top-p",
    what: "keeps the smallest top set whose mass reaches p (at least min_keep), ties by lower id",
    engines: "every engine",
    reads: &["top_p", "min_keep"],
    switches: &["top_p"],
    fields: FIELDS,
    is_on: |s| s.top_p < 1.0,
    apply: Apply::Cut(|c| c.at_least(top_p_mask_of(c.candidates(), c.s.top_p, c.probs.len()))),
    alone: Some(AloneCut {
        always: true,
        key: |s, _| vec![s.top_p],
        mask: |raw, s, _| keep_at_least(raw.top_p_mask(s.top_p), &raw.probs, s.min_keep),
    }),
    takes: Takes::Nothing,
    shown_when_off: true,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_at_the_first_prefix_reaching_p() {
        // Sorted: 0.5, 0.3, 0.15, 0.05 -> cumulative 0.5, 0.8, 0.95, 1.0.
        let probs = [0.05, 0.3, 0.5, 0.15];
        assert_eq!(top_p_mask(&probs, 0.8), vec![false, true, true, false]);
        assert_eq!(top_p_mask(&probs, 0.81), vec![false, true, true, true]);
    }

    #[test]
    fn tiny_p_keeps_only_the_top_token() {
        assert_eq!(
            top_p_mask(&[0.2, 0.5, 0.3], 1e-300),
            vec![false, true, false]
        );
    }

    #[test]
    fn large_nucleus_with_ties_goes_to_the_lower_ids() {
        let n = 1000;
        let probs = vec![1.0 / n as f64; n];
        let kept = top_p_mask(&probs, 0.5);
        let count = kept.iter().filter(|&&k| k).count();
        // 500 * (1/1000) lands within rounding of 0.5: the exact sorted walk decides.
        let mut running = 0.0;
        let expected = probs.iter().position(|&x| {
            running += x;
            running >= 0.5
        });
        assert_eq!(count, expected.unwrap() + 1);
        assert!(kept[..count].iter().all(|&k| k));
    }

    #[test]
    fn selection_by_mass_agrees_with_the_sorted_walk_on_a_skewed_vocabulary() {
        // Geometric probabilities shuffled over 5,000 ids: the nucleus is
        // deep inside the vocabulary and far from the first selection split.
        let n = 5000u64;
        let weights: Vec<f64> = (0..n)
            .map(|i| 0.999f64.powi(((i * 7919) % n) as i32))
            .collect();
        let total: f64 = weights.iter().sum();
        let probs: Vec<f64> = weights.iter().map(|w| w / total).collect();
        for p in [0.1, 0.5, 0.9, 0.999] {
            let mut sorted: Vec<(f64, usize)> = probs.iter().copied().zip(0..).collect();
            sorted.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let mut mass = 0.0;
            let n_keep = sorted.iter().position(|s| {
                mass += s.0;
                mass >= p
            });
            let n_keep = n_keep.map_or(sorted.len(), |i| i + 1);
            let mut expected = vec![false; probs.len()];
            for s in &sorted[..n_keep] {
                expected[s.1] = true;
            }
            assert_eq!(top_p_mask(&probs, p), expected, "p = {p}");
        }
    }
}
