//! The lesson-18 bigram as a language model: the next token's logits are
//! `E[x] · W` for the last token x; nothing earlier matters.

use crate::counters::Counters;
use crate::error::{Error, Result};
use crate::lm::{LanguageModel, ModelInfo};
use crate::tokenizer::CharTokenizer;
use crate::train::bigram::{compute_logits, BigramTrainResult, D_EMB, VOCAB};

/// How many positions the model accepts: a bigram has no real limit; this
/// bounds the page's history.
pub const BIGRAM_CONTEXT: usize = 4096;

/// The trained weights shipped with the engine: `train_bigram(600, 18)`,
/// written by the ignored test `write_shipped_bigram` in
/// `crate/tests/bigram_lesson18.rs` and checked against a fresh run there.
const SHIPPED_JSON: &str = include_str!("bigram_trained.json");

#[derive(Debug, Clone)]
pub struct BigramModel {
    /// (vocab, d_emb)
    e: [[f32; D_EMB]; VOCAB],
    /// (d_emb, vocab)
    w: [[f32; VOCAB]; D_EMB],
    /// Positions fed so far (the last one decides the next logits).
    seen: Vec<u32>,
    /// Always zero: a bigram projects no keys or values and computes no
    /// attention scores.
    counters: Counters,
}

impl BigramModel {
    pub fn new(e: [[f32; D_EMB]; VOCAB], w: [[f32; VOCAB]; D_EMB]) -> Result<Self> {
        let finite = e.iter().flatten().chain(w.iter().flatten()).all(|v| v.is_finite());
        if !finite {
            return Err(Error::new("the bigram weights contain a non-finite number"));
        }
        Ok(Self { e, w, seen: Vec::new(), counters: Counters::default() })
    }

    pub fn from_trained(result: &BigramTrainResult) -> Result<Self> {
        Self::new(result.e, result.w)
    }

    /// The model trained ahead of time, loaded instantly.
    pub fn shipped() -> Result<Self> {
        Self::from_trained(&read_shipped_bigram()?)
    }

    /// Its vocabulary: a, b, c.
    pub fn tokenizer() -> CharTokenizer {
        CharTokenizer::new(&['a', 'b', 'c']).expect("three distinct characters")
    }

    pub fn weights(&self) -> ([[f32; D_EMB]; VOCAB], [[f32; VOCAB]; D_EMB]) {
        (self.e, self.w)
    }

    fn check_tokens(tokens: &[u32]) -> Result<()> {
        match tokens.iter().find(|&&t| t as usize >= VOCAB) {
            Some(bad) => Err(Error::new(format!("token id {bad} is outside the bigram's vocabulary of {VOCAB}"))),
            None => Ok(()),
        }
    }
}

/// The shipped training result (weights and loss curve).
pub fn read_shipped_bigram() -> Result<BigramTrainResult> {
    serde_json::from_str(SHIPPED_JSON).map_err(|e| Error::new(format!("the shipped bigram is damaged: {e}")))
}

impl LanguageModel for BigramModel {
    fn info(&self) -> ModelInfo {
        ModelInfo::builtin_table("bigram-abc", "bigram", VOCAB, D_EMB, BIGRAM_CONTEXT, 2 * VOCAB * D_EMB)
    }

    fn forward_cached(&mut self, tokens: &[u32]) -> Result<Vec<f32>> {
        let Some(&last) = tokens.last() else {
            return Err(Error::new("no tokens to feed the model"));
        };
        Self::check_tokens(tokens)?;
        if self.seen.len() + tokens.len() > BIGRAM_CONTEXT {
            return Err(Error::new(format!(
                "the context is full: {} + {} tokens exceed {BIGRAM_CONTEXT}",
                self.seen.len(),
                tokens.len()
            )));
        }
        self.seen.extend_from_slice(tokens);
        Ok(compute_logits(&self.e, &self.w, last as usize).to_vec())
    }

    fn forward_naive(&mut self, tokens: &[u32]) -> Result<Vec<Vec<f32>>> {
        Self::check_tokens(tokens)?;
        Ok(tokens.iter().map(|&t| compute_logits(&self.e, &self.w, t as usize).to_vec()).collect())
    }

    fn cache_len(&self) -> usize {
        self.seen.len()
    }

    fn truncate(&mut self, n: usize) {
        self.seen.truncate(n);
    }

    fn counters(&self) -> Counters {
        self.counters
    }

    fn reset_counters(&mut self) {
        self.counters = Counters::default();
    }
}
