//! The KV cache: per layer, K and V for every position seen so far, in
//! buffers that grow (doubling) up to the context length.
//!
//! ```text
//! layer l:  K [batch, kv_heads, allocated, head_dim]    V likewise
//!                               ├── len ──┤
//!           positions 0..len hold the keys/values of the tokens seen;
//!           a new chunk of T tokens is written at len..len+T, so the
//!           position of a new token is always `len`, never the caller's guess.
//! ```
//! Growing instead of allocating the whole context at once keeps memory to
//! what the text needs: SmolLM2's 2,048 positions would be 94 MB of f32
//! from the start, where a 100-token chat needs 4.6 MB.

use burn::tensor::{Device, Tensor};

use crate::bail;
use crate::counters::cache_bytes;
use crate::error::Result;

/// Positions allocated before the first chunk asks for more.
const FIRST_ALLOCATION: usize = 64;

/// One layer's keys and values.
#[derive(Debug, Clone)]
pub struct LayerKv {
    k: Tensor<4>, // (batch, kv_heads, capacity, head_dim)
    v: Tensor<4>, // (batch, kv_heads, capacity, head_dim)
}

#[derive(Debug, Clone)]
pub struct KvCache {
    layers: Vec<LayerKv>,
    len: usize,
    /// The most positions it may hold (the context length).
    capacity: usize,
    /// Positions the buffers have room for now.
    allocated: usize,
    batch: usize,
    kv_heads: usize,
    head_dim: usize,
}

impl KvCache {
    /// An empty cache with room for a first chunk; it grows as it fills.
    pub fn new(layers: usize, batch: usize, kv_heads: usize, head_dim: usize, capacity: usize, device: &Device) -> Self {
        let allocated = capacity.min(FIRST_ALLOCATION);
        let shape = [batch, kv_heads, allocated, head_dim];
        let layers = (0..layers)
            .map(|_| LayerKv { k: Tensor::zeros(shape, device), v: Tensor::zeros(shape, device) })
            .collect();
        KvCache { layers, len: 0, capacity, allocated, batch, kv_heads, head_dim }
    }

    /// Makes room for `needed` positions: doubling (so a long generation
    /// copies each position a bounded number of times), never past the capacity.
    fn grow_to(&mut self, needed: usize) {
        if needed <= self.allocated {
            return;
        }
        let allocated = needed.max(self.allocated * 2).min(self.capacity);
        let (b, h, d, held) = (self.batch, self.kv_heads, self.head_dim, self.len);
        for slot in &mut self.layers {
            let device = slot.k.device();
            for buffer in [&mut slot.k, &mut slot.v] {
                let bigger = Tensor::zeros([b, h, allocated, d], &device);
                let old = buffer.clone().slice([0..b, 0..h, 0..held, 0..d]);
                *buffer = bigger.slice_assign([0..b, 0..h, 0..held, 0..d], old);
            }
        }
        self.allocated = allocated;
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

    /// Forgets every position (the memory stays allocated).
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

    /// Writes a chunk's keys and values for `layer` at positions len..len+T and
    /// returns all keys and values 0..len+T. `advance` must follow once every
    /// layer has been written.
    ///
    /// # Shapes
    /// - k_new, v_new: `[batch, kv_heads, T, head_dim]`
    /// - returned: `[batch, kv_heads, len + T, head_dim]` each
    pub fn write(&mut self, layer: usize, k_new: Tensor<4>, v_new: Tensor<4>) -> (Tensor<4>, Tensor<4>) {
        let [b, h, t, d] = k_new.dims();
        let (start, end) = (self.len, self.len + t);
        self.grow_to(end); // at the first layer of a chunk; a no-op after it
        let slot = &mut self.layers[layer];
        // `inplace` lets the backend write into the buffer it already owns.
        slot.k.inplace(|k| k.slice_assign([0..b, 0..h, start..end, 0..d], k_new));
        slot.v.inplace(|v| v.slice_assign([0..b, 0..h, start..end, 0..d], v_new));
        (slot.k.clone().slice([0..b, 0..h, 0..end, 0..d]), slot.v.clone().slice([0..b, 0..h, 0..end, 0..d]))
    }

    /// Marks `t` more positions as held (after every layer's `write`).
    pub fn advance(&mut self, t: usize) {
        self.len += t;
    }

    /// Bytes the held positions occupy: 2 · layers · kv_heads · len · head_dim · 4.
    pub fn bytes(&self) -> usize {
        cache_bytes(self.layers.len(), self.kv_heads, self.len, self.head_dim, 4)
    }

    /// Bytes the whole allocation occupies at full context.
    pub fn capacity_bytes(&self) -> usize {
        cache_bytes(self.layers.len(), self.kv_heads, self.capacity, self.head_dim, 4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::TensorData;

    /// Chunks written across several growths read back exactly, in order.
    #[test]
    fn growing_keeps_every_position() {
        let device = crate::backend::BackendKind::Flex.device().unwrap();
        let (h, d) = (2, 3);
        let mut cache = KvCache::new(2, 1, h, d, 300, &device);
        for t in [1, 70, 5, 150] {
            cache.check_room(t).unwrap();
            let start = cache.len();
            // Position p, head j, feature f holds p * 100 + j * 10 + f.
            let values: Vec<f32> =
                (0..h).flat_map(|j| (0..t).flat_map(move |p| (0..d).map(move |f| ((start + p) * 100 + j * 10 + f) as f32))).collect();
            let chunk = Tensor::<4>::from_data(TensorData::new(values, [1, h, t, d]), &device);
            for layer in 0..2 {
                let (k, v) = cache.write(layer, chunk.clone(), chunk.clone() * 2.0);
                let k = k.into_data().try_to_vec::<f32>().unwrap();
                let v = v.into_data().try_to_vec::<f32>().unwrap();
                let expected: Vec<f32> =
                    (0..h).flat_map(|j| (0..start + t).flat_map(move |p| (0..d).map(move |f| (p * 100 + j * 10 + f) as f32))).collect();
                assert_eq!(k, expected);
                assert_eq!(v, expected.iter().map(|x| x * 2.0).collect::<Vec<_>>());
            }
            cache.advance(t);
        }
        assert_eq!(cache.len(), 226);
        assert!(cache.allocated >= 226 && cache.allocated <= 300);
        assert!(cache.check_room(75).is_err(), "the capacity still bounds it");
    }
}
