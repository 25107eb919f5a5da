//! The parser entry points the fuzz targets drive, shared with the
//! regression test (`crate/tests/fuzz_regressions.rs` includes this file), so
//! a saved crash is replayed through exactly the code that found it.
//!
//! Each takes arbitrary bytes and returns whether the engine accepted them;
//! refusing is fine, panicking or aborting is the bug.

use nexttoken::backend::BackendKind;
use nexttoken::config::{MlpKind, ModelConfig, NormKind, Positions, RopeStyle};
use nexttoken::gguf::{self, GgufFile, WeightStorage};
use nexttoken::tokenizer::{BpeTokenizer, Tokenizer};
use nexttoken::weights::{self, Manifest};

/// Text every tokenizer the fuzzer builds is asked to encode and decode.
const SAMPLE: &str = "ROMEO: O, 42 fois\u{e9}\n\t<|im_end|> \u{1F600}";

/// The names of the targets, as in crate/fuzz/Cargo.toml and the corpus folders.
#[allow(dead_code)]
pub const TARGETS: [&str; 5] = ["gguf", "gguf_vocab", "safetensors", "manifest", "tokenizer_json"];

#[allow(dead_code)]
pub fn run(target: &str, data: &[u8]) -> bool {
    match target {
        "gguf" => gguf_model(data),
        "gguf_vocab" => gguf_vocab(data),
        "safetensors" => safetensors(data),
        "manifest" => manifest(data),
        "tokenizer_json" => tokenizer_json(data),
        other => panic!("no fuzz target named {other}"),
    }
}

/// A whole GGUF file as the page and the CLI load it: layout, metadata,
/// tensor checks, tokenizer, the model built over the bytes.
pub fn gguf_model(data: &[u8]) -> bool {
    gguf::model_from_gguf(data.to_vec(), "fuzz", BackendKind::Flex, WeightStorage::Blocks).is_ok()
}

/// The GGUF reader and the tokenizer rebuilt from its `tokenizer.ggml.*`
/// metadata (reached without the model's tensors), then used once.
pub fn gguf_vocab(data: &[u8]) -> bool {
    let Ok(file) = GgufFile::parse(data) else { return false };
    let _ = gguf::vocab::tokenizer_json(&file);
    match gguf::vocab::tokenizer(&file) {
        Ok(tok) => exercise(&tok),
        Err(_) => false,
    }
}

/// The model.json manifest.
pub fn manifest(data: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(data) else { return false };
    Manifest::parse(text).is_ok()
}

/// A tokenizer.json, then used once.
pub fn tokenizer_json(data: &[u8]) -> bool {
    match BpeTokenizer::from_json(data) {
        Ok(tok) => exercise(&tok),
        Err(_) => false,
    }
}

/// SafeTensors weights for a small fixed config (what a manifest's weights file feeds).
pub fn safetensors(data: &[u8]) -> bool {
    let Ok(device) = BackendKind::Flex.device() else { return false };
    weights::load_weights(&tiny_config(), data.to_vec(), &device).is_ok()
}

/// The config whose weights the safetensors seeds hold (pkg-scripts/fuzz writes them).
pub fn tiny_config() -> ModelConfig {
    ModelConfig {
        vocab_size: 8,
        d_model: 8,
        n_layers: 1,
        n_heads: 2,
        n_kv_heads: 1,
        head_dim: 4,
        d_ff: 8,
        context: 16,
        positions: Positions::Rope { base: 10000.0, style: RopeStyle::RotateHalf },
        norm: NormKind::RmsNorm,
        norm_eps: 1e-5,
        mlp: MlpKind::SwiGlu,
        tied_embeddings: true,
        bias: false,
        options: Default::default(),
    }
}

fn exercise(tok: &BpeTokenizer) -> bool {
    if let Ok(ids) = tok.encode(SAMPLE) {
        let _ = tok.decode(&ids);
        for &id in ids.iter().take(16) {
            let _ = tok.display(id);
        }
    }
    true
}
