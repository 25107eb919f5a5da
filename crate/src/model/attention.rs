//! Causal multi-head attention with grouped-query heads and an optional KV cache.

use burn::module::Module;
use burn::tensor::activation::softmax;
use burn::tensor::{Bool, Device, Tensor, TensorData};

use super::projection::Projection;
use super::rope::apply_rope;
use crate::config::{ModelConfig, Positions, RopeStyle};
use crate::kv_cache::KvCache;

#[derive(Module, Debug)]
pub struct Attention {
    pub wq: Projection, // d_model → n_heads · head_dim
    pub wk: Projection, // d_model → n_kv_heads · head_dim
    pub wv: Projection, // d_model → n_kv_heads · head_dim
    pub wo: Projection, // n_heads · head_dim → d_model
    pub n_heads: usize,
    pub n_kv_heads: usize,
    pub head_dim: usize,
}

/// Where the chunk sits and how to rotate it.
pub struct ChunkPositions<'a> {
    /// Absolute position of the chunk's first token (the cache length).
    pub start: usize,
    /// cos/sin tables `[T, head_dim/2]` and the pairing, for rotary models.
    pub rope: Option<(&'a Tensor<2>, &'a Tensor<2>, RopeStyle)>,
}

impl Attention {
    pub fn init(c: &ModelConfig, device: &Device) -> Self {
        let (d, hd) = (c.d_model, c.head_dim);
        Attention {
            wq: Projection::init(d, c.n_heads * hd, c.bias, device),
            wk: Projection::init(d, c.n_kv_heads * hd, c.bias, device),
            wv: Projection::init(d, c.n_kv_heads * hd, c.bias, device),
            wo: Projection::init(c.n_heads * hd, d, c.bias, device),
            n_heads: c.n_heads,
            n_kv_heads: c.n_kv_heads,
            head_dim: hd,
        }
    }

    /// Attends each of the chunk's T queries over every key up to its own
    /// position. With a cache, the chunk's keys and values are appended to
    /// it and the queries see the cached ones too.
    ///
    /// # Shapes
    /// - x: `[batch, T, d_model]` (normalised input of the block)
    /// - returned: `[batch, T, d_model]`
    pub fn forward(&self, x: Tensor<3>, pos: &ChunkPositions, cache: Option<(&mut KvCache, usize)>) -> Tensor<3> {
        let [b, t, _] = x.dims();
        let (h, kvh, hd) = (self.n_heads, self.n_kv_heads, self.head_dim);
        let split = |y: Tensor<3>, heads: usize| y.reshape([b, t, heads, hd]).swap_dims(1, 2);
        let mut q = split(self.wq.forward(x.clone()), h); // (b, h, t, hd)
        let mut k = split(self.wk.forward(x.clone()), kvh); // (b, kvh, t, hd)
        let v = split(self.wv.forward(x), kvh); // (b, kvh, t, hd)
        if let Some((cos, sin, style)) = pos.rope {
            q = apply_rope(q, cos, sin, style);
            k = apply_rope(k, cos, sin, style);
        }
        let (k, v) = match cache {
            Some((cache, layer)) => cache.write(layer, k, v), // (b, kvh, start + t, hd)
            None => (k, v),
        };
        let keys = k.dims()[2];
        // Grouped-query attention without copying K and V once per query
        // head: query head i reads KV head i / group, so the group's queries
        // are stacked as rows against their one KV head (a copy of the
        // cache per step would grow with the text: 141 MB a token for
        // SmolLM2 at 1,024 positions).
        let group = h / kvh;
        let q = q.reshape([b, kvh, group * t, hd]); // row r: head (r / t) of the group, position r % t
        let scores = q.matmul(k.swap_dims(2, 3)) / (hd as f64).sqrt(); // (b, kvh, group·t, keys)
        let mask = causal_mask(pos.start, t, keys, &scores.device()).reshape([1, 1, 1, t, keys]).repeat_dim(2, group);
        let mask = mask.reshape([1, 1, group * t, keys]);
        let weights = softmax(scores.mask_fill(mask, f32::NEG_INFINITY), 3);
        let out = weights.matmul(v).reshape([b, h, t, hd]); // (b, h, t, hd)
        self.wo.forward(out.swap_dims(1, 2).reshape([b, t, h * hd]))
    }
}

/// `true` where query i (at absolute position start + i) must not see key j.
///
/// ```text
/// start = 2, T = 2, keys = 4:      key 0 1 2 3
///                      query at 2:     . . . x
///                      query at 3:     . . . .
/// ```
pub fn causal_mask(start: usize, t: usize, keys: usize, device: &Device) -> Tensor<2, Bool> {
    let cells: Vec<bool> = (0..t).flat_map(|i| (0..keys).map(move |j| j > start + i)).collect();
    Tensor::from_data(TensorData::new(cells, [t, keys]), device)
}

/// Positions config → what `forward` needs for a chunk (rope tables or none).
pub fn needs_rope(positions: &Positions) -> Option<(f64, RopeStyle)> {
    match *positions {
        Positions::Rope { base, style } => Some((base, style)),
        Positions::Learned => None,
    }
}
