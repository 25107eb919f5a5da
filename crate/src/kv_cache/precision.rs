//! What one cached number is stored as: f16 (as llama.cpp keeps its cache,
//! `type_k`/`type_v` = f16 by default) or f32.

use serde::Serialize;

use crate::bail;
use crate::error::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KvPrecision {
    F16,
    F32,
}

impl KvPrecision {
    /// Every precision, in the order the page offers them (the settings
    /// table lists their names for it).
    pub const ALL: [KvPrecision; 2] = [KvPrecision::F16, KvPrecision::F32];

    /// The one place the default is decided, from where the weights came
    /// from (`WeightsSource::format`):
    /// - a GGUF file (SmolLM2, any llama file): f16, half the memory, as
    ///   llama.cpp runs the same file (its logits in the fixtures were made
    ///   with an f16 cache);
    /// - our trained models and the built-in toys: f32, so the lessons'
    ///   "the cache changes nothing" stays true to f32 rounding (their
    ///   caches are a few MB at most; halving them saves nothing that matters).
    pub fn default_for(weights_format: &str) -> KvPrecision {
        match weights_format {
            "gguf" => KvPrecision::F16,
            _ => KvPrecision::F32,
        }
    }

    /// `f16` or `f32` (the CLI's `--kv-type`, the page's load option).
    pub fn parse(name: &str) -> Result<KvPrecision> {
        match Self::ALL.into_iter().find(|p| p.name() == name) {
            Some(p) => Ok(p),
            None => {
                let expected: Vec<String> = Self::ALL.iter().map(|p| format!("'{}'", p.name())).collect();
                bail!("unknown KV cache type '{name}': expected {}", expected.join(" or "))
            }
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            KvPrecision::F16 => "f16",
            KvPrecision::F32 => "f32",
        }
    }

    /// Bytes per cached number.
    pub fn bytes(self) -> usize {
        match self {
            KvPrecision::F16 => 2,
            KvPrecision::F32 => 4,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gguf_models_default_to_f16_and_the_others_to_f32() {
        assert_eq!(KvPrecision::default_for("gguf"), KvPrecision::F16);
        for other in ["nexttoken-model", "builtin"] {
            assert_eq!(KvPrecision::default_for(other), KvPrecision::F32);
        }
        for p in KvPrecision::ALL {
            assert_eq!(KvPrecision::parse(p.name()).unwrap(), p);
        }
        let e = KvPrecision::parse("q8_0").unwrap_err();
        assert_eq!(e.message, "unknown KV cache type 'q8_0': expected 'f16' or 'f32'");
    }
}
