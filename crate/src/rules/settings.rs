//! The knobs of the rule pipeline and their allowed ranges. The fields,
//! their ranges and their checks are one definition, read together; whether
//! the chain holds every stage they turn on is `chain`'s check.

use serde::{Deserialize, Serialize};

use super::kind::{Order, StageKind};

/// How a token repeated inside the window is penalised.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PenaltyMode {
    /// Once per distinct recent token (Hugging Face).
    #[serde(rename = "per_token")]
    #[default]
    PerToken,
    /// Once per occurrence (the course's demo).
    #[serde(rename = "per_occurrence")]
    PerOccurrence,
}

impl PenaltyMode {
    pub const ALL: [PenaltyMode; 2] = [PenaltyMode::PerToken, PenaltyMode::PerOccurrence];
}

/// What top-k does with tokens tied with the k-th. (Top-p cuts at a
/// position in every engine's sort: Hugging Face's splits a tie too, by its
/// sort, as transformers' own fixture case `top_p: 0` on tied logits shows.)
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Ties {
    /// The lower id stays, so the kept set has exactly the size the rule
    /// names (llama.cpp's sort, the course's definition).
    #[serde(rename = "by_id")]
    #[default]
    ById,
    /// Every token tied with the k-th stays too (Hugging Face's top-k
    /// compares each logit with the k-th's value, not a position).
    #[serde(rename = "keep_tied")]
    KeepTied,
}

impl Ties {
    pub const ALL: [Ties; 2] = [Ties::ById, Ties::KeepTied];
}

/// Every decoding rule's setting; the defaults turn every rule off.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(default)]
pub struct RuleSettings {
    /// 1 = the model's distribution; 0 = greedy; otherwise in [1e-4, 100].
    pub temperature: f64,
    /// 0 = off.
    pub top_k: usize,
    /// 1 = off; 0 = only the most likely token; in [0, 1].
    pub top_p: f64,
    /// 0 = off; above 1 keeps only `min_keep` tokens (llama.cpp takes it).
    pub min_p: f64,
    /// What top-k does with tokens tied with the k-th.
    pub ties: Ties,
    /// 1 = off; below 1 rewards repetition; positive.
    pub repetition_penalty: f64,
    /// How many of the latest tokens the penalties look at; 0 = whole history.
    pub penalty_window: usize,
    pub penalty_mode: PenaltyMode,
    /// Subtracted once per distinct recent token; any finite value
    /// (OpenAI takes [-2, 2], llama.cpp and vLLM more).
    pub presence_penalty: f64,
    /// Subtracted once per occurrence; any finite value, as presence.
    pub frequency_penalty: f64,
    /// `(token id, added logit)`; bias in [-100, 100].
    pub logit_bias: Vec<(u32, f64)>,
    /// Token ids that get probability 0.
    pub banned: Vec<u32>,
    /// The chain preset (see `chain`): "hf", "llama" or "openai".
    pub order: Order,
    /// The stages in the order the user built them; empty = `order`'s preset.
    pub chain: Vec<StageKind>,
    /// Every truncation keeps at least this many tokens (Hugging Face's
    /// min_tokens_to_keep, llama.cpp's min_keep); 0 and 1 mean the same.
    pub min_keep: usize,
    /// Locally typical sampling's mass; 1 = off; in (0, 1].
    pub typical_p: f64,
    /// Hugging Face's epsilon sampling; 0 = off; in [0, 1).
    pub epsilon_cutoff: f64,
    /// Hugging Face's eta sampling; 0 = off; in [0, 1).
    pub eta_cutoff: f64,
    /// llama.cpp's top-n-sigma: n standard deviations of the logits; 0 = off.
    pub top_n_sigma: f64,
    /// XTC: tokens at or above this probability are the "top choices"; above 0.5 XTC does nothing.
    pub xtc_threshold: f64,
    /// XTC: the chance that it removes the top choices at a step; 0 = off.
    pub xtc_probability: f64,
    /// DRY's strength; 0 = off.
    pub dry_multiplier: f64,
    /// DRY's growth per repeated token beyond the allowed length.
    pub dry_base: f64,
    /// The longest repeat DRY leaves alone.
    pub dry_allowed_length: usize,
    /// How many of the latest tokens DRY looks at: -1 = the whole history, 0 = off.
    pub dry_penalty_last_n: i64,
    /// Strings that end a repeat (a token whose text contains one breaks it).
    pub dry_sequence_breakers: Vec<String>,
    /// 0 = off, 1 = mirostat (v1), 2 = mirostat v2.
    pub mirostat: u8,
    /// Mirostat's target surprise tau, in bits (llama.cpp's --mirostat-ent).
    pub mirostat_tau: f64,
    /// Mirostat's learning rate eta (llama.cpp's --mirostat-lr).
    pub mirostat_eta: f64,
    /// Hugging Face's no_repeat_ngram_size; 0 = off.
    pub no_repeat_ngram_size: usize,
    /// Hugging Face's sequence_bias: `(token ids, bias)`; bias in [-100, 100].
    pub sequence_bias: Vec<(Vec<u32>, f64)>,
}

