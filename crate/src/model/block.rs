//! One pre-norm transformer block: x + attn(norm(x)), then + mlp(norm(x)).

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
    pub mlp_norm: Norm,
    pub mlp: Mlp,
}

impl Block {
    pub fn init(c: &ModelConfig, device: &Device) -> Self {
        Block {
            attn_norm: Norm::init(c.norm, c.d_model, c.norm_eps, device),
            attn: Attention::init(c, device),
            mlp_norm: Norm::init(c.norm, c.d_model, c.norm_eps, device),
            mlp: Mlp::init(c, device),
        }
    }

    /// # Shapes
    /// - x: `[batch, T, d_model]` → same
    pub fn forward(&self, x: Tensor<3>, pos: &ChunkPositions, cache: Option<(&mut KvCache, usize)>) -> Tensor<3> {
        let x = x.clone() + self.attn.forward(self.attn_norm.forward(x), pos, cache);
        x.clone() + self.mlp.forward(self.mlp_norm.forward(x))
    }
}
