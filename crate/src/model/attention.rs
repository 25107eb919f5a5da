//! Causal multi-head attention with grouped-query heads and an optional KV cache.
//!
//! With the cache, the chunk's keys and values are written into its pages
//! and the fused kernel (`quant::attention_op`) attends over them there;
//! without it (the recompute path, training) the attention is burn's
//! tensor operations (`attend`), in f32 throughout.

use std::cell::{Cell, RefCell};

use burn::module::Module;
use burn::tensor::activation::softmax;
use burn::tensor::{Bool, Device, Tensor, TensorData};

use super::norm::Norm;
use super::projection::Projection;
use super::rope::apply_rope;
use crate::config::{ModelConfig, NormKind, Positions, RopeStyle};
use crate::counters::PathCost;
use super::query_weights::weights_of_query;
use crate::inside::Capture;
use crate::kv_cache::KvCache;

#[derive(Module, Debug)]
pub struct Attention {
    pub wq: Projection, // d_model → n_heads · head_dim
    pub wk: Projection, // d_model → n_kv_heads · head_dim
    pub wv: Projection, // d_model → n_kv_heads · head_dim
    pub wo: Projection, // n_heads · head_dim → d_model
    /// RMS norms over each head's query and key features (`DecoderOptions::qk_norm`).
    pub q_norm: Option<Norm>, // head_dim
    pub k_norm: Option<Norm>, // head_dim
    pub n_heads: usize,
    pub n_kv_heads: usize,
    pub head_dim: usize,
}

/// A chunk's cos/sin tables `[T, head_dim/2]` and the pairing.
pub type RopeTables<'a> = (&'a Tensor<2>, &'a Tensor<2>, RopeStyle);

/// Where the chunk sits and how to rotate it; and what the attention did.
pub struct ChunkPositions<'a> {
    /// Absolute position of the chunk's first token (the cache length).
    pub start: usize,
    /// The rotary tables of the global layers, for rotary models.
    pub rope: Option<RopeTables<'a>>,
    /// The rotary tables of the sliding-window layers, where they differ
    /// from the global ones (Gemma 3's local base).
    pub rope_local: Option<RopeTables<'a>>,
    /// Work of every layer's attention, added as it runs, counted per head
    /// from the shapes it ran: the K/V rows it projected and the scores its
    /// causal masks left visible. (A cache that re-projected the prefix, or
    /// attended to more keys than it holds, shows here.)
    pub work: Cell<PathCost>,
    /// When set, each layer with a cache adds its last query's weights over
    /// the cache here (the inside view).
    pub capture: Option<RefCell<Capture>>,
}

/// What one layer's attention needs besides its weights.
#[derive(Clone, Copy)]
pub struct LayerAttention<'a> {
    /// Its layer index (the cache's slot).
    pub layer: usize,
    /// Earlier positions a query sees, its own included; none: all of them.
    pub window: Option<usize>,
    pub rope: Option<RopeTables<'a>>,
    /// Factor on the scores; none: 1/√head_dim.
    pub scale: Option<f64>,
}

impl<'a> ChunkPositions<'a> {
    /// Layer `layer`'s view of the chunk under config `c`.
    pub fn layer(&self, c: &ModelConfig, layer: usize) -> LayerAttention<'a> {
        let window = c.layer_window(layer);
        let rope = match window {
            Some(_) => self.rope_local.or(self.rope),
            None => self.rope,
        };
        LayerAttention { layer, window, rope, scale: c.options.attn_scale }
    }
}

impl Attention {
    pub fn init(c: &ModelConfig, device: &Device) -> Self {
        let (d, hd) = (c.d_model, c.head_dim);
        let qkv_bias = c.bias || c.options.qkv_bias;
        let head_norm = || c.options.qk_norm.then(|| Norm::init(NormKind::RmsNorm, hd, c.norm_eps, device));
        Attention {
            wq: Projection::init(d, c.n_heads * hd, qkv_bias, device),
            wk: Projection::init(d, c.n_kv_heads * hd, qkv_bias, device),
            wv: Projection::init(d, c.n_kv_heads * hd, qkv_bias, device),
            wo: Projection::init(c.n_heads * hd, d, c.bias, device),
            q_norm: head_norm(),
            k_norm: head_norm(),
            n_heads: c.n_heads,
            n_kv_heads: c.n_kv_heads,
            head_dim: hd,
        }
    }

