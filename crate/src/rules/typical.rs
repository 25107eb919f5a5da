//! Locally typical sampling (Meister et al., 2022): rank the tokens by how
//! far their surprise `-ln p` lies from the entropy `H`, and keep the closest
//! until their mass reaches the setting. Hugging Face and llama.cpp differ at
//! the cut, so both are here:
//!
//! - `typical_p_mask` (Hugging Face's `TypicalLogitsWarper`): the cut is the
//!   first token where the running mass is `>= p`, and every token whose
//!   distance equals the cut token's is kept too (ties kept);
//! - `typical_p_llama_mask` (llama.cpp's `typical`): the cut is the first
//!   token where the running mass is `> p`, and exactly that many tokens are
//!   kept (ties ordered by lower id here; llama.cpp's sort leaves them unspecified).
//!
//! Both keep at least `min_keep` tokens in that same order (the most typical,
//! not the most probable). `p >= 1` keeps every possible token.

use super::fields::{Control, Field, Group, Range, slot};
use super::spec::{AloneCut, Apply, StageSpec, Takes};

use std::cmp::Ordering;

/// `(distance |-ln p - H|, id)` of every possible token, unordered.
fn distances(probs: &[f64]) -> Vec<(f64, u32)> {
    let entropy: f64 = probs.iter().filter(|&&p| p > 0.0).map(|&p| -p * p.ln()).sum();
    probs
        .iter()
        .enumerate()
        .filter(|(_, p)| **p > 0.0)
        .map(|(i, &p)| ((-p.ln() - entropy).abs(), i as u32))
        .collect()
}

/// Most typical first, ties by lower id.
fn typical_order(a: &(f64, u32), b: &(f64, u32)) -> Ordering {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
}

/// Sorts the `m` most typical of `ranked` to its front (the rest unsorted):
/// a selection and a sort of `m`, not of the whole vocabulary.
fn sort_front(ranked: &mut [(f64, u32)], m: usize) {
    if m > 0 && m < ranked.len() {
        ranked.select_nth_unstable_by(m - 1, typical_order);
    }
    ranked[..m].sort_unstable_by(typical_order);
}

/// Walks the most typical tokens in order, sorting a front of the order that
/// grows fourfold until `cut` finds its answer in it: `cut(front, whole)`
/// returns how many to keep, or `None` when it needs a longer front. The
/// front is the full sort's own first entries, so the running sums add the
/// same numbers in the same order as a full sort.
fn walk(probs: &[f64], at_least: usize, cut: impl Fn(&[(f64, u32)], bool) -> Option<usize>) -> Vec<bool> {
    let mut ranked = distances(probs);
    let mut m = at_least.max(64).min(ranked.len());
    loop {
        sort_front(&mut ranked, m);
        if let Some(n) = cut(&ranked[..m], m == ranked.len()) {
            return mask_of(&ranked, n, probs.len());
        }
        m = (m * 4).min(ranked.len());
    }
}

fn mask_of(ranked: &[(f64, u32)], n: usize, len: usize) -> Vec<bool> {
    let mut mask = vec![false; len];
    for &(_, id) in &ranked[..n] {
        mask[id as usize] = true;
    }
    mask
}

/// Hugging Face's typical-p (see the module's notes).
pub fn typical_p_mask(probs: &[f64], p: f64, min_keep: usize) -> Vec<bool> {
    if p >= 1.0 {
        return probs.iter().map(|&q| q > 0.0).collect();
    }
    let keep = min_keep.max(1);
    walk(probs, keep + 1, |front, whole| {
        let mut mass = 0.0;
        let mut cut = None;
        for (i, &(_, id)) in front.iter().enumerate() {
            mass += probs[id as usize];
            if mass >= p {
                cut = Some(i);
                break;
            }
        }
        // Rounding left the whole mass below p: the last token is the cut.
        let cut = match cut {
            Some(i) => i,
            None if whole => front.len() - 1,
            None => return None,
        };
        // Every token no farther than the cut token (a tie may reach past
        // the front: then a longer one), then at least min_keep.
        let limit = front[cut].0;
        let n = front.partition_point(|r| r.0.partial_cmp(&limit) != Some(Ordering::Greater));
        if n == front.len() && !whole {
            return None;
        }
        Some(n.max(keep).min(front.len()))
    })
}

/// llama.cpp's typical-p (see the module's notes).
pub fn typical_p_llama_mask(probs: &[f64], p: f64, min_keep: usize) -> Vec<bool> {
    if p >= 1.0 {
        return probs.iter().map(|&q| q > 0.0).collect();
    }
    walk(probs, min_keep, |front, whole| {
        let mut mass = 0.0;
        for (i, &(_, id)) in front.iter().enumerate() {
            mass += probs[id as usize];
            if mass > p && i + 1 >= min_keep {
                return Some(i + 1);
            }
        }
        whole.then_some(front.len())
    })
}

