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
    /// `W_down · (gelu_tanh(W_gate x) ⊙ W_up x)`, GELU in its tanh form (Gemma).
    #[serde(rename = "geglu")]
    GeGlu,
}

impl MlpKind {
    /// Whether the MLP has a gate projection beside its up projection.
    pub fn is_gated(self) -> bool {
        matches!(self, MlpKind::SwiGlu | MlpKind::GeGlu)
    }
}

/// What sets the GGUF families apart, as named options of the one decoder.
/// Every default is the plain pre-norm llama block, so a model.json
/// without the field (the project's own models) means exactly that.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DecoderOptions {
    /// Biases on the query, key and value projections only (Qwen2).
    pub qkv_bias: bool,
    /// An RMS norm over each head's query and key features before the
    /// rotary positions, one weight vector of head_dim per layer for each (Qwen3, Gemma 3).
    pub qk_norm: bool,
    /// An RMS norm on the attention's and the MLP's outputs before each
    /// residual add (Gemma 3's post-attention and post-FFN norms).
    pub post_norms: bool,
    /// The token embeddings are multiplied by this (Gemma: √d_model); none: 1.
    pub embed_scale: Option<f64>,
    /// The factor scores are multiplied by before the softmax; none: 1/√head_dim.
    pub attn_scale: Option<f64>,
    /// Final logits squashed into ±cap as cap · tanh(z / cap); none: as they are.
    pub logit_softcap: Option<f64>,
    /// Rotary scaling of the global (full-attention) layers.
    pub rope_scaling: RopeScaling,
    /// Layers that attend to a window of recent positions only.
    pub sliding_window: Option<SlidingWindow>,
}

impl DecoderOptions {
    /// The plain llama block (what a model.json leaves out).
    pub fn is_plain(&self) -> bool {
        *self == DecoderOptions::default()
    }
}

/// Rotary scaling, as llama.cpp applies it without YaRN: the angle of
/// frequency i at position p is `p · position_scale · base^(-2i/d) / freq_factors[i]`,
/// and cos and sin are multiplied by `magnitude`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RopeScaling {
    /// 1 / the linear scaling factor; 1 without scaling.
    pub position_scale: f64,
    /// LongRoPE's attention factor; 1 without.
    pub magnitude: f64,
    /// One divisor per frequency (head_dim / 2 of them: Llama 3's
    /// `rope_freqs`, Phi-3's short factors), or none.
    pub freq_factors: Vec<f32>,
}

impl Default for RopeScaling {
    fn default() -> Self {
        RopeScaling { position_scale: 1.0, magnitude: 1.0, freq_factors: Vec::new() }
    }
}

