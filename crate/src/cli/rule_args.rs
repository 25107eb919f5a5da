//! The decoding-rule flags shared by `dist` and `generate`.

use clap::Args;

use crate::error::{Error, Result};
use crate::rules::{Order, PenaltyMode, RuleSettings};

#[derive(Args, Debug, Clone)]
pub struct RuleArgs {
    /// 0 = greedy; otherwise in [1e-4, 100].
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub temperature: f64,
    /// Keep the k most likely tokens (0 = off).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub top_k: usize,
    /// Keep the smallest set reaching this mass, in (0, 1] (1 = off).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub top_p: f64,
    /// Keep tokens with p >= min_p * p_max, in [0, 1] (0 = off).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub min_p: f64,
    /// Divide positive / multiply negative logits of recent tokens, >= 1 (1 = off).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub repetition_penalty: f64,
    /// Penalise once per occurrence (the course's demo) instead of once per token.
    #[arg(long)]
    pub per_occurrence: bool,
    /// How many of the latest tokens the penalties look at (0 = all).
    #[arg(long, default_value_t = 64, allow_negative_numbers = true)]
    pub window: usize,
    /// Subtract this once from each distinct recent token, in [-2, 2].
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub presence_penalty: f64,
    /// Subtract this per occurrence of a recent token, in [-2, 2].
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub frequency_penalty: f64,
    /// Comma-separated `ID:BIAS` pairs added to logits, e.g. `2:1.5,0:-3`.
    #[arg(long, allow_hyphen_values = true)]
    pub bias: Option<String>,
    /// Comma-separated ids that get probability 0.
    #[arg(long, allow_hyphen_values = true)]
    pub ban: Option<String>,
    /// `hf` (temperature first) or `llama` (temperature last).
    #[arg(long, default_value = "hf")]
    pub order: String,
}

impl RuleArgs {
    /// The rule settings these flags describe (checked later against the vocabulary).
    pub fn to_settings(&self) -> Result<RuleSettings> {
        let order = match self.order.as_str() {
            "hf" => Order::HuggingFace,
            "llama" => Order::LlamaCpp,
            other => crate::bail!("--order: '{other}' is not an order: use 'hf' or 'llama'"),
        };
        Ok(RuleSettings {
            temperature: self.temperature,
            top_k: self.top_k,
            top_p: self.top_p,
            min_p: self.min_p,
            repetition_penalty: self.repetition_penalty,
            penalty_window: self.window,
            penalty_mode: if self.per_occurrence {
                PenaltyMode::PerOccurrence
            } else {
                PenaltyMode::PerToken
            },
            presence_penalty: self.presence_penalty,
            frequency_penalty: self.frequency_penalty,
            logit_bias: match &self.bias {
                Some(list) => parse_bias(list)?,
                None => Vec::new(),
            },
            banned: match &self.ban {
                Some(list) => parse_ids("--ban", list)?,
                None => Vec::new(),
            },
            order,
        })
    }
}

/// Splits a comma-separated list, refusing empty items with their position.
pub fn split_items<'a>(flag: &str, list: &'a str) -> Result<Vec<&'a str>> {
    let items: Vec<&str> = list.split(',').map(str::trim).collect();
    if let Some(i) = items.iter().position(|s| s.is_empty()) {
        crate::bail!(
            "{flag}: item {} is empty in '{list}' (expected a comma-separated list)",
            i + 1
        );
    }
    Ok(items)
}

pub fn parse_ids(flag: &str, list: &str) -> Result<Vec<u32>> {
    split_items(flag, list)?
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            s.parse::<u32>().map_err(|_| {
                Error::new(format!(
                    "{flag}: item {} '{s}' is not a token id (0, 1, 2, ...)",
                    i + 1
                ))
            })
        })
        .collect()
}

fn parse_bias(list: &str) -> Result<Vec<(u32, f64)>> {
    split_items("--bias", list)?
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let bad = || {
                Error::new(format!(
                    "--bias: item {} '{item}' is not ID:BIAS (e.g. 2:1.5)",
                    i + 1
                ))
            };
            let (id, b) = item.split_once(':').ok_or_else(bad)?;
            Ok((
                id.trim().parse().map_err(|_| bad())?,
                b.trim().parse().map_err(|_| bad())?,
            ))
        })
        .collect()
}
