//! The decoding rules as small pure functions over a logits slice, and the
//! pipeline that runs them in a chosen order and reports every stage.
//!
//! All rule math is in f64 (the course prints 16 digits); the caller converts
//! the model's f32 logits. No function here writes into its input.
//!
//! The entry point is `pipeline::run_rules`. The modules form a DAG, leaves
//! first: `kind` (the stage list, the stages' and presets' names), `exp`,
//! `vocab_sum` (how a sum over the vocabulary is taken), `softmax`,
//! `ranking` → `settings` → `fields` (what a setting is: range, words,
//! flag, control) → `stage` (a measured column, its
//! renormalisation) → `raw` (the position's raw distribution) → `spec` (what
//! a stage is) → the rules, one file each with its `SPEC` and the fields it
//! owns (`temperature`, `top_k`, `top_p`, `min_p`, `penalties`, `bias`, ...)
//! → `registry` (the specs, and every field gathered from them) → `chain`
//! (validation, step inputs) → `prefix` (the leading modifiers) → `memo` →
//! `alone` → `pipeline`.
//!
//! Adding a stage: its file (its `SPEC`, with the fields it owns), its line
//! in `kind::with_stages` (which makes its `mod`, its `StageKind` and its
//! place in `registry::SPECS`), and each new setting's typed field and
//! default in `settings::RuleSettings`. Validation, the CLI's flags, the
//! settings schema and the page's controls follow from the fields.

mod alone;
mod chain;
mod curve;
mod draw;
mod exp;
mod fields;
mod kind;
mod memo;
mod min_keep;
mod pipeline;
mod prefix;
mod probs;
mod ranking;
mod raw;
mod saturate;
mod registry;
mod settings;
mod softmax;
mod spec;
mod stage;
mod state;
mod vocab_sum;

/// The stages' modules, one per line of the stage list (`kind::with_stages`).
macro_rules! stage_modules {
    ($( $module:ident: $( $kind:ident = $spec:ident ),+ ; )+) => { $( mod $module; )+ };
}
kind::with_stages!(stage_modules);

pub use bias::apply_bias_and_bans;
pub use kind::{ChainPreset, Order, StageKind};
pub use registry::{StageInfo, stages_on};
pub use curve::entropy_nats_at_temperatures;
pub use draw::{sample_inverse_cdf, sample_inverse_cdf_of};
pub use exp::exp;
pub(crate) use raw::check_logits;
pub use fields::{Control, Field, Group, Range, Slot};
pub use registry::{RULE_FIELDS, rule_field};
pub use memo::StageMemo;
pub use min_p::min_p_mask;
pub use penalties::{penalize_presence_frequency, penalize_repetition, select_recent};
pub use pipeline::{run_pipeline, run_rules, run_rules_alone, run_rules_with};
pub use ranking::{rank_of, top_indices};
pub use raw::RawDistribution;
pub use settings::{
    MAX_ABS_BIAS, MAX_BREAKER_CHARS, MAX_BREAKERS, MAX_DRY_ALLOWED_LENGTH, MAX_DRY_BASE, MAX_DRY_MULTIPLIER,
    MAX_MIROSTAT_ETA, MAX_MIROSTAT_TAU, MAX_NGRAM, MAX_PENALTY_WINDOW, MAX_PRESENCE_FREQUENCY, MAX_REPETITION_PENALTY,
    MAX_SEQUENCE_LEN, MAX_TEMPERATURE, MAX_TOP_K, MAX_TOP_N_SIGMA, MIN_TEMPERATURE, PenaltyMode, RuleSettings, Ties, UNBOUNDED,
};
pub use softmax::{
    Nearby, Softmax, argmax, entropy_bits, entropy_nats, entropy_nats_at_temperature, entropy_nats_from_logits, softmax,
    softmax_near, softmax_parts,
};
pub use probs::Probs;
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
