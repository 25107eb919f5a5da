//! A `llama` GGUF file's metadata as a `ModelConfig`, and the tensors the
//! config needs, checked by name, shape and type before anything is
//! allocated (`load` then builds the model from them).

use super::quant::GgmlType;
use super::reader::GgufFile;
use crate::bail;
use crate::config::{MlpKind, ModelConfig, NormKind, Positions, RopeStyle};
use crate::error::{Error, Result};

/// The longest context this build allocates a KV cache for. SmolLM2 was
/// trained to 8,192 positions, but its f32 cache would take 377 MB there;
/// 2,048 positions (94 MB) is more than the page ever shows.
pub const CONTEXT_CAP: usize = 2048;

/// The metadata keys of the `llama` architecture that the config comes from.
pub fn config_from_metadata(f: &GgufFile) -> Result<ModelConfig> {
    let arch = f.string("general.architecture")?;
    if arch != "llama" {
        bail!("the GGUF architecture is '{arch}': this build runs 'llama' models only (SmolLM2, Llama, TinyLlama, ...)");
    }
    let key = |k: &str| format!("llama.{k}");
    let usize_key = |k: &str| -> Result<usize> {
        let v = f.uint(&key(k))?;
        usize::try_from(v).ok().filter(|&v| v > 0).ok_or_else(|| Error::new(format!("'{}' must be a positive size, got {v}", key(k))))
    };
    let d_model = usize_key("embedding_length")?;
    let n_heads = usize_key("attention.head_count")?;
    let n_kv_heads = if f.get(&key("attention.head_count_kv")).is_some() { usize_key("attention.head_count_kv")? } else { n_heads };
    if d_model % n_heads != 0 && f.get(&key("attention.key_length")).is_none() {
        bail!("embedding_length {d_model} is not a multiple of head_count {n_heads}");
    }
    let head_dim = if f.get(&key("attention.key_length")).is_some() { usize_key("attention.key_length")? } else { d_model / n_heads };
    // Widths past 2^20 are no model this page can run, and keeping every
    // product of two of them below 2^24 keeps shape arithmetic exact on wasm32.
    for (name, v) in [("embedding_length", d_model), ("attention.head_count", n_heads), ("attention.head_count_kv", n_kv_heads), ("attention.key_length", head_dim)] {
        if v > 1 << 20 {
            bail!("llama.{name} {v} is too large");
        }
    }
    for (what, a, b) in [("query", n_heads, head_dim), ("key/value", n_kv_heads, head_dim)] {
        if a.checked_mul(b).is_none_or(|w| w > 1 << 24) {
            bail!("the {what} width {a} × {b} is too large");
        }
    }
    if usize_key("feed_forward_length")? > 1 << 24 {
        bail!("llama.feed_forward_length is too large");
    }
    if let Some(v) = f.get(&key("attention.value_length")) {
        if v.as_u64() != Some(head_dim as u64) {
            bail!("attention.value_length {v:?} differs from the key length {head_dim}: not supported");
        }
    }
    if let Some(v) = f.get(&key("rope.dimension_count")) {
        if v.as_u64() != Some(head_dim as u64) {
            bail!("rotary positions on {v:?} of each head's {head_dim} features (partial rotary) are not supported");
        }
    }
    if f.get(&key("rope.scaling.type")).and_then(|v| v.as_str()).is_some_and(|t| t != "none") || f.tensor("rope_freqs.weight").is_some() {
        bail!("this file uses RoPE scaling (rope.scaling.type or rope_freqs.weight), which this build does not implement");
    }
    let base = match f.get(&key("rope.freq_base")) {
        Some(_) => f.float(&key("rope.freq_base"))?,
        None => 10000.0,
    };
    let context = usize_key("context_length")?.min(CONTEXT_CAP);
    let norm_eps = f.float(&key("attention.layer_norm_rms_epsilon"))?;
    let embd = f.tensor("token_embd.weight").ok_or_else(|| Error::new("the GGUF file has no token_embd.weight tensor"))?;
    if embd.dims.len() != 2 || embd.dims[0] != d_model as u64 {
        bail!("token_embd.weight has shape {:?}; a llama model with embedding_length {d_model} needs [{d_model}, vocab]", embd.dims);
    }
    let n_layers = usize_key("block_count")?;
    // Each block has nine tensors: a count the file cannot back is refused
    // before anything (even the list of expected names) is built for it.
    if n_layers > f.tensors.len() / 9 {
        bail!("llama.block_count {n_layers} needs {} tensors, but the file has {}", n_layers.saturating_mul(9), f.tensors.len());
    }
    let config = ModelConfig {
        vocab_size: usize::try_from(embd.dims[1]).map_err(|_| Error::new("token_embd.weight is too large"))?,
        d_model,
        n_layers,
        n_heads,
        n_kv_heads,
        head_dim,
        d_ff: usize_key("feed_forward_length")?,
        context,
        positions: Positions::Rope { base, style: RopeStyle::Interleaved },
        norm: NormKind::RmsNorm,
        norm_eps,
        mlp: MlpKind::SwiGlu,
        tied_embeddings: f.tensor("output.weight").is_none(),
        bias: false,
    };
    config.validate()?;
    Ok(config)
}

