//! `nexttoken dist`: run the rule pipeline on a logits vector given on the
//! command line and show every stage, as JSON or as a table.

use std::io::Write;

use clap::Args;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::rules::{Order, PenaltyMode, RuleSettings, Stage, run_pipeline, run_rules_alone};

#[derive(Args, Debug)]
pub struct DistArgs {
    /// Comma-separated logits, e.g. `3,2.5,2` or `--logits=-1,2` (`-inf` allowed).
    #[arg(long, allow_hyphen_values = true)]
    pub logits: String,
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
    /// Comma-separated ids of the tokens so far (the history the penalties see).
    #[arg(long, allow_hyphen_values = true)]
    pub recent: Option<String>,
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
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// What `--json` prints.
#[derive(Serialize)]
struct DistReport {
    stages: Vec<Stage>,
    rules_alone: Vec<Stage>,
}

pub fn run(args: DistArgs) -> Result<()> {
    let logits = parse_logits(&args.logits)?;
    let history = match &args.recent {
        Some(list) => parse_ids("--recent", list)?,
        None => Vec::new(),
    };
    let settings = build_settings(&args)?;
    let report = DistReport {
        stages: run_pipeline(&logits, &history, &settings)?,
        rules_alone: run_rules_alone(&logits, &settings)?,
    };
    let text = if args.json {
        let mut json = serde_json::to_string(&report)
            .map_err(|e| Error::new(format!("cannot write JSON: {e}")))?;
        json.push('\n');
        json
    } else {
        format_table(&logits, &report)
    };
    // A closed pipe (`| head`) is an error message, not a panic from println!.
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| Error::new(format!("cannot write to stdout: {e}")))
}

fn build_settings(args: &DistArgs) -> Result<RuleSettings> {
    let order = match args.order.as_str() {
        "hf" => Order::HuggingFace,
        "llama" => Order::LlamaCpp,
        other => crate::bail!("--order: '{other}' is not an order: use 'hf' or 'llama'"),
    };
    Ok(RuleSettings {
        temperature: args.temperature,
        top_k: args.top_k,
        top_p: args.top_p,
        min_p: args.min_p,
        repetition_penalty: args.repetition_penalty,
        penalty_window: args.window,
        penalty_mode: if args.per_occurrence {
            PenaltyMode::PerOccurrence
        } else {
            PenaltyMode::PerToken
        },
        presence_penalty: args.presence_penalty,
        frequency_penalty: args.frequency_penalty,
        logit_bias: match &args.bias {
            Some(list) => parse_bias(list)?,
            None => Vec::new(),
        },
        banned: match &args.ban {
            Some(list) => parse_ids("--ban", list)?,
            None => Vec::new(),
        },
        order,
    })
}

/// Splits a comma-separated list, refusing empty items with their position.
fn split_items<'a>(flag: &str, list: &'a str) -> Result<Vec<&'a str>> {
    let items: Vec<&str> = list.split(',').map(str::trim).collect();
    if let Some(i) = items.iter().position(|s| s.is_empty()) {
        crate::bail!(
            "{flag}: item {} is empty in '{list}' (expected a comma-separated list)",
            i + 1
        );
    }
    Ok(items)
}

fn parse_logits(list: &str) -> Result<Vec<f64>> {
    split_items("--logits", list)?
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            s.parse::<f64>()
                .map_err(|_| Error::new(format!("--logits: item {} '{s}' is not a number", i + 1)))
        })
        .collect()
}

fn parse_ids(flag: &str, list: &str) -> Result<Vec<u32>> {
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

/// One row per token, one column per stage; a dropped token shows `-`.
/// Below: kept count, kept raw mass and entropies of every column.
fn format_table(logits: &[f64], report: &DistReport) -> String {
    let columns: Vec<&Stage> = report.stages.iter().chain(&report.rules_alone).collect();
    let mut out = String::new();
    out.push_str(&format!("{:>6} {:>10}", "token", "logit"));
    for (i, st) in columns.iter().enumerate() {
        // Rules-alone columns are marked so "top_k" alone and in the pipeline differ.
        let name = if i < report.stages.len() {
            st.name.clone()
        } else {
            format!("{}*", st.name)
        };
        out.push_str(&format!(" {name:>11}"));
    }
    out.push('\n');
    for (id, z) in logits.iter().enumerate() {
        out.push_str(&format!("{id:>6} {z:>10.4}"));
        for st in &columns {
            if st.kept[id] {
                out.push_str(&format!(" {:>11.6}", st.probs[id]));
            } else {
                out.push_str(&format!(" {:>11}", "-"));
            }
        }
        out.push('\n');
    }
    type Summary = (&'static str, fn(&Stage) -> String);
    let summaries: [Summary; 4] = [
        ("kept", |s| s.kept_count.to_string()),
        ("kept mass", |s| format!("{:.6}", s.kept_mass)),
        ("H bits", |s| format!("{:.6}", s.entropy_bits)),
        ("H nats", |s| format!("{:.6}", s.entropy_nats)),
    ];
    for (label, value_of) in summaries {
        out.push_str(&format!("{label:>17}"));
        for st in &columns {
            out.push_str(&format!(" {:>11}", value_of(st)));
        }
        out.push('\n');
    }
    out.push_str(
        "(- = dropped; * = the rule alone on the raw logits, top_k/top_p/min_p at tau = 1)\n",
    );
    out
}
