//! The metadata keys every family shares (`{arch}.embedding_length`,
//! `{arch}.attention.head_count`, ...), read and bounded before anything
//! is sized from them.

use crate::bail;
use crate::config::RopeScaling;
use crate::error::{Error, Result};
use crate::gguf::quant::dequantize;
use crate::gguf::reader::GgufFile;

/// The longest context this build allocates a KV cache for. SmolLM2 was
/// trained to 8,192 positions, but its f32 cache would take 377 MB there;
/// 2,048 positions (94 MB) is more than the page ever shows.
pub const CONTEXT_CAP: usize = 2048;

/// The fewest tensors a block of any supported family has (Phi-3's six:
/// attn_norm, attn_qkv, attn_output, ffn_norm, ffn_up, ffn_down).
pub const MIN_BLOCK_TENSORS: usize = 6;

/// The shared shape of a model, from `{arch}.*` keys.
pub struct Hparams<'f, 'a> {
    pub file: &'f GgufFile<'a>,
    pub arch: &'static str,
    pub d_model: usize,
    pub n_heads: usize,
    pub n_kv_heads: usize,
    pub head_dim: usize,
    pub d_ff: usize,
    pub n_layers: usize,
    /// The trained context length (the cache gets at most `CONTEXT_CAP` of it).
    pub trained_context: usize,
    pub norm_eps: f64,
    /// `{arch}.rope.freq_base`, 10,000 where absent (llama.cpp's default).
    pub rope_base: f64,
}

impl<'f, 'a> Hparams<'f, 'a> {
    pub fn key(&self, k: &str) -> String {
        format!("{}.{k}", self.arch)
    }