/// Sliding-window attention (Gemma 3: five local layers, then one global).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlidingWindow {
    /// Keys a local layer's query sees, its own included: the query at
    /// position p sees p + 1 − size ..= p.
    pub size: usize,
    /// Whether each layer is local (the others see every earlier position).
    pub local: Vec<bool>,
    /// The rotary base of the local layers, unscaled (Gemma 3: 10,000
    /// where the global layers have 1e6); none: the global base.
    pub rope_base: Option<f64>,
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
    /// The GGUF families' variations of the block (absent from a model.json: none).
    #[serde(default, skip_serializing_if = "DecoderOptions::is_plain")]
    pub options: DecoderOptions,
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
        self.validate_options()
    }

    fn validate_options(&self) -> Result<()> {
        let o = &self.options;
        let positive = |v: f64| v.is_finite() && v > 0.0;
        for (name, v) in [("embed_scale", o.embed_scale), ("attn_scale", o.attn_scale), ("logit_softcap", o.logit_softcap)] {
            if let Some(v) = v.filter(|&v| !positive(v)) {
                bail!("model config: {name} must be a finite number above 0, got {v}");
            }
        }
        let r = &o.rope_scaling;
        if *r != RopeScaling::default() {
            if !matches!(self.positions, Positions::Rope { .. }) {
                bail!("model config: rope_scaling needs rotary positions");
            }
            if !positive(r.position_scale) || !positive(r.magnitude) {
                bail!("model config: rope_scaling's position_scale and magnitude must be finite numbers above 0, got {} and {}", r.position_scale, r.magnitude);
            }
            if !r.freq_factors.is_empty() && r.freq_factors.len() != self.head_dim / 2 {
                bail!("model config: rope_scaling has {} frequency factors, but a head of {} features has {} frequencies", r.freq_factors.len(), self.head_dim, self.head_dim / 2);
            }
            if let Some(bad) = r.freq_factors.iter().find(|&&f| !positive(f as f64)) {
                bail!("model config: a rotary frequency factor is {bad}; each must be a finite number above 0");
            }
        }
        if let Some(w) = &o.sliding_window {
            if w.size == 0 {
                bail!("model config: sliding_window.size must be at least 1");
            }
            if w.local.len() != self.n_layers {
                bail!("model config: sliding_window.local names {} layers, the model has {}", w.local.len(), self.n_layers);
            }
            if let Some(base) = w.rope_base.filter(|b| !(b.is_finite() && *b > 1.0)) {
                bail!("model config: sliding_window.rope_base must be a finite number above 1, got {base}");
            }
        }
        Ok(())
    }

    /// How many earlier positions (its own included) layer `layer`'s queries
    /// see: the window of a local layer, none for a global one.
    pub fn layer_window(&self, layer: usize) -> Option<usize> {
        let w = self.options.sliding_window.as_ref()?;
        w.local.get(layer).copied().unwrap_or(false).then_some(w.size)
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
            MlpKind::SwiGlu | MlpKind::GeGlu => 3 * d * self.d_ff + 2 * b(self.d_ff) + b(d),
        };
        let norm = match self.norm {
            NormKind::LayerNorm => 2 * d,
            NormKind::RmsNorm => d,
        };
        let opts = &self.options;
        // Q/K/V biases of their own, where the projections have none otherwise.
        let qkv_bias = if opts.qkv_bias && !self.bias { (self.n_heads + 2 * self.n_kv_heads) * hd } else { 0 };
        let qk_norm = if opts.qk_norm { 2 * hd } else { 0 };
        let post_norms = if opts.post_norms { 2 * norm } else { 0 };
        // Rotary frequency factors are constants of the positions, not weights: not counted.
        let block = q + kv + o + mlp + 2 * norm + qkv_bias + qk_norm + post_norms;
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
            options: DecoderOptions::default(),
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

    /// A model.json written before the options existed loads as the plain
    /// block, and a plain config is written without them (the project's
    /// model files stay as they are); options round-trip.
    #[test]
    fn options_are_optional_in_model_json() {
        let plain = ModelConfig::smollm2_135m();
        let json = serde_json::to_string(&plain).unwrap();
        assert!(!json.contains("options"), "{json}");
        assert_eq!(serde_json::from_str::<ModelConfig>(&json).unwrap(), plain);
        let gemma_like = ModelConfig {
            mlp: MlpKind::GeGlu,
            options: DecoderOptions {
                qk_norm: true,
                post_norms: true,
                embed_scale: Some(24.0),
                sliding_window: Some(SlidingWindow { size: 512, local: (0..30).map(|i| i % 6 != 5).collect(), rope_base: Some(1e4) }),
                ..DecoderOptions::default()
            },
            ..plain
        };
        let json = serde_json::to_string(&gemma_like).unwrap();
        assert!(json.contains(r#""mlp":"geglu""#), "{json}");
        assert_eq!(serde_json::from_str::<ModelConfig>(&json).unwrap(), gemma_like);
        assert_eq!(gemma_like.layer_window(4), Some(512));
        assert_eq!(gemma_like.layer_window(5), None);
        let bad = ModelConfig { options: DecoderOptions { sliding_window: Some(SlidingWindow { size: 4, local: vec![true], rope_base: None }), ..DecoderOptions::default() }, ..gemma_like.clone() };
        assert!(bad.validate().unwrap_err().message.contains("sliding_window.local names 1 layers, the model has 30"));
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
