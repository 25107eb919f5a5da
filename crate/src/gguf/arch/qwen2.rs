//! `qwen2`: Qwen2 and Qwen2.5. The llama block with biases on the Q, K and
//! V projections (f32 vectors: `blk.i.attn_{q,k,v}.bias`, picked up for any
//! family from the tensor names), and rotary positions on the two halves
//! of each head (llama.cpp's NEOX rotation: the converter leaves Q and K as
//! the checkpoint has them).

use super::{Family, Hparams};
use crate::config::{MlpKind, RopeStyle};
use crate::error::Result;

pub fn read(h: &Hparams) -> Result<Family> {
    let mut fam = Family::new(RopeStyle::RotateHalf, MlpKind::SwiGlu);
    fam.options.rope_scaling = h.rope_scaling(&[])?;
    Ok(fam)
}
