//! The knobs of the rule pipeline and their allowed ranges.
//!
//! Over 400 lines only with its unit tests (the code is about 370): the
//! fields, their ranges and `validate` are one definition, read together.

use serde::{Deserialize, Serialize};

use super::chain::StageKind;
use crate::error::Result;

/// Where temperature sits in the pipeline.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Order {
    /// Hugging Face transformers: temperature first, then the truncations.
    #[serde(rename = "hf")]
    #[default]
    HuggingFace,
    /// llama.cpp: truncations first on the tau = 1 distribution, temperature last.
    #[serde(rename = "llama")]
    LlamaCpp,
    /// The OpenAI-style API: penalties, logit bias, temperature, top-p.
    #[serde(rename = "openai")]
    OpenAi,
}

impl Order {
    pub const ALL: [Order; 3] = [Order::HuggingFace, Order::LlamaCpp, Order::OpenAi];

    /// The serde name ("hf", "llama", "openai").
    pub fn name(self) -> &'static str {
        match self {
            Order::HuggingFace => "hf",
            Order::LlamaCpp => "llama",
            Order::OpenAi => "openai",
        }
    }
}

/// How a token repeated inside the window is penalised.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PenaltyMode {
    /// Once per distinct recent token (Hugging Face).
    #[serde(rename = "per_token")]
    #[default]
    PerToken,
    /// Once per occurrence (the course's demo).
    #[serde(rename = "per_occurrence")]
    PerOccurrence,
}

impl PenaltyMode {
    pub const ALL: [PenaltyMode; 2] = [PenaltyMode::PerToken, PenaltyMode::PerOccurrence];
}

/// Every decoding rule's setting; the defaults turn every rule off.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(default)]
pub struct RuleSettings {
    /// 1 = the model's distribution; 0 = greedy; otherwise in [1e-4, 100].
    pub temperature: f64,
    /// 0 = off.
    pub top_k: usize,
    /// 1 = off; in (0, 1].
    pub top_p: f64,
    /// 0 = off; in [0, 1].
    pub min_p: f64,
    /// 1 = off; in [1, 100].
    pub repetition_penalty: f64,
    /// How many of the latest tokens the penalties look at; 0 = whole history.
    pub penalty_window: usize,
    pub penalty_mode: PenaltyMode,
    /// Subtracted once per distinct recent token; in [-2, 2] (OpenAI's range).
    pub presence_penalty: f64,
    /// Subtracted once per occurrence; in [-2, 2] (OpenAI's range).
    pub frequency_penalty: f64,
    /// `(token id, added logit)`; bias in [-100, 100].
    pub logit_bias: Vec<(u32, f64)>,
    /// Token ids that get probability 0.
    pub banned: Vec<u32>,
    /// The chain preset (see `chain`): "hf", "llama" or "openai".
    pub order: Order,
    /// The stages in the order the user built them; empty = `order`'s preset.
    pub chain: Vec<StageKind>,
    /// Every truncation keeps at least this many tokens (Hugging Face's
    /// min_tokens_to_keep, llama.cpp's min_keep); 0 and 1 mean the same.
    pub min_keep: usize,
    /// Locally typical sampling's mass; 1 = off; in (0, 1].
    pub typical_p: f64,
    /// Hugging Face's epsilon sampling; 0 = off; in [0, 1).
    pub epsilon_cutoff: f64,
    /// Hugging Face's eta sampling; 0 = off; in [0, 1).
    pub eta_cutoff: f64,
    /// llama.cpp's top-n-sigma: n standard deviations of the logits; 0 = off.
    pub top_n_sigma: f64,
    /// XTC: tokens at or above this probability are the "top choices"; above 0.5 XTC does nothing.
    pub xtc_threshold: f64,
    /// XTC: the chance that it removes the top choices at a step; 0 = off.
    pub xtc_probability: f64,
    /// DRY's strength; 0 = off.
    pub dry_multiplier: f64,
    /// DRY's growth per repeated token beyond the allowed length.
    pub dry_base: f64,
    /// The longest repeat DRY leaves alone.
    pub dry_allowed_length: usize,
    /// How many of the latest tokens DRY looks at: -1 = the whole history, 0 = off.
    pub dry_penalty_last_n: i64,
    /// Strings that end a repeat (a token whose text contains one breaks it).
    pub dry_sequence_breakers: Vec<String>,
    /// 0 = off, 1 = mirostat (v1), 2 = mirostat v2.
    pub mirostat: u8,
    /// Mirostat's target surprise tau, in bits (llama.cpp's --mirostat-ent).
    pub mirostat_tau: f64,
    /// Mirostat's learning rate eta (llama.cpp's --mirostat-lr).
    pub mirostat_eta: f64,
    /// Hugging Face's no_repeat_ngram_size; 0 = off.
    pub no_repeat_ngram_size: usize,
    /// Hugging Face's sequence_bias: `(token ids, bias)`; bias in [-100, 100].
    pub sequence_bias: Vec<(Vec<u32>, f64)>,
}

