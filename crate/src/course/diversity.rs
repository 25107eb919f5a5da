//! Diversity against temperature (course text 000): the number of distinct
//! 8-token completions from 40 seeds as τ rises, on any model's session.
//! Greedy (τ = 0) gives one completion whatever the seed; sampling gives more
//! as the distribution flattens.

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::error::Result;
use crate::session::{GenerationSettings, Session};

/// The measurement's temperatures (0 = greedy).
pub const TAUS: [f64; 8] = [0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0];
/// Seeds 1 … SEEDS.
pub const SEEDS: u64 = 40;
/// Tokens per completion.
pub const LENGTH: usize = 8;

/// The tokens `session` generates after `prompt` at temperature `tau` with
/// this seed (fewer than `len` when the model stops first).
pub fn completion(session: &mut Session, prompt: &str, tau: f64, seed: u64, len: usize) -> Result<Vec<u32>> {
    let mut s = GenerationSettings { seed, max_new: len, ..Default::default() };
    s.rules.temperature = tau;
    session.start(prompt, &s)?;
    for _ in 0..len {
        if session.step(&s)?.stop.is_some() {
            break;
        }
    }
    Ok(session.generated_ids())
}

/// How many of the completions from seeds 1 … seeds differ.
pub fn distinct(session: &mut Session, prompt: &str, tau: f64, seeds: u64, len: usize) -> Result<usize> {
    let mut seen = HashSet::new();
    for seed in 1..=seeds {
        seen.insert(completion(session, prompt, tau, seed, len)?);
    }
    Ok(seen.len())
}

/// The whole curve: distinct completions at every τ of TAUS.
pub fn curve(session: &mut Session, prompt: &str) -> Result<Value> {
    let mut points = Vec::new();
    for tau in TAUS {
        points.push(json!({ "tau": tau, "distinct": distinct(session, prompt, tau, SEEDS, LENGTH)? }));
    }
    Ok(json!({ "model": session.info().name, "prompt": prompt, "seeds": SEEDS, "length": LENGTH, "points": points }))
}
