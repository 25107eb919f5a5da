//! GGUF, llama.cpp's model file: one file holding the architecture's
//! metadata, the tokenizer and the (usually quantised) tensors.
//!
//! ```text
//! bytes ─► reader::GgufFile (layout, checked against the file's length)
//!       ─► arch::read (the family's file: llama, qwen2, qwen3, gemma3, phi3) ─► ModelConfig + Layout
//!       ─► arch::check_tensors (names, shapes, types: before any allocation)
//!       ─► load::plan (norms dequantised; where each block matrix lies)
//!       ─► load::build (the bytes become one u8 tensor, the matrices views of it) ─► DecoderLm
//!       ─► vocab::tokenizer (tokenizer.ggml.*: byte-level BPE as a tokenizer.json,
//!          or SentencePiece merged by score) ─► BpeTokenizer
//! ```

pub mod arch;
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
    let (mut lm, tokenizer) = load(bytes, name, backend, storage, |file| vocab::tokenizer(file))?;
    lm.eos_id = tokenizer.eos_id();
    Ok((lm, tokenizer))
}

/// The model alone, its tokenizer not read (a caller that feeds token ids).
pub fn decoder_from_gguf(bytes: Vec<u8>, name: &str, backend: BackendKind, storage: WeightStorage) -> Result<DecoderLm> {
    load(bytes, name, backend, storage, |_| Ok(())).map(|(lm, ())| lm)
}

/// Parses and checks the file, reads what `extra` reads of it (before any
/// weight is allocated), then builds the model.
fn load<T>(
    bytes: Vec<u8>,
    name: &str,
    backend: BackendKind,
    storage: WeightStorage,
    extra: impl FnOnce(&GgufFile) -> Result<T>,
) -> Result<(DecoderLm, T)> {
    let file_bytes = bytes.len();
    // `from_elems`, not `from_bytes_vec`: the latter copies any buffer not
    // declared 16-byte aligned, and u8 blocks need no alignment.
    let bytes = burn::tensor::Bytes::from_elems(bytes);
    let device = backend.device()?;
    let (model, extra, plan, quant) = {
        let file = GgufFile::parse(&bytes)?;
        let model = arch::read(&file)?;
        arch::check_tensors(&file, &model)?;
        let extra = extra(&file)?;
        let plan = load::plan(&file, &model, storage)?;
        (model, extra, plan, arch::describe_types(&file))
    };
    let weights = load::build(&model, plan, bytes, &device)?;
    let mut lm = DecoderLm::new(name, model.config, weights, backend)?;
    lm.set_source(WeightsSource { format: "gguf", quant: Some(quant), file_bytes: Some(file_bytes) });
    Ok((lm, extra))
}

pub fn session_from_gguf(bytes: Vec<u8>, name: &str, backend: BackendKind) -> Result<Session> {
    let (lm, tok) = model_from_gguf(bytes, name, backend, WeightStorage::Blocks)?;
    Session::new(Box::new(lm), Box::new(tok))
}

/// Whether these bytes start like a GGUF file (the CLI and the page pick the loader by this).
pub fn looks_like_gguf(bytes: &[u8]) -> bool {
    bytes.starts_with(reader::MAGIC)
}
