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
//!
//! A sliding-window layer (Gemma 3's local layers) keeps only a ring of
//! pages around its window (`ring`): its older pages are recycled, so it
//! holds at most `ring_positions` however long the text, while a global
//! layer holds every position.

mod pages;
mod precision;
pub mod ring;

use burn::tensor::Tensor;
use serde::Serialize;

pub use pages::{KeyRun, KvElem, LayerPages, PAGE, Page, PagesRef};
pub use precision::KvPrecision;

use crate::bail;
use crate::counters::cache_bytes;
use crate::error::Result;

#[derive(Debug, Clone)]
pub struct KvCache {
    layers: Vec<LayerPages>,
    /// Each layer's sliding window (none: a global layer, which keeps every position).
    windows: Vec<Option<usize>>,
    len: usize,
    /// The most positions it may hold (the context length).
    capacity: usize,
    kv_heads: usize,
    head_dim: usize,
    precision: KvPrecision,
    /// Where the last rewind went, while the text is run again from there:
    /// the local layers keep the ring a query there reads (`ring`).
    rewind_point: Option<usize>,
}

/// What the attention kernel reads of one layer: its pages and their shape.
#[derive(Debug, Clone, Copy)]
pub struct LayerView<'a> {
    pub pages: PagesRef<'a>,
    pub kv_heads: usize,
    pub head_dim: usize,
}

/// What the cache holds now, by kind of layer (the KV panel's figures).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct KvHeld {
    /// Positions each global layer holds: the cache length.
    pub global_positions: usize,
    /// Positions each sliding-window layer still holds (the newest ones:
    /// at most its ring, more while a rewind point keeps a second ring).
    pub local_positions: usize,
    /// Bytes of K and V the global layers' positions occupy.
    pub global_bytes: usize,
    /// Bytes of K and V the sliding-window layers' positions occupy.
    pub local_bytes: usize,
}

impl KvCache {
    /// An empty cache of global layers; pages are added as it fills.
    pub fn new(layers: usize, kv_heads: usize, head_dim: usize, capacity: usize, precision: KvPrecision) -> Self {
        let empty = || match precision {
            KvPrecision::F16 => LayerPages::F16(Vec::new()),
            KvPrecision::F32 => LayerPages::F32(Vec::new()),
        };
        KvCache {
            layers: (0..layers).map(|_| empty()).collect(),
            windows: vec![None; layers],
            len: 0,
            capacity,
            kv_heads,
            head_dim,
            precision,
            rewind_point: None,
        }
    }

