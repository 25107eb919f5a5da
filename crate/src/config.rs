//! The architecture, as data: one config drives the project's tiny models
//! and SmolLM2-135M alike.

use serde::{Deserialize, Serialize};

use crate::bail;
use crate::error::Result;

/// How a token learns where it is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Positions {
    /// A learned table of `context` position vectors added to the token embedding (GPT-2).
    Learned,
    /// Rotary embeddings on queries and keys, with frequencies `base^(-2i/head_dim)`.
    Rope { base: f64, style: RopeStyle },
}

/// Which pairs of a head's features rotate together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RopeStyle {
    /// Pairs (0,1), (2,3), ...: llama.cpp and GGUF files.
    Interleaved,
    /// Pairs (i, i + head_dim/2): Hugging Face transformers.
    RotateHalf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NormKind {
    LayerNorm,
    RmsNorm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MlpKind {
    /// `W2 · gelu(W1 x)`
    Gelu,
    /// `W_down · (silu(W_gate x) ⊙ W_up x)`
    SwiGlu,
}

/// A decoder-only transformer, pre-norm, causal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelConfig {
    pub vocab_size: usize,
    pub d_model: usize,
    pub n_layers: usize,
    /// Query heads.
    pub n_heads: usize,
    /// Key/value heads; `n_heads / n_kv_heads` query heads share each (grouped-query attention).
    pub n_kv_heads: usize,
    pub head_dim: usize,
    /// Hidden width of the MLP.
    pub d_ff: usize,
    /// Longest sequence: the size of the position table and of the KV cache.
    pub context: usize,
    pub positions: Positions,
    pub norm: NormKind,
    pub norm_eps: f64,
    pub mlp: MlpKind,
    /// The LM head reuses the token embedding matrix.
    pub tied_embeddings: bool,
    /// Biases on the attention and MLP projections (GPT-2 has them, llama does not).
    pub bias: bool,
}

impl ModelConfig {
    /// Refuses shapes the model cannot be built with, with a message that names the field.
    pub fn validate(&self) -> Result<()> {
        // Upper bounds well above any released model's (Llama 3 405B: d_model
        // 16,384, d_ff 53,248, 128 heads, 126 layers; Gemma: 256,000 tokens),
        // checked before anything is sized from them: a hostile manifest or
        // GGUF header asking for a 2^40-wide model is refused here, and the
        // products the shapes are computed from cannot overflow.
        for (name, v, max) in [
            ("vocab_size", self.vocab_size, 1 << 20),
            ("d_model", self.d_model, 1 << 16),
            ("n_layers", self.n_layers, 1 << 10),
            ("n_heads", self.n_heads, 1 << 10),
            ("n_kv_heads", self.n_kv_heads, 1 << 10),
            ("head_dim", self.head_dim, 1 << 12),
            ("d_ff", self.d_ff, 1 << 18),
            ("context", self.context, 1 << 20),
        ] {
            if v == 0 {
                bail!("model config: {name} must be at least 1");
            }
            if v > max {
                bail!("model config: {name} is {v}, more than this build accepts ({max}): the file is corrupted or not a model this page can run");
            }
        }
        if self.n_heads % self.n_kv_heads != 0 {
            bail!(
                "model config: n_heads ({}) must be a multiple of n_kv_heads ({})",
                self.n_heads,
                self.n_kv_heads
            );
        }
        if let Positions::Rope { base, .. } = self.positions {
            if self.head_dim % 2 != 0 {
                bail!("model config: rotary positions need an even head_dim, got {}", self.head_dim);
            }
            if !(base.is_finite() && base > 1.0) {
                bail!("model config: rope base must be a finite number above 1, got {base}");
            }
        }
        if !(self.norm_eps.is_finite() && self.norm_eps > 0.0) {
            bail!("model config: norm_eps must be positive, got {}", self.norm_eps);
        }
        Ok(())
    }

