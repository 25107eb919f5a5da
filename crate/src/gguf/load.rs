//! A checked GGUF file's tensors in the burn modules.
//!
//! ```text
//! token_embd.weight   [d, vocab]  → tok_emb            (rows of d: as stored)
//! output.weight       [d, vocab]  → lm_head            (absent: tied to token_embd)
//! output_norm.weight  [d]         → final_norm
//! blk.i.attn_norm / ffn_norm [d]  → blocks[i].attn_norm / mlp_norm
//! blk.i.attn_q|k|v|output         → blocks[i].attn.wq|wk|wv|wo   (attn_qkv: its row ranges)
//! blk.i.attn_q|k|v.bias           → the projections' biases       (attn_qkv.bias: its ranges)
//! blk.i.attn_q_norm|attn_k_norm   → blocks[i].attn.q_norm|k_norm
//! blk.i.post_attention_norm|post_ffw_norm → blocks[i].post_attn_norm|post_mlp_norm
//! blk.i.ffn_gate|up|down          → blocks[i].mlp.gate|up|down   (fused ffn_up: gate rows, then up)
//! ```
//! A fused matrix is split by rows, and a row range of a block matrix is a
//! view of its bytes like any other: nothing is dequantised or copied.
//! GGUF lists a matrix's dimensions innermost first: `[in, out]` is `out`
//! rows of `in` numbers, i.e. ggml's `W` with `y = W x`. That is the layout
//! the block kernels read, so a matrix of a format they have
//! (`quant::block_format`: the quantised ones, and F16 and BF16 at 16 bits)
//! stays as the file's bytes: every matrix is a view into one u8 tensor
//! holding the whole file, which is neither copied nor dequantised. Any other type (and every matrix with `WeightStorage::F32`)
//! is dequantised and, for burn's `y = x W`, transposed once to `[in, out]`.
//! The rotary pairing is the family's (`arch`): the weights are used as stored.
//!
//! Loading runs in two phases because the file is parsed from the very
//! bytes the matrices then keep: `plan` reads what needs reading while the
//! bytes are borrowed, `build` takes them over.

use std::collections::HashMap;

use burn::module::Param;
use burn::tensor::{Bytes, Device, Int, Tensor, TensorData};

use super::arch::{GgufModel, check_tensors};
use super::quant::dequantize;
use super::reader::{GgufFile, TensorInfo};
use crate::bail;
use crate::error::{Error, Result};
use crate::model::embedding::TokenEmbedding;
use crate::model::norm::Norm;
use crate::model::projection::Projection;
use crate::model::Transformer;
use crate::quant::{block_format, matrix::file_tensor, BlockFormat, BlockMatrix};

/// How the model keeps the file's matrices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WeightStorage {
    /// As the file's blocks where a kernel reads the format (the default).
    #[default]
    Blocks,
    /// Everything dequantised to f32 (the reference the kernels are checked against).
    F32,
}

/// One tensor, as `build` will use it.
enum Planned {
    /// Dequantised values, in the file's order.
    Values(Vec<f32>),
    /// `n` rows of `k` values as blocks at this byte offset of the file.
    Blocks { start: usize, format: BlockFormat, n: usize, k: usize },
}

/// What `build` needs from the file, taken while its bytes are borrowed.
pub struct Plan {
    tensors: HashMap<String, (Planned, Vec<usize>)>,
}

fn values(f: &GgufFile, t: &TensorInfo) -> Result<Vec<f32>> {
    dequantize(t.ggml_type, f.tensor_bytes(t), t.n_elements() as usize)
        .map_err(|e| Error::new(format!("tensor '{}': {e}", t.name)))
}

/// Reads the norms (and any matrix kept as f32) and notes where the block
/// matrices lie; `check_tensors` runs first, so every tensor is there with
/// its shape.
pub fn plan(f: &GgufFile, m: &GgufModel, storage: WeightStorage) -> Result<Plan> {
    check_tensors(f, m)?;
    let mut tensors = HashMap::new();
    for t in f.tensors.iter().filter(|t| !m.layout.constants.iter().any(|(name, _)| *name == t.name)) {
        let dims: Vec<usize> = t.dims.iter().map(|&d| d as usize).collect();
        let format = block_format(t.ggml_type).filter(|_| storage == WeightStorage::Blocks && dims.len() == 2);
        let planned = match format {
            Some(format) => Planned::Blocks { start: f.tensor_start(t), format, n: dims[1], k: dims[0] },
            None => Planned::Values(values(f, t)?),
        };
        tensors.insert(t.name.clone(), (planned, dims));
    }
    Ok(Plan { tensors })
}

