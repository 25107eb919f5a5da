//! One pre-norm transformer block: x + attn(norm(x)), then + mlp(norm(x));
//! with post-norms (Gemma 3), each branch's output is normalised again
//! before it is added: x + norm(attn(norm(x))), then + norm(mlp(norm(x))).

use burn::module::Module;
use burn::tensor::{Device, Tensor};

use super::attention::{Attention, ChunkPositions};
use super::mlp::Mlp;
use super::norm::Norm;
use crate::config::ModelConfig;
use crate::kv_cache::KvCache;

#[derive(Module, Debug)]
pub struct Block {
    pub attn_norm: Norm,
    pub attn: Attention,
    /// On the attention's output (`DecoderOptions::post_norms`).
    pub post_attn_norm: Option<Norm>,
    pub mlp_norm: Norm,
    pub mlp: Mlp,
    /// On the MLP's output (`DecoderOptions::post_norms`).
    pub post_mlp_norm: Option<Norm>,
}

impl Block {
    pub fn init(c: &ModelConfig, device: &Device) -> Self {
        let norm = || Norm::init(c.norm, c.d_model, c.norm_eps, device);
        Block {
            attn_norm: norm(),
            attn: Attention::init(c, device),
            post_attn_norm: c.options.post_norms.then(norm),
            mlp_norm: norm(),
            mlp: Mlp::init(c, device),
            post_mlp_norm: c.options.post_norms.then(norm),
        }
    }

    /// Block `layer` of the model `c` describes.
    ///
    /// # Shapes
    /// - x: `[batch, T, d_model]` → same
    pub fn forward(&self, c: &ModelConfig, layer: usize, x: Tensor<3>, pos: &ChunkPositions, cache: Option<&mut KvCache>) -> Tensor<3> {
        let post = |y: Tensor<3>, norm: &Option<Norm>| match norm {
            Some(n) => n.forward(y),
            None => y,
        };
        let a = self.attn.forward(self.attn_norm.forward(x.clone()), pos, pos.layer(c, layer), cache);
        let x = x + post(a, &self.post_attn_norm);
        let m = self.mlp.forward(self.mlp_norm.forward(x.clone()), c.mlp);
        x + post(m, &self.post_mlp_norm)
    }
}
