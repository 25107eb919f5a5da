//! Inside one step: what the newest token's query read from the KV cache in
//! every layer, and what each layer's residual stream would already predict
//! (the logit lens).
//!
//! ```text
//! forward (cached, last chunk) ──► Capture { per layer: the last query's weights over the cache,
//!                                            per residual: the stream after the embedding and each block }
//! session, after the draw      ──► final norm + LM head on each residual (the model's own `lens`)
//!                                  ──► InsideReport { attention summaries, lens per layer }
//! ```
//!
//! Both come from the pass that made the step's logits: the weights from its
//! own queries and the keys it cached, the residuals from its own stream. A
//! second model run would cost a step and could differ (a sliding window that
//! moved, a cache at another precision).

pub mod capture;
pub mod lens;
pub mod report;

pub use capture::{Capture, LayerWeights};
pub use lens::{LensSummary, summarize};
pub use report::{AttentionLayer, Followed, InsideReport, LENS_TOP, LensLayer, TokenRef};
