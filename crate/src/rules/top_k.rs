//! Top-k: keep the k most likely tokens.

use super::fields::{Control, Field, Group, Range, slot};
use super::settings::MAX_TOP_K;
use super::settings::RuleSettings;
use super::spec::{AloneCut, Apply, StageSpec, Takes};

use super::ranking::{Candidate, collect_candidates, mask_of_ids, partition_best, settle_ties};

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
    mask_of_ids(candidates[..take].iter().map(|c| c.1), probs.len())
}

/// `top_k_mask(probs, k)`, without ranking the whole vocabulary: `hint`
/// names tokens likely to be near the top (the raw ranking's first
/// `k + changed` when only a few logits changed since). The k-th largest
/// probability among them, t, is a floor: at least k tokens reach it, so
/// every token of the true top k does too, and the exact selection runs on
/// just the tokens at or above t. Any hint gives the same mask; a poor one
/// only costs time.
pub fn top_k_mask_hinted(probs: &[f64], k: usize, hint: &[u32]) -> Vec<bool> {
    if k == 0 || hint.len() < k {
        return top_k_mask(probs, k);
    }
    let mut hinted: Vec<f64> = hint.iter().map(|&id| probs[id as usize]).collect();
    hinted.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
    let floor = hinted[k - 1];
    if !(floor > 0.0) {
        return top_k_mask(probs, k);
    }
    let mut candidates: Vec<Candidate> = probs
        .iter()
        .enumerate()
        .filter(|(_, p)| **p >= floor)
        .map(|(i, &p)| (p, i as u32))
        .collect();
    partition_best(&mut candidates, k);
    mask_of_ids(candidates[..k].iter().map(|c| c.1), probs.len())
}

/// The settings the stage owns (top_k).
const FIELDS: &[Field] = &[
    Field::new(
        "top_k",
        slot!(top_k: usize),
        Range::integers(0.0, MAX_TOP_K as f64),
        "0 = off",
        "Keep the k most likely tokens",
    )
    .control(Control::slider("Top-k", "keep the k most likely tokens; 0 = off", 50.0, 1.0, Group::Rules)),
];

/// The stage: top-k (its alone column is measured whatever k, as the course shows it).
pub(crate) const SPEC: StageSpec = StageSpec {
    name: "top_k",
    label: "top-k",
    what: "keeps the k most likely tokens (at least min_keep); a tie with the k-th goes to the lower id, or stays whole (ties = keep_tied, as Hugging Face)",
    engines: "every engine (Hugging Face keeps all tokens tied with the k-th)",
    reads: &["top_k", "min_keep", "ties"],
    switches: &["top_k"],
    fields: FIELDS,
    is_on: |s| s.top_k != 0,
    apply: Apply::Cut(|c| {
        // Tokens near the top now: the raw ranking's first k, plus room for
        // every token a modifier moved (any hint gives the exact set).
        let k = c.s.top_k.max(c.s.min_keep);
        let near_top = &c.raw_order[..(k + c.moved).min(c.raw_order.len())];
        settle_ties(top_k_mask_hinted(c.probs, k, near_top), c.probs, c.s.ties)
    }),
    alone: Some(AloneCut {
        always: true,
        key: |s, _| vec![alone_k(s) as f64, s.ties as u8 as f64],
        mask: |raw, s, _| settle_ties(raw.top_k_mask(alone_k(s)), &raw.probs, s.ties),
    }),
    takes: Takes::Nothing,
    shown_when_off: true,
};

/// Top-k alone keeps at least `min_keep` when it is on.
fn alone_k(s: &RuleSettings) -> usize {
    s.top_k.max(if s.top_k > 0 { s.min_keep } else { 0 })
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
    fn any_hint_gives_the_exact_mask() {
        let mut rng = crate::rng::Rng::new(11);
        for _ in 0..300 {
            let n = 1 + (rng.next_u64() % 200) as usize;
            // Coarse values, so ties at the boundary are common; some zeros.
            let probs: Vec<f64> = (0..n).map(|_| (rng.next_u64() % 6) as f64 / 10.0).collect();
            let k = (rng.next_u64() % (n as u64 + 2)) as usize;
            let hint: Vec<u32> = (0..(rng.next_u64() % (n as u64 + 1))).map(|_| (rng.next_u64() % n as u64) as u32).collect();
            let mut unique = hint.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(top_k_mask_hinted(&probs, k, &unique), top_k_mask(&probs, k), "k {k}, probs {probs:?}, hint {unique:?}");
        }
    }

    #[test]
    fn zero_probability_tokens_are_never_revived() {
        let kept = top_k_mask(&[0.0, 1.0, 0.0], 3);
        assert_eq!(kept, vec![false, true, false]);
        assert_eq!(top_k_mask(&[0.5, 0.0, 0.5], 0), vec![true, false, true]);
    }
}
