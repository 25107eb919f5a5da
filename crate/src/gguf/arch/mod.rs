//! The GGUF architectures this build runs, one small file each, mapping the
//! family's metadata keys and tensor names onto the one decoder's named
//! options (`config::DecoderOptions`); and the tensors a model needs,
//! checked by name, shape and type before anything is allocated (`load`
//! then builds the model from them).
//!
//! ```text
//! general.architecture ─► FAMILIES ─► family file (gemma3.rs, ...) ─► Family { rope style, MLP, options }
//! {arch}.* keys ─► Hparams (sizes, bounded) ──────────────────────┴─► ModelConfig + Layout
//! tensor names (attn_qkv? biases? output?) ─► Layout ─► expected_tensors ─► check_tensors
//! ```
//! The tensor names are GGUF's own (gguf-py's constants), the same in every
//! family; what a family changes is which of them it has.

mod gemma3;
mod hparams;
mod llama;
mod phi3;
mod qwen2;
mod qwen3;

pub use hparams::{CONTEXT_CAP, Hparams};

use super::quant::GgmlType;
use super::reader::GgufFile;
use crate::bail;
use crate::config::{DecoderOptions, MlpKind, ModelConfig, NormKind, Positions, RopeStyle};
use crate::error::{Error, Result};

/// A supported architecture: its `general.architecture` name, and how its
/// file says what the decoder's options are.
struct FamilyFile {
    name: &'static str,
    read: fn(&Hparams) -> Result<Family>,
}

/// Every architecture this build runs, in the order the refusal lists them.
const FAMILIES: [FamilyFile; 5] = [
    FamilyFile { name: "llama", read: llama::read },
    FamilyFile { name: "qwen2", read: qwen2::read },
    FamilyFile { name: "qwen3", read: qwen3::read },
    FamilyFile { name: "gemma3", read: gemma3::read },
    FamilyFile { name: "phi3", read: phi3::read },
];

/// The names of the supported architectures.
pub fn supported() -> Vec<&'static str> {
    FAMILIES.iter().map(|f| f.name).collect()
}

/// What a family file says about the model in a file.
pub struct Family {
    pub rope_style: RopeStyle,
    pub mlp: MlpKind,
    pub options: DecoderOptions,
    /// Gate and up projections stacked in one `ffn_up` of 2·d_ff rows, the
    /// gate first (Phi-3).
    pub fused_gate_up: bool,
    /// Tensors the family's files hold that are read into the options or
    /// not used (rotary factors), with their shapes: checked, not loaded.
    pub constants: Vec<(String, Vec<u64>)>,
}

impl Family {
    pub fn new(rope_style: RopeStyle, mlp: MlpKind) -> Self {
        Family { rope_style, mlp, options: DecoderOptions::default(), fused_gate_up: false, constants: Vec::new() }
    }
}

/// How the file lays the model's weights out, where families may differ
/// from file to file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Layout {
    /// Q, K and V stacked in one `attn_qkv` (`attn_q` rows, then `attn_k`'s, then `attn_v`'s).
    pub fused_qkv: bool,
    /// Gate and up stacked in one `ffn_up`, the gate first.
    pub fused_gate_up: bool,
    /// Checked tensors that `load` does not build into the model.
    pub constants: Vec<(String, Vec<u64>)>,
}

/// A GGUF file's model: its config, and where its weights lie.
#[derive(Debug, Clone, PartialEq)]
pub struct GgufModel {
    pub architecture: &'static str,
    pub config: ModelConfig,
    pub layout: Layout,
}

/// The model a file describes, from its metadata and the names of its
/// tensors; the tensors themselves are checked by `check_tensors`.
pub fn read(f: &GgufFile) -> Result<GgufModel> {
    let arch = f.string("general.architecture")?;
    let Some(family) = FAMILIES.iter().find(|fam| fam.name == arch) else {
        bail!("the GGUF architecture is '{arch}': this build runs {} models only", supported().join(", "));
    };
    let h = Hparams::read(f, family.name)?;
    let fam = (family.read)(&h)?;
    let embd = f.tensor("token_embd.weight").ok_or_else(|| Error::new("the GGUF file has no token_embd.weight tensor"))?;
    if embd.dims.len() != 2 || embd.dims[0] != h.d_model as u64 {
        bail!("token_embd.weight has shape {:?}; a {arch} model with embedding_length {} needs [{}, vocab]", embd.dims, h.d_model, h.d_model);
    }
    let has = |name: &str| f.tensor(name).is_some();
    let fused_qkv = has("blk.0.attn_qkv.weight");
    let config = ModelConfig {
        vocab_size: usize::try_from(embd.dims[1]).map_err(|_| Error::new("token_embd.weight is too large"))?,
        d_model: h.d_model,
        n_layers: h.n_layers,
        n_heads: h.n_heads,
        n_kv_heads: h.n_kv_heads,
        head_dim: h.head_dim,
        d_ff: h.d_ff,
        context: h.context(),
        positions: Positions::Rope { base: h.rope_base, style: fam.rope_style },
        norm: NormKind::RmsNorm,
        norm_eps: h.norm_eps,
        mlp: fam.mlp,
        tied_embeddings: !has("output.weight"),
        bias: false,
        options: DecoderOptions {
            // Q/K/V biases are optional in every family, as in llama.cpp (Qwen2's files have them).
            qkv_bias: has("blk.0.attn_q.bias") || has("blk.0.attn_qkv.bias"),
            ..fam.options
        },
    };
    config.validate()?;
    let layout = Layout { fused_qkv, fused_gate_up: fam.fused_gate_up, constants: fam.constants };
    let per_block = block_tensors(&config, &layout, 0).len();
    if config.n_layers.saturating_mul(per_block) > f.tensors.len() {
        bail!("{arch}.block_count {} needs {} tensors, but the file has {}", config.n_layers, config.n_layers.saturating_mul(per_block), f.tensors.len());
    }
    Ok(GgufModel { architecture: family.name, config, layout })
}

