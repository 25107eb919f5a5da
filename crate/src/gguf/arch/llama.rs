//! `llama`: SmolLM2, TinyLlama, Llama 2 and 3.x. Rotary positions on
//! adjacent pairs (llama.cpp's converter permuted the checkpoint's Q and K
//! rows for them), SwiGLU, RMS norms; Llama 3.x files add `rope_freqs.weight`,
//! a divisor per rotary frequency (the llama3 RoPE scaling, precomputed by
//! the converter), and may have an `output.weight` of their own.

use super::{Family, Hparams};
use crate::config::{MlpKind, RopeStyle};
use crate::error::Result;

pub fn read(h: &Hparams) -> Result<Family> {
    let mut fam = Family::new(RopeStyle::Interleaved, MlpKind::SwiGlu);
    fam.options.rope_scaling = h.rope_scaling(&[])?;
    if h.file.tensor("rope_freqs.weight").is_some() {
        fam.options.rope_scaling.freq_factors = h.freq_factors("rope_freqs.weight")?;
        fam.constants.push(("rope_freqs.weight".into(), vec![(h.head_dim / 2) as u64]));
    }
    Ok(fam)
}
