//! The decoding rules as small pure functions over a logits slice, and the
//! pipeline that runs them in a chosen order and reports every stage.
//!
//! All rule math is in f64 (the course prints 16 digits); the caller converts
//! the model's f32 logits. No function here writes into its input.

mod bias;
mod curve;
mod draw;
mod exp;
mod memo;
mod min_p;
mod penalties;
mod pipeline;
mod ranking;
mod raw;
mod settings;
mod softmax;
mod stage;
mod temperature;
mod top_k;
mod top_p;

pub use bias::apply_bias_and_bans;
pub use curve::entropy_nats_at_temperatures;
pub use draw::sample_inverse_cdf;
pub use exp::exp;
pub use memo::{StageMemo, run_pipeline_and_rules_alone_memo};
pub use min_p::min_p_mask;
pub use penalties::{penalize_presence_frequency, penalize_repetition, select_recent};
pub use pipeline::{
    renormalize_kept, run_pipeline, run_pipeline_and_rules_alone, run_pipeline_on, run_rules_alone, run_rules_alone_on,
};
pub use raw::RawDistribution;
pub use settings::{
    MAX_ABS_BIAS, MAX_PRESENCE_FREQUENCY, MAX_REPETITION_PENALTY, MAX_TEMPERATURE, MIN_TEMPERATURE,
    Order, PenaltyMode, RuleSettings,
};
pub use softmax::{
    Nearby, Softmax, argmax, entropy_bits, entropy_nats, entropy_nats_at_temperature, entropy_nats_from_logits, softmax,
    softmax_near, softmax_parts,
};
pub use stage::Stage;
pub use temperature::scale_by_temperature;
pub use top_k::{top_k_mask, top_k_mask_hinted};
pub use top_p::top_p_mask;
