//! Model files: a manifest (`model.json`) that names the format and version
//! and carries the config, next to SafeTensors weights and a tokenizer.
//!
//! ```text
//! www/models/<name>/
//!   model.json         {"format": "nexttoken-model", "version": 1, "name", "config", "weights", "tokenizer", ...}
//!   model.safetensors  tensors named by module path (blocks.0.attn.wq.weight, ...)
//!   tokenizer.json     Hugging Face tokenizers format
//! ```

use burn::module::Module;
use burn::store::{ModuleSnapshot, SafetensorsStore};
use burn::tensor::Device;
use serde::{Deserialize, Serialize};

use crate::bail;
use crate::config::ModelConfig;
use crate::error::{Error, Result};
use crate::model::Transformer;

pub const FORMAT: &str = "nexttoken-model";
pub const VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub format: String,
    pub version: u32,
    pub name: String,
    pub config: ModelConfig,
    /// File name of the weights, relative to the manifest.
    pub weights: String,
    /// File name of the tokenizer (tokenizer.json), relative to the manifest.
    pub tokenizer: String,
    /// End-of-sequence token, if the tokenizer has one.
    #[serde(default)]
    pub eos_id: Option<u32>,
    /// Free-form facts about how it was made (training run, corpus, losses).
    #[serde(default)]
    pub provenance: serde_json::Value,
}

impl Manifest {
    /// Parses and checks a manifest: the right format, a version this build reads, a buildable config.
    pub fn parse(json: &str) -> Result<Self> {
        let value: serde_json::Value =
            serde_json::from_str(json).map_err(|e| Error::new(format!("model manifest is not valid JSON: {e}")))?;
        match value.get("format").and_then(|f| f.as_str()) {
            Some(FORMAT) => {}
            Some(other) => bail!("model manifest has format '{other}', expected '{FORMAT}'"),
            None => bail!("model manifest has no \"format\" field: is this a nexttoken model.json?"),
        }
        match value.get("version").and_then(|v| v.as_u64()) {
            Some(v) if v == VERSION as u64 => {}
            Some(v) => bail!("model manifest version {v} is not supported (this build reads version {VERSION})"),
            None => bail!("model manifest has no \"version\" field"),
        }
        let manifest: Manifest =
            serde_json::from_value(value).map_err(|e| Error::new(format!("model manifest: {e}")))?;
        manifest.config.validate()?;
        check_file_name("weights", &manifest.weights)?;
        check_file_name("tokenizer", &manifest.tokenizer)?;
        Ok(manifest)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a manifest always serialises")
    }
}

/// A manifest names files beside itself, never elsewhere: a plain file name
/// (no folder separator, not `.` or `..`, no NUL, at most 255 bytes), so a
/// hostile `model.json` cannot make the loader read outside the model's folder
/// (`"../../etc/passwd"`, `"/etc/passwd"`, `"C:\\x"` on Windows).
fn check_file_name(field: &str, name: &str) -> Result<()> {
    let plain = !name.is_empty()
        && name.len() <= 255
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\', '\0', ':']);
    if !plain {
        let shown: String = name.chars().take(80).collect();
        bail!("model manifest: \"{field}\" must be a file name beside model.json, not {shown:?}");
    }
    Ok(())
}

/// A library's message cut to a readable length: burn lists every mismatched
/// tensor, which for a wrong config is kilobytes the page would show whole.
fn brief(message: &str) -> String {
    const MAX: usize = 400;
    match message.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{} … ({} more characters)", &message[..cut], message.len() - cut),
        None => message.to_string(),
    }
}

/// The weights as SafeTensors bytes.
pub fn weights_to_bytes(model: &Transformer) -> Result<Vec<u8>> {
    let mut store = SafetensorsStore::from_bytes(None);
    model.save_into(&mut store).map_err(|e| Error::new(format!("saving weights failed: {e}")))?;
    store.get_bytes().map_err(|e| Error::new(format!("saving weights failed: {e}")))
}

/// Builds the architecture from `config` and fills it from SafeTensors
/// bytes; every parameter must be present with its exact shape.
pub fn load_weights(config: &ModelConfig, bytes: Vec<u8>, device: &Device) -> Result<Transformer> {
    config.validate()?;
    let mut model = Transformer::init(config, device);
    let mut store = SafetensorsStore::from_bytes(Some(bytes)).validate(true);
    let applied = model
        .load_from(&mut store)
        .map_err(|e| Error::new(format!("the weights file does not fit the model config: {}", brief(&e.to_string()))))?;
    if !applied.missing.is_empty() {
        let names: Vec<&str> = applied.missing.iter().map(|(n, _)| n.as_str()).take(5).collect();
        bail!("the weights file lacks {} tensors the config needs, e.g. {}", applied.missing.len(), names.join(", "));
    }
    if !applied.errors.is_empty() {
        bail!("the weights file does not fit the model config: {:?}", applied.errors.first());
    }
    if !applied.unused.is_empty() {
        let names: Vec<&str> = applied.unused.iter().map(|n| n.as_str()).take(5).collect();
        bail!("the weights file has {} tensors the config has no place for, e.g. {}", applied.unused.len(), names.join(", "));
    }
    Ok(model.to_device(device))
}

#[cfg(test)]
mod manifest_tests {
    use super::Manifest;

    /// The shipped bard manifest with its file names replaced.
    fn with_files(weights: &str, tokenizer: &str) -> String {
        let mut v: serde_json::Value = serde_json::from_str(include_str!("../../www/models/bard/model.json")).unwrap();
        v["weights"] = weights.into();
        v["tokenizer"] = tokenizer.into();
        v.to_string()
    }

    #[test]
    fn file_names_cannot_leave_the_model_folder() {
        assert!(Manifest::parse(&with_files("model.safetensors", "tokenizer.json")).is_ok());
        assert!(Manifest::parse(&with_files("weights.v2.safetensors", "tok-1.json")).is_ok());
        for bad in ["../model.safetensors", "../../etc/passwd", "/etc/passwd", "sub/model.safetensors", "..", ".", "",
            "C:\\x", "a\\b", "nul\0byte"] {
            let e = Manifest::parse(&with_files(bad, "tokenizer.json")).unwrap_err();
            assert!(e.message.starts_with("model manifest: \"weights\" must be a file name beside model.json"), "{bad:?}: {e}");
            let e = Manifest::parse(&with_files("model.safetensors", bad)).unwrap_err();
            assert!(e.message.contains("\"tokenizer\" must be a file name"), "{bad:?}: {e}");
        }
        let long = "x".repeat(256);
        assert!(Manifest::parse(&with_files(&long, "tokenizer.json")).is_err());
    }

    #[test]
    fn weights_that_do_not_fit_the_config_say_so_briefly() {
        let manifest = Manifest::parse(include_str!("../../www/models/bard/model.json")).unwrap();
        let wrong = crate::config::ModelConfig { d_model: 256, head_dim: 32, ..manifest.config };
        let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../www/models/bard/model.safetensors")).unwrap();
        let device = crate::backend::BackendKind::Flex.device().unwrap();
        let e = super::load_weights(&wrong, bytes, &device).err().expect("a 256-wide config does not fit bard's 192-wide file");
        assert!(e.message.starts_with("the weights file does not fit the model config: "), "{e}");
        assert!(e.message.contains("ShapeMismatch"), "{e}");
        assert!(e.message.chars().count() < 520 && e.message.ends_with(" more characters)"), "{} characters: {e}", e.message.len());
    }
}
