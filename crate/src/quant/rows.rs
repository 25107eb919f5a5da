//! Row-wise f32 operations fused into one backend operation each
//! (`RowOps`): burn's RMS norm is seven operations, a rotary embedding
//! eleven and Gemma's gated tanh-GELU ten, and on a decode step each
//! operation's own cost (allocating, dispatching, a pass over a few hundred
//! values) is most of what it does. The norm's and the rotation's arithmetic
//! is burn's, in the same order (`x / rms · γ`; `a·cos − c·sin`,
//! `a·sin + c·cos`), so only the sum of squares may round differently; the
//! gate's exponentials are `f32_exp`'s (within 2 ulps), which vectorise,
//! where burn's sigmoid and tanh call libm once per value. Not for autodiff
//! (no backward pass): the callers check.

use crate::f32_exp::exp;

/// RMS norm of each row of `d` values: `x / sqrt(mean(x²) + eps) · γ`.
pub fn rms_norm(x: &[f32], gamma: &[f32], eps: f64, out: &mut [f32]) {
    let d = gamma.len();
    assert!(d > 0 && x.len() % d == 0 && out.len() == x.len(), "rms_norm shapes");
    for (xr, yr) in x.chunks_exact(d).zip(out.chunks_exact_mut(d)) {
        const LANES: usize = 8;
        let mut acc = [0f32; LANES];
        let mut chunks = xr.chunks_exact(LANES);
        for c in &mut chunks {
            for l in 0..LANES {
                acc[l] += c[l] * c[l];
            }
        }
        let tail: f32 = chunks.remainder().iter().map(|v| v * v).sum();
        let ss = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail;
        let rms = (ss / d as f32 + eps as f32).sqrt();
        for ((y, &v), &g) in yr.iter_mut().zip(xr).zip(gamma) {
            *y = (v / rms) * g;
        }
    }
}

/// Rotates rows of `hd` values by the angles of their position: `x` is
/// `[groups, t, hd]` row-major (row r is at position `r % t`), `cos`/`sin`
/// `[t, hd/2]`.
/// Interleaved pairs are (2i, 2i + 1); otherwise (i, i + hd/2).
pub fn rope(x: &[f32], t: usize, hd: usize, cos: &[f32], sin: &[f32], interleaved: bool, out: &mut [f32]) {
    let half = hd / 2;
    assert!(hd % 2 == 0 && t > 0 && x.len() % (t * hd) == 0 && cos.len() == t * half && sin.len() == t * half && out.len() == x.len(), "rope shapes");
    for (r, (xr, yr)) in x.chunks_exact(hd).zip(out.chunks_exact_mut(hd)).enumerate() {
        let p = r % t;
        let (co, si) = (&cos[p * half..][..half], &sin[p * half..][..half]);
        for i in 0..half {
            let (ia, ic) = if interleaved { (2 * i, 2 * i + 1) } else { (i, i + half) };
            let (a, c) = (xr[ia], xr[ic]);
            yr[ia] = a * co[i] - c * si[i];
            yr[ic] = a * si[i] + c * co[i];
        }
    }
}

/// The gated feed-forward's middle, `act(gate) · up` value by value, with
/// act SiLU (SwiGLU) or, with `gelu_tanh`, GELU's tanh form (GeGLU).
pub fn gated(gate: &[f32], up: &[f32], gelu_tanh: bool, out: &mut [f32]) {
    assert!(gate.len() == up.len() && out.len() == up.len(), "gated shapes");
    // One loop per activation, so each vectorises without a branch inside.
    if gelu_tanh {
        for ((y, &g), &u) in out.iter_mut().zip(gate).zip(up) {
            *y = gelu_tanh_of(g) * u;
        }
    } else {
        for ((y, &g), &u) in out.iter_mut().zip(gate).zip(up) {
            *y = silu(g) * u;
        }
    }
}

/// `x · sigmoid(x)`, the exponential taken of `−|x|` so that it never overflows.
#[inline(always)]
fn silu(x: f32) -> f32 {
    let e = exp(-x.abs());
    let sigmoid = if x >= 0.0 { 1.0 / (1.0 + e) } else { e / (1.0 + e) };
    x * sigmoid
}

