//! `qwen3`: Qwen3 (dense). Qwen2's block without the biases, and an RMS
//! norm over each head's queries and keys (`attn_q_norm`, `attn_k_norm`,
//! head_dim weights each) before the rotary positions, which turn the
//! halves of each head (NEOX). Heads may be wider than d_model / heads
//! (`attention.key_length`: 128 in Qwen3-0.6B, where 1,024 / 16 is 64).

use super::{Family, Hparams};
use crate::config::{MlpKind, RopeStyle};
use crate::error::Result;

pub fn read(h: &Hparams) -> Result<Family> {
    let mut fam = Family::new(RopeStyle::RotateHalf, MlpKind::SwiGlu);
    fam.options.rope_scaling = h.rope_scaling(&[])?;
    fam.options.qk_norm = true;
    Ok(fam)
}
