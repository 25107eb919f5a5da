//! LayerNorm or RMSNorm, chosen by the config.

use burn::module::Module;
use burn::nn::{LayerNorm, LayerNormConfig, RmsNorm, RmsNormConfig};
use burn::tensor::{Device, Tensor};

use crate::config::NormKind;

#[derive(Module, Debug)]
pub enum Norm {
    Layer(LayerNorm),
    Rms(RmsNorm),
}

impl Norm {
    pub fn init(kind: NormKind, d_model: usize, eps: f64, device: &Device) -> Self {
        match kind {
            NormKind::LayerNorm => Norm::Layer(LayerNormConfig::new(d_model).with_epsilon(eps).init(device)),
            NormKind::RmsNorm => Norm::Rms(RmsNormConfig::new(d_model).with_epsilon(eps).init(device)),
        }
    }

    /// # Shapes
    /// - x: `[batch, T, d_model]` → same
    pub fn forward(&self, x: Tensor<3>) -> Tensor<3> {
        match self {
            Norm::Layer(n) => n.forward(x),
            // One fused operation instead of burn's seven, where no gradient is recorded.
            Norm::Rms(n) if !x.device().is_autodiff() => {
                use crate::quant::ops::RowOps;
                let y = <burn::backend::Dispatch as RowOps>::rms_norm(x.into_dispatch(), n.gamma.val().into_dispatch(), n.epsilon);
                Tensor::from_dispatch(y)
            }
            Norm::Rms(n) => n.forward(x),
        }
    }
}