/// GELU's tanh form's constants, `√(2/π)` and the cube's coefficient (its
/// tensor form for autodiff, `model::mlp`, uses them too).
pub(crate) const GELU_SQRT_2_OVER_PI: f64 = core::f64::consts::FRAC_2_SQRT_PI * core::f64::consts::FRAC_1_SQRT_2;
pub(crate) const GELU_CUBE: f64 = 0.044715;

/// `x/2 · (1 + tanh(√(2/π) · x · (1 + 0.044715 x²)))`, llama.cpp's GELU;
/// tanh(y) as `±(1 − e^(−2|y|)) / (1 + e^(−2|y|))`, which never overflows.
#[inline(always)]
fn gelu_tanh_of(x: f32) -> f32 {
    let y = GELU_SQRT_2_OVER_PI as f32 * x * (1.0 + GELU_CUBE as f32 * x * x);
    let e = exp(-2.0 * y.abs());
    let t = (1.0 - e) / (1.0 + e);
    let t = if y < 0.0 { -t } else { t };
    0.5 * x * (1.0 + t)
}

#[cfg(test)]
mod tests {
    use burn::tensor::{Distribution, Tensor};

    use crate::config::RopeStyle;
    use crate::model::norm::Norm;
    use crate::model::rope::{angle_tables, apply_rope};

    /// The fused operations against burn's own, on the backends there are.
    #[test]
    fn fused_rows_match_burns_operations() {
        for backend in crate::backend::BackendKind::available() {
            let device = backend.device().unwrap();
            let x = Tensor::<3>::random([2, 3, 40], Distribution::Normal(0.0, 2.0), &device);
            let norm = Norm::init(crate::config::NormKind::RmsNorm, 40, 1e-5, &device);
            let Norm::Rms(n) = &norm else { unreachable!() };
            let fused = norm.forward(x.clone()).into_data().try_to_vec::<f32>().unwrap();
            let plain = n.forward(x).into_data().try_to_vec::<f32>().unwrap();
            let worst = fused.iter().zip(&plain).map(|(a, b)| (a - b).abs() / (1.0 + b.abs())).fold(0f32, f32::max);
            assert!(worst < 1e-6, "{backend:?} rms norm: {worst}");
            for style in [RopeStyle::Interleaved, RopeStyle::RotateHalf] {
                // A swapped view, as attention passes it.
                let q = Tensor::<4>::random([1, 5, 3, 8], Distribution::Normal(0.0, 1.0), &device).swap_dims(1, 2);
                let (cos, sin) = angle_tables(7, 5, 8, 10000.0, &device);
                let fused = apply_rope(q.clone(), &cos, &sin, style).into_data().try_to_vec::<f32>().unwrap();
                let plain = crate::model::rope::apply_rope_ops(q, &cos, &sin, style).into_data().try_to_vec::<f32>().unwrap();
                assert_eq!(fused, plain, "{backend:?} {style:?}");
            }
        }
    }

    /// The fused gate against burn's `silu` and the tanh-GELU of its
    /// definition (burn's `gelu_approximate`), times `up`, over negative,
    /// small and large inputs, to f32 rounding.
    #[test]
    fn fused_gate_matches_burns_activations() {
        use burn::tensor::TensorData;
        use burn::tensor::activation::{gelu_approximate, silu};
        let gate: Vec<f32> = (-900..=900).map(|i| i as f32 / 50.0).chain([-1e4, -200.0, 1e-30, 200.0, 1e4]).collect();
        let up: Vec<f32> = (0..gate.len()).map(|i| 1.0 + (i % 7) as f32 * 0.5 - 2.0).collect();
        for backend in crate::backend::BackendKind::available() {
            let device = backend.device().unwrap();
            let g = Tensor::<1>::from_data(TensorData::new(gate.clone(), [gate.len()]), &device);
            let u = Tensor::<1>::from_data(TensorData::new(up.clone(), [up.len()]), &device);
            for gelu in [false, true] {
                let mut ours = vec![0f32; gate.len()];
                super::gated(&gate, &up, gelu, &mut ours);
                let act = if gelu { gelu_approximate(g.clone()) } else { silu(g.clone()) };
                let theirs = (act * u.clone()).into_data().try_to_vec::<f32>().unwrap();
                for (i, (&a, &b)) in ours.iter().zip(&theirs).enumerate() {
                    assert!((a - b).abs() <= 2e-6 * (1.0 + b.abs()), "{backend:?} gelu {gelu}: gate {} up {}: {a} against {b}", gate[i], up[i]);
                }
            }
        }
    }
}