impl Default for RuleSettings {
    fn default() -> Self {
        Self {
            temperature: 1.0,
            top_k: 0,
            top_p: 1.0,
            min_p: 0.0,
            repetition_penalty: 1.0,
            penalty_window: 64,
            penalty_mode: PenaltyMode::PerToken,
            presence_penalty: 0.0,
            frequency_penalty: 0.0,
            logit_bias: Vec::new(),
            banned: Vec::new(),
            order: Order::HuggingFace,
            chain: Vec::new(),
            min_keep: 1,
            typical_p: 1.0,
            epsilon_cutoff: 0.0,
            eta_cutoff: 0.0,
            top_n_sigma: 0.0,
            xtc_threshold: 0.1,
            xtc_probability: 0.0,
            dry_multiplier: 0.0,
            dry_base: 1.75,
            dry_allowed_length: 2,
            dry_penalty_last_n: -1,
            dry_sequence_breakers: ["\n", ":", "\"", "*"].iter().map(|s| s.to_string()).collect(),
            mirostat: 0,
            mirostat_tau: 5.0,
            mirostat_eta: 0.1,
            no_repeat_ngram_size: 0,
            sequence_bias: Vec::new(),
        }
    }
}

pub const MIN_TEMPERATURE: f64 = 1e-4;
pub const MAX_TEMPERATURE: f64 = 100.0;
pub const MAX_REPETITION_PENALTY: f64 = 100.0;
pub const MAX_PRESENCE_FREQUENCY: f64 = 2.0;
pub const MAX_ABS_BIAS: f64 = 100.0;
/// Top-k beyond any vocabulary keeps every token; larger is a typing slip.
pub const MAX_TOP_K: usize = 1_000_000;
/// A window beyond any context looks at the whole history; larger is a slip.
pub const MAX_PENALTY_WINDOW: usize = 100_000;
pub const MAX_TOP_N_SIGMA: f64 = 100.0;
pub const MAX_DRY_MULTIPLIER: f64 = 100.0;
pub const MAX_DRY_BASE: f64 = 100.0;
pub const MAX_DRY_ALLOWED_LENGTH: usize = 1000;
/// llama.cpp truncates a longer breaker; here it is refused.
pub const MAX_BREAKER_CHARS: usize = 40;
pub const MAX_BREAKERS: usize = 64;
pub const MAX_MIROSTAT_TAU: f64 = 100.0;
pub const MAX_MIROSTAT_ETA: f64 = 10.0;
pub const MAX_NGRAM: usize = 1000;
/// The longest token sequence a sequence bias names.
pub const MAX_SEQUENCE_LEN: usize = 64;

impl RuleSettings {
    /// Checks every field against its range and every token id against the
    /// vocabulary; the message names the field, the value and what is allowed.
    pub fn validate(&self, vocab_size: usize) -> Result<()> {
        let tau = self.temperature;
        if tau.is_nan() || (tau != 0.0 && !(MIN_TEMPERATURE..=MAX_TEMPERATURE).contains(&tau)) {
            crate::bail!(
                "temperature = {tau} is out of range: use 0 (greedy) or a value in [{MIN_TEMPERATURE}, {MAX_TEMPERATURE}]"
            );
        }
        if self.top_k > MAX_TOP_K {
            crate::bail!("top_k = {} is out of range: it must be in [0, {MAX_TOP_K}] (0 = off)", self.top_k);
        }
        if !(self.top_p > 0.0 && self.top_p <= 1.0) {
            crate::bail!(
                "top_p = {} is out of range: it must be in (0, 1] (1 = off)",
                self.top_p
            );
        }
        if !(0.0..=1.0).contains(&self.min_p) {
            crate::bail!(
                "min_p = {} is out of range: it must be in [0, 1] (0 = off)",
                self.min_p
            );
        }
        let rho = self.repetition_penalty;
        if !(1.0..=MAX_REPETITION_PENALTY).contains(&rho) {
            crate::bail!(
                "repetition_penalty = {rho} is out of range: it must be in [1, {MAX_REPETITION_PENALTY}] (1 = off; below 1 would reward repetition)"
            );
        }
        if self.penalty_window > MAX_PENALTY_WINDOW {
            crate::bail!(
                "penalty_window = {} is out of range: it must be in [0, {MAX_PENALTY_WINDOW}] (0 = the whole history)",
                self.penalty_window
            );
        }
        check_symmetric_range(
            "presence_penalty",
            self.presence_penalty,
            MAX_PRESENCE_FREQUENCY,
        )?;
        check_symmetric_range(
            "frequency_penalty",
            self.frequency_penalty,
            MAX_PRESENCE_FREQUENCY,
        )?;
        for &(id, b) in &self.logit_bias {
            check_token_id("logit_bias", id, vocab_size)?;
            check_symmetric_range(&format!("logit_bias for token {id}"), b, MAX_ABS_BIAS)?;
        }
        for &id in &self.banned {
            check_token_id("banned", id, vocab_size)?;
        }
        self.validate_samplers(vocab_size)?;
        self.validate_chain()
    }

