//! Count-based baselines for the token-level language model, measured on the
//! validation split: what a model that ignores context (unigram) and one
//! that sees only the previous token (bigram) achieve. A trained transformer
//! earns its keep by the distance below these numbers.
//!
//! Smoothing, and why:
//! - unigram: add-one (Laplace), `p(w) = (c(w) + 1) / (N + V)`, so a token
//!   never seen in training still has a finite cost;
//! - bigram: Witten–Bell interpolation with that unigram,
//!   `p(w | v) = (c(v, w) + T(v) · p(w)) / (c(v) + T(v))`, where `T(v)` is
//!   the number of distinct tokens seen after `v`. It needs no tuned weight
//!   and trusts the bigram counts more for contexts that were seen often
//!   with few followers. An unseen context falls back to the unigram.
//!   (Add-one on bigrams would spread most of the mass over the `V²` unseen
//!   pairs and score worse than the unigram.)
//!
//! Counts never cross a document boundary: the first token of a document is
//! scored by the unigram.
//!
//! Units: nats per token, and bits per character = total nats / ln 2 /
//! characters of the validation text (comparable across tokenizers).

use std::collections::HashMap;

use crate::error::{Error, Result};

/// One model's cost on the validation tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BaselineScore {
    pub nats_per_token: f64,
    pub bits_per_char: f64,
    pub total_nats: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Baselines {
    pub unigram: BaselineScore,
    pub bigram: BaselineScore,
    /// Validation tokens scored.
    pub tokens: usize,
    /// Characters of the validation text.
    pub chars: usize,
}

/// Token counts from the training documents.
struct Counts {
    vocab_size: usize,
    unigram: Vec<u64>,
    total: u64,
    /// (previous, next) → count.
    pairs: HashMap<(u32, u32), u64>,
    /// previous → (times followed by anything, distinct followers).
    context: HashMap<u32, (u64, u64)>,
}

impl Counts {
    fn collect(train: &[Vec<u32>], vocab_size: usize) -> Result<Self> {
        let mut unigram = vec![0u64; vocab_size];
        let mut pairs: HashMap<(u32, u32), u64> = HashMap::new();
        for doc in train {
            for &id in doc {
                check_id(id, vocab_size)?;
                unigram[id as usize] += 1;
            }
            for pair in doc.windows(2) {
                *pairs.entry((pair[0], pair[1])).or_default() += 1;
            }
        }
        let mut context: HashMap<u32, (u64, u64)> = HashMap::new();
        for (&(prev, _), &n) in &pairs {
            let entry = context.entry(prev).or_default();
            entry.0 += n;
            entry.1 += 1;
        }
        let total = unigram.iter().sum();
        Ok(Self { vocab_size, unigram, total, pairs, context })
    }

    fn unigram_prob(&self, id: u32) -> f64 {
        (self.unigram[id as usize] + 1) as f64 / (self.total + self.vocab_size as u64) as f64
    }

    fn bigram_prob(&self, prev: u32, id: u32) -> f64 {
        let p_uni = self.unigram_prob(id);
        let Some(&(seen, distinct)) = self.context.get(&prev) else {
            return p_uni;
        };
        let pair = self.pairs.get(&(prev, id)).copied().unwrap_or(0);
        (pair as f64 + distinct as f64 * p_uni) / (seen + distinct) as f64
    }
}

fn check_id(id: u32, vocab_size: usize) -> Result<()> {
    if id as usize >= vocab_size {
        return Err(Error::new(format!("token id {id} is outside the vocabulary of {vocab_size} tokens")));
    }
    Ok(())
}

/// Fits both baselines on `train` and scores them on `validation` (token
/// ids per document); `validation_chars` is the character count of the
/// validation text, for bits per character.
pub fn measure_baselines(
    train: &[Vec<u32>],
    validation: &[Vec<u32>],
    validation_chars: usize,
    vocab_size: usize,
) -> Result<Baselines> {
    if vocab_size == 0 {
        return Err(Error::new("the vocabulary is empty"));
    }
    let counts = Counts::collect(train, vocab_size)?;
    let (mut uni_nats, mut bi_nats, mut tokens) = (0.0f64, 0.0f64, 0usize);
    for doc in validation {
        for (i, &id) in doc.iter().enumerate() {
            check_id(id, vocab_size)?;
            let p_uni = counts.unigram_prob(id);
            let p_bi = if i == 0 { p_uni } else { counts.bigram_prob(doc[i - 1], id) };
            uni_nats -= p_uni.ln();
            bi_nats -= p_bi.ln();
            tokens += 1;
        }
    }
    if tokens == 0 {
        return Err(Error::new("the validation split has no tokens"));
    }
    if validation_chars == 0 {
        return Err(Error::new("the validation text has no characters"));
    }
    let score = |nats: f64| BaselineScore {
        nats_per_token: nats / tokens as f64,
        bits_per_char: nats / std::f64::consts::LN_2 / validation_chars as f64,
        total_nats: nats,
    };
    Ok(Baselines { unigram: score(uni_nats), bigram: score(bi_nats), tokens, chars: validation_chars })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smoothed_distributions_sum_to_one() {
        let train = vec![vec![0, 1, 2, 1, 0, 1, 2, 1, 3], vec![2, 2, 0]];
        let counts = Counts::collect(&train, 5).unwrap();
        let uni: f64 = (0..5).map(|w| counts.unigram_prob(w)).sum();
        assert!((uni - 1.0).abs() < 1e-12);
        for prev in 0..5 {
            let total: f64 = (0..5).map(|w| counts.bigram_prob(prev, w)).sum();
            assert!((total - 1.0).abs() < 1e-12, "row {prev} sums to {total}");
        }
    }

    #[test]
    fn bigram_beats_unigram_on_a_predictable_sequence() {
        // "0 1 0 1 …": the unigram is stuck at ln 2 per token (plus smoothing),
        // the bigram knows what comes next.
        let doc: Vec<u32> = (0..400).map(|i| i % 2).collect();
        let scores = measure_baselines(&[doc.clone()], &[doc[..100].to_vec()], 200, 2).unwrap();
        assert!((scores.unigram.nats_per_token - std::f64::consts::LN_2).abs() < 1e-3);
        assert!(scores.bigram.nats_per_token < 0.05, "{:?}", scores.bigram);
        assert_eq!(scores.tokens, 100);
        let bits_per_char = scores.unigram.total_nats / std::f64::consts::LN_2 / 200.0;
        assert!((scores.unigram.bits_per_char - bits_per_char).abs() < 1e-12);
    }

    #[test]
    fn ids_outside_the_vocabulary_are_refused() {
        let err = measure_baselines(&[vec![0, 7]], &[vec![0]], 1, 3).unwrap_err();
        assert!(err.message.contains("token id 7"), "{}", err.message);
        assert!(measure_baselines(&[vec![0]], &[vec![]], 1, 3).is_err());
    }
}
