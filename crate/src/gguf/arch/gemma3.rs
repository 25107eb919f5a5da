//! `gemma3`: Gemma 3 (text). Token embeddings times √d_model; per block a
//! pre-attention RMS norm, per-head RMS norms on Q and K before the rotary
//! positions (NEOX halves), an RMS norm on the attention's output before
//! the residual add (`post_attention_norm`), the pre-FFN norm, GeGLU with
//! GELU's tanh form, and a norm on the MLP's output (`post_ffw_norm`). The
//! norm weights are used as the file has them: the converter already added
//! the 1 of Gemma's `(1 + w)` scaling. The output is tied to the embedding.
//!
//! Sliding windows: with `attention.sliding_window` (512 in the 270M
//! model), every layer is local but each sixth (0-based layers 5, 11, 17 of
//! 18 are global), unless `attention.sliding_window_pattern` says otherwise
//! (a period, or a flag per layer). Local layers rotate with base 10,000
//! (`rope.freq_base_swa` where the file has one; llama.cpp hard-codes the
//! default) and unscaled; global ones with `rope.freq_base` (1e6) and any
//! `rope.scaling`. The score scale is 1/√head_dim, except for the 27B model
//! (62 layers), where llama.cpp takes 1/√(d_model / heads) as Google's
//! reference code does. Final logits are soft-capped only where the file
//! says `final_logit_softcapping` (the 270M file does not).

use super::{Family, Hparams};
use crate::bail;
use crate::config::{MlpKind, RopeStyle, SlidingWindow};
use crate::error::Result;

/// Every this-many-th layer is global when the file gives no pattern.
const DEFAULT_PERIOD: u64 = 6;
/// The local layers' rotary base when the file gives none.
const DEFAULT_LOCAL_BASE: f64 = 10_000.0;
/// Gemma 3 27B's layer count, the one model with another score scale.
const LAYERS_27B: usize = 62;

pub fn read(h: &Hparams) -> Result<Family> {
    let mut fam = Family::new(RopeStyle::RotateHalf, MlpKind::GeGlu);
    let o = &mut fam.options;
    o.qk_norm = true;
    o.post_norms = true;
    o.embed_scale = Some((h.d_model as f64).sqrt());
    o.rope_scaling = h.rope_scaling(&[])?;
    if h.n_layers == LAYERS_27B {
        o.attn_scale = Some(1.0 / ((h.d_model / h.n_heads) as f64).sqrt());
    }
    o.logit_softcap = h.float("final_logit_softcapping")?.filter(|&c| c != 0.0);
    let size = match h.get("attention.sliding_window") {
        Some(_) => h.file.uint(&h.key("attention.sliding_window"))?,
        None => 0,
    };
    if size > 0 {
        let local = local_layers(h)?;
        let rope_base = Some(h.float("rope.freq_base_swa")?.unwrap_or(DEFAULT_LOCAL_BASE));
        let size = usize::try_from(size).unwrap_or(usize::MAX);
        o.sliding_window = Some(SlidingWindow { size, local, rope_base });
    }
    Ok(fam)
}

/// Which layers are local: from `attention.sliding_window_pattern`, a flag
/// per layer or a period p (layer i is local unless i % p == p − 1; 0: all
/// local), or the default period.
fn local_layers(h: &Hparams) -> Result<Vec<bool>> {
    let key = h.key("attention.sliding_window_pattern");
    let period = match h.get("attention.sliding_window_pattern") {
        None => DEFAULT_PERIOD,
        Some(v) => match v.as_array() {
            Some(items) => {
                if items.len() != h.n_layers {
                    bail!("'{key}' has {} entries for {} layers", items.len(), h.n_layers);
                }
                let must = || crate::error::Error::new(format!("'{key}' must hold booleans"));
                let values = items.scalars().ok_or_else(must)?;
                return values.map(|v| v.as_bool().ok_or_else(must)).collect();
            }
            None => h.file.uint(&key)?,
        },
    };
    Ok((0..h.n_layers as u64).map(|i| period == 0 || i % period < period - 1).collect())
}
