//! The one order every truncation rule agrees on: higher probability first,
//! and among equal probabilities the lower token id first. Because the order
//! is total, "the k best" and "the smallest nucleus" are unique sets.

use std::cmp::Ordering;

use crate::threads;

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

/// A mask over `vocab_size` tokens marking `ids`: how every truncation
/// (top-k, top-p, read off a selection or off the raw ranking) turns the
/// tokens it chose into a kept set.
pub(crate) fn mask_of_ids(ids: impl IntoIterator<Item = u32>, vocab_size: usize) -> Vec<bool> {
    let mut kept = vec![false; vocab_size];
    for id in ids {
        kept[id as usize] = true;
    }
    kept
}

/// `mask` with every possible token tied with the least probable kept one
/// added (Hugging Face's top-k compares each token with the k-th's value, so
/// a tie at the cut stays whole). One pass.
pub fn keep_tied(mut mask: Vec<bool>, probs: &[f64]) -> Vec<bool> {
    let floor = mask.iter().zip(probs).filter(|(k, p)| **k && **p > 0.0).map(|(_, &p)| p).fold(f64::INFINITY, f64::min);
    if floor.is_finite() {
        for (k, &p) in mask.iter_mut().zip(probs) {
            *k |= p >= floor;
        }
    }
    mask
}

/// `mask` as `ties` leaves a cut: as it is (by id), or with its ties kept.
pub(crate) fn settle_ties(mask: Vec<bool>, probs: &[f64], ties: super::settings::Ties) -> Vec<bool> {
    match ties {
        super::settings::Ties::ById => mask,
        super::settings::Ties::KeepTied => keep_tied(mask, probs),
    }
}

/// Indices of the `n` largest of `values` (every entry counts, -inf
/// included), best first, in the one order: the panels' top rows, beam
/// search's candidates, a scored token's alternatives.
///
/// One pass with a buffer of a few times `n`: whenever it fills, its best
/// `n` stay and the worst of them becomes the bar a value must beat to be
/// taken, so a 262,144-token vocabulary needs no vocabulary-sized copy. A
/// vocabulary over `threads::VOCAB_CHUNK` is read in chunks across threads,
/// each chunk's best `n` then one selection among them: the order is total,
/// so the result is the same.
pub fn top_indices(values: &[f64], n: usize) -> Vec<usize> {
    let n = n.min(values.len());
    if n == 0 {
        return Vec::new();
    }
    let chunk = threads::VOCAB_CHUNK;
    let mut candidates = if values.len() <= chunk {
        best_of(values, 0, n)
    } else {
        threads::map_chunks(values.len(), chunk, |range| best_of(&values[range.clone()], range.start, n)).concat()
    };
    partition_best(&mut candidates, n);
    candidates.truncate(n);
    candidates.sort_unstable_by(compare_candidates);
    candidates.into_iter().map(|(_, id)| id as usize).collect()
}

/// The `n` best of `values` (ids from `first` on), in no particular order.
fn best_of(values: &[f64], first: usize, n: usize) -> Vec<Candidate> {
    let room = 4 * n.max(16);
    let mut candidates: Vec<Candidate> = Vec::with_capacity(room.min(values.len()));
    let mut bar: Option<Candidate> = None;
    for (i, &v) in values.iter().enumerate() {
        let c = (v, (first + i) as u32);
        if bar.is_some_and(|b| compare_candidates(&c, &b) != Ordering::Less) {
            continue;
        }
        candidates.push(c);
        if candidates.len() == room {
            partition_best(&mut candidates, n);
            candidates.truncate(n);
            bar = candidates.iter().copied().max_by(compare_candidates);
        }
    }
    partition_best(&mut candidates, n);
    candidates.truncate(n);
    candidates
}

/// Rank of `id` among `values` in the one order, 1 = first: the row
/// `top_indices` would put it on.
pub fn rank_of(values: &[f64], id: usize) -> usize {
    let me = (values[id], id as u32);
    let ahead = values
        .iter()
        .enumerate()
        .filter(|&(j, &v)| compare_candidates(&(v, j as u32), &me) == Ordering::Less)
        .count();
    1 + ahead
}

