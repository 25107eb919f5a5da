//! The position-wise feed-forward network: GELU (GPT-2), SwiGLU (llama) or
//! GeGLU with GELU's tanh form (Gemma).

use burn::module::Module;
use burn::tensor::activation::{gelu, silu};
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
            // One fused operation for the gate, where no gradient is recorded.
            (Some(gate), kind) if !x.device().is_autodiff() => {
                use crate::quant::ops::RowOps;
                let (g, u) = (gate.forward(x.clone()), self.up.forward(x));
                let y = <burn::backend::Dispatch as RowOps>::gated(g.into_dispatch(), u.into_dispatch(), kind == MlpKind::GeGlu);
                self.down.forward(Tensor::from_dispatch(y))
            }
            // GELU's tanh form, as Gemma was trained (burn's `gelu` is the erf form).
            (Some(gate), MlpKind::GeGlu) => self.down.forward(gelu_tanh(gate.forward(x.clone())) * self.up.forward(x)),
            (Some(gate), _) => self.down.forward(silu(gate.forward(x.clone())) * self.up.forward(x)),
            (None, _) => self.down.forward(gelu(self.up.forward(x))),
        }
    }
}

/// GELU's tanh form, `x/2 · (1 + tanh(√(2/π) · x · (1 + 0.044715 x²)))`, as
/// llama.cpp writes it, in tensor operations: the path that records a
/// gradient (the others take `RowOps::gated`). burn's `gelu_approximate` is
/// the same function but takes `x³` through `powf`, a library call per
/// element that cost Gemma's wasm step 2.6 ms of about 60 (18 layers of
/// 2,048 features); the products here are plain multiplications.
fn gelu_tanh<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    use crate::quant::rows::{GELU_CUBE, GELU_SQRT_2_OVER_PI};
    let inner = x.clone() * ((x.clone() * x.clone()) * GELU_CUBE + 1.0) * GELU_SQRT_2_OVER_PI;
    (x * (inner.tanh() + 1.0)) * 0.5
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::TensorData;
    use burn::tensor::activation::gelu_approximate;

    /// The same numbers as burn's `gelu_approximate` (the tanh form's
    /// definition), to f32 rounding, over negative, small and large inputs.
    #[test]
    fn gelu_tanh_is_burns_tanh_form() {
        let xs: Vec<f32> = (-600..=600).map(|i| i as f32 / 50.0).collect();
        for backend in crate::backend::BackendKind::available() {
            let device = backend.device().unwrap();
            let x = Tensor::<1>::from_data(TensorData::new(xs.clone(), [xs.len()]), &device);
            let ours = gelu_tanh(x.clone()).into_data().try_to_vec::<f32>().unwrap();
            let theirs = gelu_approximate(x).into_data().try_to_vec::<f32>().unwrap();
            for ((&a, &b), &v) in ours.iter().zip(&theirs).zip(&xs) {
                assert!((a - b).abs() <= 2e-6 * (1.0 + b.abs()), "{backend:?}: gelu_tanh({v}) = {a}, burn's {b}");
            }
        }
    }
}
