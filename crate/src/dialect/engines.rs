//! The engines whose configurations are read and written, with their own
//! defaults and sampler chains, as their documentation and source give them:
//! llama.cpp's `common_params_sampling` (common/common.h) and its default
//! sampler sequence; transformers' `GenerationConfig` and
//! `_get_logits_processor` order; the OpenAI API reference (temperature 1,
//! top_p 1), vLLM's `SamplingParams` and llama.cpp server's request fields.

use serde::Serialize;
use serde_json::{Value, json};

use crate::rules::{Order, RuleSettings, StageKind};
use crate::settings::GenerationSettings;

/// An engine a configuration is written for.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    LlamaCpp,
    /// Hugging Face transformers' `generate()` with `do_sample` true.
    HfSampling,
    /// `generate()` with `do_sample` false (its default): greedy.
    HfGreedy,
    OpenAi,
    Vllm,
    LlamaServer,
}

/// llama.cpp's default sampler sequence (`common_params_sampling::samplers`),
/// after the logit bias it always applies first.
pub(super) const LLAMA_SEQUENCE: [StageKind; 9] = [
    StageKind::Penalties,
    StageKind::Dry,
    StageKind::TopNSigma,
    StageKind::TopK,
    StageKind::TypicalPLlama,
    StageKind::TopP,
    StageKind::MinP,
    StageKind::Xtc,
    StageKind::Temperature,
];

/// vLLM's order: penalties and bias on the logits, temperature, then
/// top-k, top-p and min-p on the tempered distribution.
pub(super) const VLLM_CHAIN: [StageKind; 6] =
    [StageKind::Penalties, StageKind::BiasBans, StageKind::Temperature, StageKind::TopK, StageKind::TopP, StageKind::MinP];

impl Engine {
    pub fn label(self) -> &'static str {
        match self {
            Engine::LlamaCpp => "llama.cpp",
            Engine::HfSampling | Engine::HfGreedy => "Hugging Face",
            Engine::OpenAi => "OpenAI",
            Engine::Vllm => "vLLM",
            Engine::LlamaServer => "llama.cpp server",
        }
    }

    /// `base` with every decoding setting off and the engine's chain preset,
    /// tie rule and penalty window: what its defaults (`defaults`) go on.
    pub fn base_settings(self, base: &GenerationSettings) -> GenerationSettings {
        let mut s = GenerationSettings { rules: RuleSettings::default(), ..base.clone() };
        s.rules.order = match self {
            Engine::LlamaCpp | Engine::LlamaServer => Order::LlamaCpp,
            Engine::HfSampling | Engine::HfGreedy => Order::HuggingFace,
            Engine::OpenAi | Engine::Vllm => Order::OpenAi,
        };
        if self == Engine::Vllm {
            s.rules.chain = VLLM_CHAIN.to_vec();
        }
        s
    }

    /// `(our key, the engine's name for it, its default)`: the engine's
    /// value for every decoding setting it has, where it differs from the
    /// playground's own "off" or matters to the reading.
    pub fn defaults(self) -> &'static [(&'static str, &'static str, Value)] {
        use std::sync::LazyLock;
        static LLAMA: LazyLock<Vec<(&str, &str, Value)>> = LazyLock::new(|| {
            vec![
                ("temperature", "--temp", json!(0.8)),
                ("top_k", "--top-k", json!(40)),
                ("top_p", "--top-p", json!(0.95)),
                ("min_p", "--min-p", json!(0.05)),
                ("penalty_window", "--repeat-last-n", json!(64)),
                ("xtc_threshold", "--xtc-threshold", json!(0.1)),
                ("dry_base", "--dry-base", json!(1.75)),
                ("dry_allowed_length", "--dry-allowed-length", json!(2)),
                ("dry_penalty_last_n", "--dry-penalty-last-n", json!(64)),
                ("mirostat_tau", "--mirostat-ent", json!(5.0)),
                ("mirostat_eta", "--mirostat-lr", json!(0.1)),
                ("order", "the sampler sequence", json!("llama")),
            ]
        });
        static SERVER: LazyLock<Vec<(&str, &str, Value)>> = LazyLock::new(|| {
            vec![
                ("temperature", "temperature", json!(0.8)),
                ("top_k", "top_k", json!(40)),
                ("top_p", "top_p", json!(0.95)),
                ("min_p", "min_p", json!(0.05)),
                ("penalty_window", "repeat_last_n", json!(64)),
                ("order", "samplers", json!("llama")),
            ]
        });
        static HF_SAMPLING: LazyLock<Vec<(&str, &str, Value)>> = LazyLock::new(|| {
            vec![
                ("temperature", "temperature", json!(1.0)),
                ("top_k", "top_k", json!(50)),
                ("penalty_window", "repetition_penalty's window (the whole input)", json!(0)),
                ("ties", "top-k at a tie with the k-th (every tied token stays)", json!("keep_tied")),
                ("order", "the logits processors' order", json!("hf")),
            ]
        });
        static HF_GREEDY: LazyLock<Vec<(&str, &str, Value)>> = LazyLock::new(|| {
            vec![
                ("temperature", "do_sample false (greedy)", json!(0.0)),
                ("penalty_window", "repetition_penalty's window (the whole input)", json!(0)),
                ("order", "the logits processors' order", json!("hf")),
            ]
        });
        static OPENAI: LazyLock<Vec<(&str, &str, Value)>> = LazyLock::new(|| {
            vec![
                ("temperature", "temperature", json!(1.0)),
                ("top_p", "top_p", json!(1.0)),
                ("penalty_window", "the penalties' window (all tokens so far)", json!(0)),
                ("order", "the API's order", json!("openai")),
            ]
        });
        match self {
            Engine::LlamaCpp => &LLAMA,
            Engine::LlamaServer => &SERVER,
            Engine::HfSampling => &HF_SAMPLING,
            Engine::HfGreedy => &HF_GREEDY,
            Engine::OpenAi | Engine::Vllm => &OPENAI,
        }
    }
}
