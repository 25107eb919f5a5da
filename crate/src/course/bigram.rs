//! The lesson-18 bigram driven by the engine's own session: the greedy
//! cycle (the argmax map, its orbits, the penalty that breaks it), the
//! generation gallery, beam search with B = 2, and retraining it live.

use serde_json::{json, Value};

use crate::builtin;
use crate::error::Result;
use crate::models::read_shipped_bigram;
use crate::rules::{argmax, PenaltyMode};
use crate::session::{GenerationSettings, Session};

const NAMES: [&str; 3] = ["a", "b", "c"];

/// The shipped model's next-token logits after each token.
fn shipped_logits() -> Result<[[f64; 3]; 3]> {
    let trained = read_shipped_bigram()?;
    Ok([0, 1, 2].map(|x| trained.logits(x).map(f64::from)))
}

fn greedy_settings(max_new: usize) -> GenerationSettings {
    let mut s = GenerationSettings { max_new, ..Default::default() };
    s.rules.temperature = 0.0;
    s
}

/// The lesson's penalty demo: ρ = 2, per occurrence, over the last 4 tokens.
pub fn penalty_settings(max_new: usize) -> GenerationSettings {
    let mut s = greedy_settings(max_new);
    s.rules.repetition_penalty = 2.0;
    s.rules.penalty_window = 4;
    s.rules.penalty_mode = PenaltyMode::PerOccurrence;
    s
}

/// Generates `settings.max_new` tokens from `prompt` on `session`; the whole text.
pub fn generate(session: &mut Session, prompt: &str, settings: &GenerationSettings) -> Result<String> {
    session.start(prompt, settings)?;
    for _ in 0..settings.max_new {
        session.step(settings)?;
    }
    Ok(session.tokenizer().decode(&session.history()))
}

fn bigram_session() -> Result<Session> {
    builtin::open("bigram-abc")
}

/// The argmax map, the orbit of 8 steps from each start with its period, and
/// greedy decoding with and without the penalty (with each step's window).
pub fn greedy_cycle() -> Result<Value> {
    let logits = shipped_logits()?;
    let map = [0, 1, 2].map(|x| argmax(&logits[x]));
    let orbits: Vec<Value> = (0..3)
        .map(|s| {
            let mut orbit = vec![s];
            for _ in 0..8 {
                orbit.push(map[*orbit.last().unwrap_or(&s)]);
            }
            let last = orbit[8];
            let prev = (0..8).rev().find(|&j| orbit[j] == last).map_or(0, |j| 8 - j);
            let text: String = orbit.iter().map(|&x| NAMES[x]).collect();
            json!({ "from": NAMES[s], "to": NAMES[map[s]], "orbit": text, "period": prev })
        })
        .collect();
    let mut session = bigram_session()?;
    let plain = generate(&mut session, "a", &greedy_settings(16))?;
    let penalised = generate(&mut session, "a", &penalty_settings(16))?;
    let chars: Vec<char> = penalised.chars().collect();
    let windows: Vec<Value> = (1..chars.len())
        .map(|i| json!({ "window": chars[i.saturating_sub(4)..i].iter().collect::<String>(), "next": chars[i].to_string() }))
        .collect();
    Ok(json!({
        "map": orbits, "greedy": plain, "greedy_penalty": penalised, "window": 4, "penalty": 2.0,
        "penalty_windows": windows,
    }))
}

/// Every strategy from prompt a, as in the lesson's gallery (seed 42).
pub fn gallery() -> Result<Value> {
    let mut session = bigram_session()?;
    let sampled = |tau: f64, top_k: usize, top_p: f64| {
        let mut s = GenerationSettings { max_new: 12, ..Default::default() };
        s.rules.temperature = tau;
        s.rules.top_k = top_k;
        s.rules.top_p = top_p;
        s
    };
    let rows = [
        ("greedy", greedy_settings(12)),
        ("temp tau=1.0", sampled(1.0, 0, 1.0)),
        ("temp tau=0.5", sampled(0.5, 0, 1.0)),
        ("temp tau=2.0", sampled(2.0, 0, 1.0)),
        ("top-K=2 tau=1.0", sampled(1.0, 2, 1.0)),
        ("top-P=0.9 tau=1", sampled(1.0, 0, 0.9)),
        ("greedy (no penalty)", greedy_settings(16)),
        ("greedy (penalty=2)", penalty_settings(16)),
    ];
    let mut out = Vec::new();
    for (name, s) in rows {
        out.push(json!({ "name": name, "text": generate(&mut session, "a", &s)?, "seed": s.seed }));
    }
    Ok(json!({ "prompt": "a", "rows": out }))
}

/// Beam search with B = 2 for 8 tokens from a, with α = 0 and α = 1: the
/// surviving beams, their total log-probabilities, and the search tree.
pub fn beam_b2() -> Result<Value> {
    let mut session = bigram_session()?;
    let mut runs = Vec::new();
    for alpha in [0.0, 1.0] {
        let s = GenerationSettings { beams: 2, max_new: 8, alpha, ..Default::default() };
        session.start("a", &s)?;
        let report = session.beam(&s)?;
        runs.push(serde_json::to_value(&report).map_err(|e| crate::error::Error::new(e.to_string()))?);
    }
    Ok(json!({
        "prompt": "a", "beams": 2, "new_tokens": 8, "runs": runs,
        // Every path of the corpus's chain: 4 coin flips at b, each ln ½.
        "ideal_logprob": 4.0 * 0.5f64.ln(),
    }))
}

/// Retrains the bigram (the lesson's 600 steps, seed 18): the loss curve,
/// its floor (24/49)·ln 2, the learned rows, and 16 tokens sampled from it.
pub fn retrain(steps: usize, seed: u64) -> Result<Value> {
    let (mut session, summary) = builtin::retrained_bigram(steps, seed)?;
    let s = GenerationSettings { max_new: 16, ..Default::default() };
    let sample = generate(&mut session, "a", &s)?;
    Ok(json!({
        "steps": steps, "seed": seed, "losses": summary.losses, "probs": summary.probs, "trace": summary.trace,
        "floor": 24.0 / 49.0 * 2f64.ln(), "sample": sample,
    }))
}
