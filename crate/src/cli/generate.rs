//! `nexttoken generate`: run the generation loop on a model and print the
//! text (streamed), or every step's report as JSON, or the beams.

use std::io::Write;

use clap::Args;
use serde::Serialize;

use super::model_arg::ModelArgs;
use super::rule_args::{RuleArgs, choice, help, name_of};
use crate::error::{Error, Result};
use crate::report::{StepReport, Transcript};
use crate::settings::GenerationSettings;

/// The engine's defaults, which the flags below start from.
fn defaults() -> GenerationSettings {
    GenerationSettings::default()
}

#[derive(Args, Debug)]
pub struct GenerateArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[arg(long, allow_hyphen_values = true)]
    pub prompt: String,
    /// The prompt is a user's message: wrap it in the model's chat template (the answer ends at its end-of-turn token).
    #[arg(long)]
    pub chat: bool,
    #[command(flatten)]
    pub rules: RuleArgs,
    // Negative numbers reach the parser, which names the flag ("--seed -1"
    // would otherwise be "unexpected argument '-1'").
    #[arg(long, allow_negative_numbers = true, help = format!("{} [default: {}]", help("The draw's seed", "seed"), defaults().seed))]
    pub seed: Option<u64>,
    #[arg(long, allow_negative_numbers = true, help = format!("{} [default: {}]", help("Stop after this many new tokens", "max_new"), defaults().max_new))]
    pub max_new: Option<usize>,
    /// Stop when the generated text contains this string (repeatable).
    #[arg(long = "stop", allow_hyphen_values = true)]
    pub stop: Vec<String>,
    /// Recompute everything at every step instead of using the KV cache.
    #[arg(long)]
    pub no_cache: bool,
    /// What to do when the context is full: `error` (stop) or `sliding`.
    #[arg(long, default_value_t = name_of(defaults().context_policy))]
    pub context_policy: String,
    /// Beam search with this many beams instead of sampling.
    #[arg(long, help = help("Beam search with this many beams instead of sampling", "beams"))]
    pub beams: Option<usize>,
    #[arg(long, default_value_t = defaults().alpha,
          help = help("Length normalisation exponent for beam search: score = logprob / length^alpha", "alpha"))]
    pub alpha: f64,
    /// Print JSON: every step's report (sampling) or the beam report.
    #[arg(long)]
    pub json: bool,
}

/// The whole generation (the session's transcript) and each step's report
/// (what that step added).
#[derive(Serialize)]
struct GenerateJson {
    #[serde(flatten)]
    transcript: Transcript,
    steps: Vec<StepReport>,
}

/// The settings the flags give: `--config` read over the defaults, and the
/// flags given on the command line over it (said on stderr).
pub fn settings_from(args: &GenerateArgs) -> Result<GenerationSettings> {
    let base = GenerationSettings {
        seed: args.seed.unwrap_or(defaults().seed),
        max_new: args.max_new.unwrap_or(defaults().max_new),
        stop: args.stop.clone(),
        use_cache: !args.no_cache,
        context_policy: choice("--context-policy", "context_policy", &args.context_policy)?,
        beams: args.beams.unwrap_or(defaults().beams),
        alpha: args.alpha,
        chat: args.chat,
        ..defaults()
    };
    let (mut s, imported) = args.rules.to_generation(base)?;
    if let Some(imported) = &imported {
        super::config::tell_import(imported);
        s.seed = args.seed.unwrap_or(s.seed);
        s.max_new = args.max_new.unwrap_or(s.max_new);
        if !args.stop.is_empty() {
            s.stop = args.stop.clone();
        }
    }
    Ok(s)
}

fn write_out(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| Error::new(format!("cannot write to stdout: {e}")))
}

pub fn run(args: GenerateArgs) -> Result<()> {
    let settings = settings_from(&args)?;
    let mut session = args.model.open()?;
    super::rule_args::note_top_k_past_vocabulary(settings.rules.top_k, session.info().vocab_size);
    let first = session.start(&args.prompt, &settings)?;
    if args.beams.is_some() {
        let beams = session.beam(&settings)?;
        let text = if args.json {
            serde_json::to_string(&beams).expect("beams serialise") + "\n"
        } else {
            beams
                .beams
                .iter()
                .map(|b| format!("score {:>9.4}  logprob {:>9.4}  len {:>3}  {:?}\n", b.score, b.logprob, b.length, b.text))
                .collect()
        };
        return write_out(&text);
    }
    // The text streams as whole characters: a token that ends inside one
    // (an emoji split over byte tokens) adds nothing until the next completes it.
    let mut shown = first.full.map(|t| t.text).unwrap_or_default();
    if !args.json {
        write_out(&shown)?;
    }
    let mut steps = Vec::new();
    loop {
        let rep = session.step(&settings)?;
        if !args.json {
            write_out(&rep.text_delta)?;
            shown.push_str(&rep.text_delta);
        }
        let stop = rep.stop;
        if args.json {
            steps.push(rep);
        }
        if let Some(reason) = stop {
            if !args.json {
                // A character left unfinished at the end is shown as decode shows it.
                write_out(session.text().get(shown.len()..).unwrap_or_default())?;
                eprintln!("\n[stopped: {}]", reason.describe());
            }
            break;
        }
    }
    if args.json {
        return write_out(&(serde_json::to_string(&GenerateJson { transcript: session.transcript(), steps }).expect("reports serialise") + "\n"));
    }
    Ok(())
}
