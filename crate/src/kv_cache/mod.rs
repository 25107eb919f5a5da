//! The KV cache: per layer, K and V for every position seen so far, in
//! fixed pages (`pages`) of f16 or f32 (`precision`).
//!
//! ```text
//! layer l:  page 0 [positions 0..128)  page 1 [128..256)  ...   (K and V each)
//!           ├──────────── len ───────────┤
//!           positions 0..len hold the keys/values of the tokens seen;
//!           a new chunk of T tokens is written at len..len+T, so the
//!           position of a new token is always `len`, never the caller's guess.
//! ```
//! Pages are added as the text needs them instead of allocating the whole
//! context at once: SmolLM2's 2,048 positions would be 47 MB of f16 from the
//! start, where a 100-token chat needs one page per layer (2.9 MB). The
//! attention reads the pages where they lie (`model::attention_op`).

mod pages;
mod precision;

use burn::tensor::Tensor;

pub use pages::{KvElem, LayerPages, PAGE, Page, PagesRef};
pub use precision::KvPrecision;

use crate::bail;
use crate::counters::cache_bytes;
use crate::error::Result;

#[derive(Debug, Clone)]
pub struct KvCache {
    layers: Vec<LayerPages>,
    len: usize,
    /// The most positions it may hold (the context length).
    capacity: usize,
    kv_heads: usize,
    head_dim: usize,
    precision: KvPrecision,
}

/// What the attention kernel reads of one layer: its pages and their shape.
#[derive(Debug, Clone, Copy)]
pub struct LayerView<'a> {
    pub pages: PagesRef<'a>,
    pub kv_heads: usize,
    pub head_dim: usize,
}

impl KvCache {
    /// An empty cache; pages are added as it fills.
    pub fn new(layers: usize, kv_heads: usize, head_dim: usize, capacity: usize, precision: KvPrecision) -> Self {
        let empty = || match precision {
            KvPrecision::F16 => LayerPages::F16(Vec::new()),
            KvPrecision::F32 => LayerPages::F32(Vec::new()),
        };
        KvCache { layers: (0..layers).map(|_| empty()).collect(), len: 0, capacity, kv_heads, head_dim, precision }
    }

