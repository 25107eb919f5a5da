//! `nexttoken dist`: run the rule pipeline on a logits vector given on the
//! command line and show every stage, as JSON or as a table.

use std::io::Write;

use clap::Args;
use serde::Serialize;

use crate::error::{Error, Result};
use super::rule_args::{RuleArgs, parse_ids, split_items};
use crate::rules::{RawDistribution, Stage, StageMemo, run_rules};

#[derive(Args, Debug)]
pub struct DistArgs {
    /// Comma-separated logits, e.g. `3,2.5,2` or `--logits=-1,2` (`-inf` allowed).
    #[arg(long, allow_hyphen_values = true)]
    pub logits: String,
    /// Comma-separated ids of the tokens so far (the history the penalties see).
    #[arg(long, allow_hyphen_values = true)]
    pub recent: Option<String>,
    #[command(flatten)]
    pub rules: RuleArgs,
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
    let (settings, imported) = args.rules.to_generation(Default::default())?;
    if let Some(imported) = &imported {
        super::config::tell_import(imported);
    }
    let settings = settings.rules;
    let raw = RawDistribution::new(logits.clone())?;
    super::rule_args::note_top_k_past_vocabulary(settings.top_k, logits.len());
    let (stages, rules_alone) = run_rules(&raw, &history, &settings, &StageMemo::default())?;
    let report = DistReport { stages, rules_alone };
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
