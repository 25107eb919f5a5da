//! A linear projection `y = x W + b`, its weight either f32 (trained and
//! SafeTensors models) or kept as a GGUF file's blocks.
//!
//! The f32 weight is stored `[d_in, d_out]` under the name `weight`, as
//! burn's `Linear` stores it, so model files keep their tensor names.

use burn::module::{Module, Param};
use burn::nn::LinearConfig;
use burn::tensor::{Device, Tensor};

use crate::quant::BlockMatrix;

/// Input rows up to which an f32 product goes through `quant::ops::DenseOps`
/// (a decode step, a few beams); longer chunks (a prompt) use burn's matmul.
pub const DENSE_ROWS: usize = 8;

/// `x · W` (W `[k, n]`) or `x · Wᵀ` (W `[n, k]`, `transposed`) through the
/// few-row kernels, when `x` has at most `DENSE_ROWS` rows and no gradient
/// is being recorded (the extension has no backward pass); `None` otherwise.
///
/// # Shapes
/// - x: `[b, t, k]` → `[b, t, n]`
pub fn dense_product(x: &Tensor<3>, w: &Tensor<2>, transposed: bool) -> Option<Tensor<3>> {
    use burn::backend::Dispatch;
    use crate::quant::ops::DenseOps;
    let [b, t, k] = x.dims();
    if b * t > DENSE_ROWS || x.device().is_autodiff() {
        return None;
    }
    let n = w.dims()[if transposed { 0 } else { 1 }];
    let y = <Dispatch as DenseOps>::dense_matmul(x.clone().reshape([b * t, k]).into_dispatch(), w.clone().into_dispatch(), transposed);
    Some(Tensor::<2>::from_dispatch(y).reshape([b, t, n]))
}

#[derive(Module, Debug)]
pub struct Projection {
    /// `[d_in, d_out]`; `None` when `blocks` holds the weight.
    pub weight: Option<Param<Tensor<2>>>,
    pub bias: Option<Param<Tensor<1>>>,
    /// `d_out` rows of `d_in` values, as blocks (a GGUF file's own layout).
    pub blocks: Option<BlockMatrix>,
}

impl Projection {
    /// An f32 projection with burn's (lazy) initialisation; its values come
    /// from `init::init_seeded` or a weights file.
    pub fn init(d_in: usize, d_out: usize, bias: bool, device: &Device) -> Self {
        let linear = LinearConfig::new(d_in, d_out).with_bias(bias).init(device);
        Projection { weight: Some(linear.weight), bias: linear.bias, blocks: None }
    }

    /// An f32 `[d_in, d_out]` weight, no bias.
    pub fn dense(weight: Tensor<2>) -> Self {
        Projection { weight: Some(Param::from_tensor(weight)), bias: None, blocks: None }
    }

    /// A weight kept as blocks, no bias.
    pub fn from_blocks(blocks: BlockMatrix) -> Self {
        Projection { weight: None, bias: None, blocks: Some(blocks) }
    }

    /// # Shapes
    /// - x: `[batch, T, d_in]` → `[batch, T, d_out]`
    pub fn forward(&self, x: Tensor<3>) -> Tensor<3> {
        let bias = self.bias.as_ref().map(|b| b.val());
        match (&self.weight, &self.blocks) {
            (Some(w), _) => match dense_product(&x, &w.val(), false) {
                Some(y) => match bias {
                    Some(b) => y + b.unsqueeze::<3>(),
                    None => y,
                },
                None => burn::tensor::module::linear(x, w.val(), bias),
            },
            (None, Some(m)) => {
                let y = m.forward(x);
                match bias {
                    Some(b) => y + b.unsqueeze::<3>(),
                    None => y,
                }
            }
            (None, None) => unreachable!("a projection is built with a weight or blocks"),
        }
    }
}
