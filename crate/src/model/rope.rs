//! Rotary position embeddings, in both pairing conventions.
//!
//! ```text
//! frequency i = base^(-2i / head_dim), i in 0..head_dim/2;  angle = position · frequency
//! interleaved  (llama.cpp, GGUF):  rotate (x[2i], x[2i+1])
//! rotate-half  (Hugging Face):     rotate (x[i], x[i + head_dim/2])
//! ```
//! With scaling (`config::RopeScaling`), the angle of frequency i at
//! position p is `p · position_scale · freq_i / factor_i`, and cos and sin
//! are multiplied by `magnitude`, as llama.cpp's rope does without YaRN.
//! Tables are computed in f64 for the positions of the current chunk only,
//! so a cached decode step at position p uses exactly the angles a full
//! recompute would.

use burn::tensor::{Device, Tensor, TensorData};

use crate::config::{RopeScaling, RopeStyle};

/// The rotation of one kind of layer: its frequencies and scaling.
#[derive(Debug, Clone, PartialEq)]
pub struct RopeSpec {
    /// `freq_i / factor_i` for i in 0..head_dim/2, in radians per position.
    pub freqs: Vec<f64>,
    pub position_scale: f64,
    pub magnitude: f64,
}

impl RopeSpec {
    /// `base^(-2i/head_dim)`, scaled as `scaling` says.
    pub fn new(head_dim: usize, base: f64, scaling: &RopeScaling) -> Self {
        let freqs = (0..head_dim / 2)
            .map(|i| {
                let factor = scaling.freq_factors.get(i).map_or(1.0, |&f| f as f64);
                base.powf(-2.0 * i as f64 / head_dim as f64) / factor
            })
            .collect();
        RopeSpec { freqs, position_scale: scaling.position_scale, magnitude: scaling.magnitude }
    }

    /// Plain rotary positions: no scaling.
    pub fn plain(head_dim: usize, base: f64) -> Self {
        Self::new(head_dim, base, &RopeScaling::default())
    }

    /// cos and sin of every angle for positions `start..start+len`.
    ///
    /// # Shapes
    /// - returned: `[len, head_dim / 2]` each
    pub fn tables(&self, start: usize, len: usize, device: &Device) -> (Tensor<2>, Tensor<2>) {
        let half = self.freqs.len();
        let mut cos = Vec::with_capacity(len * half);
        let mut sin = Vec::with_capacity(len * half);
        for p in start..start + len {
            let p = p as f64 * self.position_scale;
            for &freq in &self.freqs {
                let angle = p * freq;
                cos.push((angle.cos() * self.magnitude) as f32);
                sin.push((angle.sin() * self.magnitude) as f32);
            }
        }
        (
            Tensor::from_data(TensorData::new(cos, [len, half]), device),
            Tensor::from_data(TensorData::new(sin, [len, half]), device),
        )
    }
}

/// cos and sin of every plain angle for positions `start..start+len`.
///
/// # Shapes
/// - returned: `[len, head_dim / 2]` each
pub fn angle_tables(start: usize, len: usize, head_dim: usize, base: f64, device: &Device) -> (Tensor<2>, Tensor<2>) {
    RopeSpec::plain(head_dim, base).tables(start, len, device)
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
