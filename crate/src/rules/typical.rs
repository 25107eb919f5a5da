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

use std::cmp::Ordering;

/// `(distance |-ln p - H|, id)` of every possible token, most typical first.
fn by_typicality(probs: &[f64]) -> Vec<(f64, u32)> {
    let entropy: f64 = probs.iter().filter(|&&p| p > 0.0).map(|&p| -p * p.ln()).sum();
    let mut ranked: Vec<(f64, u32)> = probs
        .iter()
        .enumerate()
        .filter(|(_, p)| **p > 0.0)
        .map(|(i, &p)| ((-p.ln() - entropy).abs(), i as u32))
        .collect();
    ranked.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    ranked
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
    let ranked = by_typicality(probs);
    let mut mass = 0.0;
    let mut cut = ranked.len().saturating_sub(1);
    for (i, &(_, id)) in ranked.iter().enumerate() {
        mass += probs[id as usize];
        if mass >= p {
            cut = i;
            break;
        }
    }
    let Some(&(limit, _)) = ranked.get(cut) else { return vec![false; probs.len()] };
    // Every token no farther than the cut token; then at least min_keep.
    let n = ranked.partition_point(|r| r.0.partial_cmp(&limit) != Some(Ordering::Greater));
    mask_of(&ranked, n.max(min_keep.max(1)).min(ranked.len()), probs.len())
}

/// llama.cpp's typical-p (see the module's notes).
pub fn typical_p_llama_mask(probs: &[f64], p: f64, min_keep: usize) -> Vec<bool> {
    if p >= 1.0 {
        return probs.iter().map(|&q| q > 0.0).collect();
    }
    let ranked = by_typicality(probs);
    let mut mass = 0.0;
    let mut n = ranked.len();
    for (i, &(_, id)) in ranked.iter().enumerate() {
        mass += probs[id as usize];
        if mass > p && i + 1 >= min_keep {
            n = i + 1;
            break;
        }
    }
    mask_of(&ranked, n, probs.len())
}

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

    #[test]
    fn hugging_face_keeps_ties_at_the_cut_and_llama_cuts_them() {
        let probs = [0.25; 4];
        assert_eq!(typical_p_mask(&probs, 0.3, 1), vec![true; 4]);
        assert_eq!(typical_p_llama_mask(&probs, 0.3, 1), vec![true, true, false, false]);
    }
}
