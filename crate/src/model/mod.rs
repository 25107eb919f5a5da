//! The decoder-only transformer, config-driven.
//!
//! ```text
//! tokens (b, t) ─► token embedding (+ learned positions) ─► blocks × L ─► final norm ─► LM head ─► logits (b, t, vocab)
//!                                  rotary positions act inside attention instead
//! ```

pub mod attention;
pub mod block;
pub mod decoder;
pub mod embedding;
pub mod init;
pub mod mlp;
pub mod norm;
pub mod projection;
pub mod query_weights;
pub mod rope;

use std::cell::{Cell, RefCell};

use burn::module::Module;
use burn::nn::{Embedding, EmbeddingConfig};
use burn::tensor::{Device, Int, Tensor, TensorData};

use attention::{ChunkPositions, needs_rope};
use block::Block;
use embedding::TokenEmbedding;
use rope::RopeSpec;
use norm::Norm;
use projection::Projection;

use crate::config::{ModelConfig, Positions};
use crate::counters::PathCost;
use crate::inside::Capture;
use crate::kv_cache::KvCache;

pub use decoder::{DecoderLm, WeightsSource};

#[derive(Module, Debug)]
pub struct Transformer {
    pub tok_emb: TokenEmbedding,    // (vocab, d_model)
    pub pos_emb: Option<Embedding>, // (context, d_model), learned positions only
    pub blocks: Vec<Block>,
    pub final_norm: Norm,
    pub lm_head: Option<Projection>, // (d_model, vocab); None when tied to tok_emb
}

impl Transformer {
    /// A freshly initialised model, its weights drawn from `Rng::new(seed)`
    /// (GPT-2's recipe, see `init::init_seeded`).
    pub fn init_seeded(c: &ModelConfig, seed: u64, device: &Device) -> Self {
        init::init_seeded(Self::init(c, device), c.n_layers, seed)
    }

    /// The architecture with burn's own (lazy, unseeded) initialisation:
    /// use it only where every weight is overwritten next (loading a file).
    pub fn init(c: &ModelConfig, device: &Device) -> Self {
        let emb = |n: usize| EmbeddingConfig::new(n, c.d_model).init(device);
        Transformer {
            tok_emb: TokenEmbedding::init(c.vocab_size, c.d_model, device),
            pos_emb: matches!(c.positions, Positions::Learned).then(|| emb(c.context)),
            blocks: (0..c.n_layers).map(|_| Block::init(c, device)).collect(),
            final_norm: Norm::init(c.norm, c.d_model, c.norm_eps, device),
            lm_head: (!c.tied_embeddings).then(|| Projection::init(c.d_model, c.vocab_size, false, device)),
        }
    }

    /// Runs a chunk of tokens that starts at absolute position `start`.
    /// With a cache, `start` must equal the cache length (the cache decides
    /// positions; `DecoderLm` enforces this). With `last_only`, only the
    /// last position goes through the LM head. Also returns the attention's
    /// work as it ran (per layer and head).
    ///
    /// # Shapes
    /// - tokens: `[batch, T]`
    /// - returned: `[batch, T, vocab]`, or `[batch, 1, vocab]` with `last_only`
    pub fn forward(
        &self,
        c: &ModelConfig,
        tokens: Tensor<2, Int>,
        start: usize,
        cache: Option<&mut KvCache>,
        last_only: bool,
    ) -> (Tensor<3>, PathCost) {
        let (logits, work, _) = self.forward_captured(c, tokens, start, cache, last_only, false);
        (logits, work)
    }

    /// `forward`, and with `capture` (batch 1, with a cache) what the last
    /// position's query read in every layer and the residual stream there
    /// (`inside::Capture`).
    pub fn forward_captured(
        &self,
        c: &ModelConfig,
        tokens: Tensor<2, Int>,
        start: usize,
        cache: Option<&mut KvCache>,
        last_only: bool,
        capture: bool,
    ) -> (Tensor<3>, PathCost, Option<Capture>) {
        let (mut x, work, captured) = self.hidden_counted(c, tokens, start, cache, capture);
        let [b, t, d] = x.dims();
        if last_only && t > 1 {
            x = x.slice([0..b, t - 1..t, 0..d]);
        }
        (self.head(c, x), work, captured)
    }

    /// Runs a chunk into `cache` without the LM head (a prompt's chunks
    /// before its last): the attention's work, as `forward` counts it.
    pub fn feed(&self, c: &ModelConfig, tokens: Tensor<2, Int>, start: usize, cache: Option<&mut KvCache>) -> PathCost {
        self.hidden_counted(c, tokens, start, cache, false).1
    }

