//! Every setting of a generation in one struct, with a default for every
//! field: the rules, the seed, the stop conditions, the cache, beam search and
//! chat mode. The page, the URL, the CLI and the worker all send this.

use serde::{Deserialize, Serialize};

use crate::bail;
use crate::error::Result;
use crate::rules::RuleSettings;

/// The longest generation one run may ask for.
pub const MAX_NEW: usize = 4096;
/// The most beams a search keeps.
pub const MAX_BEAMS: usize = 16;
/// The largest length-normalisation exponent.
pub const MAX_ALPHA: f64 = 2.0;
/// The most top rows a report lists.
pub const MAX_TOP_N: usize = 100;
/// The largest seed: 2^53 - 1, the largest integer a JS number (the page,
/// the URL) holds exactly, so a seed means the same on both sides.
pub const MAX_SEED: u64 = (1 << 53) - 1;

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

impl ContextPolicy {
    pub const ALL: [ContextPolicy; 2] = [ContextPolicy::Error, ContextPolicy::Sliding];
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
    /// Checks every field: the rules' (`RuleSettings::validate`), then the rest.
    pub fn validate(&self, vocab_size: usize) -> Result<()> {
        self.rules.validate(vocab_size)?;
        self.validate_beyond_rules()
    }

    /// Checks the fields the rules do not read (the rules check theirs when
    /// they run: `rules::run_rules`), so a preview checks each field once.
    pub fn validate_beyond_rules(&self) -> Result<()> {
        if self.seed > MAX_SEED {
            bail!("seed must be between 0 and {MAX_SEED} (2^53 - 1), got {}", self.seed);
        }
        if self.max_new == 0 || self.max_new > MAX_NEW {
            bail!("max_new must be between 1 and {MAX_NEW}, got {}", self.max_new);
        }
        if !(1..=MAX_BEAMS).contains(&self.beams) {
            bail!("beams must be between 1 and {MAX_BEAMS}, got {}", self.beams);
        }
        if !(self.alpha.is_finite() && (0.0..=MAX_ALPHA).contains(&self.alpha)) {
            bail!("alpha must be between 0 and {MAX_ALPHA}, got {}", self.alpha);
        }
        if !(1..=MAX_TOP_N).contains(&self.top_n) {
            bail!("top_n must be between 1 and {MAX_TOP_N}, got {}", self.top_n);
        }
        if let Some(s) = self.stop.iter().find(|s| s.is_empty()) {
            bail!("stop strings must not be empty (got {s:?})");
        }
        Ok(())
    }
}