/// Every tensor the config needs, with its GGUF shape (innermost first).
pub fn expected_tensors(c: &ModelConfig) -> Vec<(String, Vec<u64>)> {
    let (d, q, kv, ff, v) =
        (c.d_model as u64, (c.n_heads * c.head_dim) as u64, (c.n_kv_heads * c.head_dim) as u64, c.d_ff as u64, c.vocab_size as u64);
    let mut out = vec![("token_embd.weight".to_string(), vec![d, v]), ("output_norm.weight".to_string(), vec![d])];
    if !c.tied_embeddings {
        out.push(("output.weight".to_string(), vec![d, v]));
    }
    for i in 0..c.n_layers {
        for (name, dims) in [
            ("attn_norm", vec![d]),
            ("attn_q", vec![d, q]),
            ("attn_k", vec![d, kv]),
            ("attn_v", vec![d, kv]),
            ("attn_output", vec![q, d]),
            ("ffn_norm", vec![d]),
            ("ffn_gate", vec![d, ff]),
            ("ffn_up", vec![d, ff]),
            ("ffn_down", vec![ff, d]),
        ] {
            out.push((format!("blk.{i}.{name}.weight"), dims));
        }
    }
    out
}

/// Checks names, shapes and types of every tensor before anything is
/// allocated: a missing, misshapen, extra or undecodable tensor is named.
pub fn check_tensors(f: &GgufFile, c: &ModelConfig) -> Result<()> {
    let expected = expected_tensors(c);
    for (name, dims) in &expected {
        let Some(t) = f.tensor(name) else {
            bail!("the GGUF file lacks the tensor '{name}' that a {}-layer llama model needs", c.n_layers);
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
        bail!("the GGUF file has tensors a plain llama model has no place for (e.g. {}): biases or another architecture?", extra.join(", "));
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
mod tests {
    use super::*;

    use crate::gguf::test_file::Writer;

    /// A two-layer llama with d = 32 (one Q8_0 block per row), 2 heads of 16, 1 KV head.
    fn tiny(w: &mut Writer) -> &mut Writer {
        w.kv_str("general.architecture", "llama")
            .kv_u32("llama.block_count", 2)
            .kv_u32("llama.embedding_length", 32)
            .kv_u32("llama.feed_forward_length", 64)
            .kv_u32("llama.attention.head_count", 2)
            .kv_u32("llama.attention.head_count_kv", 1)
            .kv_u32("llama.context_length", 64)
            .kv_f32("llama.attention.layer_norm_rms_epsilon", 1e-5)
    }

    fn tiny_tensors(w: &mut Writer, skip: &str, bad_shape: &str) {
        let c = ModelConfig {
            vocab_size: 8,
            d_model: 32,
            n_layers: 2,
            n_heads: 2,
            n_kv_heads: 1,
            head_dim: 16,
            d_ff: 64,
            context: 64,
            ..ModelConfig::smollm2_135m()
        };
        for (name, mut dims) in expected_tensors(&c) {
            if name == skip {
                continue;
            }
            if name == bad_shape {
                dims[0] *= 2;
            }
            let n: u64 = dims.iter().product();
            w.f32_tensor(&name, &dims, &vec![0.01; n as usize]);
        }
    }

    fn load_message(bytes: &[u8]) -> String {
        let f = match GgufFile::parse(bytes) {
            Ok(f) => f,
            Err(e) => return e.message,
        };
        let c = match config_from_metadata(&f) {
            Ok(c) => c,
            Err(e) => return e.message,
        };
        match check_tensors(&f, &c) {
            Ok(()) => "accepted".into(),
            Err(e) => e.message,
        }
    }

    #[test]
    fn a_well_formed_tiny_llama_loads_and_runs() {
        let mut w = Writer::new();
        tiny(&mut w);
        tiny_tensors(&mut w, "", "");
        let bytes = w.finish();
        assert_eq!(load_message(&bytes), "accepted");
        let f = GgufFile::parse(&bytes).unwrap();
        let c = config_from_metadata(&f).unwrap();
        assert_eq!((c.vocab_size, c.n_layers, c.head_dim, c.tied_embeddings), (8, 2, 16, true));
        let plan = super::super::load::plan(&f, &c, super::super::load::WeightStorage::Blocks).unwrap();
        let model = super::super::load::build(&c, plan, burn::tensor::Bytes::from_bytes_vec(bytes.clone()), &burn::tensor::Device::flex()).unwrap();
        let mut lm = crate::model::DecoderLm::new("tiny", c, model, crate::backend::BackendKind::Flex).unwrap();
        let logits = crate::lm::LanguageModel::forward_cached(&mut lm, &[1, 2, 3]).unwrap();
        assert_eq!(logits.len(), 8);
        assert!(logits.iter().all(|v| v.is_finite()));
    }

    #[test]
    fn files_that_do_not_fit_are_refused_by_name() {
        let mut w = Writer::new();
        tiny(&mut w);
        tiny_tensors(&mut w, "blk.1.ffn_up.weight", "");
        assert!(load_message(&w.finish()).contains("lacks the tensor 'blk.1.ffn_up.weight'"));

        let mut w = Writer::new();
        tiny(&mut w);
        tiny_tensors(&mut w, "", "blk.0.attn_k.weight");
        let m = load_message(&w.finish());
        assert!(m.contains("tensor 'blk.0.attn_k.weight' has shape [64, 16]"), "{m}");

        let mut w = Writer::new();
        tiny(&mut w);
        tiny_tensors(&mut w, "", "");
        w.f32_tensor("blk.0.attn_q.bias", &[32], &[0.0; 32]);
        assert!(load_message(&w.finish()).contains("blk.0.attn_q.bias"));

        let mut w = Writer::new();
        w.kv_str("general.architecture", "gpt2");
        assert!(load_message(&w.finish()).contains("architecture is 'gpt2'"));

        let mut w = Writer::new();
        w.kv_str("general.architecture", "llama").kv_u32("llama.block_count", 2);
        assert!(load_message(&w.finish()).contains("no 'llama.embedding_length'"));

        // A model claiming 2^40 layers: refused before the tensor list (or
        // anything else) is built for it.
        let mut w = Writer::new();
        w.kv_str("general.architecture", "llama")
            .kv_raw("llama.block_count", 10, &(1u64 << 40).to_le_bytes())
            .kv_u32("llama.embedding_length", 32)
            .kv_u32("llama.feed_forward_length", 64)
            .kv_u32("llama.attention.head_count", 2)
            .kv_u32("llama.context_length", 64)
            .kv_f32("llama.attention.layer_norm_rms_epsilon", 1e-5);
        w.f32_tensor("token_embd.weight", &[32, 8], &[0.0; 256]);
        let m = load_message(&w.finish());
        assert!(m.contains("block_count 1099511627776"), "{m}");

        // Widths that no tensor could back, refused before any shape arithmetic.
        let mut w = Writer::new();
        w.kv_str("general.architecture", "llama")
            .kv_u32("llama.block_count", 1)
            .kv_u32("llama.embedding_length", 32)
            .kv_u32("llama.feed_forward_length", 64)
            .kv_u32("llama.attention.head_count", 2)
            .kv_raw("llama.attention.key_length", 10, &(1u64 << 40).to_le_bytes());
        assert!(load_message(&w.finish()).contains("key_length 1099511627776 is too large"));
        let mut w = Writer::new();
        w.kv_str("general.architecture", "llama")
            .kv_u32("llama.block_count", 1)
            .kv_u32("llama.embedding_length", 1 << 20)
            .kv_u32("llama.feed_forward_length", 64)
            .kv_u32("llama.attention.head_count", 1 << 20)
            .kv_u32("llama.attention.key_length", 1 << 20);
        assert!(load_message(&w.finish()).contains("query width 1048576 × 1048576 is too large"));
    }

    #[test]
    fn smollm2_tensor_list_has_its_272_tensors() {
        let c = ModelConfig::smollm2_135m();
        let t = expected_tensors(&c);
        assert_eq!(t.len(), 272);
        let params: u64 = t.iter().map(|(_, d)| d.iter().product::<u64>()).sum();
        assert_eq!(params as usize, c.param_count());
    }
}