    /// The same cache with a sliding window for each layer that has one
    /// (`ModelConfig::layer_window`): those keep only their ring of pages.
    ///
    /// # Panics
    /// If `windows` does not name every layer, or a window is 0.
    pub fn with_windows(mut self, windows: Vec<Option<usize>>) -> Self {
        assert_eq!(windows.len(), self.layers.len(), "a window (or none) for each layer");
        assert!(windows.iter().all(|w| *w != Some(0)), "a window sees at least its own position");
        self.windows = windows;
        self
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

    /// Layer `layer`'s sliding window, if it has one.
    pub fn window(&self, layer: usize) -> Option<usize> {
        self.windows[layer]
    }

    /// Positions the first layer's pages have room for now (what the text
    /// needed, rounded up to a page).
    pub fn allocated(&self) -> usize {
        self.layers.first().map_or(0, LayerPages::allocated)
    }

    /// Positions layer `layer`'s pages have room for now (a local layer's
    /// recycled pages hold none).
    pub fn allocated_in(&self, layer: usize) -> usize {
        self.layers[layer].allocated()
    }

    /// Which of positions 0..len layer `layer` still holds.
    pub fn held_in(&self, layer: usize) -> Vec<bool> {
        self.layers[layer].held(self.len)
    }

    /// The most positions a sliding-window layer holds while the text only
    /// grows (`ring::ring_positions`); none without local layers.
    pub fn ring_positions(&self) -> Option<usize> {
        self.windows.iter().flatten().map(|&w| ring::ring_positions(w, self.capacity)).max()
    }

    /// Forgets every position (the pages stay allocated).
    pub fn reset(&mut self) {
        self.len = 0;
        self.rewind_point = None;
    }

    /// Whether a rewind to the first `n` positions keeps what a query at
    /// `n` reads: always in a global layer; in a sliding-window layer, if
    /// its window before `n` was not recycled.
    pub fn can_rewind_to(&self, n: usize) -> bool {
        let n = n.min(self.len);
        self.windows.iter().zip(&self.layers).all(|(w, pages)| w.is_none_or(|w| pages.holds_pages(ring::needed_at(n, w))))
    }

    /// Rewinds to the first `n` positions: what was written after them is
    /// overwritten by the next chunk. Used by step-back and beam search.
    /// The local layers then keep the ring of `n` while the text is run
    /// again from there (until `start_feed` elsewhere).
    ///
    /// Returns false, and empties the cache instead, when a local layer no
    /// longer holds what a query at `n` reads (`can_rewind_to`): the caller
    /// then feeds the first `n` tokens again (`DecoderLm` keeps them).
    #[must_use]
    pub fn truncate(&mut self, n: usize) -> bool {
        if !self.can_rewind_to(n) {
            self.reset();
            return false;
        }
        self.len = self.len.min(n);
        self.rewind_point = Some(self.len);
        true
    }

    /// Begins feeding tokens at `len`. A rewind point elsewhere is dropped:
    /// the text goes on from another position, so its ring is let go.
    pub fn start_feed(&mut self) {
        if self.rewind_point != Some(self.len) {
            self.rewind_point = None;
        }
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
    /// A sliding-window layer first recycles the pages no query will read
    /// again (`ring`).
    ///
    /// # Shapes
    /// - k_new, v_new: `[1, kv_heads, T, head_dim]`
    pub fn write(&mut self, layer: usize, k_new: Tensor<4>, v_new: Tensor<4>) {
        let [b, h, t, d] = k_new.dims();
        assert!(b == 1 && h == self.kv_heads && d == self.head_dim, "a chunk of [1, {}, T, {}], not {:?}", self.kv_heads, self.head_dim, k_new.dims());
        let read = |x: Tensor<4>| x.into_data().try_into_vec::<f32>().expect("f32 keys and values");
        let (k, v) = (read(k_new), read(v_new));
        let (start, end) = (self.len, self.len + t);
        let slot = &mut self.layers[layer];
        match self.windows[layer] {
            None => slot.reserve(end, self.capacity, h, d),
            Some(w) => {
                let keep = [ring::ring_before(start, w), self.rewind_point.map_or(0..0, |r| ring::ring_before(r, w))];
                slot.reserve_ring(&keep, start / PAGE, end, self.capacity, h, d);
            }
        }
        slot.write(start, t, d, &k, &v);
    }

    /// Layer `layer`'s pages for the attention kernel.
    pub fn view(&self, layer: usize) -> LayerView<'_> {
        LayerView { pages: self.layers[layer].as_ref(), kv_heads: self.kv_heads, head_dim: self.head_dim }
    }

    /// Marks `t` more positions as held (after every layer's `write`).
    pub fn advance(&mut self, t: usize) {
        self.len += t;
    }

    /// What the global and the sliding-window layers hold now.
    pub fn held(&self) -> KvHeld {
        let bytes = |positions: usize| cache_bytes(1, self.kv_heads, positions, self.head_dim, self.precision.bytes());
        let mut held = KvHeld { global_positions: self.len, ..KvHeld::default() };
        for (w, pages) in self.windows.iter().zip(&self.layers) {
            match w {
                None => held.global_bytes += bytes(self.len),
                Some(_) => {
                    let n = pages.held_positions(self.len);
                    held.local_positions = held.local_positions.max(n);
                    held.local_bytes += bytes(n);
                }
            }
        }
        held
    }

    /// Bytes the held positions occupy: 2 · kv_heads · head_dim · (2 or 4)
    /// per position of each layer (every position of a global layer, its
    /// ring's of a local one).
    pub fn bytes(&self) -> usize {
        let held = self.held();
        held.global_bytes + held.local_bytes
    }

    /// Bytes the whole cache would occupy at full context (the local layers
    /// at their ring).
    pub fn capacity_bytes(&self) -> usize {
        let positions = |w: &Option<usize>| w.map_or(self.capacity, |w| ring::ring_positions(w, self.capacity));
        self.windows.iter().map(|w| cache_bytes(1, self.kv_heads, positions(w), self.head_dim, self.precision.bytes())).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::TensorData;
    use ring::SLACK;

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
        assert!(cache.truncate(3));
        cache.write(0, chunk(1), chunk(1));
        cache.advance(1);
        assert_eq!((cache.len(), cache.allocated()), (4, PAGE + 5));
    }

    /// A sliding-window layer written one position at a time (and in
    /// chunks within a page) keeps every position its window reads, exactly,
    /// in at most its ring of pages; the global layer beside it keeps all.
    /// A rewind within the slack keeps the cache; one past the ring empties it.
    #[test]
    fn a_local_layer_keeps_a_ring_and_a_global_one_everything() {
        let device = crate::backend::BackendKind::Flex.device().unwrap();
        let (h, d, window) = (1, 2, 40);
        let mut cache = KvCache::new(2, h, d, 2000, KvPrecision::F32).with_windows(vec![Some(window), None]);
        let ring = cache.ring_positions().unwrap();
        let chunk = |start: usize, t: usize| {
            let values: Vec<f32> = (0..t).flat_map(|p| (0..d).map(move |f| ((start + p) * 2 + f) as f32)).collect();
            Tensor::<4>::from_data(TensorData::new(values, [1, h, t, d]), &device)
        };
        let mut sizes = [1, 5, 1, 64, 1, 1, 30].into_iter().cycle();
        while cache.len() < 1000 {
            let start = cache.len();
            let t = sizes.next().unwrap().min(PAGE - start % PAGE);
            for layer in 0..2 {
                cache.write(layer, chunk(start, t), chunk(start, t));
            }
            cache.advance(t);
            let len = cache.len();
            assert!(cache.allocated_in(0) <= ring, "at {len}: {} positions allocated, the ring is {ring}", cache.allocated_in(0));
            assert_eq!(cache.allocated_in(1), len.div_ceil(PAGE) * PAGE, "the global layer grows");
            for p in len.saturating_sub(window)..len {
                assert_eq!(cache.view(0).pages.key(0, p, d), vec![(p * 2) as f32, (p * 2 + 1) as f32], "position {p} at {len}");
            }
        }
        let len = cache.len();
        assert!(ring < len / 2 && !cache.held_in(0)[0] && cache.held_in(1).iter().all(|&x| x), "it recycles");
        let held = cache.held();
        assert_eq!(held.global_bytes, 2 * h * len * d * 4);
        assert_eq!(held.local_bytes, 2 * h * held.local_positions * d * 4);
        assert!(held.local_positions > window && held.local_positions <= ring);
        assert_eq!(cache.bytes(), held.global_bytes + held.local_bytes);
        assert!(cache.truncate(len - 1) && cache.truncate(len - 1 - SLACK) && cache.len() == len - 1 - SLACK);
        assert!(!cache.truncate(len - ring - 1), "past the ring");
        assert!(cache.is_empty());
    }
}
