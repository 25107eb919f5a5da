//! The KV cache's arithmetic: the scores and K/V projections of the cached
//! and the naive path (the engine's counters' formulas), the lesson's 8-step
//! single-head demo (naive and cached attention in f64, and its FLOP
//! formulas), the FLOP curve up to T = 64 with its log-log slopes, and the
//! cache-size calculator.

use serde_json::{json, Value};

use crate::counters::PathCost;
#[cfg(test)]
use crate::counters::cache_bytes;
use crate::error::Result;
use crate::kv_check::teacher_forced;

/// Scores and K/V rows of `steps` one-token steps after a `prompt`-token
/// prefill, cached and naive (the counters' own formulas). Returns per-step
/// costs; the first step is the prefill.
fn path_costs(prompt: usize, steps: usize) -> (Vec<PathCost>, Vec<PathCost>) {
    let mut cached = vec![PathCost::cached_step(0, prompt)];
    let mut naive = vec![PathCost::naive_step(prompt)];
    for t in prompt + 1..prompt + steps {
        cached.push(PathCost::cached_step(t - 1, 1));
        naive.push(PathCost::naive_step(t));
    }
    (cached, naive)
}

fn total(costs: &[PathCost]) -> PathCost {
    let mut sum = PathCost::default();
    costs.iter().for_each(|c| sum.add(*c));
    sum
}

/// The 12-step triangle from one token (78 scores against 364), and an
/// 8-token prompt with 24 generated tokens (31 K/V projections against 468).
pub fn cache_counts() -> Value {
    let (c12, n12) = path_costs(1, 12);
    let (c24, n24) = path_costs(8, 24);
    let (tc, tn) = (total(&c24), total(&n24));
    json!({
        "triangle": {
            "steps": 12,
            "cached_scores": total(&c12).scores, "naive_scores": total(&n12).scores,
            "per_step_cached": c12.iter().map(|c| c.scores).collect::<Vec<_>>(),
            "per_step_naive": n12.iter().map(|c| c.scores).collect::<Vec<_>>(),
        },
        "decode": {
            "prompt": 8, "generated": 24,
            "cached_kv": tc.kv_rows, "naive_kv": tn.kv_rows, "ratio": tn.kv_rows as f64 / tc.kv_rows as f64,
        },
    })
}

/// The lesson's FLOP formulas for one head of width d at step t.
pub fn naive_flops(t: u64, d: u64) -> u64 {
    3 * t * d * d + 2 * t * t * d + t * t
}

pub fn cached_flops(t: u64, d: u64) -> u64 {
    3 * d * d + 2 * t * d + t
}

/// The lesson's demo: one head, d_head = 4, T = 8: the FLOP formulas'
/// per-step and cumulative counts, and the engine's own `kv-demo` model (the
/// same shape, our seed-21 weights, so not the lesson's draws) run on the
/// lesson's tokens [1, 4, 2, 5, 3, 6, 2, 1] both ways, teacher-forced: the
/// largest |naive − cached| over its logits.
pub fn demo_flops() -> Result<Value> {
    let (d, t_max) = (4u64, 8u64);
    let naive: Vec<u64> = (1..=t_max).map(|t| naive_flops(t, d)).collect();
    let cached: Vec<u64> = (1..=t_max).map(|t| cached_flops(t, d)).collect();
    let ratios: Vec<f64> = naive.iter().zip(&cached).map(|(n, c)| *n as f64 / *c as f64).collect();
    let (sn, sc): (u64, u64) = (naive.iter().sum(), cached.iter().sum());
    let mut session = crate::builtin::kv_demo_session()?;
    let tokens = [0u32, 3, 1, 4, 2, 5, 1, 0];
    let check = teacher_forced(session.model_mut(), &tokens, 1)?;
    Ok(json!({
        "d_head": d, "steps": t_max, "naive_flops": naive, "cached_flops": cached, "per_step_ratio": ratios,
        "cumulative_naive": sn, "cumulative_cached": sc, "cumulative_ratio": sn as f64 / sc as f64,
        "cache_numbers": 2 * t_max * d,
        "engine_check": { "positions": check.positions, "max_abs_diff": check.max_abs_diff, "argmax_agree": check.argmax_agree },
    }))
}

