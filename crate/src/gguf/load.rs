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
//! (`quant::BlockFormat::ALL`) stays as the file's bytes: every matrix is a view into
//! one u8 tensor holding the whole file, which is neither copied nor
//! dequantised. Any other type (and every matrix with `WeightStorage::F32`)
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
