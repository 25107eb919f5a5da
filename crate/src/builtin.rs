//! The course's built-in models, which need no files: the lesson-21 logit
//! vector, the lesson-18 `abc` bigram and the lesson-21 KV-cache demo.

use serde::Serialize;

use crate::backend::BackendKind;
use crate::bail;
use crate::config::{MlpKind, ModelConfig, NormKind, Positions};
use crate::error::Result;
use crate::model::DecoderLm;
use crate::session::Session;
use crate::models::{BigramModel, LESSON21_LOGITS, LogitsModel};
use crate::tokenizer::CharTokenizer;
use crate::train::bigram::train_bigram;

pub const NAMES: [&str; 3] = ["logits10", "bigram-abc", "kv-demo"];

/// The lesson-21 KV-cache demo's shape: one layer, one head, d_head 4,
/// vocabulary 6, context 8, random weights (seed 21, as the lesson).
pub fn kv_demo_config() -> ModelConfig {
    ModelConfig {
        vocab_size: 6,
        d_model: 4,
        n_layers: 1,
        n_heads: 1,
        n_kv_heads: 1,
        head_dim: 4,
        d_ff: 16,
        context: 8,
        positions: Positions::Learned,
        norm: NormKind::LayerNorm,
        norm_eps: 1e-5,
        mlp: MlpKind::Gelu,
        tied_embeddings: true,
        bias: false,
        options: Default::default(),
    }
}

pub fn kv_demo_session() -> Result<Session> {
    let lm = DecoderLm::random("kv-demo", kv_demo_config(), 21, BackendKind::Flex)?;
    let tok = CharTokenizer::new(&['a', 'b', 'c', 'd', 'e', 'f'])?;
    Session::new(Box::new(lm), Box::new(tok))
}

pub fn open(name: &str) -> Result<Session> {
    match name {
        "logits10" => logits_session(&LESSON21_LOGITS.map(f64::from)),
        "bigram-abc" => Session::new(Box::new(BigramModel::shipped()?), Box::new(BigramModel::tokenizer())),
        "kv-demo" => kv_demo_session(),
        other => bail!("unknown built-in model '{other}': choose one of {}", NAMES.join(", ")),
    }
}

/// What the page shows after retraining the bigram.
#[derive(Debug, Clone, Serialize)]
pub struct BigramSummary {
    /// Training loss before each step's update (nats/token).
    pub losses: Vec<f64>,
    /// Row x is P(next | x) for x in a, b, c.
    pub probs: Vec<Vec<f64>>,
    /// The rows before step `step`, at points spread over the run, then after it.
    pub trace: Vec<RowsAt>,
}

/// The bigram's rows at one point of its training.
#[derive(Debug, Clone, Serialize)]
pub struct RowsAt {
    pub step: usize,
    pub probs: Vec<Vec<f64>>,
}

/// The lesson-21 "logits only" model with these 10 logits.
pub fn logits_session(logits: &[f64]) -> Result<Session> {
    let mut model = LogitsModel::lesson21();
    model.set_logits(logits.iter().map(|&z| z as f32).collect())?;
    Session::new(Box::new(model), Box::new(LogitsModel::tokenizer()))
}

/// Retrains the lesson-18 bigram (AdamW, warmup-cosine) and opens it.
pub fn retrained_bigram(steps: usize, seed: u64) -> Result<(Session, BigramSummary)> {
    if !(1..=5000).contains(&steps) {
        bail!("steps must be between 1 and 5000, got {steps}");
    }
    let result = train_bigram(steps, seed);
    let rows = |p: &[[f64; 3]; 3]| p.iter().map(|r| r.to_vec()).collect::<Vec<_>>();
    let trace = result.trace.iter().map(|(step, p)| RowsAt { step: *step, probs: rows(p) }).collect();
    let summary = BigramSummary { losses: result.losses.clone(), probs: rows(&result.probs()), trace };
    let session = Session::new(Box::new(BigramModel::from_trained(&result)?), Box::new(BigramModel::tokenizer()))?;
    Ok((session, summary))
}