/// A `[rows, cols]` row-major matrix, transposed to `[cols, rows]`.
fn transposed(v: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut out = vec![0f32; v.len()];
    for r in 0..rows {
        for (c, &x) in v[r * cols..(r + 1) * cols].iter().enumerate() {
            out[c * rows + r] = x;
        }
    }
    out
}

struct Builder {
    plan: Plan,
    file: Option<Tensor<1, Int>>,
    device: Device,
}

/// Rows `rows` of a planned `[k, n]` tensor (n rows of k; a vector's
/// entries): a view of the same bytes for blocks, the values' range otherwise.
fn row_range((planned, dims): &(Planned, Vec<usize>), rows: std::ops::Range<usize>) -> (Planned, Vec<usize>) {
    let n = rows.len();
    match planned {
        Planned::Blocks { start, format, k, .. } => {
            (Planned::Blocks { start: start + rows.start * format.row_bytes(*k), format: *format, n, k: *k }, vec![*k, n])
        }
        Planned::Values(v) if dims.len() == 1 => (Planned::Values(v[rows].to_vec()), vec![n]),
        Planned::Values(v) => {
            let k = dims[0];
            (Planned::Values(v[rows.start * k..rows.end * k].to_vec()), vec![k, n])
        }
    }
}

impl Builder {
    fn take(&mut self, name: &str) -> (Planned, Vec<usize>) {
        self.plan.tensors.remove(name).expect("check_tensors found every tensor")
    }

    /// Consecutive row ranges of sizes `sizes` of a stacked tensor (a fused
    /// matrix's rows, or a fused bias's entries).
    fn split(&mut self, name: &str, sizes: &[usize]) -> Vec<(Planned, Vec<usize>)> {
        let whole = self.take(name);
        let mut at = 0;
        sizes
            .iter()
            .map(|&n| {
                at += n;
                row_range(&whole, at - n..at)
            })
            .collect()
    }

    fn blocks(&self, start: usize, format: BlockFormat, n: usize, k: usize) -> BlockMatrix {
        BlockMatrix::view(self.file.as_ref().expect("a plan with blocks has the file"), start, format, n, k)
    }

    /// A GGUF `[in, out]` matrix as a projection `x ↦ x W`.
    fn projection(&mut self, name: &str) -> Projection {
        let planned = self.take(name);
        self.projection_of(planned)
    }

    fn projection_of(&self, planned: (Planned, Vec<usize>)) -> Projection {
        match planned {
            (Planned::Blocks { start, format, n, k }, _) => Projection::from_blocks(self.blocks(start, format, n, k)),
            (Planned::Values(v), dims) => {
                let (d_in, d_out) = (dims[0], dims[1]);
                let w = transposed(&v, d_out, d_in);
                Projection::dense(Tensor::<2>::from_data(TensorData::new(w, [d_in, d_out]), &self.device))
            }
        }
    }

    /// A vector (a norm's weight, a bias) as f32.
    fn vector_of(&self, name: &str, planned: (Planned, Vec<usize>)) -> Result<Tensor<1>> {
        let (Planned::Values(v), dims) = planned else { bail!("'{name}' is not a vector") };
        Ok(Tensor::<1>::from_data(TensorData::new(v, [dims[0]]), &self.device))
    }

    fn embedding(&mut self, name: &str) -> TokenEmbedding {
        match self.take(name) {
            (Planned::Blocks { start, format, n, k }, _) => TokenEmbedding::from_blocks(self.blocks(start, format, n, k)),
            (Planned::Values(v), dims) => TokenEmbedding::dense(Tensor::<2>::from_data(TensorData::new(v, [dims[1], dims[0]]), &self.device)),
        }
    }

    fn norm(&mut self, name: &str, norm: Option<&mut Norm>) -> Result<()> {
        let planned = self.take(name);
        let gamma = self.vector_of(name, planned)?;
        match norm {
            Some(Norm::Rms(n)) => n.gamma = Param::from_tensor(gamma),
            Some(Norm::Layer(_)) => bail!("a GGUF model has RMS norms only"),
            None => bail!("the model has no place for the norm '{name}'"),
        }
        Ok(())
    }
}

