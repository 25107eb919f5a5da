//! The token embedding, and the LM head when the model ties it to the
//! embedding: one `[vocab, d_model]` matrix read by rows (lookup) and as a
//! whole (logits = x · Eᵀ), f32 or kept as a GGUF file's blocks.

use burn::module::{Module, Param};
use burn::nn::EmbeddingConfig;
use burn::tensor::{Device, Int, Tensor};

use crate::quant::BlockMatrix;

#[derive(Module, Debug)]
pub struct TokenEmbedding {
    /// `[vocab, d_model]`; `None` when `blocks` holds the matrix. Named
    /// `weight` as burn's `Embedding` names it, so model files keep their names.
    pub weight: Option<Param<Tensor<2>>>,
    /// `vocab` rows of `d_model` values, as blocks.
    pub blocks: Option<BlockMatrix>,
}

impl TokenEmbedding {
    pub fn init(vocab: usize, d_model: usize, device: &Device) -> Self {
        TokenEmbedding { weight: Some(EmbeddingConfig::new(vocab, d_model).init(device).weight), blocks: None }
    }

    pub fn dense(weight: Tensor<2>) -> Self {
        TokenEmbedding { weight: Some(Param::from_tensor(weight)), blocks: None }
    }

    pub fn from_blocks(blocks: BlockMatrix) -> Self {
        TokenEmbedding { weight: None, blocks: Some(blocks) }
    }

    /// # Shapes
    /// - ids: `[batch, T]` → `[batch, T, d_model]`
    pub fn forward(&self, ids: Tensor<2, Int>) -> Tensor<3> {
        match (&self.weight, &self.blocks) {
            (Some(w), _) => burn::tensor::module::embedding(w.val(), ids),
            (None, Some(m)) => m.rows(ids),
            (None, None) => unreachable!("an embedding is built with a weight or blocks"),
        }
    }

    /// The tied LM head: logits = x · Eᵀ.
    ///
    /// # Shapes
    /// - x: `[batch, T, d_model]` → `[batch, T, vocab]`
    pub fn logits(&self, x: Tensor<3>) -> Tensor<3> {
        match (&self.weight, &self.blocks) {
            // E stays as stored (vocab, d) and is viewed transposed. The
            // product is taken in 2-D: a 3-D view of Eᵀ would make burn-flex
            // copy the whole (transposed) embedding on every call, while its
            // 2-D matmul reads the strides as they are.
            (Some(w), _) => {
                let embedding = w.val();
                if let Some(y) = super::projection::dense_product(&x, &embedding, true) {
                    return y;
                }
                let [b, t, d] = x.dims();
                let vocab = embedding.dims()[0];
                x.reshape([b * t, d]).matmul(embedding.transpose()).reshape([b, t, vocab])
            }
            (None, Some(m)) => m.forward(x),
            (None, None) => unreachable!("an embedding is built with a weight or blocks"),
        }
    }
}
