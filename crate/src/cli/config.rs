//! `nexttoken config`: reads a decoding configuration in one engine's words
//! and writes it in another's (or as the playground's settings JSON), saying
//! on stderr what was filled in and what the target cannot express.

use std::io::Write;

use clap::Args;

use crate::dialect::{self, Dialect, Imported, MAX_CONFIG_BYTES};
use crate::error::{Error, Result};

#[derive(Args, Debug)]
pub struct ConfigArgs {
    /// The configuration: a file (llama.cpp flags, a generation_config.json, an OpenAI-style body).
    #[arg(long, value_name = "FILE")]
    pub from: std::path::PathBuf,
    /// Its format: `llama_cpp`, `hf` or `openai` (detected when not given).
    #[arg(long)]
    pub format: Option<String>,
    /// Write it as `llama_cpp`, `hf`, `openai`, or `settings` (the playground's JSON).
    #[arg(long, default_value = "settings")]
    pub to: String,
}

pub fn run(args: ConfigArgs) -> Result<()> {
    let text = read_config(&args.from)?;
    let from = args.format.as_deref().map(Dialect::from_name).transpose()?;
    let imported = dialect::import(&text, from, &Default::default(), u32::MAX as usize)
        .map_err(|e| Error::new(format!("{}: {}", args.from.display(), e.message)))?;
    tell_import(&imported);
    let out = if args.to == "settings" {
        serde_json::to_string_pretty(&imported.settings).map_err(|e| Error::new(e.to_string()))?
    } else {
        let exported = dialect::export(&imported.settings, Dialect::from_name(&args.to)?);
        for n in &exported.notes {
            eprintln!("{}: {}", args.to, n.message);
        }
        exported.text
    };
    std::io::stdout().lock().write_all(format!("{out}\n").as_bytes()).map_err(|e| Error::new(format!("cannot write to stdout: {e}")))
}

/// A configuration file's text, its size checked before it is read.
pub fn read_config(path: &std::path::Path) -> Result<String> {
    let len = std::fs::metadata(path).map_err(|e| Error::new(format!("--config {}: {e}", path.display())))?.len();
    if len > MAX_CONFIG_BYTES as u64 {
        crate::bail!("--config {}: the file is {len} bytes; a configuration is at most {} KB", path.display(), MAX_CONFIG_BYTES / 1024);
    }
    std::fs::read_to_string(path).map_err(|e| Error::new(format!("--config {}: {e}", path.display())))
}

/// Says on stderr what an imported configuration filled in and its notes.
pub fn tell_import(imported: &Imported) {
    eprintln!("config: read as {}", imported.read_as);
    if !imported.filled.is_empty() {
        let filled: Vec<String> = imported.filled.iter().map(|f| format!("{} {}", f.engine_key, f.value)).collect();
        eprintln!("config: {}'s defaults filled in: {}", imported.filled[0].engine, filled.join(", "));
    }
    for n in &imported.notes {
        let at = if n.line == 0 { String::new() } else { format!(" line {}", n.line) };
        eprintln!("config{at}: {}", n.message);
    }
}