    /// Attends each of the chunk's T queries over every key up to its own
    /// position (within the layer's window, if it has one). With a cache,
    /// the chunk's keys and values are appended to it and the queries see
    /// the cached ones too (batch 1).
    ///
    /// # Shapes
    /// - x: `[batch, T, d_model]` (normalised input of the block)
    /// - returned: `[batch, T, d_model]`
    pub fn forward(&self, x: Tensor<3>, pos: &ChunkPositions, layer: LayerAttention, cache: Option<&mut KvCache>) -> Tensor<3> {
        let [b, t, _] = x.dims();
        let (h, kvh, hd) = (self.n_heads, self.n_kv_heads, self.head_dim);
        // Each head's features normalised on their own: [b, t·heads, hd] rows.
        let head_norm = |y: Tensor<3>, heads: usize, norm: &Option<Norm>| match norm {
            Some(n) => n.forward(y.reshape([b, t * heads, hd])).reshape([b, t, heads * hd]),
            None => y,
        };
        let split = |y: Tensor<3>, heads: usize| y.reshape([b, t, heads, hd]).swap_dims(1, 2);
        let mut q = split(head_norm(self.wq.forward(x.clone()), h, &self.q_norm), h); // (b, h, t, hd)
        let mut k = split(head_norm(self.wk.forward(x.clone()), kvh, &self.k_norm), kvh); // (b, kvh, t, hd)
        let v = split(self.wv.forward(x), kvh); // (b, kvh, t, hd)
        if let Some((cos, sin, style)) = layer.rope {
            q = apply_rope(q, cos, sin, style);
            k = apply_rope(k, cos, sin, style);
        }
        // The kernels scale by 1/√hd: another scale goes into the queries.
        if let Some(scale) = layer.scale {
            q = q * (scale * (hd as f64).sqrt());
        }
        let projected = k.dims()[2] as u64;
        let (out, visible) = match cache {
            Some(cache) => {
                // The chunk's keys and values go into the cache's pages, and
                // the fused kernel reads the queries' view of them there.
                cache.write(layer.layer, k, v);
                if let Some(capture) = &pos.capture {
                    let last = q.clone().slice([0..1, 0..h, t - 1..t, 0..hd]).into_data().try_to_vec::<f32>().expect("f32 queries");
                    let weights = weights_of_query(&last, h, cache.view(layer.layer), pos.start + t - 1, layer.window);
                    capture.borrow_mut().attention.push(weights);
                }
                let out = paged_attend(q, cache.view(layer.layer), pos.start, layer.window); // (b, t, h·hd)
                let visible = (0..t).map(|i| visible_keys(pos.start + i, layer.window)).sum();
                (out, visible)
            }
            None => {
                let rows = (SCORE_BUDGET / (b * h * k.dims()[2]).max(1)).clamp(1, t);
                let (out, visible) = attend(q, k, v, pos.start, rows, layer.window);
                (out.swap_dims(1, 2).reshape([b, t, h * hd]), visible)
            }
        };
        let mut work = pos.work.get();
        work.add(PathCost { kv_rows: projected, scores: visible });
        pos.work.set(work);
        self.wo.forward(out)
    }
}

/// Keys the query at position `p` sees: 0..=p, or the last `window` of them.
pub fn visible_keys(p: usize, window: Option<usize>) -> u64 {
    (p + 1).min(window.unwrap_or(usize::MAX)) as u64
}

/// The first key the query at position `p` sees.
pub fn first_visible(p: usize, window: Option<usize>) -> usize {
    window.map_or(0, |w| (p + 1).saturating_sub(w))
}

/// The backend's `paged_attention` (`quant::attention_op`).
///
/// # Shapes
/// - q: `[1, heads, T, head_dim]` → `[1, T, heads · head_dim]`
fn paged_attend(q: Tensor<4>, kv: crate::kv_cache::LayerView, start: usize, window: Option<usize>) -> Tensor<3> {
    use crate::quant::attention_op::AttentionOps;
    let y = <burn::backend::Dispatch as AttentionOps>::paged_attention(q.into_dispatch(), kv, start, window);
    Tensor::from_dispatch(y)
}

