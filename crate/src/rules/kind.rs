//! The names of the stages and of the named chains: the identifiers a chain,
//! a URL, the CLI's `--chain` and the reports use. A leaf: what each stage
//! does is its own file's `SPEC` (see `spec` and `registry`).

use serde::{Deserialize, Serialize};

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
}

/// Where temperature sits in the pipeline.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Order {
    /// Hugging Face transformers: temperature first, then the truncations.
    #[serde(rename = "hf")]
    #[default]
    HuggingFace,
    /// llama.cpp: truncations first on the tau = 1 distribution, temperature last.
    #[serde(rename = "llama")]
    LlamaCpp,
    /// The OpenAI-style API: penalties, logit bias, temperature, top-p.
    #[serde(rename = "openai")]
    OpenAi,
}

impl Order {
    pub const ALL: [Order; 3] = [Order::HuggingFace, Order::LlamaCpp, Order::OpenAi];

    /// The serde name ("hf", "llama", "openai").
    pub fn name(self) -> &'static str {
        match self {
            Order::HuggingFace => "hf",
            Order::LlamaCpp => "llama",
            Order::OpenAi => "openai",
        }
    }

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