/// The config alone (`read` gives the layout too).
pub fn config_from_metadata(f: &GgufFile) -> Result<ModelConfig> {
    read(f).map(|m| m.config)
}

/// Block `i`'s tensors with their GGUF shapes (innermost first).
fn block_tensors(c: &ModelConfig, layout: &Layout, i: usize) -> Vec<(String, Vec<u64>)> {
    let (d, q, kv, ff, hd) =
        (c.d_model as u64, (c.n_heads * c.head_dim) as u64, (c.n_kv_heads * c.head_dim) as u64, c.d_ff as u64, c.head_dim as u64);
    let o = &c.options;
    let mut out: Vec<(&str, &str, Vec<u64>)> = vec![("attn_norm", "weight", vec![d])];
    if layout.fused_qkv {
        out.push(("attn_qkv", "weight", vec![d, q + 2 * kv]));
        if o.qkv_bias {
            out.push(("attn_qkv", "bias", vec![q + 2 * kv]));
        }
    } else {
        out.extend([("attn_q", "weight", vec![d, q]), ("attn_k", "weight", vec![d, kv]), ("attn_v", "weight", vec![d, kv])]);
        if o.qkv_bias {
            out.extend([("attn_q", "bias", vec![q]), ("attn_k", "bias", vec![kv]), ("attn_v", "bias", vec![kv])]);
        }
    }
    if o.qk_norm {
        out.extend([("attn_q_norm", "weight", vec![hd]), ("attn_k_norm", "weight", vec![hd])]);
    }
    out.push(("attn_output", "weight", vec![q, d]));
    if o.post_norms {
        out.push(("post_attention_norm", "weight", vec![d]));
    }
    out.push(("ffn_norm", "weight", vec![d]));
    if layout.fused_gate_up {
        out.push(("ffn_up", "weight", vec![d, 2 * ff]));
    } else {
        out.extend([("ffn_gate", "weight", vec![d, ff]), ("ffn_up", "weight", vec![d, ff])]);
    }
    out.push(("ffn_down", "weight", vec![ff, d]));
    if o.post_norms {
        out.push(("post_ffw_norm", "weight", vec![d]));
    }
    out.into_iter().map(|(name, kind, dims)| (format!("blk.{i}.{name}.{kind}"), dims)).collect()
}

/// Every tensor the model needs, with its GGUF shape (innermost first).
pub fn expected_tensors(c: &ModelConfig, layout: &Layout) -> Vec<(String, Vec<u64>)> {
    let (d, v) = (c.d_model as u64, c.vocab_size as u64);
    let mut out = vec![("token_embd.weight".to_string(), vec![d, v]), ("output_norm.weight".to_string(), vec![d])];
    if !c.tied_embeddings {
        out.push(("output.weight".to_string(), vec![d, v]));
    }
    out.extend(layout.constants.iter().cloned());
    for i in 0..c.n_layers {
        out.extend(block_tensors(c, layout, i));
    }
    out
}

/// Checks names, shapes and types of every tensor before anything is
/// allocated: a missing, misshapen, extra or undecodable tensor is named.
pub fn check_tensors(f: &GgufFile, m: &GgufModel) -> Result<()> {
    let (c, arch) = (&m.config, m.architecture);
    let expected = expected_tensors(c, &m.layout);
    for (name, dims) in &expected {
        let Some(t) = f.tensor(name) else {
            bail!("the GGUF file lacks the tensor '{name}' that a {}-layer {arch} model needs", c.n_layers);
        };
        if &t.dims != dims {
            bail!("tensor '{name}' has shape {:?} but the metadata implies {dims:?}", t.dims);
        }
        if !t.ggml_type.can_dequantize() {
            bail!(
                "tensor '{name}' is stored as {}, which this build cannot dequantise (it reads {})",
                t.ggml_type.name(),
                GgmlType::readable_list()
            );
        }
    }
    let extra: Vec<&str> =
        f.tensors.iter().map(|t| t.name.as_str()).filter(|n| !expected.iter().any(|(e, _)| e == n)).take(5).collect();
    if !extra.is_empty() {
        bail!("the GGUF file has tensors a {arch} model of this build has no place for (e.g. {})", extra.join(", "));
    }
    Ok(())
}

/// Which storage types the weights use, e.g. "Q4_1 (210 tensors), F32 (61 tensors), Q8_0 (1 tensor)".
pub fn describe_types(f: &GgufFile) -> String {
    let mut counts: Vec<(GgmlType, usize)> = Vec::new();
    for t in &f.tensors {
        match counts.iter_mut().find(|(ty, _)| *ty == t.ggml_type) {
            Some((_, n)) => *n += 1,
            None => counts.push((t.ggml_type, 1)),
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1));
    counts.iter().map(|(ty, n)| format!("{} ({n} tensor{})", ty.name(), if *n == 1 { "" } else { "s" })).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests;
