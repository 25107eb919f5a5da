//! What the generation session needs from a model: run tokens through it
//! with a cache it owns, rewind that cache, and say what it costs.
//!
//! The transformer implements this; so do the course's toy models (the
//! lesson-18 bigram and the lesson-21 fixed logit vector), so the page and
//! the CLI drive all of them through one `Session`.

use serde::Serialize;

use crate::counters::Counters;
use crate::error::Result;

/// What the page's header and the KV panel show about a model.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ModelInfo {
    pub name: String,
    /// "transformer" | "logits" | "bigram"
    pub kind: String,
    pub vocab_size: usize,
    pub layers: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub d_model: usize,
    /// Context length: the KV cache capacity in positions.
    pub context: usize,
    pub params: usize,
    pub bytes_per_number: usize,
    /// "flex" | "ndarray" | "none" (models that need no tensor backend)
    pub backend: String,
    pub eos_id: Option<u32>,
    /// Where the weights came from: "gguf" | "nexttoken-model" | "builtin".
    pub format: String,
    /// How the weights are stored in the file, e.g. "Q4_1 (210 tensors), F32 (61 tensors)".
    pub quant: Option<String>,
    /// Size of the model file, when it came from one.
    pub file_bytes: Option<usize>,
    /// The chat template the tokenizer carries ("chatml"), if any.
    pub chat: Option<String>,
}

pub trait LanguageModel {
    fn info(&self) -> ModelInfo;

    /// Feeds `tokens` after the ones already cached (prefill when the cache
    /// is empty, decode when `tokens.len() == 1`) and returns the logits
    /// for the position after the last one. The position of each new token
    /// is the cache length, never chosen by the caller.
    fn forward_cached(&mut self, tokens: &[u32]) -> Result<Vec<f32>>;

    /// Full recompute over `tokens` from scratch, leaving the cache alone;
    /// returns the logits at every position, `[tokens.len()][vocab]`.
    fn forward_naive(&mut self, tokens: &[u32]) -> Result<Vec<Vec<f32>>>;

    /// The same recompute, but only the logits after the last token (what
    /// a generation without the cache samples from): a model may skip the
    /// LM head at the other positions (for SmolLM2 at 1,024 tokens, 200 MB
    /// of logits nobody reads).
    fn forward_naive_last(&mut self, tokens: &[u32]) -> Result<Vec<f32>> {
        match self.forward_naive(tokens)?.pop() {
            Some(row) => Ok(row),
            None => crate::bail!("no tokens to run"),
        }
    }

    /// Teacher forcing in one pass from scratch (the cache is left alone and
    /// no work is counted): hands the logits at each position of `tokens` to
    /// `each`, in order. A model may compute them in chunks to bound memory.
    fn for_each_position(&mut self, tokens: &[u32], each: &mut dyn FnMut(usize, &[f32]) -> Result<()>) -> Result<()> {
        for (i, row) in self.forward_naive(tokens)?.iter().enumerate() {
            each(i, row)?;
        }
        Ok(())
    }

    /// Positions held in the cache.
    fn cache_len(&self) -> usize;

    /// Rewinds the cache to its first `n` positions (`n <= cache_len`).
    fn truncate(&mut self, n: usize);

    /// Work done so far, cached and naive paths counted separately.
    fn counters(&self) -> Counters;

    /// Zeroes the work counters (a new generation starts).
    fn reset_counters(&mut self);
}
