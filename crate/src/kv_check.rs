//! Teacher-forced equivalence of the cached and the naive path: feed both
//! the same tokens and compare the logits at every position. (Comparing
//! generated text would confuse a last-bit tie-break with a bug.)
//!
//! ```text
//! tokens:        t0 t1 ... t(P-1) | tP ... t(N-1)
//! naive:         one full pass over all N tokens ─► logits at every position
//! cached:        prefill t0..t(P-1) ─► logits at P-1; then tP .. t(N-1) one at a time ─► logits at P .. N-1
//! compared:      positions P-1 .. N-1
//! ```

use serde::Serialize;

use crate::bail;
use crate::counters::Counters;
use crate::error::Result;
use crate::lm::LanguageModel;
use crate::rules::argmax;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TeacherForcedCheck {
    /// Positions compared.
    pub positions: usize,
    pub max_abs_diff: f64,
    /// Positions where both paths have the same top token.
    pub argmax_agree: usize,
    /// Work of this check (cached: prefill + decodes; naive: one pass).
    pub counters: Counters,
}

pub fn teacher_forced(model: &mut dyn LanguageModel, tokens: &[u32], prompt_len: usize) -> Result<TeacherForcedCheck> {
    if prompt_len == 0 || prompt_len > tokens.len() {
        bail!("the prompt length must be between 1 and the number of tokens ({})", tokens.len());
    }
    model.truncate(0);
    model.reset_counters();
    let naive = model.forward_naive(tokens)?;
    let mut cached = vec![model.forward_cached(&tokens[..prompt_len])?];
    for &t in &tokens[prompt_len..] {
        cached.push(model.forward_cached(&[t])?);
    }
    let (mut max_abs_diff, mut argmax_agree) = (0.0f64, 0usize);
    let to64 = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
    for (i, c) in cached.iter().enumerate() {
        let n = &naive[prompt_len - 1 + i];
        for (a, b) in n.iter().zip(c) {
            max_abs_diff = max_abs_diff.max((a - b).abs() as f64);
        }
        if argmax(&to64(n)) == argmax(&to64(c)) {
            argmax_agree += 1;
        }
    }
    Ok(TeacherForcedCheck { positions: cached.len(), max_abs_diff, argmax_agree, counters: model.counters() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::BackendKind;
    use crate::config::{MlpKind, ModelConfig, NormKind, Positions, RopeStyle};
    use crate::kv_cache::{KvPrecision, PAGE};
    use crate::model::DecoderLm;

    /// A small llama (rotary, grouped heads, RMS norm) with random weights,
    /// fed past two page boundaries: a 150-token prompt, then 140 decode steps.
    fn check(precision: KvPrecision) -> (TeacherForcedCheck, f64) {
        let config = ModelConfig {
            vocab_size: 40,
            d_model: 32,
            n_layers: 3,
            n_heads: 4,
            n_kv_heads: 2,
            head_dim: 8,
            d_ff: 64,
            context: 2 * PAGE + 40,
            positions: Positions::Rope { base: 10000.0, style: RopeStyle::Interleaved },
            norm: NormKind::RmsNorm,
            norm_eps: 1e-5,
            mlp: MlpKind::SwiGlu,
            tied_embeddings: true,
            bias: false,
            options: Default::default(),
        };
        let mut lm = DecoderLm::random("kv-check", config, 17, BackendKind::Flex).unwrap();
        lm.set_kv_precision(precision).unwrap();
        let tokens: Vec<u32> = (0..290u32).map(|i| (i * 7 + i / 3) % 40).collect();
        let largest = lm.forward_naive(&tokens).unwrap().iter().flatten().fold(0f64, |m, &x| m.max((x as f64).abs()));
        (teacher_forced(&mut lm, &tokens, 150).unwrap(), largest)
    }

    /// The f32 cache is the recompute to f32 rounding. The f16 one rounds
    /// every cached K and V by at most h = 2^-11 relative; to first order a
    /// layer's attention output then moves by at most h·(1 + 2S) of its
    /// values' size, S the largest |score| (the keys' share through the
    /// softmax, whose weights move by e^{2hS} − 1 ≈ 2hS; below 2 for these
    /// random weights), and the layers' errors add along the residual stream
    /// to the logits: within h · layers · 5 · max|logit|.
    #[test]
    fn the_cache_follows_the_recompute_in_both_precisions() {
        let (f32_check, _) = check(KvPrecision::F32);
        assert_eq!(f32_check.positions, 141);
        assert!(f32_check.max_abs_diff < 1e-5, "f32 cache: {}", f32_check.max_abs_diff);
        let (f16_check, largest) = check(KvPrecision::F16);
        let bound = 3.0 * 5.0 * largest / 2048.0;
        assert!(f16_check.max_abs_diff <= bound, "f16 cache: {} (bound {bound})", f16_check.max_abs_diff);
        assert!(f16_check.max_abs_diff > f32_check.max_abs_diff, "the f16 cache rounds: {f16_check:?}");
        eprintln!("cache vs recompute: f32 {:e}, f16 {:e} (bound {bound:e}, logits up to {largest})", f32_check.max_abs_diff, f16_check.max_abs_diff);
    }
}