/// Softmax attention of the queries over the keys, causal from absolute
/// position `start` (the first query's) and within `window` if given,
/// `rows` queries at a time; and how many scores were visible to the
/// queries (per head).
///
/// Grouped-query attention without copying K and V once per query head:
/// query head i reads KV head i / group, so the group's queries are stacked
/// as rows against their one KV head (a copy of the cache per step would
/// grow with the text: 141 MB a token for SmolLM2 at 1,024 positions). The
/// queries go in row blocks so the scores of a long chunk are never all held
/// at once: a 1,024-token prompt of SmolLM2 would need 38 MB of scores (and
/// as much again for their softmax) in every layer.
///
/// # Shapes
/// - q: `[batch, heads, T, head_dim]`; k, v: `[batch, kv_heads, keys, head_dim]`
/// - returned: `[batch, heads, T, head_dim]`
fn attend(q: Tensor<4>, k: Tensor<4>, v: Tensor<4>, start: usize, rows: usize, window: Option<usize>) -> (Tensor<4>, u64) {
    let [b, h, t, hd] = q.dims();
    let [_, kvh, keys, _] = k.dims();
    let group = h / kvh;
    let k_t = k.swap_dims(2, 3); // (b, kvh, hd, keys)
    let rows = rows.max(1);
    let mut visible = 0;
    let blocks: Vec<Tensor<4>> = (0..t)
        .step_by(rows)
        .map(|first| {
            let n = rows.min(t - first);
            let q = q.clone().slice([0..b, 0..h, first..first + n, 0..hd]);
            let q = q.reshape([b, kvh, group * n, hd]); // row r: head (r / n) of the group, position first + r % n
            let scores = q.matmul(k_t.clone()) / (hd as f64).sqrt(); // (b, kvh, group·n, keys)
            let weights = if n == 1 && start + first + 1 == keys && first_visible(keys - 1, window) == 0 {
                // One query at the last position sees every key: no mask (a
                // decode step; five operations fewer).
                visible += keys as u64;
                softmax(scores, 3)
            } else {
                let (mask, seen) = causal_mask(start + first, n, keys, window, &scores.device());
                visible += seen;
                let mask = mask.reshape([1, 1, 1, n, keys]).repeat_dim(2, group).reshape([1, 1, group * n, keys]);
                softmax(scores.mask_fill(mask, f32::NEG_INFINITY), 3)
            };
            weights.matmul(v.clone()).reshape([b, h, n, hd]) // (b, h, n, hd)
        })
        .collect();
    let out = if blocks.len() == 1 { blocks.into_iter().next().expect("one block") } else { Tensor::cat(blocks, 2) };
    (out, visible)
}

/// Attention scores computed at once, at most (4 MB of f32): the row block
/// a long chunk's queries are split into.
const SCORE_BUDGET: usize = 1 << 20;

/// `true` where query i (at absolute position start + i) must not see key
/// j: a later key, or one `window` or more positions back; and how many
/// cells are `false` (the scores that count).
///
/// ```text
/// start = 2, T = 2, keys = 4:      key 0 1 2 3        window 2:  key 0 1 2 3
///                      query at 2:     . . . x                       x . . x
///                      query at 3:     . . . .                       x x . .
/// ```
pub fn causal_mask(start: usize, t: usize, keys: usize, window: Option<usize>, device: &Device) -> (Tensor<2, Bool>, u64) {
    let cells: Vec<bool> =
        (0..t).flat_map(|i| (0..keys).map(move |j| j > start + i || j < first_visible(start + i, window))).collect();
    let visible = cells.iter().filter(|&&hidden| !hidden).count() as u64;
    (Tensor::from_data(TensorData::new(cells, [t, keys]), device), visible)
}

/// Positions config → what `forward` needs for a chunk (rope tables or none).
pub fn needs_rope(positions: &Positions) -> Option<(f64, RopeStyle)> {
    match *positions {
        Positions::Rope { base, style } => Some((base, style)),
        Positions::Learned => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::Distribution;

    /// Queries in blocks of any size give what all at once gives, and count
    /// the causal triangle's visible scores (the queries at start..start+T
    /// see start+1 .. start+T keys).
    #[test]
    fn query_blocks_change_nothing() {
        let device = crate::backend::BackendKind::Flex.device().unwrap();
        let (b, h, kvh, t, start, hd) = (1, 6, 2, 7, 5, 4);
        let q = Tensor::<4>::random([b, h, t, hd], Distribution::Normal(0.0, 1.0), &device);
        let k = Tensor::<4>::random([b, kvh, start + t, hd], Distribution::Normal(0.0, 1.0), &device);
        let v = Tensor::<4>::random([b, kvh, start + t, hd], Distribution::Normal(0.0, 1.0), &device);
        let (whole, visible) = attend(q.clone(), k.clone(), v.clone(), start, t, None);
        assert_eq!(visible, (1..=t as u64).map(|i| start as u64 + i).sum::<u64>());
        let whole = whole.into_data().try_to_vec::<f32>().unwrap();
        for rows in [1, 2, 3, 6] {
            let (blocked, seen) = attend(q.clone(), k.clone(), v.clone(), start, rows, None);
            assert_eq!(seen, visible, "rows {rows}");
            let blocked = blocked.into_data().try_to_vec::<f32>().unwrap();
            let worst = whole.iter().zip(&blocked).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
            assert!(worst < 1e-6, "rows {rows}: differs by {worst}");
        }
    }
}