    /// The ranges of the samplers from issue 14 (typical, epsilon, eta,
    /// top-n-sigma, XTC, DRY, mirostat, no-repeat-ngram, sequence bias).
    fn validate_samplers(&self, vocab_size: usize) -> Result<()> {
        if self.min_keep > MAX_TOP_K {
            crate::bail!("min_keep = {} is out of range: it must be in [0, {MAX_TOP_K}]", self.min_keep);
        }
        if !(self.typical_p > 0.0 && self.typical_p <= 1.0) {
            crate::bail!("typical_p = {} is out of range: it must be in (0, 1] (1 = off)", self.typical_p);
        }
        for (field, v) in [("epsilon_cutoff", self.epsilon_cutoff), ("eta_cutoff", self.eta_cutoff)] {
            if !(0.0..1.0).contains(&v) {
                crate::bail!("{field} = {v} is out of range: it must be in [0, 1) (0 = off)");
            }
        }
        check_closed("top_n_sigma", self.top_n_sigma, 0.0, MAX_TOP_N_SIGMA, " (0 = off)")?;
        check_closed("xtc_threshold", self.xtc_threshold, 0.0, 1.0, " (above 0.5 XTC does nothing)")?;
        check_closed("xtc_probability", self.xtc_probability, 0.0, 1.0, " (0 = off)")?;
        check_closed("dry_multiplier", self.dry_multiplier, 0.0, MAX_DRY_MULTIPLIER, " (0 = off)")?;
        check_closed("dry_base", self.dry_base, 1.0, MAX_DRY_BASE, "")?;
        if self.dry_allowed_length > MAX_DRY_ALLOWED_LENGTH {
            crate::bail!(
                "dry_allowed_length = {} is out of range: it must be in [0, {MAX_DRY_ALLOWED_LENGTH}]",
                self.dry_allowed_length
            );
        }
        if !(-1..=MAX_PENALTY_WINDOW as i64).contains(&self.dry_penalty_last_n) {
            crate::bail!(
                "dry_penalty_last_n = {} is out of range: it must be in [-1, {MAX_PENALTY_WINDOW}] (-1 = the whole history, 0 = off)",
                self.dry_penalty_last_n
            );
        }
        if self.dry_sequence_breakers.len() > MAX_BREAKERS {
            crate::bail!("dry_sequence_breakers: {} breakers, at most {MAX_BREAKERS}", self.dry_sequence_breakers.len());
        }
        for b in &self.dry_sequence_breakers {
            if b.is_empty() || b.chars().count() > MAX_BREAKER_CHARS {
                crate::bail!("dry_sequence_breakers: {b:?} must have 1 to {MAX_BREAKER_CHARS} characters");
            }
        }
        if self.mirostat > 2 {
            crate::bail!("mirostat = {} is out of range: use 0 (off), 1 or 2 (the version)", self.mirostat);
        }
        check_closed("mirostat_tau", self.mirostat_tau, 0.0, MAX_MIROSTAT_TAU, "")?;
        check_closed("mirostat_eta", self.mirostat_eta, 0.0, MAX_MIROSTAT_ETA, "")?;
        if self.no_repeat_ngram_size > MAX_NGRAM {
            crate::bail!(
                "no_repeat_ngram_size = {} is out of range: it must be in [0, {MAX_NGRAM}] (0 = off)",
                self.no_repeat_ngram_size
            );
        }
        for (ids, b) in &self.sequence_bias {
            if ids.is_empty() || ids.len() > MAX_SEQUENCE_LEN {
                crate::bail!("sequence_bias: a sequence must have 1 to {MAX_SEQUENCE_LEN} token ids (got {})", ids.len());
            }
            for &id in ids {
                check_token_id("sequence_bias", id, vocab_size)?;
            }
            check_symmetric_range(&format!("sequence_bias for {ids:?}"), *b, MAX_ABS_BIAS)?;
        }
        Ok(())
    }

    /// The stages the pipeline runs, in order (`chain`, or `order`'s preset).
    pub fn stages(&self) -> &[StageKind] {
        if self.chain.is_empty() { self.order.preset() } else { &self.chain }
    }

