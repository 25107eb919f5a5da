//! The decoding-rule flags shared by `dist` and `generate`. Defaults, help
//! lines and ranges come from the engine's settings definition
//! (`RuleSettings::default()`, `rules::RULE_FIELDS`); the ranges are checked
//! by the engine, not here.

use clap::Args;
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};
use crate::rules::{Order, PenaltyMode, RuleSettings, StageKind, rule_field};
use crate::schema::SettingsTable;

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

/// A rule setting's help line, read off its field ("HELP (NOTE), in RANGE").
pub fn rule_help(key: &str) -> String {
    rule_field(key).map(|f| f.help_line()).unwrap_or_default()
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
          help = rule_help("temperature"))]
    pub temperature: f64,
    #[arg(long, default_value_t = defaults().top_k, allow_negative_numbers = true,
          help = rule_help("top_k"))]
    pub top_k: usize,
    #[arg(long, default_value_t = defaults().top_p, allow_negative_numbers = true,
          help = rule_help("top_p"))]
    pub top_p: f64,
    #[arg(long, default_value_t = defaults().min_p, allow_negative_numbers = true,
          help = rule_help("min_p"))]
    pub min_p: f64,
    #[arg(long, default_value_t = defaults().repetition_penalty, allow_negative_numbers = true,
          help = rule_help("repetition_penalty"))]
    pub repetition_penalty: f64,
    /// Penalise once per occurrence (the course's demo) instead of once per token.
    #[arg(long)]
    pub per_occurrence: bool,
    #[arg(long, default_value_t = defaults().penalty_window, allow_negative_numbers = true,
          help = rule_help("penalty_window"))]
    pub window: usize,
    #[arg(long, default_value_t = defaults().presence_penalty, allow_negative_numbers = true,
          help = rule_help("presence_penalty"))]
    pub presence_penalty: f64,
    #[arg(long, default_value_t = defaults().frequency_penalty, allow_negative_numbers = true,
          help = rule_help("frequency_penalty"))]
    pub frequency_penalty: f64,
    /// Comma-separated `ID:BIAS` pairs added to logits, e.g. `2:1.5,0:-3`.
    #[arg(long, allow_hyphen_values = true)]
    pub bias: Option<String>,
    /// Comma-separated ids that get probability 0.
    #[arg(long, allow_hyphen_values = true)]
    pub ban: Option<String>,
    /// `hf` (temperature first), `llama` (temperature last) or `openai`: the chain preset.
    #[arg(long, default_value_t = name_of(defaults().order))]
    pub order: String,
    /// The chain: a preset (`hf`, `llama`, `openai`) or stage names in order, e.g.
    /// `penalties,top_k,temperature` (overrides --order).
    #[arg(long)]
    pub chain: Option<String>,
    #[arg(long = "min-tokens-to-keep", default_value_t = defaults().min_keep,
          help = rule_help("min_keep"))]
    pub min_keep: usize,
    #[arg(long, default_value_t = defaults().typical_p,
          help = rule_help("typical_p"))]
    pub typical_p: f64,
    #[arg(long, default_value_t = defaults().epsilon_cutoff,
          help = rule_help("epsilon_cutoff"))]
    pub epsilon_cutoff: f64,
    #[arg(long, default_value_t = defaults().eta_cutoff,
          help = rule_help("eta_cutoff"))]
    pub eta_cutoff: f64,
    #[arg(long = "top-nsigma", default_value_t = defaults().top_n_sigma,
          help = rule_help("top_n_sigma"))]
    pub top_n_sigma: f64,
    #[arg(long, default_value_t = defaults().xtc_threshold,
          help = rule_help("xtc_threshold"))]
    pub xtc_threshold: f64,
    #[arg(long, default_value_t = defaults().xtc_probability,
          help = rule_help("xtc_probability"))]
    pub xtc_probability: f64,
    #[arg(long, default_value_t = defaults().dry_multiplier,
          help = rule_help("dry_multiplier"))]
    pub dry_multiplier: f64,
    #[arg(long, default_value_t = defaults().dry_base, help = rule_help("dry_base"))]
    pub dry_base: f64,
    #[arg(long, default_value_t = defaults().dry_allowed_length,
          help = rule_help("dry_allowed_length"))]
    pub dry_allowed_length: usize,
    #[arg(long, default_value_t = defaults().dry_penalty_last_n, allow_negative_numbers = true,
          help = rule_help("dry_penalty_last_n"))]
    pub dry_penalty_last_n: i64,
    /// A DRY sequence breaker (repeatable; the first one replaces the
    /// default list `\n`, `:`, `"`, `*`). Escapes: `\n`, `\t`, `\\`.
    #[arg(long = "dry-sequence-breaker", allow_hyphen_values = true)]
    pub dry_sequence_breakers: Vec<String>,
    #[arg(long, default_value_t = defaults().mirostat,
          help = rule_help("mirostat"))]
    pub mirostat: u8,
    #[arg(long = "mirostat-lr", default_value_t = defaults().mirostat_eta,
          help = rule_help("mirostat_eta"))]
    pub mirostat_eta: f64,
    #[arg(long = "mirostat-ent", default_value_t = defaults().mirostat_tau,
          help = rule_help("mirostat_tau"))]
    pub mirostat_tau: f64,
    #[arg(long, default_value_t = defaults().no_repeat_ngram_size,
          help = rule_help("no_repeat_ngram_size"))]
    pub no_repeat_ngram_size: usize,
    /// Hugging Face's sequence bias: `IDS:BIAS` items split by commas, the ids
    /// of a sequence by spaces, e.g. `5 6:-2,7:1.5`.
    #[arg(long, allow_hyphen_values = true)]
    pub sequence_bias: Option<String>,
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
            order: match self.chain.as_deref().and_then(preset_name) {
                Some(preset) => preset,
                None => choice("--order", "order", &self.order)?,
            },
            chain: match &self.chain {
                Some(list) if preset_name(list).is_none() => parse_chain(list)?,
                _ => Vec::new(),
            },
            min_keep: self.min_keep,
            typical_p: self.typical_p,
            epsilon_cutoff: self.epsilon_cutoff,
            eta_cutoff: self.eta_cutoff,
            top_n_sigma: self.top_n_sigma,
            xtc_threshold: self.xtc_threshold,
            xtc_probability: self.xtc_probability,
            dry_multiplier: self.dry_multiplier,
            dry_base: self.dry_base,
            dry_allowed_length: self.dry_allowed_length,
            dry_penalty_last_n: self.dry_penalty_last_n,
            dry_sequence_breakers: if self.dry_sequence_breakers.is_empty() {
                defaults().dry_sequence_breakers
            } else {
                self.dry_sequence_breakers.iter().map(|b| unescape(b)).collect()
            },
            mirostat: self.mirostat,
            mirostat_tau: self.mirostat_tau,
            mirostat_eta: self.mirostat_eta,
            no_repeat_ngram_size: self.no_repeat_ngram_size,
            sequence_bias: match &self.sequence_bias {
                Some(list) => parse_sequence_bias(list)?,
                None => Vec::new(),
            },
        })
    }
}