    /// The residual stream after the last block (before the final norm).
    ///
    /// # Shapes
    /// - tokens: `[batch, T]`
    /// - returned: `[batch, T, d_model]`
    pub fn hidden(&self, c: &ModelConfig, tokens: Tensor<2, Int>, start: usize, cache: Option<&mut KvCache>) -> Tensor<3> {
        self.hidden_counted(c, tokens, start, cache, false).0
    }

    /// `hidden`, and the attention's work: what every layer's attention
    /// counted from the shapes it ran, as one layer's share (the counters
    /// are per layer and head, and every layer runs the same shapes).
    /// With `capture` and a cache, also the last position's inside
    /// (`forward_captured`).
    fn hidden_counted(
        &self,
        c: &ModelConfig,
        tokens: Tensor<2, Int>,
        start: usize,
        mut cache: Option<&mut KvCache>,
        capture: bool,
    ) -> (Tensor<3>, PathCost, Option<Capture>) {
        let device = tokens.device();
        let [_, t] = tokens.dims();
        let mut x = self.tok_emb.forward(tokens); // (b, t, d)
        if let Some(scale) = c.options.embed_scale {
            x = x * scale;
        }
        if let Some(pos_emb) = &self.pos_emb {
            let ids: Vec<i64> = (start..start + t).map(|p| p as i64).collect();
            let ids = Tensor::<2, Int>::from_data(TensorData::new(ids, [1, t]), &device);
            x = x + pos_emb.forward(ids); // (1, t, d) broadcast over batch
        }
        let (global, local) = rope_specs(c);
        let tables = |spec: Option<RopeSpec>| {
            let style = needs_rope(&c.positions).map(|(_, style)| style)?;
            let (cos, sin) = spec?.tables(start, t, &device);
            Some((cos, sin, style))
        };
        let (global, local) = (tables(global), tables(local));
        let pos = ChunkPositions {
            start,
            rope: global.as_ref().map(|(c, s, st)| (c, s, *st)),
            rope_local: local.as_ref().map(|(c, s, st)| (c, s, *st)),
            work: Cell::default(),
            capture: (capture && cache.is_some()).then(|| {
                RefCell::new(Capture { query: start + t - 1, heads: c.n_heads, kv_heads: c.n_kv_heads, ..Capture::default() })
            }),
        };
        let last_row = |x: &Tensor<3>| {
            let [b, t, d] = x.dims();
            x.clone().slice([0..b, t - 1..t, 0..d]).into_data().try_to_vec::<f32>().expect("f32 activations")
        };
        if let Some(capture) = &pos.capture {
            capture.borrow_mut().residuals.push(last_row(&x));
        }
        for (layer, block) in self.blocks.iter().enumerate() {
            x = block.forward(c, layer, x, &pos, cache.as_deref_mut());
            if let Some(capture) = &pos.capture {
                capture.borrow_mut().residuals.push(last_row(&x));
            }
        }
        if let Some(cache) = cache {
            cache.advance(t);
        }
        let work = pos.work.get();
        let layers = self.blocks.len().max(1) as u64;
        // One layer's share: every layer runs the same shapes, except that
        // sliding-window layers score fewer keys (then this is their mean).
        debug_assert!(
            work.kv_rows % layers == 0 && (c.options.sliding_window.is_some() || work.scores % layers == 0),
            "every layer runs the same shapes"
        );
        (x, PathCost { kv_rows: work.kv_rows / layers, scores: work.scores / layers }, pos.capture.map(RefCell::into_inner))
    }

    /// Final norm and LM head.
    ///
    /// # Shapes
    /// - x: `[batch, T, d_model]` → `[batch, T, vocab]`
    pub fn head(&self, c: &ModelConfig, x: Tensor<3>) -> Tensor<3> {
        let x = self.final_norm.forward(x);
        let logits = match &self.lm_head {
            Some(head) => head.forward(x),
            None => self.tok_emb.logits(x),
        };
        match c.options.logit_softcap {
            Some(cap) => (logits / cap).tanh() * cap,
            None => logits,
        }
    }
}

/// The rotations of the global layers and, where they differ, of the
/// sliding-window ones (none for learned positions).
pub fn rope_specs(c: &ModelConfig) -> (Option<RopeSpec>, Option<RopeSpec>) {
    let Some((base, _)) = needs_rope(&c.positions) else { return (None, None) };
    let global = RopeSpec::new(c.head_dim, base, &c.options.rope_scaling);
    // Local layers rotate unscaled, at their own base (llama.cpp's SWA layers).
    let local = c.options.sliding_window.as_ref().map(|w| RopeSpec::plain(c.head_dim, w.rope_base.unwrap_or(base)));
    (Some(global.clone()), local.filter(|l| *l != global))
}
