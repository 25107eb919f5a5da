//! `--model`: a GGUF file, a folder (or model.json) of a trained model, or `builtin:NAME`.

use crate::backend::BackendKind;
use crate::builtin;
use crate::error::{Error, Result};
use crate::gguf;
use crate::kv_cache::KvPrecision;
use crate::loader;
use crate::session::Session;

/// The flags of every command that runs a model.
#[derive(clap::Args, Debug)]
pub struct ModelArgs {
    /// A GGUF file, a model folder (or its model.json), or `builtin:NAME` (logits10, bigram-abc, kv-demo).
    #[arg(long)]
    pub model: String,
    /// `flex` (default) or `ndarray` (needs the ndarray feature).
    #[arg(long, default_value = "flex")]
    pub backend: String,
    /// The KV cache's numbers: `f16` or `f32` (default: f16 for a GGUF file, as llama.cpp; f32 for the others).
    #[arg(long = "kv-type")]
    pub kv_type: Option<String>,
}

impl ModelArgs {
    pub fn open(&self) -> Result<Session> {
        open_session(&self.model, &self.backend, self.kv_type.as_deref())
    }
}

/// The model, with its KV cache in `kv_type` (`f16`/`f32`) when given, else
/// in the model's default (`KvPrecision::default_for`).
pub fn open_session(model: &str, backend: &str, kv_type: Option<&str>) -> Result<Session> {
    let kv = kv_type.map(KvPrecision::parse).transpose()?;
    let mut session = open_default(model, backend)?;
    if let Some(kv) = kv {
        session.set_kv_precision(kv)?;
    }
    Ok(session)
}

fn open_default(model: &str, backend: &str) -> Result<Session> {
    let backend = BackendKind::parse(backend)?;
    match model.strip_prefix("builtin:") {
        Some(name) => builtin::open(name),
        None if is_gguf_path(std::path::Path::new(model)) => {
            let path = std::path::Path::new(model);
            let bytes = std::fs::read(path).map_err(|e| Error::new(format!("cannot read {}: {e}", path.display())))?;
            let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("gguf");
            gguf::session_from_gguf(bytes, name, backend)
        }
        None if !std::path::Path::new(model).exists() => Err(Error::new(format!(
            "no model at '{model}': give a model folder (e.g. www/models/bard), its model.json, a .gguf file, or builtin:NAME ({})",
            builtin::NAMES.join(", ")
        ))),
        None => loader::session_from_path(std::path::Path::new(model), backend),
    }
}

/// A file named `.gguf`, or any file that starts with the GGUF magic.
fn is_gguf_path(path: &std::path::Path) -> bool {
    use std::io::Read;
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gguf")) {
        return true;
    }
    let mut magic = [0u8; 4];
    path.is_file() && std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && gguf::looks_like_gguf(&magic)
}
