//! The decoding-rule flags shared by `dist` and `generate`. Defaults and the
//! ranges in the help come from the engine's settings definition
//! (`RuleSettings::default()`, `SettingsTable`); the ranges are checked by
//! the engine, not here.

use clap::Args;
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};
use crate::rules::{PenaltyMode, RuleSettings};
use crate::settings::SettingsTable;

/// The engine's defaults, which every flag below starts from.
fn defaults() -> RuleSettings {
    RuleSettings::default()
}

/// "WHAT, in RANGE", the range read off the settings table.
pub fn help(what: &str, key: &str) -> String {
    let table = SettingsTable::new();
    let range = table.number(key).map(|r| r.describe()).unwrap_or_default();
    format!("{what}, in {range}")
}

/// One of a setting's names, as the engine reads it (`hf`, `per_token`, ...).
pub fn choice<T: DeserializeOwned>(flag: &str, key: &str, name: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(name.to_string())).map_err(|_| {
        let table = SettingsTable::new();
        let options = table.choices.iter().find(|c| c.key == key).map(|c| c.options.join("' or '")).unwrap_or_default();
        Error::new(format!("{flag}: '{name}' is not a choice: use '{options}'"))
    })
}

/// The serde name of a choice's value (a flag's default).
pub fn name_of<T: serde::Serialize>(value: T) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

#[derive(Args, Debug, Clone)]
pub struct RuleArgs {
    #[arg(long, default_value_t = defaults().temperature, allow_negative_numbers = true,
          help = help("Temperature (0 = greedy)", "temperature"))]
    pub temperature: f64,
    #[arg(long, default_value_t = defaults().top_k, allow_negative_numbers = true,
          help = help("Keep the k most likely tokens (0 = off)", "top_k"))]
    pub top_k: usize,
    #[arg(long, default_value_t = defaults().top_p, allow_negative_numbers = true,
          help = help("Keep the smallest set reaching this mass (1 = off)", "top_p"))]
    pub top_p: f64,
    #[arg(long, default_value_t = defaults().min_p, allow_negative_numbers = true,
          help = help("Keep tokens with p >= min_p * p_max (0 = off)", "min_p"))]
    pub min_p: f64,
    #[arg(long, default_value_t = defaults().repetition_penalty, allow_negative_numbers = true,
          help = help("Divide positive / multiply negative logits of recent tokens (1 = off)", "repetition_penalty"))]
    pub repetition_penalty: f64,
    /// Penalise once per occurrence (the course's demo) instead of once per token.
    #[arg(long)]
    pub per_occurrence: bool,
    #[arg(long, default_value_t = defaults().penalty_window, allow_negative_numbers = true,
          help = help("How many of the latest tokens the penalties look at (0 = all)", "penalty_window"))]
    pub window: usize,
    #[arg(long, default_value_t = defaults().presence_penalty, allow_negative_numbers = true,
          help = help("Subtract this once from each distinct recent token", "presence_penalty"))]
    pub presence_penalty: f64,
    #[arg(long, default_value_t = defaults().frequency_penalty, allow_negative_numbers = true,
          help = help("Subtract this per occurrence of a recent token", "frequency_penalty"))]
    pub frequency_penalty: f64,
    /// Comma-separated `ID:BIAS` pairs added to logits, e.g. `2:1.5,0:-3`.
    #[arg(long, allow_hyphen_values = true)]
    pub bias: Option<String>,
    /// Comma-separated ids that get probability 0.
    #[arg(long, allow_hyphen_values = true)]
    pub ban: Option<String>,
    /// `hf` (temperature first) or `llama` (temperature last).
    #[arg(long, default_value_t = name_of(defaults().order))]
    pub order: String,
}

impl RuleArgs {
    /// The rule settings these flags describe (checked later against the vocabulary).
    pub fn to_settings(&self) -> Result<RuleSettings> {
        Ok(RuleSettings {
            temperature: self.temperature,
            top_k: self.top_k,
            top_p: self.top_p,
            min_p: self.min_p,
            repetition_penalty: self.repetition_penalty,
            penalty_window: self.window,
            penalty_mode: if self.per_occurrence { PenaltyMode::PerOccurrence } else { defaults().penalty_mode },
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
            order: choice("--order", "order", &self.order)?,
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
