//! The position-wise feed-forward network: GELU (GPT-2) or SwiGLU (llama).

use burn::module::Module;
use burn::tensor::activation::{gelu, silu};
use burn::tensor::{Device, Tensor};

use super::projection::Projection;
use crate::config::{MlpKind, ModelConfig};

/// GELU: `down(gelu(up x))`; SwiGLU (when `gate` is set): `down(silu(gate x) ⊙ up x)`.
#[derive(Module, Debug)]
pub struct Mlp {
    pub gate: Option<Projection>, // d_model → d_ff, SwiGLU only
    pub up: Projection,           // d_model → d_ff
    pub down: Projection,         // d_ff → d_model
}

impl Mlp {
    pub fn init(c: &ModelConfig, device: &Device) -> Self {
        let (d, f) = (c.d_model, c.d_ff);
        Mlp {
            gate: (c.mlp == MlpKind::SwiGlu).then(|| Projection::init(d, f, c.bias, device)),
            up: Projection::init(d, f, c.bias, device),
            down: Projection::init(f, d, c.bias, device),
        }
    }

    /// # Shapes
    /// - x: `[batch, T, d_model]` → same
    pub fn forward(&self, x: Tensor<3>) -> Tensor<3> {
        match &self.gate {
            None => self.down.forward(gelu(self.up.forward(x))),
            Some(gate) => self.down.forward(silu(gate.forward(x.clone())) * self.up.forward(x)),
        }
    }
}
