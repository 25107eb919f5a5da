//! The position-wise feed-forward network: GELU (GPT-2), SwiGLU (llama) or
//! GeGLU with GELU's tanh form (Gemma).

use burn::module::Module;
use burn::tensor::activation::{gelu, gelu_approximate, silu};
use burn::tensor::{Device, Tensor};

use super::projection::Projection;
use crate::config::{MlpKind, ModelConfig};

/// GELU: `down(gelu(up x))`; gated (when `gate` is set):
/// `down(act(gate x) ⊙ up x)` with act silu (SwiGLU) or tanh-GELU (GeGLU).
#[derive(Module, Debug)]
pub struct Mlp {
    pub gate: Option<Projection>, // d_model → d_ff, gated kinds only
    pub up: Projection,           // d_model → d_ff
    pub down: Projection,         // d_ff → d_model
}

impl Mlp {
    pub fn init(c: &ModelConfig, device: &Device) -> Self {
        let (d, f) = (c.d_model, c.d_ff);
        Mlp {
            gate: c.mlp.is_gated().then(|| Projection::init(d, f, c.bias, device)),
            up: Projection::init(d, f, c.bias, device),
            down: Projection::init(f, d, c.bias, device),
        }
    }

    /// # Shapes
    /// - x: `[batch, T, d_model]` → same
    pub fn forward(&self, x: Tensor<3>, kind: MlpKind) -> Tensor<3> {
        match (&self.gate, kind) {
            // GELU's tanh form, as Gemma was trained (burn's `gelu` is the erf form).
            (Some(gate), MlpKind::GeGlu) => self.down.forward(gelu_approximate(gate.forward(x.clone())) * self.up.forward(x)),
            (Some(gate), _) => self.down.forward(silu(gate.forward(x.clone())) * self.up.forward(x)),
            (None, _) => self.down.forward(gelu(self.up.forward(x))),
        }
    }
}