/// Cumulative naive and cached FLOPs for T = 1 … t_max (d_head = 4) and
/// their log-log slopes: over the last octave (T/2 → T) and by least squares
/// over every T.
pub fn flop_curve(t_max: u64) -> Value {
    let d = 4;
    let mut cum = (0u64, 0u64);
    let mut naive = Vec::new();
    let mut cached = Vec::new();
    for t in 1..=t_max {
        cum.0 += naive_flops(t, d);
        cum.1 += cached_flops(t, d);
        naive.push(cum.0);
        cached.push(cum.1);
    }
    let octave = |v: &[u64]| (v[t_max as usize - 1] as f64 / v[t_max as usize / 2 - 1] as f64).ln() / 2f64.ln();
    let fit = |v: &[u64]| {
        let pts: Vec<(f64, f64)> = v.iter().enumerate().map(|(i, &y)| (((i + 1) as f64).ln(), (y as f64).ln())).collect();
        let n = pts.len() as f64;
        let (mx, my) = (pts.iter().map(|p| p.0).sum::<f64>() / n, pts.iter().map(|p| p.1).sum::<f64>() / n);
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
        sxy / sxx
    };
    json!({
        "d_head": d, "t_max": t_max, "cumulative_naive": naive, "cumulative_cached": cached,
        "slope_naive_last_octave": octave(&naive), "slope_cached_last_octave": octave(&cached),
        "slope_naive_fit": fit(&naive), "slope_cached_fit": fit(&cached),
        "expected_naive": 3, "expected_cached": 2,
    })
}

/// A model's KV-cache shape for the size calculator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KvShape {
    pub layers: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub context: usize,
    pub bytes_per_number: usize,
}

impl KvShape {
    /// The lesson's production example: 32 layers × 32 heads × d_head 128 at 8192 positions, fp16.
    pub const LESSON: KvShape =
        KvShape { layers: 32, heads: 32, kv_heads: 32, head_dim: 128, context: 8192, bytes_per_number: 2 };
}

/// What the calculator shows for a shape.
#[derive(Debug, Clone, PartialEq)]
pub struct KvSize {
    pub shape: KvShape,
    pub numbers: u64,
    pub bytes: u64,
    /// The same shape with one K/V head per query head (no grouping).
    pub full_mha_bytes: u64,
}

impl KvSize {
    pub fn to_json(&self) -> Value {
        let s = self.shape;
        json!({
            "layers": s.layers, "heads": s.heads, "kv_heads": s.kv_heads, "head_dim": s.head_dim,
            "context": s.context, "bytes_per_number": s.bytes_per_number,
            "numbers": self.numbers, "bytes": self.bytes, "gb": self.bytes as f64 / 1e9,
            "gib": self.bytes as f64 / (1u64 << 30) as f64,
            "full_mha_bytes": self.full_mha_bytes, "gqa_saving": self.full_mha_bytes as f64 / self.bytes as f64,
            "per_token_bytes": self.bytes / s.context.max(1) as u64,
        })
    }
}

/// 2 (K and V) · layers · kv_heads · context · d_head numbers. In u64: the
/// lesson's 4.29 GB is 2^32 bytes, which the engine's `cache_bytes` (usize)
/// would wrap to 0 on wasm32.
pub fn size(s: &KvShape) -> KvSize {
    let numbers = |kv_heads: usize| 2 * s.layers as u64 * kv_heads as u64 * s.context as u64 * s.head_dim as u64;
    let b = s.bytes_per_number as u64;
    KvSize { shape: *s, numbers: numbers(s.kv_heads), bytes: numbers(s.kv_heads) * b, full_mha_bytes: numbers(s.heads) * b }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_size_agrees_with_the_engines_formula_natively() {
        let s = KvShape { kv_heads: 8, ..KvShape::LESSON };
        let got = size(&s);
        assert_eq!(got.bytes as usize, cache_bytes(s.layers, s.kv_heads, s.context, s.head_dim, s.bytes_per_number));
        assert_eq!(got.full_mha_bytes, 4 * got.bytes);
    }
}

/// The calculator's inputs: every count at least 1, K/V heads dividing the
/// query heads, and a total that fits in 2^53 (a JS number).
pub fn check_shape(s: &KvShape) -> crate::error::Result<()> {
    let fields = [
        ("layers", s.layers),
        ("heads", s.heads),
        ("kv_heads", s.kv_heads),
        ("head_dim", s.head_dim),
        ("context", s.context),
        ("bytes_per_number", s.bytes_per_number),
    ];
    if let Some((name, _)) = fields.iter().find(|(_, v)| *v == 0 || *v > 1 << 24) {
        crate::bail!("{name} must be between 1 and {}", 1 << 24);
    }
    if s.kv_heads > s.heads || s.heads % s.kv_heads != 0 {
        crate::bail!("kv_heads ({}) must divide heads ({})", s.kv_heads, s.heads);
    }
    let total = fields.iter().try_fold(2u128, |acc, (_, v)| acc.checked_mul(*v as u128));
    if total.is_none_or(|t| t > 1 << 53) {
        crate::bail!("that cache is over 2^53 bytes: choose smaller numbers");
    }
    Ok(())
}
