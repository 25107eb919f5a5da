//! A checked `llama` GGUF file's tensors in the burn modules.
//!
//! ```text
//! token_embd.weight   [d, vocab]  → tok_emb            (rows of d: as stored)
//! output.weight       [d, vocab]  → lm_head            (absent: tied to token_embd)
//! output_norm.weight  [d]         → final_norm
//! blk.i.attn_norm / ffn_norm [d]  → blocks[i].attn_norm / mlp_norm
//! blk.i.attn_q|k|v|output         → blocks[i].attn.wq|wk|wv|wo
//! blk.i.ffn_gate|up|down          → blocks[i].mlp.gate|up|down
//! ```
//! GGUF lists a matrix's dimensions innermost first: `[in, out]` is `out`
//! rows of `in` numbers, i.e. ggml's `W` with `y = W x`. That is the layout
//! the block kernels read, so a matrix of a format they have
//! (`quant::block_format`: the quantised ones, and F16 and BF16 at 16 bits)
//! stays as the file's bytes: every matrix is a view into one u8 tensor
//! holding the whole file, which is neither copied nor dequantised. Any other type (and every matrix with `WeightStorage::F32`)
//! is dequantised and, for burn's `y = x W`, transposed once to `[in, out]`.
//! llama.cpp's converter permuted the Q and K rows of the Hugging Face
//! checkpoint so that rotary positions act on adjacent pairs: the config
//! says `RopeStyle::Interleaved`, and the weights are used as stored.
//!
//! Loading runs in two phases because the file is parsed from the very
//! bytes the matrices then keep: `plan` reads what needs reading while the
//! bytes are borrowed, `build` takes them over.

use std::collections::HashMap;

use burn::module::Param;
use burn::tensor::{Bytes, Device, Int, Tensor, TensorData};

use super::llama::check_tensors;
use super::quant::dequantize;
use super::reader::{GgufFile, TensorInfo};
use crate::bail;
use crate::config::ModelConfig;
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
pub fn plan(f: &GgufFile, c: &ModelConfig, storage: WeightStorage) -> Result<Plan> {
    check_tensors(f, c)?;
    let mut tensors = HashMap::new();
    for t in &f.tensors {
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

impl Builder {
    fn take(&mut self, name: &str) -> (Planned, Vec<usize>) {
        self.plan.tensors.remove(name).expect("check_tensors found every tensor")
    }

    fn blocks(&self, start: usize, format: BlockFormat, n: usize, k: usize) -> BlockMatrix {
        BlockMatrix::view(self.file.as_ref().expect("a plan with blocks has the file"), start, format, n, k)
    }

    /// A GGUF `[in, out]` matrix as a projection `x ↦ x W`.
    fn projection(&mut self, name: &str) -> Projection {
        match self.take(name) {
            (Planned::Blocks { start, format, n, k }, _) => Projection::from_blocks(self.blocks(start, format, n, k)),
            (Planned::Values(v), dims) => {
                let (d_in, d_out) = (dims[0], dims[1]);
                let w = transposed(&v, d_out, d_in);
                Projection::dense(Tensor::<2>::from_data(TensorData::new(w, [d_in, d_out]), &self.device))
            }
        }
    }

    fn embedding(&mut self, name: &str) -> TokenEmbedding {
        match self.take(name) {
            (Planned::Blocks { start, format, n, k }, _) => TokenEmbedding::from_blocks(self.blocks(start, format, n, k)),
            (Planned::Values(v), dims) => TokenEmbedding::dense(Tensor::<2>::from_data(TensorData::new(v, [dims[1], dims[0]]), &self.device)),
        }
    }

    fn norm(&mut self, name: &str, norm: &mut Norm) -> Result<()> {
        let (Planned::Values(v), dims) = self.take(name) else { bail!("the norm '{name}' is not a vector") };
        match norm {
            Norm::Rms(n) => n.gamma = Param::from_tensor(Tensor::<1>::from_data(TensorData::new(v, [dims[0]]), &self.device)),
            Norm::Layer(_) => bail!("a llama model has RMS norms only"),
        }
        Ok(())
    }
}

/// Builds the model from the plan, taking over the file's bytes when the
/// plan keeps any matrix as blocks (and dropping them when it does not).
pub fn build(c: &ModelConfig, plan: Plan, bytes: Bytes, device: &Device) -> Result<Transformer> {
    let any_blocks = plan.tensors.values().any(|(p, _)| matches!(p, Planned::Blocks { .. }));
    let file = any_blocks.then(|| file_tensor(bytes, device));
    let mut l = Builder { plan, file, device: device.clone() };
    // burn's own initialisation is lazy: the parameters below replace it
    // before anything is allocated for it.
    let mut model = Transformer::init(c, device);
    model.tok_emb = l.embedding("token_embd.weight");
    l.norm("output_norm.weight", &mut model.final_norm)?;
    if !c.tied_embeddings {
        model.lm_head = Some(l.projection("output.weight"));
    }
    for (i, block) in model.blocks.iter_mut().enumerate() {
        let name = |n: &str| format!("blk.{i}.{n}.weight");
        l.norm(&name("attn_norm"), &mut block.attn_norm)?;
        l.norm(&name("ffn_norm"), &mut block.mlp_norm)?;
        block.attn.wq = l.projection(&name("attn_q"));
        block.attn.wk = l.projection(&name("attn_k"));
        block.attn.wv = l.projection(&name("attn_v"));
        block.attn.wo = l.projection(&name("attn_output"));
        block.mlp.gate = Some(l.projection(&name("ffn_gate")));
        block.mlp.up = l.projection(&name("ffn_up"));
        block.mlp.down = l.projection(&name("ffn_down"));
    }
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gguf::llama::{config_from_metadata, expected_tensors};
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
        for (t, (name, dims)) in expected_tensors(&c).into_iter().enumerate() {
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
        let c = config_from_metadata(&f).unwrap();
        let p = plan(&f, &c, storage).unwrap();
        let model = build(&c, p, Bytes::from_bytes_vec(bytes.to_vec()), &Device::flex()).unwrap();
        (c, model)
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
