//! The knobs of the rule pipeline and their allowed ranges.

use serde::{Deserialize, Serialize};

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
}

impl Order {
    pub const ALL: [Order; 2] = [Order::HuggingFace, Order::LlamaCpp];
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
    pub order: Order,
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
        Ok(())
    }
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
