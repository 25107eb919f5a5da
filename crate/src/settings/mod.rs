//! Every setting of a generation in one struct, with a default for every
//! field: the rules, the seed, the stop conditions, the cache, beam search and
//! chat mode. The page, the URL, the CLI and the worker all send this.

use serde::{Deserialize, Serialize};

use crate::bail;
use crate::error::Result;
use crate::rules::RuleSettings;

/// What to do when the next token does not fit in the context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContextPolicy {
    /// Stop with `context_full` (or refuse a prompt that does not fit).
    #[default]
    Error,
    /// Drop the oldest tokens, keeping the newest three quarters of the
    /// context, and re-prefill them (positions restart at 0).
    Sliding,
}

/// Every setting of a generation, one struct with defaults for every field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GenerationSettings {
    #[serde(flatten)]
    pub rules: RuleSettings,
    pub seed: u64,
    pub max_new: usize,
    pub stop: Vec<String>,
    pub use_cache: bool,
    pub context_policy: ContextPolicy,
    pub beams: usize,
    pub alpha: f64,
    pub top_n: usize,
    /// Wrap the prompt in the model's chat template (a user turn, then the
    /// assistant's) so that generation is the model's answer.
    pub chat: bool,
}

impl Default for GenerationSettings {
    fn default() -> Self {
        GenerationSettings {
            rules: RuleSettings::default(),
            seed: 42,
            max_new: 64,
            stop: Vec::new(),
            use_cache: true,
            context_policy: ContextPolicy::Error,
            beams: 3,
            alpha: 0.8,
            top_n: 10,
            chat: false,
        }
    }
}

impl GenerationSettings {
    pub fn validate(&self, vocab_size: usize) -> Result<()> {
        self.rules.validate(vocab_size)?;
        if self.max_new == 0 || self.max_new > 4096 {
            bail!("max_new must be between 1 and 4096, got {}", self.max_new);
        }
        if !(1..=16).contains(&self.beams) {
            bail!("beams must be between 1 and 16, got {}", self.beams);
        }
        if !(self.alpha.is_finite() && (0.0..=2.0).contains(&self.alpha)) {
            bail!("alpha must be between 0 and 2, got {}", self.alpha);
        }
        if !(1..=100).contains(&self.top_n) {
            bail!("top_n must be between 1 and 100, got {}", self.top_n);
        }
        if let Some(s) = self.stop.iter().find(|s| s.is_empty()) {
            bail!("stop strings must not be empty (got {s:?})");
        }
        Ok(())
    }
}