    /// `{arch}.k`, if the file has it.
    pub fn get(&self, k: &str) -> Option<&'f crate::gguf::metadata::Value> {
        self.file.get(&self.key(k))
    }

    /// `{arch}.k` as a number, if present.
    pub fn float(&self, k: &str) -> Result<Option<f64>> {
        match self.get(k) {
            Some(_) => self.file.float(&self.key(k)).map(Some),
            None => Ok(None),
        }
    }

    pub fn read(file: &'f GgufFile<'a>, arch: &'static str) -> Result<Self> {
        let key = |k: &str| format!("{arch}.{k}");
        let size = |k: &str| -> Result<usize> {
            let v = file.uint(&key(k))?;
            usize::try_from(v).ok().filter(|&v| v > 0).ok_or_else(|| Error::new(format!("'{}' must be a positive size, got {v}", key(k))))
        };
        let d_model = size("embedding_length")?;
        let n_heads = size("attention.head_count")?;
        let n_kv_heads = if file.get(&key("attention.head_count_kv")).is_some() { size("attention.head_count_kv")? } else { n_heads };
        if d_model % n_heads != 0 && file.get(&key("attention.key_length")).is_none() {
            bail!("embedding_length {d_model} is not a multiple of head_count {n_heads}");
        }
        let head_dim = if file.get(&key("attention.key_length")).is_some() { size("attention.key_length")? } else { d_model / n_heads };
        // Widths past 2^20 are no model this page can run, and keeping every
        // product of two of them below 2^24 keeps shape arithmetic exact on wasm32.
        for (name, v) in [("embedding_length", d_model), ("attention.head_count", n_heads), ("attention.head_count_kv", n_kv_heads), ("attention.key_length", head_dim)] {
            if v > 1 << 20 {
                bail!("{arch}.{name} {v} is too large");
            }
        }
        for (what, a, b) in [("query", n_heads, head_dim), ("key/value", n_kv_heads, head_dim)] {
            if a.checked_mul(b).is_none_or(|w| w > 1 << 24) {
                bail!("the {what} width {a} × {b} is too large");
            }
        }
        let d_ff = size("feed_forward_length")?;
        if d_ff > 1 << 24 {
            bail!("{arch}.feed_forward_length is too large");
        }
        if let Some(v) = file.get(&key("attention.value_length")) {
            if v.as_u64() != Some(head_dim as u64) {
                bail!("attention.value_length {v:?} differs from the key length {head_dim}: not supported");
            }
        }
        if let Some(v) = file.get(&key("rope.dimension_count")) {
            if v.as_u64() != Some(head_dim as u64) {
                bail!("rotary positions on {v:?} of each head's {head_dim} features (partial rotary) are not supported");
            }
        }
        let rope_base = match file.get(&key("rope.freq_base")) {
            Some(_) => file.float(&key("rope.freq_base"))?,
            None => 10000.0,
        };
        let trained_context = size("context_length")?;
        let norm_eps = file.float(&key("attention.layer_norm_rms_epsilon"))?;
        let n_layers = size("block_count")?;
        // A count the file cannot back is refused before anything (even the
        // list of expected names) is built for it.
        if n_layers > file.tensors.len() / MIN_BLOCK_TENSORS {
            bail!(
                "{arch}.block_count {n_layers} needs at least {} tensors, but the file has {}",
                n_layers.saturating_mul(MIN_BLOCK_TENSORS),
                file.tensors.len()
            );
        }
        Ok(Hparams { file, arch, d_model, n_heads, n_kv_heads, head_dim, d_ff, n_layers, trained_context, norm_eps, rope_base })
    }

    /// The context the cache is sized for.
    pub fn context(&self) -> usize {
        self.trained_context.min(CONTEXT_CAP)
    }

    /// Linear rotary scaling and LongRoPE's attention factor, as llama.cpp
    /// reads them (`rope.scaling.type` absent means linear; a factor of 0
    /// or none means no scaling); the scaling types in `refused` are
    /// refused by name. Frequency factors are the family's to add.
    pub fn rope_scaling(&self, accepted: &[&str]) -> Result<RopeScaling> {
        let kind = match self.get("rope.scaling.type") {
            Some(v) => v.as_str().ok_or_else(|| Error::new(format!("'{}' must be a string", self.key("rope.scaling.type"))))?,
            None => "linear",
        };
        if !["none", "linear"].contains(&kind) && !accepted.contains(&kind) {
            bail!("this file uses '{kind}' RoPE scaling ({}), which this build does not implement", self.key("rope.scaling.type"));
        }
        let mut scaling = RopeScaling::default();
        let factor = match self.float("rope.scaling.factor")? {
            Some(f) => Some(f),
            None => self.float("rope.scale_linear")?,
        };
        if let Some(f) = factor.filter(|&f| f != 0.0 && kind == "linear") {
            if !(f.is_finite() && f > 0.0) {
                bail!("{} must be a positive number, got {f}", self.key("rope.scaling.factor"));
            }
            scaling.position_scale = 1.0 / f;
        }
        if let Some(m) = self.float("rope.scaling.attn_factor")? {
            if !(m.is_finite() && m > 0.0) {
                bail!("{} must be a positive number, got {m}", self.key("rope.scaling.attn_factor"));
            }
            scaling.magnitude = m;
        }
        Ok(scaling)
    }

    /// A rotary frequency-factor tensor (`rope_freqs.weight`, Phi-3's
    /// `rope_factors_*`): head_dim / 2 numbers, checked before they are read.
    pub fn freq_factors(&self, name: &str) -> Result<Vec<f32>> {
        let Some(t) = self.file.tensor(name) else { bail!("the GGUF file lacks the tensor '{name}'") };
        let want = [(self.head_dim / 2) as u64];
        if t.dims != want {
            bail!("tensor '{name}' has shape {:?}; rotary frequency factors for heads of {} need {want:?}", t.dims, self.head_dim);
        }
        dequantize(t.ggml_type, self.file.tensor_bytes(t), want[0] as usize).map_err(|e| Error::new(format!("tensor '{name}': {e}")))
    }
}
