//! The lesson-21 "logits only" model: a fixed, editable vector of ten
//! logits returned at every position, so the rules can be watched on a
//! distribution with a clear mode, a few alternatives and a long tail.
//!
//! Its tokens are named `t1`..`t10` ([`PieceTokenizer`]): the lesson numbers
//! its classes 1..10 ("p_max ≈ 0.40 on token 1"), and the `t` keeps `t1`
//! and `t10` apart in a written sequence.

use crate::counters::Counters;
use crate::error::{Error, Result};
use crate::lm::{LanguageModel, ModelInfo};
use crate::tokenizer::PieceTokenizer;

/// The lesson's vector: 3.0 down to −1.5 in steps of 0.5.
pub const LESSON21_LOGITS: [f32; 10] = [3.0, 2.5, 2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0, -1.5];

/// How many positions the model accepts (it has no real limit).
pub const LOGITS_CONTEXT: usize = 4096;

#[derive(Debug, Clone)]
pub struct LogitsModel {
    logits: Vec<f32>,
    /// Positions fed so far.
    seen: usize,
    /// Always zero: there is no attention to count.
    counters: Counters,
}

impl LogitsModel {
    /// The lesson-21 vector.
    pub fn lesson21() -> Self {
        Self { logits: LESSON21_LOGITS.to_vec(), seen: 0, counters: Counters::default() }
    }

    /// Its vocabulary: `t1`..`t10`.
    pub fn tokenizer() -> PieceTokenizer {
        PieceTokenizer::numbered("t", LESSON21_LOGITS.len()).expect("ten distinct names")
    }

    pub fn logits(&self) -> &[f32] {
        &self.logits
    }

    /// Replaces the vector; it must keep its length and hold finite numbers.
    pub fn set_logits(&mut self, logits: Vec<f32>) -> Result<()> {
        if logits.len() != self.logits.len() {
            return Err(Error::new(format!(
                "expected {} logits, got {}",
                self.logits.len(),
                logits.len()
            )));
        }
        if let Some(i) = logits.iter().position(|v| !v.is_finite()) {
            return Err(Error::new(format!("logit {} is {}, not a finite number", i + 1, logits[i])));
        }
        self.logits = logits;
        Ok(())
    }

    fn check_tokens(&self, tokens: &[u32]) -> Result<()> {
        match tokens.iter().find(|&&t| t as usize >= self.logits.len()) {
            Some(bad) => Err(Error::new(format!(
                "token id {bad} is outside this model's vocabulary of {}",
                self.logits.len()
            ))),
            None => Ok(()),
        }
    }
}

impl LanguageModel for LogitsModel {
    fn info(&self) -> ModelInfo {
        ModelInfo::builtin_table("logits10", "logits", self.logits.len(), 0, LOGITS_CONTEXT, self.logits.len())
    }

    fn forward_cached(&mut self, tokens: &[u32]) -> Result<Vec<f32>> {
        if tokens.is_empty() {
            return Err(Error::new("no tokens to feed the model"));
        }
        self.check_tokens(tokens)?;
        if self.seen + tokens.len() > LOGITS_CONTEXT {
            return Err(Error::new(format!(
                "the context is full: {} + {} tokens exceed {LOGITS_CONTEXT}",
                self.seen,
                tokens.len()
            )));
        }
        self.seen += tokens.len();
        Ok(self.logits.clone())
    }

    fn forward_naive(&mut self, tokens: &[u32]) -> Result<Vec<Vec<f32>>> {
        self.check_tokens(tokens)?;
        Ok(vec![self.logits.clone(); tokens.len()])
    }

    fn cache_len(&self) -> usize {
        self.seen
    }

    fn truncate(&mut self, n: usize) {
        self.seen = self.seen.min(n);
    }

    fn counters(&self) -> Counters {
        self.counters
    }

    fn reset_counters(&mut self) {
        self.counters = Counters::default();
    }
}
