//! GGUF, llama.cpp's model file: one file holding the architecture's
//! metadata, the tokenizer and the (usually quantised) tensors.
//!
//! ```text
//! bytes ─► reader::GgufFile (layout, checked against the file's length)
//!       ─► llama::config_from_metadata ─► ModelConfig
//!       ─► llama::check_tensors (names, shapes, types: before any allocation)
//!       ─► llama::load_transformer (quant::dequantize to f32, per tensor) ─► DecoderLm
//!       ─► vocab::tokenizer (tokenizer.ggml.* as a tokenizer.json) ─► BpeTokenizer
//! ```

pub mod llama;
pub mod metadata;
pub mod quant;
pub mod reader;
#[cfg(test)]
pub(crate) mod test_file;
pub mod vocab;

pub use reader::{GgufFile, TensorInfo};

use crate::backend::BackendKind;
use crate::error::Result;
use crate::model::{DecoderLm, WeightsSource};
use crate::session::Session;
use crate::tokenizer::{BpeTokenizer, Tokenizer};

/// The model and its tokenizer from a GGUF file's bytes. Everything the
/// file claims is checked before the weights are allocated; the bytes are
/// only borrowed, so the caller can free them as soon as this returns.
pub fn model_from_gguf(bytes: &[u8], name: &str, backend: BackendKind) -> Result<(DecoderLm, BpeTokenizer)> {
    let file = GgufFile::parse(bytes)?;
    let config = llama::config_from_metadata(&file)?;
    llama::check_tensors(&file, &config)?;
    let tokenizer = vocab::tokenizer(&file)?;
    let device = backend.device()?;
    let model = llama::load_transformer(&file, &config, &device)?;
    let mut lm = DecoderLm::new(name, config, model, backend)?;
    lm.eos_id = tokenizer.eos_id();
    lm.source = WeightsSource { format: "gguf", quant: Some(llama::describe_types(&file)), file_bytes: Some(bytes.len()) };
    Ok((lm, tokenizer))
}

pub fn session_from_gguf(bytes: &[u8], name: &str, backend: BackendKind) -> Result<Session> {
    let (lm, tok) = model_from_gguf(bytes, name, backend)?;
    Session::new(Box::new(lm), Box::new(tok))
}

/// Whether these bytes start like a GGUF file (the CLI and the page pick the loader by this).
pub fn looks_like_gguf(bytes: &[u8]) -> bool {
    bytes.starts_with(reader::MAGIC)
}