    /// Positions held.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn layers(&self) -> usize {
        self.layers.len()
    }

    pub fn precision(&self) -> KvPrecision {
        self.precision
    }

    /// Positions the pages have room for now (what the text needed, rounded up to a page).
    pub fn allocated(&self) -> usize {
        self.layers.first().map_or(0, LayerPages::allocated)
    }

    /// Forgets every position (the pages stay allocated).
    pub fn reset(&mut self) {
        self.len = 0;
    }

    /// Rewinds to the first `n` positions: what was written after them is
    /// overwritten by the next chunk. Used by step-back and beam search.
    pub fn truncate(&mut self, n: usize) {
        self.len = self.len.min(n);
    }

    /// Refuses a chunk that does not fit, before any layer is touched.
    pub fn check_room(&self, new: usize) -> Result<()> {
        if self.len + new > self.capacity {
            bail!(
                "context full: {} cached + {} new positions exceed the context length {}",
                self.len,
                new,
                self.capacity
            );
        }
        Ok(())
    }

    /// Writes a chunk's keys and values for `layer` at positions len..len+T
    /// (rounded to the cache's precision). `advance` must follow once every
    /// layer has been written; until then `view(layer)` shows 0..len+T.
    ///
    /// # Shapes
    /// - k_new, v_new: `[1, kv_heads, T, head_dim]`
    pub fn write(&mut self, layer: usize, k_new: Tensor<4>, v_new: Tensor<4>) {
        let [b, h, t, d] = k_new.dims();
        assert!(b == 1 && h == self.kv_heads && d == self.head_dim, "a chunk of [1, {}, T, {}], not {:?}", self.kv_heads, self.head_dim, k_new.dims());
        let read = |x: Tensor<4>| x.into_data().try_into_vec::<f32>().expect("f32 keys and values");
        let (k, v) = (read(k_new), read(v_new));
        let slot = &mut self.layers[layer];
        slot.reserve(self.len + t, self.capacity, h, d);
        slot.write(self.len, t, d, &k, &v);
    }

    /// Layer `layer`'s pages for the attention kernel.
    pub fn view(&self, layer: usize) -> LayerView<'_> {
        LayerView { pages: self.layers[layer].as_ref(), kv_heads: self.kv_heads, head_dim: self.head_dim }
    }

    /// Marks `t` more positions as held (after every layer's `write`).
    pub fn advance(&mut self, t: usize) {
        self.len += t;
    }

    /// Bytes the held positions occupy: 2 · layers · kv_heads · len · head_dim · (2 or 4).
    pub fn bytes(&self) -> usize {
        cache_bytes(self.layers.len(), self.kv_heads, self.len, self.head_dim, self.precision.bytes())
    }

    /// Bytes the whole cache would occupy at full context.
    pub fn capacity_bytes(&self) -> usize {
        cache_bytes(self.layers.len(), self.kv_heads, self.capacity, self.head_dim, self.precision.bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::TensorData;

    /// Chunks written across page boundaries read back in order: exactly in
    /// f32, and in f16 to its rounding (these small integers are exact in f16).
    #[test]
    fn pages_keep_every_position() {
        let device = crate::backend::BackendKind::Flex.device().unwrap();
        let (h, d) = (2, 3);
        for precision in [KvPrecision::F32, KvPrecision::F16] {
            let mut cache = KvCache::new(2, h, d, 300, precision);
            for t in [1, 70, 5, 150] {
                cache.check_room(t).unwrap();
                let start = cache.len();
                // Position p, head j, feature f holds p * 8 + j * 4 + f (below 2048: exact in f16).
                let values: Vec<f32> =
                    (0..h).flat_map(|j| (0..t).flat_map(move |p| (0..d).map(move |f| ((start + p) * 8 + j * 4 + f) as f32))).collect();
                let chunk = Tensor::<4>::from_data(TensorData::new(values, [1, h, t, d]), &device);
                for layer in 0..2 {
                    cache.write(layer, chunk.clone(), chunk.clone() * 0.5);
                    let view = cache.view(layer);
                    for p in 0..start + t {
                        for j in 0..h {
                            let expected: Vec<f32> = (0..d).map(|f| (p * 8 + j * 4 + f) as f32).collect();
                            assert_eq!(view.pages.key(j, p, d), expected, "{precision:?} key {p}");
                            assert_eq!(view.pages.value(j, p, d), expected.iter().map(|x| x * 0.5).collect::<Vec<_>>());
                        }
                    }
                }
                cache.advance(t);
            }
            assert_eq!(cache.len(), 226);
            assert_eq!(cache.allocated(), 256, "two pages: what the text needs, rounded up to a page");
            assert!(cache.check_room(75).is_err(), "the capacity still bounds it");
            assert_eq!(cache.bytes(), 2 * 2 * h * 226 * d * precision.bytes());
        }
    }

    /// The last page stops at the context length; rewinding keeps the pages.
    #[test]
    fn the_last_page_stops_at_the_context() {
        let device = crate::backend::BackendKind::Flex.device().unwrap();
        let mut cache = KvCache::new(1, 1, 2, PAGE + 5, KvPrecision::F16);
        let chunk = |t: usize| Tensor::<4>::from_data(TensorData::new(vec![1.0f32; t * 2], [1, 1, t, 2]), &device);
        cache.write(0, chunk(PAGE + 5), chunk(PAGE + 5));
        cache.advance(PAGE + 5);
        assert_eq!(cache.allocated(), PAGE + 5);
        cache.truncate(3);
        cache.write(0, chunk(1), chunk(1));
        cache.advance(1);
        assert_eq!((cache.len(), cache.allocated()), (4, PAGE + 5));
    }
}
