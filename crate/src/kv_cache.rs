//! The KV cache: per layer, K and V for every position seen so far,
//! allocated once for the whole context.
//!
//! ```text
//! layer l:  K [batch, kv_heads, capacity, head_dim]    V likewise
//!                               ├── len ──┤
//!           positions 0..len hold the keys/values of the tokens seen;
//!           a new chunk of T tokens is written at len..len+T, so the
//!           position of a new token is always `len`, never the caller's guess.
//! ```

use burn::tensor::{Device, Tensor};

use crate::bail;
use crate::counters::cache_bytes;
use crate::error::Result;

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
    capacity: usize,
    kv_heads: usize,
    head_dim: usize,
}

impl KvCache {
    /// Allocates the whole cache up front (zeros), so growing it never reallocates.
    pub fn new(layers: usize, batch: usize, kv_heads: usize, head_dim: usize, capacity: usize, device: &Device) -> Self {
        let shape = [batch, kv_heads, capacity, head_dim];
        let layers = (0..layers)
            .map(|_| LayerKv { k: Tensor::zeros(shape, device), v: Tensor::zeros(shape, device) })
            .collect();
        KvCache { layers, len: 0, capacity, kv_heads, head_dim }
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
