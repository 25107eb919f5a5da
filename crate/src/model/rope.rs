//! Rotary position embeddings, in both pairing conventions.
//!
//! ```text
//! frequency i = base^(-2i / head_dim), i in 0..head_dim/2;  angle = position · frequency
//! interleaved  (llama.cpp, GGUF):  rotate (x[2i], x[2i+1])
//! rotate-half  (Hugging Face):     rotate (x[i], x[i + head_dim/2])
//! ```
//! Tables are computed in f64 for the positions of the current chunk only,
//! so a cached decode step at position p uses exactly the angles a full
//! recompute would.

use burn::tensor::{Device, Tensor, TensorData};

use crate::config::RopeStyle;

/// cos and sin of every angle for positions `start..start+len`.
///
/// # Shapes
/// - returned: `[len, head_dim / 2]` each
pub fn angle_tables(start: usize, len: usize, head_dim: usize, base: f64, device: &Device) -> (Tensor<2>, Tensor<2>) {
    let half = head_dim / 2;
    let mut cos = Vec::with_capacity(len * half);
    let mut sin = Vec::with_capacity(len * half);
    for p in start..start + len {
        for i in 0..half {
            let freq = base.powf(-2.0 * i as f64 / head_dim as f64);
            let angle = p as f64 * freq;
            cos.push(angle.cos() as f32);
            sin.push(angle.sin() as f32);
        }
    }
    (
        Tensor::from_data(TensorData::new(cos, [len, half]), device),
        Tensor::from_data(TensorData::new(sin, [len, half]), device),
    )
}

/// Rotates each head's features by the angles of its position.
///
/// # Shapes
/// - x: `[batch, heads, T, head_dim]`
/// - cos, sin: `[T, head_dim / 2]`
/// - returned: `[batch, heads, T, head_dim]`
pub fn apply_rope(x: Tensor<4>, cos: &Tensor<2>, sin: &Tensor<2>, style: RopeStyle) -> Tensor<4> {
    if x.device().is_autodiff() {
        return apply_rope_ops(x, cos, sin, style);
    }
    // One fused operation (`quant::rows::rope`) instead of the eleven below.
    use crate::quant::ops::RowOps;
    let interleaved = style == RopeStyle::Interleaved;
    let y = <burn::backend::Dispatch as RowOps>::rope(x.into_dispatch(), cos.clone().into_dispatch(), sin.clone().into_dispatch(), interleaved);
    Tensor::from_dispatch(y)
}

/// `apply_rope` in burn's tensor operations (the autodiff path, and the
/// reference the fused one is tested against).
pub fn apply_rope_ops(x: Tensor<4>, cos: &Tensor<2>, sin: &Tensor<2>, style: RopeStyle) -> Tensor<4> {
    let [b, h, t, d] = x.dims();
    let half = d / 2;
    let cos = cos.clone().reshape([1, 1, t, half]);
    let sin = sin.clone().reshape([1, 1, t, half]);
    match style {
        RopeStyle::Interleaved => {
            let pairs = x.reshape([b, h, t, half, 2]);
            let a = pairs.clone().slice([0..b, 0..h, 0..t, 0..half, 0..1]).reshape([b, h, t, half]);
            let c = pairs.slice([0..b, 0..h, 0..t, 0..half, 1..2]).reshape([b, h, t, half]);
            let ra = a.clone() * cos.clone() - c.clone() * sin.clone();
            let rc = a * sin + c * cos;
            Tensor::stack::<5>(vec![ra, rc], 4).reshape([b, h, t, d])
        }
        RopeStyle::RotateHalf => {
            let a = x.clone().slice([0..b, 0..h, 0..t, 0..half]);
            let c = x.slice([0..b, 0..h, 0..t, half..d]);
            let ra = a.clone() * cos.clone() - c.clone() * sin.clone();
            let rc = a * sin + c * cos;
            Tensor::cat(vec![ra, rc], 3)
        }
    }
}