    /// A chain names each stage at most once, and holds every sampler that is on.
    fn validate_chain(&self) -> Result<()> {
        let stages = self.stages();
        for (i, k) in stages.iter().enumerate() {
            if stages[..i].contains(k) {
                crate::bail!("chain: '{}' appears twice (each stage at most once)", k.name());
            }
        }
        let label = if self.chain.is_empty() { format!("the {} preset", self.order.name()) } else { "the chain".to_string() };
        for (kind, on) in self.samplers_on() {
            let present = stages.contains(&kind) || (kind == StageKind::TypicalP && stages.contains(&StageKind::TypicalPLlama));
            if on && !present {
                crate::bail!(
                    "{} is on but {label} has no '{}' stage: add it to the chain (or choose a preset that has it)",
                    kind.info().settings[0],
                    kind.name()
                );
            }
        }
        Ok(())
    }

    /// Each stage with whether its setting turns it on.
    fn samplers_on(&self) -> [(StageKind, bool); 15] {
        use StageKind::*;
        [
            (SequenceBias, !self.sequence_bias.is_empty()),
            (Penalties, self.repetition_penalty != 1.0 || self.presence_penalty != 0.0 || self.frequency_penalty != 0.0),
            (NoRepeatNgram, self.no_repeat_ngram_size > 0),
            (BiasBans, !self.logit_bias.is_empty() || !self.banned.is_empty()),
            (Dry, self.dry_multiplier != 0.0 && self.dry_penalty_last_n != 0),
            (Temperature, self.temperature != 1.0),
            (TopK, self.top_k != 0),
            (TopP, self.top_p < 1.0),
            (MinP, self.min_p > 0.0),
            (TypicalP, self.typical_p < 1.0),
            (EpsilonCutoff, self.epsilon_cutoff > 0.0),
            (EtaCutoff, self.eta_cutoff > 0.0),
            (TopNSigma, self.top_n_sigma > 0.0),
            (Xtc, self.xtc_probability > 0.0 && self.xtc_threshold <= 0.5),
            (Mirostat, self.mirostat != 0),
        ]
    }
}

fn check_closed(field: &str, value: f64, min: f64, max: f64, note: &str) -> Result<()> {
    if !(min..=max).contains(&value) {
        crate::bail!("{field} = {value} is out of range: it must be in [{min}, {max}]{note}");
    }
    Ok(())
}

fn check_symmetric_range(field: &str, value: f64, limit: f64) -> Result<()> {
    if !(-limit..=limit).contains(&value) {
        crate::bail!("{field} = {value} is out of range: it must be in [-{limit}, {limit}]");
    }
    Ok(())
}

fn check_token_id(field: &str, id: u32, vocab_size: usize) -> Result<()> {
    if id as usize >= vocab_size {
        crate::bail!(
            "{field}: token id {id} is outside the vocabulary (ids 0..{})",
            vocab_size.saturating_sub(1)
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message_of(s: RuleSettings) -> String {
        s.validate(10).expect_err("should be refused").message
    }

    #[test]
    fn defaults_are_valid_and_off() {
        assert!(RuleSettings::default().validate(1).is_ok());
    }

    #[test]
    fn out_of_range_values_name_the_field_and_value() {
        let m = message_of(RuleSettings {
            temperature: 1e-5,
            ..Default::default()
        });
        assert!(
            m.contains("temperature = 0.00001") && m.contains("[0.0001, 100]"),
            "{m}"
        );
        let m = message_of(RuleSettings {
            top_p: 0.0,
            ..Default::default()
        });
        assert!(m.contains("top_p = 0") && m.contains("(0, 1]"), "{m}");
        let m = message_of(RuleSettings {
            repetition_penalty: 0.5,
            ..Default::default()
        });
        assert!(m.contains("repetition_penalty = 0.5"), "{m}");
        let m = message_of(RuleSettings {
            min_p: f64::NAN,
            ..Default::default()
        });
        assert!(m.contains("min_p = NaN"), "{m}");
        let m = message_of(RuleSettings {
            banned: vec![10],
            ..Default::default()
        });
        assert!(m.contains("banned") && m.contains("10"), "{m}");
        let m = message_of(RuleSettings {
            logit_bias: vec![(3, f64::INFINITY)],
            ..Default::default()
        });
        assert!(m.contains("logit_bias for token 3"), "{m}");
    }

    #[test]
    fn settings_read_from_partial_json_with_defaults() {
        let s: RuleSettings = serde_json::from_str(
            r#"{"top_k": 5, "order": "llama", "penalty_mode": "per_occurrence"}"#,
        )
        .unwrap();
        assert_eq!(s.top_k, 5);
        assert_eq!(s.order, Order::LlamaCpp);
        assert_eq!(s.penalty_mode, PenaltyMode::PerOccurrence);
        assert_eq!(s.temperature, 1.0);
    }
}
