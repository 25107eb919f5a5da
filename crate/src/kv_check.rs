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
