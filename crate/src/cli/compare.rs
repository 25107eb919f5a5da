//! `nexttoken compare`: two decoding configurations, each in an engine's
//! words, on one model and prompt: side by side at the prompt's next token,
//! then N continuations each from the same seeds, printed as JSON (the
//! numbers the page's compare panel shows).

use std::io::Write;

use clap::Args;
use serde::Serialize;

use super::model_arg::ModelArgs;
use super::config::read_config;
use crate::compare::{CompareReport, SideBySide};
use crate::dialect::{self, Dialect, Imported};
use crate::error::{Error, Result};
use crate::settings::GenerationSettings;

#[derive(Args, Debug)]
pub struct CompareArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[arg(long, allow_hyphen_values = true)]
    pub prompt: String,
    /// Configuration A: a file, or the text itself (llama.cpp flags, a
    /// generation_config.json, an OpenAI-style body); `default` = the
    /// playground's defaults.
    #[arg(long, allow_hyphen_values = true)]
    pub a: String,
    /// Configuration B, as A.
    #[arg(long, allow_hyphen_values = true)]
    pub b: String,
    /// A's format: `llama_cpp`, `hf` or `openai` (detected when not given).
    #[arg(long)]
    pub a_format: Option<String>,
    /// B's format.
    #[arg(long)]
    pub b_format: Option<String>,
    /// Continuations per configuration (1 to 64).
    #[arg(long, default_value_t = 8)]
    pub runs: usize,
    /// Tokens per continuation at most.
    #[arg(long, default_value_t = 32)]
    pub max_new: usize,
    /// Continuation i of both uses seed SEED + i.
    #[arg(long, default_value_t = GenerationSettings::default().seed)]
    pub seed: u64,
}

/// One side's configuration as it was read.
#[derive(Serialize)]
struct Read {
    #[serde(flatten)]
    imported: Option<Imported>,
    settings: GenerationSettings,
}

#[derive(Serialize)]
struct CompareJson {
    prompt: String,
    a: Read,
    b: Read,
    /// Both at the prompt's next token.
    step: SideBySide,
    runs: CompareReport,
}

/// A configuration from a file or the text itself.
fn read_side(name: &str, spec: &str, format: Option<&str>, base: &GenerationSettings, vocab: usize) -> Result<Read> {
    if spec == "default" {
        return Ok(Read { imported: None, settings: base.clone() });
    }
    let path = std::path::Path::new(spec);
    let text = if path.is_file() { read_config(path)? } else { spec.to_string() };
    let dialect = format.map(Dialect::from_name).transpose()?;
    let imported = dialect::import(&text, dialect, base, vocab).map_err(|e| Error::new(format!("--{name}: {}", e.message)))?;
    let mut settings = imported.settings.clone();
    settings.seed = base.seed;
    Ok(Read { imported: Some(imported), settings })
}

pub fn run(args: CompareArgs) -> Result<()> {
    let mut session = args.model.open()?;
    let vocab = session.info().vocab_size;
    let base = GenerationSettings { seed: args.seed, max_new: args.max_new, ..Default::default() };
    let a = read_side("a", &args.a, args.a_format.as_deref(), &base, vocab)?;
    let b = read_side("b", &args.b, args.b_format.as_deref(), &base, vocab)?;
    session.start(&args.prompt, &a.settings)?;
    let step = session.side_by_side(&a.settings, &b.settings)?;
    session.compare_start(&args.prompt, &a.settings, &b.settings, args.runs, args.max_new)?;
    while !session.compare_next()?.finished {}
    let runs = session.compare_finish()?;
    let out = CompareJson { prompt: args.prompt, a, b, step, runs };
    let mut text = serde_json::to_string(&out).map_err(|e| Error::new(format!("cannot write JSON: {e}")))?;
    text.push('\n');
    std::io::stdout().lock().write_all(text.as_bytes()).map_err(|e| Error::new(format!("cannot write to stdout: {e}")))
}
