//! The stages' list and names, and the named chains: the identifiers a
//! chain, a URL, the CLI's `--chain` and the reports use. A leaf: what each
//! stage does is its own file's `SPEC` (see `spec` and `registry`).

use serde::{Deserialize, Serialize};

/// Every stage, one line each, in a chain-building order: the module that
/// holds it, its `StageKind` and its spec (`spec::StageSpec`) in that module.
/// The one list a stage is added to: `StageKind` and `StageKind::ALL` here,
/// the `mod` declarations (`rules/mod.rs`) and `registry::SPECS` are all
/// made from it (`with_stages!(then)` hands it to the macro `then`).
macro_rules! with_stages {
    ($then:ident) => {
        $then! {
            sequence_bias: SequenceBias = SPEC;
            penalties: Penalties = SPEC;
            dry: Dry = SPEC;
            no_repeat_ngram: NoRepeatNgram = SPEC;
            bias: BiasBans = SPEC;
            temperature: Temperature = SPEC;
            top_k: TopK = SPEC;
            top_p: TopP = SPEC;
            min_p: MinP = SPEC;
            typical: TypicalP = SPEC, TypicalPLlama = SPEC_LLAMA;
            epsilon_eta: EpsilonCutoff = SPEC_EPSILON, EtaCutoff = SPEC_ETA;
            top_n_sigma: TopNSigma = SPEC;
            xtc: Xtc = SPEC;
            mirostat: Mirostat = SPEC;
        }
    };
}
pub(crate) use with_stages;

/// `StageKind` and its `ALL`, from the list.
macro_rules! stage_kinds {
    ($( $module:ident: $( $kind:ident = $spec:ident ),+ ; )+) => {
        /// One stage a chain can hold. Its serde name is its name in the
        /// reports (`nexttoken dist --json`, the rules panel), in the URL and
        /// on the CLI's `--chain`.
        #[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[serde(rename_all = "snake_case")]
        pub enum StageKind {
            $( $( $kind, )+ )+
        }

        impl StageKind {
            /// Every stage, in the list's order (`registry::SPECS`' too).
            pub const ALL: [StageKind; [$( $( stringify!($kind), )+ )+].len()] = [$( $( StageKind::$kind, )+ )+];
        }
    };
}
with_stages!(stage_kinds);

/// A named chain the user can start from.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct ChainPreset {
    /// The `order` value that selects it.
    pub name: String,
    pub label: &'static str,
    pub stages: Vec<StageKind>,
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
