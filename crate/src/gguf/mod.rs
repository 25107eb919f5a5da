//! GGUF, llama.cpp's model file: one file holding the architecture's
//! metadata, the tokenizer and the (usually quantised) tensors.
//!
//! ```text
//! bytes ─► reader::GgufFile (layout, checked against the file's length)
//!       ─► llama::config_from_metadata ─► ModelConfig
//!       ─► llama::check_tensors (names, shapes, types: before any allocation)
//!       ─► load::plan (norms dequantised; where each block matrix lies)
//!       ─► load::build (the bytes become one u8 tensor, the matrices views of it) ─► DecoderLm
//!       ─► vocab::tokenizer (tokenizer.ggml.*: byte-level BPE as a tokenizer.json,
//!          or SentencePiece merged by score) ─► BpeTokenizer
//! ```

pub mod llama;
pub mod load;
pub mod metadata;
pub mod pre_tokenizer;
pub mod quant;
pub mod reader;
#[cfg(test)]
pub(crate) mod test_file;
pub mod vocab;

pub use load::WeightStorage;
pub use reader::{GgufFile, TensorInfo};

use crate::backend::BackendKind;
use crate::error::Result;
use crate::model::{DecoderLm, WeightsSource};
use crate::session::Session;
use crate::tokenizer::{BpeTokenizer, Tokenizer};

/// The model and its tokenizer from a GGUF file's bytes. Everything the
/// file claims is checked before the weights are allocated. The matrices
/// the kernels read stay in these bytes, which the model takes over
/// (without a copy on burn-flex).
pub fn model_from_gguf(bytes: Vec<u8>, name: &str, backend: BackendKind, storage: WeightStorage) -> Result<(DecoderLm, BpeTokenizer)> {
    let file_bytes = bytes.len();
    // `from_elems`, not `from_bytes_vec`: the latter copies any buffer not
    // declared 16-byte aligned, and u8 blocks need no alignment.
    let bytes = burn::tensor::Bytes::from_elems(bytes);
    let device = backend.device()?;
    let (config, tokenizer, plan, quant) = {
        let file = GgufFile::parse(&bytes)?;
        let config = llama::config_from_metadata(&file)?;
        llama::check_tensors(&file, &config)?;
        let tokenizer = vocab::tokenizer(&file)?;
        let plan = load::plan(&file, &config, storage)?;
        (config, tokenizer, plan, llama::describe_types(&file))
    };
    let model = load::build(&config, plan, bytes, &device)?;
    let mut lm = DecoderLm::new(name, config, model, backend)?;
    lm.eos_id = tokenizer.eos_id();
    lm.set_source(WeightsSource { format: "gguf", quant: Some(quant), file_bytes: Some(file_bytes) });
    Ok((lm, tokenizer))
}

pub fn session_from_gguf(bytes: Vec<u8>, name: &str, backend: BackendKind) -> Result<Session> {
    let (lm, tok) = model_from_gguf(bytes, name, backend, WeightStorage::Blocks)?;
    Session::new(Box::new(lm), Box::new(tok))
}

/// Whether these bytes start like a GGUF file (the CLI and the page pick the loader by this).
pub fn looks_like_gguf(bytes: &[u8]) -> bool {
    bytes.starts_with(reader::MAGIC)
}