/// The settings the stage owns (typical_p).
const FIELDS: &[Field] = &[
    Field::new(
        "typical_p",
        slot!(typical_p: f64),
        Range { min_excluded: true, ..Range::closed(0.0, 1.0) },
        "1 = off",
        "Locally typical sampling's mass",
    )
    .control(Control::slider("Typical-p", "keep the tokens whose surprise is nearest the entropy, up to this mass; 1 = off", 1.0, 0.01, Group::Samplers)),
];

/// The stage: Hugging Face's typical sampling.
pub(crate) const SPEC: StageSpec = StageSpec {
    name: "typical_p",
    label: "typical (HF)",
    what: "locally typical sampling: keeps the tokens whose surprise is closest to the entropy until their mass reaches typical_p; every token tied with the last one is kept",
    engines: "Hugging Face (typical_p, TypicalLogitsWarper: cumulative mass >= p, ties at the cut kept)",
    reads: &["typical_p", "min_keep"],
    switches: &["typical_p"],
    fields: FIELDS,
    is_on: |s| s.typical_p < 1.0,
    apply: Apply::Cut(|c| typical_p_mask(c.probs, c.s.typical_p, c.s.min_keep)),
    alone: Some(AloneCut {
        always: false,
        key: |s, _| vec![s.typical_p],
        mask: |raw, s, _| typical_p_mask(&raw.probs, s.typical_p, s.min_keep),
    }),
    takes: Takes::Nothing,
    shown_when_off: false,
};

/// The stage: llama.cpp's typical sampling.
pub(crate) const SPEC_LLAMA: StageSpec = StageSpec {
    name: "typical_p_llama",
    label: "typical (llama)",
    what: "locally typical sampling as llama.cpp does it: the same ordering, stops once the mass exceeds typical_p, exactly that many tokens (ties by lower id)",
    engines: "llama.cpp (typical_p: cumulative mass > p, ties cut by sort order)",
    reads: &["typical_p", "min_keep"],
    switches: &["typical_p"],
    fields: &[],
    is_on: |s| s.typical_p < 1.0,
    apply: Apply::Cut(|c| typical_p_llama_mask(c.probs, c.s.typical_p, c.s.min_keep)),
    alone: Some(AloneCut {
        always: false,
        key: |s, _| vec![s.typical_p],
        mask: |raw, s, _| typical_p_llama_mask(&raw.probs, s.typical_p, s.min_keep),
    }),
    takes: Takes::Nothing,
    shown_when_off: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    /// A worked example by hand: p = (0.5, 0.3, 0.2), H = 1.0297 nats;
    /// surprises 0.6931, 1.2040, 1.6094; distances 0.3365, 0.1743, 0.5798:
    /// the order is 1, 0, 2 with running mass 0.3, 0.8, 1.0.
    #[test]
    fn worked_example() {
        let probs = [0.5, 0.3, 0.2];
        assert_eq!(typical_p_mask(&probs, 0.3, 1), vec![false, true, false]);
        assert_eq!(typical_p_llama_mask(&probs, 0.3, 1), vec![true, true, false], "0.3 is not > 0.3");
        assert_eq!(typical_p_mask(&probs, 0.5, 1), vec![true, true, false]);
        assert_eq!(typical_p_mask(&probs, 0.9, 1), vec![true, true, true]);
        assert_eq!(typical_p_mask(&probs, 0.1, 2), vec![true, true, false], "min_keep in typical order");
    }

    /// The growing front gives what a full sort gives, on a large vocabulary
    /// with ties and a deep cut.
    #[test]
    fn the_front_walk_is_the_full_sort() {
        let mut rng = crate::rng::Rng::new(9);
        for n in [3usize, 70, 300, 5000] {
            let z: Vec<f64> = (0..n).map(|_| ((rng.next_normal() * 2.0) * 4.0).round() / 4.0).collect();
            let probs = crate::rules::softmax(&z);
            let mut full = distances(&probs);
            full.sort_unstable_by(typical_order);
            for p in [0.01, 0.3, 0.9, 0.999] {
                for keep in [1, 5, 100] {
                    let mut mass = 0.0;
                    let llama = full.iter().enumerate().position(|(i, r)| { mass += probs[r.1 as usize]; mass > p && i + 1 >= keep });
                    let want = mask_of(&full, llama.map_or(full.len(), |i| i + 1), n);
                    assert_eq!(typical_p_llama_mask(&probs, p, keep), want, "llama n {n} p {p} keep {keep}");
                    let mut mass = 0.0;
                    let cut = full.iter().position(|r| { mass += probs[r.1 as usize]; mass >= p }).unwrap_or(full.len() - 1);
                    let k = full.iter().filter(|r| r.0 <= full[cut].0).count().max(keep).min(full.len());
                    assert_eq!(typical_p_mask(&probs, p, keep), mask_of(&full, k, n), "hf n {n} p {p} keep {keep}");
                }
            }
        }
    }

    #[test]
    fn hugging_face_keeps_ties_at_the_cut_and_llama_cuts_them() {
        let probs = [0.25; 4];
        assert_eq!(typical_p_mask(&probs, 0.3, 1), vec![true; 4]);
        assert_eq!(typical_p_llama_mask(&probs, 0.3, 1), vec![true, true, false, false]);
    }
}