impl Default for RuleSettings {
    fn default() -> Self {
        Self {
            temperature: 1.0,
            top_k: 0,
            top_p: 1.0,
            min_p: 0.0,
            ties: Ties::ById,
            repetition_penalty: 1.0,
            penalty_window: 64,
            penalty_mode: PenaltyMode::PerToken,
            presence_penalty: 0.0,
            frequency_penalty: 0.0,
            logit_bias: Vec::new(),
            banned: Vec::new(),
            order: Order::HuggingFace,
            chain: Vec::new(),
            min_keep: 1,
            typical_p: 1.0,
            epsilon_cutoff: 0.0,
            eta_cutoff: 0.0,
            top_n_sigma: 0.0,
            xtc_threshold: 0.1,
            xtc_probability: 0.0,
            dry_multiplier: 0.0,
            dry_base: 1.75,
            dry_allowed_length: 2,
            dry_penalty_last_n: -1,
            dry_sequence_breakers: ["\n", ":", "\"", "*"].iter().map(|s| s.to_string()).collect(),
            mirostat: 0,
            mirostat_tau: 5.0,
            mirostat_eta: 0.1,
            no_repeat_ngram_size: 0,
            sequence_bias: Vec::new(),
        }
    }
}

/// A setting with no upper end of its own: any finite value (the engines
/// take any float there); `Range::describe` says "∞".
pub const UNBOUNDED: f64 = f64::MAX;
/// Below this a positive temperature is refused: f32 logits (at most about
/// 3.4e38) divided by it stay finite in f64, so the softmax never sees
/// inf - inf. Every smaller tau already gives the greedy token all the mass.
pub const MIN_TEMPERATURE: f64 = 1e-100;
pub const MAX_TEMPERATURE: f64 = UNBOUNDED;
pub const MAX_REPETITION_PENALTY: f64 = UNBOUNDED;
pub const MAX_PRESENCE_FREQUENCY: f64 = UNBOUNDED;
pub const MAX_ABS_BIAS: f64 = 100.0;
/// Top-k beyond any vocabulary keeps every token; larger is a typing slip.
pub const MAX_TOP_K: usize = 1_000_000;
/// A window beyond any context looks at the whole history; larger is a slip.
pub const MAX_PENALTY_WINDOW: usize = 100_000;
pub const MAX_TOP_N_SIGMA: f64 = 100.0;
pub const MAX_DRY_MULTIPLIER: f64 = 100.0;
pub const MAX_DRY_BASE: f64 = 100.0;
pub const MAX_DRY_ALLOWED_LENGTH: usize = 1000;
/// llama.cpp truncates a longer breaker; here it is refused.
pub const MAX_BREAKER_CHARS: usize = 40;
pub const MAX_BREAKERS: usize = 64;
pub const MAX_MIROSTAT_TAU: f64 = 100.0;
pub const MAX_MIROSTAT_ETA: f64 = 10.0;
pub const MAX_NGRAM: usize = 1000;
/// The longest token sequence a sequence bias names.
pub const MAX_SEQUENCE_LEN: usize = 64;

impl RuleSettings {
    /// The stages the pipeline runs, in order (`chain`, or `order`'s preset).
    pub fn stages(&self) -> &[StageKind] {
        if self.chain.is_empty() { self.order.preset() } else { &self.chain }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message_of(s: RuleSettings) -> String {
        s.validate(10).expect_err("should be refused").message
    }

    #[test]
    fn defaults_are_valid_and_off() {
        assert!(RuleSettings::default().validate(1).is_ok());
    }

    #[test]
    fn out_of_range_values_name_the_field_and_value() {
        let m = message_of(RuleSettings {
            temperature: 1e-101,
            ..Default::default()
        });
        assert!(m.contains("temperature = 0.0000") && m.contains("0 or [1e-100, ∞)"), "{m}");
        let m = message_of(RuleSettings {
            top_p: 1.5,
            ..Default::default()
        });
        assert!(m.contains("top_p = 1.5") && m.contains("[0, 1]"), "{m}");
        let m = message_of(RuleSettings {
            repetition_penalty: 0.0,
            ..Default::default()
        });
        assert!(m.contains("repetition_penalty = 0") && m.contains("(0, ∞)"), "{m}");
        let m = message_of(RuleSettings {
            min_p: f64::NAN,
            ..Default::default()
        });
        assert!(m.contains("min_p = NaN"), "{m}");
        let m = message_of(RuleSettings {
            banned: vec![10],
            ..Default::default()
        });
        assert!(m.contains("banned") && m.contains("10"), "{m}");
        let m = message_of(RuleSettings {
            logit_bias: vec![(3, f64::INFINITY)],
            ..Default::default()
        });
        assert!(m.contains("logit_bias for token 3"), "{m}");
    }

    /// The values the engines' own sampler tests use (llama.cpp's
    /// test-sampling, transformers' test_logits_process) are taken.
    #[test]
    fn values_the_engines_take_are_taken() {
        for s in [
            RuleSettings { top_p: 0.0, ..Default::default() },
            RuleSettings { min_p: 1.5, ..Default::default() },
            RuleSettings { presence_penalty: 5.0, frequency_penalty: -5.0, ..Default::default() },
            RuleSettings { repetition_penalty: 0.5, ..Default::default() },
            RuleSettings { temperature: 1e-5, ..Default::default() },
            RuleSettings { temperature: 1e4, ..Default::default() },
        ] {
            assert!(s.validate(10).is_ok(), "{s:?}: {:?}", s.validate(10));
        }
    }

    #[test]
    fn settings_read_from_partial_json_with_defaults() {
        let s: RuleSettings = serde_json::from_str(
            r#"{"top_k": 5, "order": "llama", "penalty_mode": "per_occurrence"}"#,
        )
        .unwrap();
        assert_eq!(s.top_k, 5);
        assert_eq!(s.order, Order::LlamaCpp);
        assert_eq!(s.penalty_mode, PenaltyMode::PerOccurrence);
        assert_eq!(s.temperature, 1.0);
    }
}