/// Builds the model from the plan, taking over the file's bytes when the
/// plan keeps any matrix as blocks (and dropping them when it does not).
pub fn build(m: &GgufModel, plan: Plan, bytes: Bytes, device: &Device) -> Result<Transformer> {
    let (c, layout) = (&m.config, &m.layout);
    let any_blocks = plan.tensors.values().any(|(p, _)| matches!(p, Planned::Blocks { .. }));
    let file = any_blocks.then(|| file_tensor(bytes, device));
    let mut l = Builder { plan, file, device: device.clone() };
    // burn's own initialisation is lazy: the parameters below replace it
    // before anything is allocated for it.
    let mut model = Transformer::init(c, device);
    model.tok_emb = l.embedding("token_embd.weight");
    l.norm("output_norm.weight", Some(&mut model.final_norm))?;
    if !c.tied_embeddings {
        model.lm_head = Some(l.projection("output.weight"));
    }
    let (q, kv, ff) = (c.n_heads * c.head_dim, c.n_kv_heads * c.head_dim, c.d_ff);
    for (i, block) in model.blocks.iter_mut().enumerate() {
        let name = |n: &str| format!("blk.{i}.{n}.weight");
        let bias = |n: &str| format!("blk.{i}.{n}.bias");
        l.norm(&name("attn_norm"), Some(&mut block.attn_norm))?;
        l.norm(&name("ffn_norm"), Some(&mut block.mlp_norm))?;
        let attn = &mut block.attn;
        if layout.fused_qkv {
            let mut parts = l.split(&name("attn_qkv"), &[q, kv, kv]).into_iter();
            attn.wq = l.projection_of(parts.next().expect("three parts"));
            attn.wk = l.projection_of(parts.next().expect("three parts"));
            attn.wv = l.projection_of(parts.next().expect("three parts"));
        } else {
            attn.wq = l.projection(&name("attn_q"));
            attn.wk = l.projection(&name("attn_k"));
            attn.wv = l.projection(&name("attn_v"));
        }
        if c.options.qkv_bias {
            let biases: Vec<(Planned, Vec<usize>)> = if layout.fused_qkv {
                l.split(&bias("attn_qkv"), &[q, kv, kv])
            } else {
                ["attn_q", "attn_k", "attn_v"].iter().map(|n| l.take(&bias(n))).collect()
            };
            for (proj, planned) in [&mut attn.wq, &mut attn.wk, &mut attn.wv].into_iter().zip(biases) {
                proj.bias = Some(Param::from_tensor(l.vector_of("a Q/K/V bias", planned)?));
            }
        }
        attn.wo = l.projection(&name("attn_output"));
        if c.options.qk_norm {
            l.norm(&name("attn_q_norm"), attn.q_norm.as_mut())?;
            l.norm(&name("attn_k_norm"), attn.k_norm.as_mut())?;
        }
        if c.options.post_norms {
            l.norm(&name("post_attention_norm"), block.post_attn_norm.as_mut())?;
            l.norm(&name("post_ffw_norm"), block.post_mlp_norm.as_mut())?;
        }
        if layout.fused_gate_up {
            let mut parts = l.split(&name("ffn_up"), &[ff, ff]).into_iter();
            block.mlp.gate = Some(l.projection_of(parts.next().expect("two parts")));
            block.mlp.up = l.projection_of(parts.next().expect("two parts"));
        } else {
            block.mlp.gate = Some(l.projection(&name("ffn_gate")));
            block.mlp.up = l.projection(&name("ffn_up"));
        }
        block.mlp.down = l.projection(&name("ffn_down"));
    }
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ModelConfig;
    use crate::gguf::arch::{Layout, expected_tensors, read};
    use crate::gguf::quant::GgmlType;
    use crate::gguf::test_file::Writer;
    use crate::lm::LanguageModel;
    use crate::model::DecoderLm;

    /// A two-layer llama (d = 32, 2 heads of 16, 1 KV head, vocabulary 8)
    /// whose matrices are `ty` (F16 or BF16) and norms F32.
    fn tiny_16_bit(ty: GgmlType) -> Vec<u8> {
        let mut w = Writer::new();
        w.kv_str("general.architecture", "llama")
            .kv_u32("llama.block_count", 2)
            .kv_u32("llama.embedding_length", 32)
            .kv_u32("llama.feed_forward_length", 64)
            .kv_u32("llama.attention.head_count", 2)
            .kv_u32("llama.attention.head_count_kv", 1)
            .kv_u32("llama.context_length", 64)
            .kv_f32("llama.attention.layer_norm_rms_epsilon", 1e-5);
        let c = ModelConfig { vocab_size: 8, d_model: 32, n_layers: 2, n_heads: 2, n_kv_heads: 1, head_dim: 16, d_ff: 64, context: 64, ..ModelConfig::smollm2_135m() };
        let id = match ty {
            GgmlType::F16 => 1,
            _ => 30,
        };
        for (t, (name, dims)) in expected_tensors(&c, &Layout::default()).into_iter().enumerate() {
            let n: u64 = dims.iter().product();
            let value = |i: u64| ((i * 7 + t as u64 * 13) as f32 * 0.37).sin() * 0.3;
            if dims.len() == 1 {
                w.f32_tensor(&name, &dims, &(0..n).map(|i| 1.0 + value(i)).collect::<Vec<_>>());
            } else {
                let bits = |v: f32| if ty == GgmlType::F16 { half::f16::from_f32(v).to_bits() } else { half::bf16::from_f32(v).to_bits() };
                let bytes: Vec<u8> = (0..n).flat_map(|i| bits(value(i)).to_le_bytes()).collect();
                w.tensor(&name, &dims, id, &bytes);
            }
        }
        w.finish()
    }

    fn load(bytes: &[u8], storage: WeightStorage) -> (ModelConfig, Transformer) {
        let f = GgufFile::parse(bytes).unwrap();
        let m = read(&f).unwrap();
        let p = plan(&f, &m, storage).unwrap();
        let model = build(&m, p, Bytes::from_bytes_vec(bytes.to_vec()), &Device::flex()).unwrap();
        (m.config, model)
    }

    /// An F16 or BF16 file's matrices stay 16-bit views of the file (no f32
    /// copy: the only f32 parameters are the norms), and the model computes
    /// what the same weights widened to f32 at load compute, to f32 rounding.
    #[test]
    fn sixteen_bit_matrices_stay_at_16_bits() {
        use burn::module::Module;
        for (ty, format) in [(GgmlType::F16, BlockFormat::F16), (GgmlType::BF16, BlockFormat::BF16)] {
            let bytes = tiny_16_bit(ty);
            let (c, model) = load(&bytes, WeightStorage::Blocks);
            let sixteen = |m: Option<&BlockMatrix>| {
                let m = m.unwrap_or_else(|| panic!("{ty:?}: a matrix was not kept as blocks"));
                assert_eq!((m.format, m.bytes()), (format, 2 * m.n * m.k), "{ty:?}");
            };
            assert!(model.tok_emb.weight.is_none() && model.lm_head.is_none());
            sixteen(model.tok_emb.blocks.as_ref());
            for b in &model.blocks {
                for p in [&b.attn.wq, &b.attn.wk, &b.attn.wv, &b.attn.wo, b.mlp.gate.as_ref().unwrap(), &b.mlp.up, &b.mlp.down] {
                    assert!(p.weight.is_none(), "{ty:?}: an f32 copy of a matrix");
                    sixteen(p.blocks.as_ref());
                }
            }
            let norms = c.d_model * (2 * c.n_layers + 1);
            assert_eq!(model.num_params(), norms, "{ty:?}: f32 parameters besides the norms");

            let (c32, dense) = load(&bytes, WeightStorage::F32);
            let mut a = DecoderLm::new("tiny", c, model, crate::backend::BackendKind::Flex).unwrap();
            let mut b = DecoderLm::new("tiny", c32, dense, crate::backend::BackendKind::Flex).unwrap();
            // A prompt (several rows) then one step (one row, through `rows` and the tied head).
            for ids in [&[1u32, 5, 2, 7][..], &[3u32][..]] {
                let (x, y) = (a.forward_cached(ids).unwrap(), b.forward_cached(ids).unwrap());
                let scale = y.iter().fold(0f32, |m, v| m.max(v.abs()));
                for (i, (p, q)) in x.iter().zip(&y).enumerate() {
                    assert!((p - q).abs() <= 1e-5 * scale, "{ty:?} logit {i}: 16-bit {p}, f32 {q}");
                }
            }
        }
    }
}
