//! What the generation session needs from a model: run tokens through it
//! with a cache it owns, rewind that cache, and say what it costs.
//!
//! The transformer implements this; so do the course's toy models (the
//! lesson-18 bigram and the lesson-21 fixed logit vector), so the page and
//! the CLI drive all of them through one `Session`.

use serde::Serialize;

use crate::counters::Counters;
use crate::error::Result;
use crate::inside::Capture;
use crate::kv_cache::KvHeld;

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
    /// The sliding-window layers, if the model has any (Gemma 3); the
    /// other layers are global.
    pub sliding_window: Option<WindowInfo>,
}

impl ModelInfo {
    /// A built-in course model with no transformer layers (its logits come
    /// from a table): no heads, no KV cache, no file, no tensor backend.
    pub fn builtin_table(name: &str, kind: &str, vocab_size: usize, d_model: usize, context: usize, params: usize) -> Self {
        ModelInfo {
            name: name.into(),
            kind: kind.into(),
            vocab_size,
            layers: 0,
            heads: 0,
            kv_heads: 0,
            head_dim: 0,
            d_model,
            context,
            params,
            bytes_per_number: 4,
            backend: "none".into(),
            eos_id: None,
            format: "builtin".into(),
            quant: None,
            file_bytes: None,
            chat: None,
            sliding_window: None,
        }
    }
}

/// A model's sliding-window (local) layers, as the KV panel shows them.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WindowInfo {
    /// Positions a local layer's query sees, its own included.
    pub size: usize,
    /// The local layers, 0-based.
    pub local_layers: Vec<usize>,
    /// The most positions a local layer's KV cache holds while the text
    /// grows: its ring of pages (the window, the page being written and a
    /// page of slack for stepping back; `kv_cache::ring`).
    pub ring: usize,
}

pub trait LanguageModel {
    fn info(&self) -> ModelInfo;

    /// Feeds `tokens` after the ones already cached (prefill when the cache
    /// is empty, decode when `tokens.len() == 1`) and returns the logits
    /// for the position after the last one. The position of each new token
    /// is the cache length, never chosen by the caller.
    fn forward_cached(&mut self, tokens: &[u32]) -> Result<Vec<f32>>;

    /// `forward_cached`, and what the last position's query read from the
    /// cache in every layer and the residual stream there (`inside`), from
    /// the same pass. A model without layers captures nothing.
    fn forward_cached_inside(&mut self, tokens: &[u32]) -> Result<(Vec<f32>, Option<Capture>)> {
        Ok((self.forward_cached(tokens)?, None))
    }

    /// The logit lens: the model's final norm and LM head applied to each of
    /// `residuals` (a `Capture`'s), the logits handed to `each` in order.
    fn lens(&mut self, residuals: &[Vec<f32>], each: &mut dyn FnMut(usize, &[f32]) -> Result<()>) -> Result<()> {
        let _ = (residuals, each);
        crate::bail!("{} has no layers to look inside", self.info().name)
    }

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

    /// What the KV cache holds, by kind of layer. A model whose cache keeps
    /// every position in every layer (all but sliding-window models) holds
    /// `cache_len` positions in each, all global.
    fn kv_held(&self) -> KvHeld {
        let (info, len) = (self.info(), self.cache_len());
        let bytes = crate::counters::cache_bytes(info.layers, info.kv_heads, len, info.head_dim, info.bytes_per_number);
        KvHeld { global_positions: len, local_positions: 0, global_bytes: bytes, local_bytes: 0 }
    }

    /// Rewinds the cache to its first `n` positions (`n <= cache_len`).
    fn truncate(&mut self, n: usize);

    /// Work done so far, cached and naive paths counted separately.
    fn counters(&self) -> Counters;

    /// Zeroes the work counters (a new generation starts).
    fn reset_counters(&mut self);

    /// Replaces the KV cache by an empty one of this precision (at load:
    /// what was cached is dropped). A model without a KV cache refuses.
    fn set_kv_precision(&mut self, precision: crate::kv_cache::KvPrecision) -> Result<()> {
        crate::bail!("{} keeps no KV cache, so it has no KV type to set ({})", self.info().name, precision.name())
    }
}

/// Refuses what a model returned when any logit is NaN or infinite.
///
/// A network's forward pass gives finite numbers unless its weights are
/// corrupted or its arithmetic overflowed, so every non-finite value is
/// refused here, -inf included: a model never means "impossible" by it.
/// Masking a token is the bans setting's job, which the rules apply after
/// this check (its -inf never reaches here). The course's hand-written
/// vector (`models::logits`) takes finite numbers only, for the same reason.
/// `position` is the index in the sequence of the token the logits predict.
pub fn check_output(logits: &[f32], position: usize) -> Result<()> {
    // Sound logits, every step: one pass without branches (it vectorises);
    // the counts below only for broken ones.
    if logits.iter().fold(true, |sound, z| sound & z.is_finite()) {
        return Ok(());
    }
    let (mut nan, mut pos_inf, mut neg_inf, mut first) = (0usize, 0usize, 0usize, None);
    for (i, &z) in logits.iter().enumerate() {
        if z.is_finite() {
            continue;
        }
        if z.is_nan() {
            nan += 1;
        } else if z > 0.0 {
            pos_inf += 1;
        } else {
            neg_inf += 1;
        }
        first.get_or_insert(i);
    }
    let Some(first) = first else { return Ok(()) };
    let counts: Vec<String> = [(nan, "NaN"), (pos_inf, "+inf"), (neg_inf, "-inf")]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
    crate::bail!(
        "the model's logits at position {position} are broken: {} of {} values (the first at token id {first}); \
         nothing is sampled from them. Its weights or arithmetic are corrupted: rewind to an earlier token or load the model again",
        counts.join(", "),
        logits.len()
    )
}

#[cfg(test)]
mod tests {
    use super::check_output;

    #[test]
    fn finite_logits_pass_and_every_non_finite_kind_is_counted() {
        assert!(check_output(&[0.0, -1e30, 3.5, f32::MAX], 4).is_ok());
        let e = check_output(&[1.0, f32::NAN, f32::INFINITY, f32::NAN, f32::NEG_INFINITY, 2.0], 17).unwrap_err();
        assert!(e.message.starts_with("the model's logits at position 17 are broken: 2 NaN, 1 +inf, 1 -inf of 6 values (the first at token id 1)"), "{e}");
        let e = check_output(&[f32::NEG_INFINITY; 3], 0).unwrap_err();
        assert!(e.message.contains("position 0 are broken: 3 -inf of 3 values (the first at token id 0)"), "{e}");
    }
}
