//! Two configurations at one position: both pipelines on the same raw
//! logits, with the same history and sampler state, compared token by token.

use serde::Serialize;

use crate::error::Result;
use crate::position::{Position, Vocabulary};
use crate::report::Describer;
use crate::rules;
use crate::settings::GenerationSettings;

/// The rows listed: the best of the union of the two kept sets.
const ROWS: usize = 30;

/// One configuration at the position.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Side {
    /// How many tokens it keeps.
    pub kept: usize,
    pub entropy_bits: f64,
    /// The token its final distribution gives the coin.
    pub drawn: SideRow,
    /// The uniform number both draws use (the position's next).
    pub coin: f64,
}

/// A token with what the raw distribution and each side give it.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct SideRow {
    pub id: u32,
    pub text: String,
    pub display: String,
    pub raw_prob: f64,
    pub a_prob: f64,
    pub b_prob: f64,
}

#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct SideBySide {
    pub a: Side,
    pub b: Side,
    /// The union's best tokens by the larger of the two probabilities.
    pub rows: Vec<SideRow>,
    /// Tokens both keep, only A keeps, only B keeps (whole vocabulary).
    pub shared: usize,
    pub a_only: usize,
    pub b_only: usize,
}

/// A and B at `position`, each through the one preview path.
pub fn side_by_side(position: &Position, a: &GenerationSettings, b: &GenerationSettings, vocab: &Vocabulary, names: Describer) -> Result<SideBySide> {
    let final_of = |s: &GenerationSettings| -> Result<Vec<f64>> {
        s.validate_beyond_rules()?;
        Ok(position.describe(s, &position.inputs(s, vocab), names)?.1.to_vec())
    };
    let (pa, pb) = (final_of(a)?, final_of(b)?);
    let raw = &position.summary()?.raw.probs;
    let coin = position.state.next_coin;
    let row = |id: usize| {
        let (text, display) = names(id as u32);
        SideRow { id: id as u32, text, display, raw_prob: raw[id], a_prob: pa[id], b_prob: pb[id] }
    };
    let side = |p: &[f64]| Side {
        kept: p.iter().filter(|&&x| x > 0.0).count(),
        entropy_bits: rules::entropy_bits(p),
        drawn: row(rules::sample_inverse_cdf(p, coin)),
        coin,
    };
    let larger: Vec<f64> = pa.iter().zip(&pb).map(|(x, y)| x.max(*y)).collect();
    let rows = rules::top_indices(&larger, ROWS).into_iter().filter(|&i| larger[i] > 0.0).map(row).collect();
    let both = |f: fn(bool, bool) -> bool| pa.iter().zip(&pb).filter(|(x, y)| f(**x > 0.0, **y > 0.0)).count();
    Ok(SideBySide {
        a: side(&pa),
        b: side(&pb),
        rows,
        shared: both(|x, y| x && y),
        a_only: both(|x, y| x && !y),
        b_only: both(|x, y| !x && y),
    })
}
