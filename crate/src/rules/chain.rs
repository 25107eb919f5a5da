//! The chain: which stages the pipeline runs, in which order.
//!
//! One source of truth: `RuleSettings::chain`. An empty chain (the default)
//! means "the preset named by `order`" (`hf`, `llama`, `openai`), which is
//! how the course and the URLs written before the chain existed say the
//! order; a non-empty chain is the user's own list and `order` is then only
//! a label. `Chain::of(settings)` resolves the two into the list of stages.

use serde::{Deserialize, Serialize};

use super::settings::Order;

/// One stage a chain can hold. Its serde name is its name in the reports
/// (`nexttoken dist --json`, the rules panel), in the URL and on the CLI's
/// `--chain`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum StageKind {
    SequenceBias,
    Penalties,
    NoRepeatNgram,
    BiasBans,
    Dry,
    Temperature,
    TopK,
    TopP,
    MinP,
    TypicalP,
    TypicalPLlama,
    EpsilonCutoff,
    EtaCutoff,
    TopNSigma,
    Xtc,
    Mirostat,
}

/// What the page and the README say about a stage.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct StageInfo {
    pub name: String,
    /// One line: what the stage does.
    pub what: &'static str,
    /// Which engines ship it, and where they differ from this one.
    pub engines: &'static str,
    /// The settings (serde names) the stage reads.
    pub settings: &'static [&'static str],
}

/// A named chain the user can start from.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct ChainPreset {
    /// The `order` value that selects it.
    pub name: String,
    pub label: &'static str,
    pub stages: Vec<StageKind>,
}

impl StageKind {
    pub const ALL: [StageKind; 16] = [
        StageKind::SequenceBias,
        StageKind::Penalties,
        StageKind::NoRepeatNgram,
        StageKind::BiasBans,
        StageKind::Dry,
        StageKind::Temperature,
        StageKind::TopK,
        StageKind::TopP,
        StageKind::MinP,
        StageKind::TypicalP,
        StageKind::TypicalPLlama,
        StageKind::EpsilonCutoff,
        StageKind::EtaCutoff,
        StageKind::TopNSigma,
        StageKind::Xtc,
        StageKind::Mirostat,
    ];