    /// Query heads per KV head.
    pub fn group_size(&self) -> usize {
        self.n_heads / self.n_kv_heads
    }

    /// Parameter count, from the shapes alone.
    pub fn param_count(&self) -> usize {
        let (d, v, hd) = (self.d_model, self.vocab_size, self.head_dim);
        let b = |n: usize| if self.bias { n } else { 0 };
        let q = d * self.n_heads * hd + b(self.n_heads * hd);
        let kv = 2 * (d * self.n_kv_heads * hd + b(self.n_kv_heads * hd));
        let o = self.n_heads * hd * d + b(d);
        let mlp = match self.mlp {
            MlpKind::Gelu => d * self.d_ff + b(self.d_ff) + self.d_ff * d + b(d),
            MlpKind::SwiGlu => 3 * d * self.d_ff + 2 * b(self.d_ff) + b(d),
        };
        let norm = match self.norm {
            NormKind::LayerNorm => 2 * d,
            NormKind::RmsNorm => d,
        };
        let block = q + kv + o + mlp + 2 * norm;
        let pos = match self.positions {
            Positions::Learned => self.context * d,
            Positions::Rope { .. } => 0,
        };
        let head = if self.tied_embeddings { 0 } else { d * v };
        v * d + pos + self.n_layers * block + norm + head
    }

    /// SmolLM2-135M's shape (weights come from its GGUF file).
    pub fn smollm2_135m() -> Self {
        ModelConfig {
            vocab_size: 49152,
            d_model: 576,
            n_layers: 30,
            n_heads: 9,
            n_kv_heads: 3,
            head_dim: 64,
            d_ff: 1536,
            context: 2048,
            positions: Positions::Rope { base: 100000.0, style: RopeStyle::Interleaved },
            norm: NormKind::RmsNorm,
            norm_eps: 1e-5,
            mlp: MlpKind::SwiGlu,
            tied_embeddings: true,
            bias: false,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_config_far_beyond_any_model_is_refused_by_field_before_anything_is_sized() {
        let ok = super::ModelConfig::smollm2_135m();
        assert!(ok.validate().is_ok());
        let huge = super::ModelConfig { d_model: 1 << 40, vocab_size: 1 << 40, ..ok.clone() };
        let e = huge.validate().unwrap_err();
        assert!(e.message.starts_with("model config: vocab_size is 1099511627776, more than this build accepts (1048576)"), "{e}");
        let e = super::ModelConfig { n_layers: 1025, ..ok.clone() }.validate().unwrap_err();
        assert!(e.message.starts_with("model config: n_layers is 1025, more than this build accepts (1024)"), "{e}");
        // The largest shape accepted still has a parameter count without overflow.
        let max = super::ModelConfig { vocab_size: 1 << 20, d_model: 1 << 16, n_layers: 1 << 10, n_heads: 1 << 10, n_kv_heads: 1 << 10,
            head_dim: 1 << 12, d_ff: 1 << 18, context: 1 << 20, ..ok };
        assert!(max.validate().is_ok());
        if usize::BITS == 64 {
            assert!(max.param_count() > 1 << 40);
        }
    }

    use super::*;

    #[test]
    fn smollm2_parameter_count_matches_its_gguf() {
        // 134,515,008 is the sum of the element counts of the 272 tensors in
        // SmolLM2-135M-Instruct.Q4_1.gguf (NOTES-toolchain.md).
        assert_eq!(ModelConfig::smollm2_135m().param_count(), 134_515_008);
    }

    #[test]
    fn validate_names_the_bad_field() {
        let mut c = ModelConfig::smollm2_135m();
        c.n_kv_heads = 4;
        let e = c.validate().unwrap_err();
        assert!(e.message.contains("n_kv_heads"), "{e}");
        c.n_kv_heads = 3;
        c.head_dim = 63;
        assert!(c.validate().unwrap_err().message.contains("head_dim"));
    }
}
