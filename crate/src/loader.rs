//! From model files to a ready `Session`: manifest, weights and tokenizer,
//! from bytes (the browser) or from a folder (the CLI).

use crate::backend::BackendKind;
use crate::bail;
use crate::error::Result;
use crate::model::{DecoderLm, WeightsSource};
use crate::session::Session;
use crate::tokenizer::{BpeTokenizer, Tokenizer};
use crate::weights::{self, Manifest};

/// The model and its tokenizer from the three files' contents.
pub fn model_from_files(
    manifest_json: &str,
    weights_bytes: Vec<u8>,
    tokenizer_json: &[u8],
    backend: BackendKind,
) -> Result<(DecoderLm, BpeTokenizer)> {
    let manifest = Manifest::parse(manifest_json)?;
    let mut tokenizer = BpeTokenizer::from_json(tokenizer_json)?;
    tokenizer.set_eos_id(manifest.eos_id)?;
    if tokenizer.vocab_size() > manifest.config.vocab_size {
        bail!(
            "the tokenizer has {} tokens but the model config only {}",
            tokenizer.vocab_size(),
            manifest.config.vocab_size
        );
    }
    let device = backend.device()?;
    let model = weights::load_weights(&manifest.config, weights_bytes, &device)?;
    let mut lm = DecoderLm::new(&manifest.name, manifest.config, model, backend)?;
    lm.eos_id = manifest.eos_id;
    lm.set_source(WeightsSource { format: "nexttoken-model", quant: None, file_bytes: None });
    Ok((lm, tokenizer))
}

pub fn session_from_files(manifest_json: &str, weights_bytes: Vec<u8>, tokenizer_json: &[u8], backend: BackendKind) -> Result<Session> {
    let (lm, tok) = model_from_files(manifest_json, weights_bytes, tokenizer_json, backend)?;
    Session::new(Box::new(lm), Box::new(tok))
}

/// Reads `model.json` (a folder holding it, or the file itself) and the files it names.
#[cfg(not(target_arch = "wasm32"))]
pub fn read_model_files(path: &std::path::Path) -> Result<(String, Vec<u8>, Vec<u8>)> {
    let manifest_path = if path.is_dir() { path.join("model.json") } else { path.to_path_buf() };
    let read = |p: &std::path::Path| {
        std::fs::read(p).map_err(|e| crate::error::Error::new(format!("cannot read {}: {e}", p.display())))
    };
    let manifest_bytes = read(&manifest_path)?;
    let manifest_json = String::from_utf8(manifest_bytes)
        .map_err(|_| crate::error::Error::new(format!("{} is not UTF-8 text", manifest_path.display())))?;
    let manifest = Manifest::parse(&manifest_json)?;
    let dir = manifest_path.parent().unwrap_or(std::path::Path::new("."));
    let weights_bytes = read(&dir.join(&manifest.weights))?;
    let tokenizer_bytes = read(&dir.join(&manifest.tokenizer))?;
    Ok((manifest_json, weights_bytes, tokenizer_bytes))
}

#[cfg(not(target_arch = "wasm32"))]
pub fn session_from_path(path: &std::path::Path, backend: BackendKind) -> Result<Session> {
    let (m, w, t) = read_model_files(path)?;
    session_from_files(&m, w, &t, backend)
}