    /// The stage's name in the reports (its serde name).
    pub fn name(self) -> &'static str {
        match self {
            StageKind::SequenceBias => "sequence_bias",
            StageKind::Penalties => "penalties",
            StageKind::NoRepeatNgram => "no_repeat_ngram",
            StageKind::BiasBans => "bias_bans",
            StageKind::Dry => "dry",
            StageKind::Temperature => "temperature",
            StageKind::TopK => "top_k",
            StageKind::TopP => "top_p",
            StageKind::MinP => "min_p",
            StageKind::TypicalP => "typical_p",
            StageKind::TypicalPLlama => "typical_p_llama",
            StageKind::EpsilonCutoff => "epsilon_cutoff",
            StageKind::EtaCutoff => "eta_cutoff",
            StageKind::TopNSigma => "top_n_sigma",
            StageKind::Xtc => "xtc",
            StageKind::Mirostat => "mirostat",
        }
    }

    /// The stage named `name`, if any.
    pub fn from_name(name: &str) -> Option<StageKind> {
        StageKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Stages that only add to (or scale) logits and read the history, never
    /// the distribution: a chain's leading run of them is memoised (`prefix`).
    pub fn is_logit_modifier(self) -> bool {
        matches!(
            self,
            StageKind::SequenceBias | StageKind::Penalties | StageKind::NoRepeatNgram | StageKind::BiasBans | StageKind::Dry
        )
    }

    pub fn info(self) -> StageInfo {
        let (what, engines, settings): (&'static str, &'static str, &'static [&'static str]) = match self {
            StageKind::SequenceBias => (
                "adds a bias to the token that would complete a listed token sequence (a one-token sequence always)",
                "Hugging Face (sequence_bias, SequenceBiasLogitsProcessor)",
                &["sequence_bias"],
            ),
            StageKind::Penalties => (
                "repetition penalty (divide positive, multiply negative logits of recent tokens), then presence and frequency penalties, over the last penalty_window tokens",
                "llama.cpp penalties (repeat_penalty over penalty_last_n = penalty_window, default 64); Hugging Face repetition_penalty looks at the whole input: penalty_window = 0; OpenAI presence/frequency",
                &["repetition_penalty", "penalty_window", "penalty_mode", "presence_penalty", "frequency_penalty"],
            ),
            StageKind::NoRepeatNgram => (
                "bans every token that would repeat an n-gram already in the history",
                "Hugging Face (no_repeat_ngram_size)",
                &["no_repeat_ngram_size"],
            ),
            StageKind::BiasBans => (
                "adds each logit bias, then gives banned tokens probability 0",
                "OpenAI logit_bias; llama.cpp logit_bias (applied first in its chain); Hugging Face suppress_tokens (= banned)",
                &["logit_bias", "banned"],
            ),
            StageKind::Dry => (
                "\"don't repeat yourself\": subtracts multiplier * base^(n - allowed_length) from a token that would extend a repeat of n >= allowed_length tokens; sequence breakers end the repeat",
                "llama.cpp (dry_*; penalty_last_n -1 = the whole history); single-token breakers only (a breaker string that spans tokens is not matched)",
                &["dry_multiplier", "dry_base", "dry_allowed_length", "dry_penalty_last_n", "dry_sequence_breakers"],
            ),
            StageKind::Temperature => (
                "divides the logits by tau (0 = greedy)",
                "every engine; Hugging Face applies it first, llama.cpp last",
                &["temperature"],
            ),
            StageKind::TopK => (
                "keeps the k most likely tokens (at least min_keep), ties by lower id",
                "every engine (Hugging Face keeps all tokens tied with the k-th)",
                &["top_k", "min_keep"],
            ),
            StageKind::TopP => (
                "keeps the smallest top set whose mass reaches p (at least min_keep)",
                "every engine",
                &["top_p", "min_keep"],
            ),
            StageKind::MinP => (
                "keeps tokens at least min_p times as likely as the top one (at least min_keep)",
                "llama.cpp, Hugging Face",
                &["min_p", "min_keep"],
            ),
            StageKind::TypicalP => (
                "locally typical sampling: keeps the tokens whose surprise is closest to the entropy until their mass reaches typical_p; every token tied with the last one is kept",
                "Hugging Face (typical_p, TypicalLogitsWarper: cumulative mass >= p, ties at the cut kept)",
                &["typical_p", "min_keep"],
            ),
            StageKind::TypicalPLlama => (
                "locally typical sampling as llama.cpp does it: the same ordering, stops once the mass exceeds typical_p, exactly that many tokens (ties by lower id)",
                "llama.cpp (typical_p: cumulative mass > p, ties cut by sort order)",
                &["typical_p", "min_keep"],
            ),
            StageKind::EpsilonCutoff => (
                "drops tokens with probability below epsilon (at least min_keep stay)",
                "Hugging Face (epsilon_cutoff)",
                &["epsilon_cutoff", "min_keep"],
            ),
            StageKind::EtaCutoff => (
                "drops tokens below min(eta, sqrt(eta) * exp(-entropy)) (at least min_keep stay)",
                "Hugging Face (eta_cutoff)",
                &["eta_cutoff", "min_keep"],
            ),
            StageKind::TopNSigma => (
                "keeps tokens whose logit is within n standard deviations of the largest logit",
                "llama.cpp (top_n_sigma; <= 0 = off there, 0 = off here)",
                &["top_n_sigma", "min_keep"],
            ),
            StageKind::Xtc => (
                "exclude top choices: with probability xtc_probability (a coin from the seeded RNG) removes every token above xtc_threshold except the least likely of them",
                "llama.cpp (xtc_probability, xtc_threshold; a threshold above 0.5 does nothing)",
                &["xtc_probability", "xtc_threshold", "min_keep"],
            ),
            StageKind::Mirostat => (
                "targets a surprise of tau bits: v2 keeps tokens with surprise <= mu, v1 a top-k estimated from a Zipf fit; mu moves by eta * (tau - observed surprise) after each token",
                "llama.cpp (mirostat 1/2, mirostat_ent = tau, mirostat_lr = eta; llama.cpp then skips the other truncations)",
                &["mirostat", "mirostat_tau", "mirostat_eta"],
            ),
        };
        StageInfo { name: self.name().to_string(), what, engines, settings }
    }
}

impl Order {
    /// The preset this order names.
    pub fn preset(self) -> &'static [StageKind] {
        use StageKind::*;
        match self {
            // transformers' _get_logits_processor: sequence bias, repetition
            // penalty, no-repeat-ngram, ..., suppress tokens; then the warpers
            // temperature, top-k, top-p, min-p, typical, epsilon, eta.
            Order::HuggingFace => &[
                SequenceBias, Penalties, NoRepeatNgram, BiasBans, Temperature, TopK, TopP, MinP, TypicalP, EpsilonCutoff, EtaCutoff,
            ],
            // common_sampler's default: logit bias, then penalties, DRY,
            // top-n-sigma, top-k, typical, top-p, min-p, XTC, temperature
            // (mirostat, when on, after temperature). The penalties run before
            // the bias here as in the other presets (llama.cpp biases first).
            Order::LlamaCpp => &[
                Penalties, BiasBans, Dry, TopNSigma, TopK, TypicalPLlama, TopP, MinP, Xtc, Temperature, Mirostat,
            ],
            Order::OpenAi => &[Penalties, BiasBans, Temperature, TopP],
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Order::HuggingFace => "Hugging Face generate default",
            Order::LlamaCpp => "llama.cpp default chain",
            Order::OpenAi => "OpenAI-style API",
        }
    }

    pub fn presets() -> Vec<ChainPreset> {
        Order::ALL
            .iter()
            .map(|&o| ChainPreset {
                name: o.name().to_string(),
                label: o.label(),
                stages: o.preset().to_vec(),
            })
            .collect()
    }
}
