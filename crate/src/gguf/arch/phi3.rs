//! `phi3`: Phi-3 and Phi-3.5 (dense). Q, K and V in one `attn_qkv` (the
//! layout picks that up for any family), the gate and up projections in
//! one `ffn_up` of 2·d_ff rows (the gate's first, as llama.cpp's SWIGLU
//! reads them), rotary positions on halves (NEOX). The 128k-context files
//! carry LongRoPE factors, `rope_factors_short` and `rope_factors_long`:
//! llama.cpp divides the frequencies by the long ones only when the context
//! in use exceeds the original one, which this build's capped context never
//! does past 4,096 trained positions, so the short ones apply, with
//! `rope.scaling.attn_factor` on cos and sin. The sliding window some
//! Phi-3 files declare is ignored, as llama.cpp ignores it.

use super::{Family, Hparams};
use crate::config::{MlpKind, RopeStyle};
use crate::error::Result;

pub fn read(h: &Hparams) -> Result<Family> {
    let mut fam = Family::new(RopeStyle::RotateHalf, MlpKind::SwiGlu);
    fam.fused_gate_up = true;
    fam.options.rope_scaling = h.rope_scaling(&["longrope"])?;
    let original = match h.get("rope.scaling.original_context_length") {
        Some(_) => h.file.uint(&h.key("rope.scaling.original_context_length"))?,
        None => h.trained_context as u64,
    };
    let which = if h.context() as u64 > original { "rope_factors_long.weight" } else { "rope_factors_short.weight" };
    for name in ["rope_factors_long.weight", "rope_factors_short.weight"] {
        if h.file.tensor(name).is_some() {
            let factors = h.freq_factors(name)?;
            if name == which {
                fam.options.rope_scaling.freq_factors = factors;
            }
            fam.constants.push((name.into(), vec![(h.head_dim / 2) as u64]));
        }
    }
    Ok(fam)
}
