//! The lesson-21 worked examples (course text 003) as data: every number a
//! course preset shows, computed by the engine's own rules and models, plus
//! the little math the engine has no other use for (a 3×3 chain's spectrum,
//! KV-cache arithmetic, FLOP formulas). `nexttoken lesson <name>` prints one
//! as JSON and the page (through `wasm/course.rs`) draws it.
//!
//! One concept per file: `distributions` (the 10-class vector under every
//! rule, the sweep, the entropy curves), `tie` (the bigram's tie at b and the
//! repetition penalty), `markov` (eigenvalues, stationary distribution,
//! entropy rate), `bigram` (greedy cycle, gallery, beam search, retraining:
//! the engine's sessions on the built-in model), `diversity` (distinct
//! completions from 40 seeds against τ, on any model), `kv` (cache counts, the
//! demo's FLOPs, the FLOP curve, the cache-size calculator).

pub mod bigram;
pub mod distributions;
pub mod diversity;
pub mod kv;
pub mod markov;
pub mod tie;

use serde_json::Value;

use crate::bail;
use crate::error::Result;

/// The lesson's hand-written 10-class logit vector.
pub const LOGITS10: [f64; 10] = [3.0, 2.5, 2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0, -1.5];
/// The trained lesson-18 model's logits at 'b' as the lesson prints them
/// (6 decimals): the tie presets use these, not the retrained model's, so
/// the digits match the lesson's.
pub const LOGITS_B: [f64; 3] = [8.391505, -8.841305, 8.391505];

/// Every preset's name, in the order the lesson meets them.
pub const NAMES: [&str; 19] = [
    "temperature-10class",
    "top-k-3",
    "top-p-0.9",
    "four-panel",
    "temperature-sweep",
    "entropy-curves",
    "tie-at-b",
    "repetition-penalty",
    "greedy-cycle",
    "sampled-chain",
    "gallery",
    "kv-cache",
    "kv-demo-flops",
    "flop-curve",
    "kv-size",
    "beam-b2",
    "bigram-retrain",
    "diversity",
    "answer-forms",
];

/// The numbers (and figure data) of one preset.
pub fn lesson(name: &str) -> Result<Value> {
    Ok(match name {
        "temperature-10class" => distributions::temperature(),
        "top-k-3" => distributions::top_k3(),
        "top-p-0.9" => distributions::top_p09(),
        "four-panel" => distributions::four_panel(),
        "temperature-sweep" => distributions::sweep(),
        "entropy-curves" => distributions::entropy_curves(),
        "tie-at-b" => tie::tie_at_b(),
        "repetition-penalty" => tie::repetition_penalty(),
        "greedy-cycle" => bigram::greedy_cycle()?,
        "sampled-chain" => markov::sampled_chain()?,
        "gallery" => bigram::gallery()?,
        "kv-cache" => kv::cache_counts(),
        "kv-demo-flops" => kv::demo_flops()?,
        "flop-curve" => kv::flop_curve(64),
        "kv-size" => kv::size(&kv::KvShape::LESSON).to_json(),
        "beam-b2" => bigram::beam_b2()?,
        "bigram-retrain" => bigram::retrain(crate::train::bigram::LESSON_STEPS, crate::train::bigram::LESSON_SEED)?,
        // The measurement needs a model: here its parameters (the CLI's
        // `lesson diversity --model M` and the page run it).
        "diversity" => serde_json::json!({
            "taus": diversity::TAUS, "seeds": diversity::SEEDS, "length": diversity::LENGTH,
        }),
        // Where the answer forms: the logit lens of a real model's step
        // (`nexttoken dist --inside` and the page's inside panel show it);
        // here the prompt and the answer the lens should find.
        "answer-forms" => serde_json::json!({
            "model": "smollm2-135m", "prompt": "The capital of France is", "answer": " Paris",
        }),
        other => bail!("unknown lesson '{other}': choose one of {}", NAMES.join(", ")),
    })
}
