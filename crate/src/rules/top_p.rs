//! Top-p (nucleus): keep the smallest set of most likely tokens whose mass
//! reaches p.

use super::ranking::{collect_possible_ids, partition_best};

/// First prefix size tried; doubled until the nucleus fits. Real models put
/// most of the mass in a few dozen tokens, so one round is the usual case.
const FIRST_PREFIX: usize = 64;

/// Returns the mask of the smallest top set (in descending probability,
/// ties by lower id) whose cumulative mass is `>= p`. The top token is always
/// kept, so `p -> 0` keeps exactly one token. `p >= 1` keeps every possible
/// token (also the float tail where the sum of all probabilities is a hair
/// under 1).
///
/// The cumulative sum is taken in the sorted order, exactly as the course's
/// definition reads (sort, cumsum, first n with sum >= p); only a growing
/// prefix of the vocabulary is ever sorted.
pub fn top_p_mask(probs: &[f64], p: f64) -> Vec<bool> {
    let mut ids = collect_possible_ids(probs);
    let mut kept = vec![false; probs.len()];
    let count = if p >= 1.0 || ids.is_empty() {
        ids.len()
    } else {
        count_nucleus(probs, &mut ids, p)
    };
    for &id in &ids[..count] {
        kept[id as usize] = true;
    }
    kept
}

/// Sorts a growing prefix of `ids` until its running sum reaches `p`;
/// returns how many of the (now sorted) leading ids form the nucleus.
fn count_nucleus(probs: &[f64], ids: &mut [u32], p: f64) -> usize {
    let mut prefix = FIRST_PREFIX.min(ids.len());
    loop {
        partition_best(probs, ids, prefix);
        let mut mass = 0.0;
        for (n, &id) in ids[..prefix].iter().enumerate() {
            mass += probs[id as usize];
            if mass >= p {
                return n + 1;
            }
        }
        if prefix == ids.len() {
            // Rounding left the total a hair below p: everything is the nucleus.
            return ids.len();
        }
        prefix = (prefix * 2).min(ids.len());
    }
}

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
        assert_eq!(top_p_mask(&[0.2, 0.5, 0.3], 1e-300), vec![false, true, false]);
    }

    #[test]
    fn nucleus_larger_than_the_first_prefix_is_found() {
        let n = 1000;
        let probs = vec![1.0 / n as f64; n];
        let kept = top_p_mask(&probs, 0.5);
        let count = kept.iter().filter(|&&k| k).count();
        assert_eq!(count, 500);
        // Ties go to the lower ids.
        assert!(kept[..500].iter().all(|&k| k));
    }
}