/// Token ids ranked by `compare_candidates` on `(probs[id], id)`: higher
/// probability first, ties by lower id. The same permutation as sorting the
/// ids with that comparison (which it falls back to for small slices and for
/// values no probability has: negative, -0.0, NaN), in time linear in the
/// vocabulary for the distributions a model gives.
pub(crate) fn rank_descending(probs: &[f64]) -> Vec<u32> {
    if probs.len() > SMALL
        && let Some(order) = radix_rank_descending(probs)
    {
        return order;
    }
    comparison_rank_descending(probs)
}

/// The definition: a comparison sort with `compare_candidates`.
pub(crate) fn comparison_rank_descending(probs: &[f64]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..probs.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| compare_candidates(&(probs[a as usize], a), &(probs[b as usize], b)));
    order
}

/// Below this many tokens a comparison sort is as quick as the radix passes
/// (whose two 2,048-entry histograms cost the same at any size).
const SMALL: usize = 512;

/// Bits of the radix key: two passes of `DIGIT` bits.
const DIGIT: u32 = 11;
const KEY_BITS: u32 = 2 * DIGIT;
const BUCKETS: usize = 1 << DIGIT;
/// Runs of equal keys up to this long are put in order by insertion.
const INSERTION_UP_TO: usize = 16;

/// `rank_descending` by a least-significant-digit radix sort, for values
/// that are all `+0.0`, positive or `+inf` (otherwise `None`).
///
/// Such a float's bits, read as an integer, order like its value (and like
/// `f64::total_cmp`), so the sort works on the bits:
///
/// 1. The smallest value's tokens (for a softmax: the zeros, every banned
///    token) are tied, so they go last in id order without being sorted.
/// 2. Every other token's distance below the largest value's bits,
///    `a = bits(max) - bits(p)` (smaller `a` = higher probability), is cut to
///    its top `KEY_BITS` significant bits, `s = a >> shift`, the same shift
///    for all, so `s` orders like `a` except that some unequal `a` share an `s`.
/// 3. Two stable counting-sort passes on `s` (low digit, then high digit),
///    starting from id order: equal `s` stay in id order.
/// 4. If bits were cut (`shift > 0`), each run of equal `s` is sorted by
///    `(a, id)`. For a model's distribution (probabilities from about 2^-60
///    to 1: 36 bits cut) those runs are pairs and triples of tokens whose
///    probabilities agree to about 1 part in 2^16 (some 1,300 runs at 49,152
///    tokens); with no bits cut (a span of under 2^22 steps of the last bit)
///    the order is already exact.
///
/// Each item travels as one u64, `s << 32 | id`. (The extremes are found with
/// f64 comparisons: u64 ones are four times slower in wasm.) Kept out of line
/// so that a profile shows it apart from `RawDistribution::new`.
#[inline(never)]
fn radix_rank_descending(probs: &[f64]) -> Option<Vec<u32>> {
    let n = probs.len();
    if n == 0 {
        return Some(Vec::new());
    }
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    let (mut nan, mut sign_bits) = (false, 0u64);
    for &p in probs {
        lo = if p < lo { p } else { lo };
        hi = if p > hi { p } else { hi };
        nan |= p.is_nan();
        sign_bits |= p.to_bits(); // negative, -0.0
    }
    if nan || sign_bits >> 63 != 0 {
        return None;
    }
    if lo == hi {
        return Some((0..n as u32).collect());
    }
    let (lo_bits, hi_bits) = (lo.to_bits(), hi.to_bits());
    // Every key in the sort is above lo, so a = hi - key < hi - lo.
    let span = hi_bits - lo_bits - 1;
    let shift = (64 - span.leading_zeros()).saturating_sub(KEY_BITS);
    let mut items: Vec<u64> = Vec::with_capacity(n);
    let mut bottom: Vec<u32> = Vec::new();
    let mut counts = vec![0u32; 2 * BUCKETS];
    let (low_counts, high_counts) = counts.split_at_mut(BUCKETS);
    for (id, &p) in probs.iter().enumerate() {
        if p == lo {
            bottom.push(id as u32);
            continue;
        }
        let s = ((hi_bits - p.to_bits()) >> shift) as u32;
        low_counts[(s as usize) & (BUCKETS - 1)] += 1;
        high_counts[(s >> DIGIT) as usize] += 1;
        items.push((u64::from(s) << 32) | id as u64);
    }
    let mut spare = vec![0u64; items.len()];
    for (pass, counts) in [low_counts, high_counts].into_iter().enumerate() {
        // A digit every item shares moves nothing.
        if counts.iter().any(|&c| c as usize == items.len()) {
            continue;
        }
        let digit_shift = 32 + DIGIT * pass as u32;
        let mut next = 0u32;
        for c in counts.iter_mut() {
            let start = next;
            next += *c;
            *c = start;
        }
        for &item in &items {
            let d = ((item >> digit_shift) as usize) & (BUCKETS - 1);
            spare[counts[d] as usize] = item;
            counts[d] += 1;
        }
        std::mem::swap(&mut items, &mut spare);
    }
    // Its 8 bytes a token go back before `order` takes 4: at Gemma's 262,144
    // tokens the sort's high-water mark, which a wasm memory keeps, is 1 MB lower.
    drop(spare);
    if shift > 0 {
        let key = |item: u64| (hi_bits - probs[item as u32 as usize].to_bits(), item as u32);
        let same = |a: u64, b: u64| (a ^ b) >> 32 == 0;
        let mut i = 1;
        while i < items.len() {
            if !same(items[i - 1], items[i]) {
                i += 1;
                continue;
            }
            let start = i - 1;
            let mut end = i + 1;
            while end < items.len() && same(items[start], items[end]) {
                end += 1;
            }
            let run = &mut items[start..end];
            if run.len() > INSERTION_UP_TO {
                run.sort_unstable_by_key(|&item| key(item));
            } else {
                for i in 1..run.len() {
                    let (item, k) = (run[i], key(run[i]));
                    let mut j = i;
                    while j > 0 && key(run[j - 1]) > k {
                        run[j] = run[j - 1];
                        j -= 1;
                    }
                    run[j] = item;
                }
            }
            i = end + 1;
        }
    }
    let mut order: Vec<u32> = Vec::with_capacity(n);
    order.extend(items.iter().map(|&item| item as u32));
    order.extend_from_slice(&bottom);
    Some(order)
}