/// The preset a `--chain` value names, if it is one.
fn preset_name(list: &str) -> Option<Order> {
    Order::ALL.into_iter().find(|o| o.name() == list.trim())
}

/// `--chain a,b,c`: stage names in order.
fn parse_chain(list: &str) -> Result<Vec<StageKind>> {
    split_items("--chain", list)?
        .into_iter()
        .map(|name| {
            StageKind::from_name(name).ok_or_else(|| {
                let names: Vec<&str> = StageKind::ALL.iter().map(|k| k.name()).collect();
                let presets: Vec<&str> = Order::ALL.iter().map(|o| o.name()).collect();
                Error::new(format!(
                    "--chain: '{name}' is not a stage: use a preset ({}) or stage names from {}",
                    presets.join(", "),
                    names.join(", ")
                ))
            })
        })
        .collect()
}

/// `\n`, `\t` and `\\` in a breaker typed on a command line.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match (c, chars.clone().next()) {
            ('\\', Some('n')) => out.push('\n'),
            ('\\', Some('t')) => out.push('\t'),
            ('\\', Some('\\')) => out.push('\\'),
            _ => {
                out.push(c);
                continue;
            }
        }
        chars.next();
    }
    out
}

/// `--sequence-bias 5 6:-2,7:1.5`.
fn parse_sequence_bias(list: &str) -> Result<Vec<(Vec<u32>, f64)>> {
    split_items("--sequence-bias", list)?
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let bad = || Error::new(format!("--sequence-bias: item {} '{item}' is not IDS:BIAS (e.g. 5 6:-2)", i + 1));
            let (ids, b) = item.rsplit_once(':').ok_or_else(bad)?;
            let ids: Vec<u32> = ids.split_whitespace().map(|t| t.parse().map_err(|_| bad())).collect::<Result<_>>()?;
            Ok((ids, b.trim().parse().map_err(|_| bad())?))
        })
        .collect()
}

/// Splits a comma-separated list, refusing empty items with their position.
/// Says on stderr when `--top-k` is past the vocabulary: it is taken (a
/// setting written for a larger model still runs) and keeps every token.
pub fn note_top_k_past_vocabulary(top_k: usize, vocab_size: usize) {
    if top_k > vocab_size {
        eprintln!("note: --top-k {top_k} is more than the vocabulary's {vocab_size} tokens: it keeps every token");
    }
}

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
