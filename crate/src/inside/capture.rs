//! What the decoder records, when asked, at the last position of a chunk:
//! each layer's attention weights of that query over the cache (computed by
//! `model::query_weights`), and the residual stream after the embedding and
//! after every block. Plain data: the model, the language-model interface
//! and the session all pass it on.


/// One layer's attention at the captured position.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerWeights {
    /// A sliding-window layer's window (positions it sees, its own included).
    pub window: Option<usize>,
    /// The first cache position the query reads (0 unless a window cut it).
    pub first: usize,
    /// `heads` rows of `query - first + 1` weights, query head h at
    /// `[h·n, (h+1)·n)`; each row is a softmax, so it sums to 1.
    pub weights: Vec<f32>,
}

/// The inside of one forward pass at its last position.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Capture {
    /// The captured query's cache position (the cache length before it, so
    /// the positions its weights cover are `first..=query`).
    pub query: usize,
    pub heads: usize,
    pub kv_heads: usize,
    /// One per layer, in order.
    pub attention: Vec<LayerWeights>,
    /// The residual stream at the query: after the embedding (its scale and
    /// learned positions included), then after each block; `layers + 1` rows
    /// of `d_model`, before the final norm.
    pub residuals: Vec<Vec<f32>>,
}

impl Capture {
    /// Positions layer `layer`'s query reads.
    pub fn read(&self, layer: usize) -> usize {
        self.query + 1 - self.attention[layer].first
    }

    /// Layer `layer`'s weights of query head `h`.
    pub fn row(&self, layer: usize, h: usize) -> &[f32] {
        let n = self.read(layer);
        &self.attention[layer].weights[h * n..(h + 1) * n]
    }
}
