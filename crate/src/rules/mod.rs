//! The decoding rules as small pure functions over a logits slice, and the
//! pipeline that runs them in a chosen order and reports every stage.
//!
//! All rule math is in f64 (the course prints 16 digits); the caller converts
//! the model's f32 logits. No function here writes into its input.
//!
//! The entry point is `pipeline::run_rules`. The modules form a DAG, leaves
//! first: `kind` (the stages' and presets' names), `exp`, `softmax`,
//! `ranking` → `settings` → `fields` (the numeric settings as one list, and
//! the checks) → `stage` (a measured column, its renormalisation) → `raw`
//! (the position's raw distribution) → `spec` (what a stage is) → the
//! rules, one file each with its `SPEC` (`temperature`, `top_k`, `top_p`,
//! `min_p`, `penalties`, `bias`, ...) → `registry` (the list of specs) →
//! `chain` (validation, step inputs) → `prefix` (the leading modifiers) →
//! `memo` → `alone` → `pipeline`.

mod alone;
mod bias;
mod chain;
mod curve;
mod draw;
mod dry;
mod epsilon_eta;
mod exp;
mod fields;
mod kind;
mod memo;
mod min_keep;
mod min_p;
mod mirostat;
mod no_repeat_ngram;
mod penalties;
mod pipeline;
mod prefix;
mod ranking;
mod raw;
mod registry;
mod sequence_bias;
mod settings;
mod softmax;
mod spec;
mod stage;
mod state;
mod temperature;
mod top_k;
mod top_n_sigma;
mod top_p;
mod typical;
mod xtc;

pub use bias::apply_bias_and_bans;
pub use kind::{ChainPreset, Order, StageKind};
pub use registry::{StageInfo, stages_on};
pub use curve::entropy_nats_at_temperatures;
pub use draw::sample_inverse_cdf;
pub use exp::exp;
pub use fields::{Field, RULE_FIELDS, Range, rule_field};
pub use memo::StageMemo;
pub use min_p::min_p_mask;
pub use penalties::{penalize_presence_frequency, penalize_repetition, select_recent};
pub use pipeline::{run_pipeline, run_rules, run_rules_alone, run_rules_with};
pub use ranking::{rank_of, top_indices};
pub use raw::RawDistribution;
pub use settings::{
    MAX_ABS_BIAS, MAX_BREAKER_CHARS, MAX_BREAKERS, MAX_DRY_ALLOWED_LENGTH, MAX_DRY_BASE, MAX_DRY_MULTIPLIER,
    MAX_MIROSTAT_ETA, MAX_MIROSTAT_TAU, MAX_NGRAM, MAX_PENALTY_WINDOW, MAX_PRESENCE_FREQUENCY, MAX_REPETITION_PENALTY,
    MAX_SEQUENCE_LEN, MAX_TEMPERATURE, MAX_TOP_K, MAX_TOP_N_SIGMA, MIN_TEMPERATURE, PenaltyMode, RuleSettings,
};
pub use softmax::{
    Nearby, Softmax, argmax, entropy_bits, entropy_nats, entropy_nats_at_temperature, entropy_nats_from_logits, softmax,
    softmax_near, softmax_parts,
};
pub use stage::{Stage, renormalize_kept};
pub use state::{SamplerState, StepInputs};
pub use temperature::scale_by_temperature;
pub use top_k::{top_k_mask, top_k_mask_hinted};
pub use top_p::top_p_mask;
pub use dry::{Dry, breaker_token_ids};
pub use epsilon_eta::{epsilon_mask, eta_mask, eta_threshold};
pub use min_keep::keep_at_least;
pub use mirostat::{MIROSTAT_M, initial_mu, mirostat_v1_k, mirostat_v1_mask, mirostat_v2_mask, next_mu};
pub use no_repeat_ngram::banned_by_ngrams;
pub use sequence_bias::sequence_biases;
pub use top_n_sigma::top_n_sigma_mask;
pub use typical::{typical_p_llama_mask, typical_p_mask};
pub use xtc::xtc_mask;
