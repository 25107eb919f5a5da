//! The inside view as the page and the CLI read it (`StepReport::inside`,
//! www/PROTOCOL.md): each layer's attention with its summaries, and the
//! logit lens per layer, following one token.

use serde::Serialize;

use super::capture::Capture;
use super::lens::LensSummary;

/// Tokens each lens layer lists.
pub const LENS_TOP: usize = 5;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TokenRef {
    pub id: u32,
    pub display: String,
}

/// One layer's attention at the query.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AttentionLayer {
    pub layer: usize,
    pub window: Option<usize>,
    /// Transcript index of the first position read.
    pub first: usize,
    /// `heads` rows over transcript positions `first..=query` (the browser
    /// facade hands them over as one Float32Array instead).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub weights: Vec<f32>,
    /// Each head's entropy of its weights, in nats: ln n when it spreads
    /// evenly over n positions, 0 when it reads one.
    pub entropy: Vec<f64>,
    /// Each head's weight on the first cached position (the "attention
    /// sink"); 0 where the window no longer reads it.
    pub sink: Vec<f64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LensToken {
    pub id: u32,
    pub display: String,
    pub prob: f64,
}

/// What the residual stream after one layer predicts through the final norm
/// and the LM head.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LensLayer {
    /// 0: after the embedding; l: after block l.
    pub layer: usize,
    pub top: Vec<LensToken>,
    /// Nats.
    pub entropy: f64,
    pub token_rank: usize,
    pub token_prob: f64,
    pub raw_top_rank: usize,
    pub raw_top_prob: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct InsideReport {
    /// Transcript index of the token whose query this is.
    pub query: usize,
    /// Transcript index of cache position 0.
    pub cache_start: usize,
    pub layers: usize,
    pub heads: usize,
    pub kv_heads: usize,
    /// The token the lens follows: the step's chosen one, else the raw top-1.
    pub token: TokenRef,
    pub token_is_chosen: bool,
    /// The raw distribution's probability of `token`: what the last lens
    /// layer gives it too.
    pub raw_prob: f64,
    pub raw_top: TokenRef,
    pub attention: Vec<AttentionLayer>,
    /// One per layer, or none where the caller left the lens out of this
    /// report (`Session::set_lens`).
    pub lens: Vec<LensLayer>,
    /// The first lens layer from which `raw_top` is the top-1 in every later
    /// one (none if even the last layer's rounding put another token first,
    /// or without a lens).
    pub top1_from: Option<usize>,
}

/// What the report follows and how the raw distribution rates it.
pub struct Followed {
    pub token: u32,
    pub token_is_chosen: bool,
    pub raw_prob: f64,
    pub raw_top: u32,
}

impl InsideReport {
    /// The report of `capture`, whose cache position 0 is transcript index
    /// `cache_start`, with `lens[l]` the summary of lens layer l tracking
    /// `[followed.token, followed.raw_top]`.
    pub fn new(capture: &Capture, cache_start: usize, lens: Vec<LensSummary>, followed: Followed, display: &dyn Fn(u32) -> String) -> Self {
        let attention = capture
            .attention
            .iter()
            .enumerate()
            .map(|(l, a)| {
                let rows: Vec<&[f32]> = (0..capture.heads).map(|h| capture.row(l, h)).collect();
                AttentionLayer {
                    layer: l,
                    window: a.window,
                    first: cache_start + a.first,
                    weights: a.weights.clone(),
                    entropy: rows.iter().map(|r| weights_entropy(r)).collect(),
                    sink: rows.iter().map(|r| if a.first == 0 { r[0] as f64 } else { 0.0 }).collect(),
                }
            })
            .collect();
        let lens: Vec<LensLayer> = lens
            .into_iter()
            .enumerate()
            .map(|(layer, s)| LensLayer {
                layer,
                top: s.top.iter().map(|&(id, prob)| LensToken { id, display: display(id), prob }).collect(),
                entropy: s.entropy,
                token_rank: s.tracked[0].0,
                token_prob: s.tracked[0].1,
                raw_top_rank: s.tracked[1].0,
                raw_top_prob: s.tracked[1].1,
            })
            .collect();
        let top1_from = match lens.iter().rposition(|l| l.raw_top_rank != 1) {
            None if lens.is_empty() => None,
            None => Some(0),
            Some(l) if l + 1 < lens.len() => Some(l + 1),
            Some(_) => None,
        };
        InsideReport {
            query: cache_start + capture.query,
            cache_start,
            layers: capture.attention.len(),
            heads: capture.heads,
            kv_heads: capture.kv_heads,
            token: TokenRef { id: followed.token, display: display(followed.token) },
            token_is_chosen: followed.token_is_chosen,
            raw_prob: followed.raw_prob,
            raw_top: TokenRef { id: followed.raw_top, display: display(followed.raw_top) },
            attention,
            lens,
            top1_from,
        }
    }
}

/// -Σ w ln w over one head's weights.
fn weights_entropy(row: &[f32]) -> f64 {
    -row.iter().filter(|&&w| w > 0.0).map(|&w| w as f64 * (w as f64).ln()).sum::<f64>()
}
