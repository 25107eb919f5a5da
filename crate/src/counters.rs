//! Exact cost counters for the cached and the naive (full recompute) paths,
//! per layer and head: the transformer's attention counts them from the
//! shapes it ran (the K/V rows it projected, the scores its causal masks
//! left visible), so they follow what the code did, not a formula. The
//! formulas below are what they must come to, and what the naive path
//! would have cost while the cache is on (`naive_step`, not run).
//!
//! ```text
//! K/V rows projected: cached prefill of P tokens = P, each decode = 1;
//!                     naive step over t tokens = t.
//! scores computed:    cached, query at position i (0-based) = i + 1;
//!                     naive step over t tokens = t(t+1)/2 (the causal triangle).
//! ```

use serde::Serialize;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PathCost {
    /// Key/value rows projected (each row is one K and one V vector).
    pub kv_rows: u64,
    /// Attention scores q·k computed (masked entries are not counted).
    pub scores: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    pub cached: PathCost,
    pub naive: PathCost,
}

impl PathCost {
    /// Cost of running `new` tokens on top of `cached` cached ones, with the cache.
    pub fn cached_step(cached: usize, new: usize) -> PathCost {
        let (c, n) = (cached as u64, new as u64);
        // Queries at positions c..c+n see c+1 .. c+n keys: sum = n*c + n(n+1)/2.
        PathCost { kv_rows: n, scores: n * c + n * (n + 1) / 2 }
    }

    /// Cost of a full recompute over `t` tokens without a cache.
    pub fn naive_step(t: usize) -> PathCost {
        let t = t as u64;
        PathCost { kv_rows: t, scores: t * (t + 1) / 2 }
    }

    /// `self - other` (other must be an earlier reading of the same counter).
    pub fn minus(self, other: PathCost) -> PathCost {
        PathCost { kv_rows: self.kv_rows - other.kv_rows, scores: self.scores - other.scores }
    }

    pub fn add(&mut self, other: PathCost) {
        self.kv_rows += other.kv_rows;
        self.scores += other.scores;
    }
}

/// Bytes held by a KV cache: 2 (K and V) · layers · kv_heads · positions · head_dim · bytes per number.
pub fn cache_bytes(layers: usize, kv_heads: usize, positions: usize, head_dim: usize, bytes_per_number: usize) -> usize {
    2 * layers * kv_heads * positions * head_dim * bytes_per_number
}