#[cfg(test)]
mod tests {
    use super::super::softmax::softmax;
    use super::*;
    use crate::rng::Rng;

    /// The radix ranking (and `rank_descending`) against the comparison sort.
    fn check(name: &str, probs: &[f64]) {
        let expected = comparison_rank_descending(probs);
        let radix = radix_rank_descending(probs).expect("probabilities take the radix path");
        assert!(radix == expected, "{name} (n = {}): the radix ranking differs", probs.len());
        assert!(rank_descending(probs) == expected, "{name} (n = {})", probs.len());
    }

    /// Logits of many shapes: a model's spread, ties, -inf, underflowing tails.
    fn logit_cases(rng: &mut Rng, n: usize) -> Vec<(&'static str, Vec<f64>)> {
        let mut cases = vec![
            ("model-like", (0..n).map(|_| ((rng.next_normal() * 2.5) as f32) as f64).collect::<Vec<_>>()),
            (
                "ties and -inf",
                (0..n)
                    .map(|_| match rng.next_u64() % 10 {
                        0 => f64::NEG_INFINITY,
                        1 | 2 => 1.5,
                        _ => (rng.next_f64() * 8.0 - 4.0).round() / 2.0,
                    })
                    .collect(),
            ),
            ("all equal", vec![0.25; n]),
            ("underflow to zero", (0..n).map(|_| rng.next_f64() * -2000.0).collect()),
            ("near ties", (0..n).map(|i| 1.0 + (i % 5) as f64 * 1e-15 + (i % 3) as f64 * 1e-9).collect()),
            ("huge spread", (0..n).map(|_| -(rng.next_f64() * 6.5).exp()).collect()),
        ];
        for (_, z) in &mut cases {
            z[0] = if z[0] == f64::NEG_INFINITY { 0.0 } else { z[0] }; // one possible token
        }
        cases
    }

    #[test]
    fn top_indices_and_rank_of_follow_the_comparison_ranking() {
        let mut rng = Rng::new(33);
        for (_, z) in logit_cases(&mut rng, 300) {
            let full = comparison_rank_descending(&z);
            for n in [0, 1, 2, 10, 64, 299, 300, 301] {
                let want: Vec<usize> = full.iter().take(n).map(|&id| id as usize).collect();
                assert_eq!(top_indices(&z, n), want, "n {n}");
            }
            for (row, &id) in full.iter().enumerate() {
                assert_eq!(rank_of(&z, id as usize), row + 1);
            }
        }
    }

    /// A vocabulary of several chunks, read across threads: the same rows.
    #[cfg(feature = "threads")]
    #[test]
    fn top_indices_over_several_chunks_follow_the_ranking_at_any_thread_count() {
        let mut rng = Rng::new(35);
        let n = 3 * threads::VOCAB_CHUNK + 77;
        for (name, z) in logit_cases(&mut rng, n) {
            let full = comparison_rank_descending(&z);
            let want: Vec<usize> = full.iter().take(64).map(|&id| id as usize).collect();
            for t in [1, 2, 4] {
                assert_eq!(crate::test_util::on_threads(t, || top_indices(&z, 64)), want, "{name}, {t} threads");
            }
        }
    }

    #[test]
    fn the_radix_ranking_is_the_comparison_ranking() {
        let mut rng = Rng::new(31);
        for n in [1, 2, 3, 17, 1000, 4097, 49_152] {
            for (name, z) in logit_cases(&mut rng, n) {
                check(name, &softmax(&z));
            }
        }
    }

    #[test]
    fn the_radix_ranking_handles_runs_and_odd_values() {
        let mut rng = Rng::new(32);
        // Long runs of keys equal in their top bits (the insertion and the
        // sort paths of step 4), behind one tiny value that widens the span.
        let mut p: Vec<f64> = (0..5000).map(|i| f64::from_bits(0.5f64.to_bits() + (i * 7919 % 300) as u64)).collect();
        p[17] = 1e-300;
        p[18] = 0.0;
        check("long runs", &p);
        // Any non-negative bits: subnormals, +inf, exact duplicates.
        let p: Vec<f64> = (0..20_000)
            .map(|i| match i % 5 {
                0 => f64::from_bits(rng.next_u64() >> 1).min(f64::INFINITY),
                1 => f64::from_bits(rng.next_u64() % 1000),
                2 => f64::INFINITY,
                3 => 0.0,
                _ => rng.next_f64(),
            })
            .map(|x| if x.is_nan() { 1.0 } else { x })
            .collect();
        check("odd bits", &p);
        check("a span under 2^22 ulps", &(0..3000).map(|i| 0.1 + (i % 1000) as f64 * 1e-17).collect::<Vec<_>>());
        check("one nonzero", &(0..3000).map(|i| if i == 2999 { 1.0 } else { 0.0 }).collect::<Vec<_>>());
        check("empty", &[]);
        // Values no probability has: the comparison sort answers.
        for odd in [-1.0, -0.0, f64::NAN, -f64::NAN] {
            let mut p: Vec<f64> = (0..1000).map(|i| (i % 10) as f64).collect();
            p[400] = odd;
            assert!(radix_rank_descending(&p).is_none());
            assert_eq!(rank_descending(&p), comparison_rank_descending(&p));
        }
    }
}
