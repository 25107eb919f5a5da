//! Mirostat (Basu et al., 2021; llama.cpp's `mirostat` and `mirostat_v2`):
//! a truncation that aims the surprise of the drawn tokens at `tau` bits by
//! a state `mu` that each drawn token moves: `mu <- mu - eta * (s - tau)`,
//! `s = -log2 p(chosen)`. `mu` starts at `2 tau`; the session keeps it per
//! step (so rewinding restores it) and passes it in `StepInputs`.
//!
//! - v2 keeps the tokens whose surprise is at most `mu` (at least the top one);
//! - v1 fits a Zipf exponent `s_hat` to the top `M = 100` probabilities and
//!   keeps the top `k = ((e 2^mu) / (1 - N^-e))^(1 / s_hat)` tokens,
//!   `e = s_hat - 1`, `N` the vocabulary size.
//!
//! Only the tokens still possible take part (llama.cpp's array also holds
//! tokens an earlier stage set to -inf, with probability 0).

use super::fields::{Control, Field, Group, Range, slot};
use super::settings::{MAX_MIROSTAT_ETA, MAX_MIROSTAT_TAU};
use super::min_keep::keep_at_least;
use super::settings::RuleSettings;
use super::spec::{AloneCut, Apply, StageSpec, Takes};
use super::state::StepInputs;

use super::ranking::{collect_candidates, compare_candidates, mask_of_ids, partition_best};

/// How many of the top probabilities v1 fits its exponent to (llama.cpp's m).
pub const MIROSTAT_M: usize = 100;

/// The state before the first token.
pub fn initial_mu(tau: f64) -> f64 {
    2.0 * tau
}

/// `mu` after drawing a token of probability `p` (under the stage that
/// was drawn from).
pub fn next_mu(mu: f64, tau: f64, eta: f64, p: f64) -> f64 {
    let surprise = -p.log2();
    mu - eta * (surprise - tau)
}

/// v2: keeps `-log2 p_i <= mu`, at least the most probable token.
pub fn mirostat_v2_mask(probs: &[f64], mu: f64) -> Vec<bool> {
    let mask: Vec<bool> = probs.iter().map(|&p| p > 0.0 && -p.log2() <= mu).collect();
    if mask.iter().any(|&k| k) {
        return mask;
    }
    let best = collect_candidates(probs).into_iter().min_by(compare_candidates);
    mask_of_ids(best.map(|c| c.1), probs.len())
}

/// v1's k for this distribution (at least 1).
pub fn mirostat_v1_k(probs: &[f64], mu: f64, vocab_size: usize) -> usize {
    let mut top = collect_candidates(probs);
    let possible = top.len();
    if possible <= 1 {
        return 1;
    }
    partition_best(&mut top, MIROSTAT_M.min(possible));
    top.truncate(MIROSTAT_M.min(possible));
    top.sort_unstable_by(compare_candidates);
    let (mut sum_tb, mut sum_tt) = (0.0, 0.0);
    for i in 0..top.len().saturating_sub(1) {
        let t = ((i + 2) as f64 / (i + 1) as f64).ln();
        let b = (top[i].0 / top[i + 1].0).ln();
        sum_tb += t * b;
        sum_tt += t * t;
    }
    let s_hat = sum_tb / sum_tt;
    let e = s_hat - 1.0;
    let k = ((e * 2f64.powf(mu)) / (1.0 - (vocab_size as f64).powf(-e))).powf(1.0 / s_hat);
    // llama.cpp takes max(int(k), 1): a k beyond i32 (a flat distribution
    // gives s_hat near 0 and an enormous k) or NaN converts to i32::MIN on
    // x86, so it keeps one token; we do the same, by definition rather than
    // by the conversion. Otherwise truncated toward zero.
    if !(k < 2_147_483_648.0) {
        return 1;
    }
    (k.min(possible as f64) as usize).max(1)
}

/// v1: keeps the top `mirostat_v1_k` tokens (ties by lower id).
pub fn mirostat_v1_mask(probs: &[f64], mu: f64, vocab_size: usize) -> Vec<bool> {
    super::top_k::top_k_mask(probs, mirostat_v1_k(probs, mu, vocab_size))
}

/// The settings the stage owns (mirostat, mirostat_tau, mirostat_eta).
const FIELDS: &[Field] = &[
    Field::new(
        "mirostat",
        slot!(mirostat: u8),
        Range::integers(0.0, 2.0),
        "0 = off, 1 or 2: the version",
        "Mirostat version",
    )
    .control(Control::slider("Mirostat", "steer each token's surprise toward τ, step by step (μ); 0 = off", 2.0, 1.0, Group::Mirostat).pick(&["off", "1: top-k from a Zipf fit", "2: surprise at most μ"])),
    Field::new(
        "mirostat_tau",
        slot!(mirostat_tau: f64),
        Range::closed(0.0, MAX_MIROSTAT_TAU),
        "",
        "Mirostat's target surprise tau in bits",
    )
    .with_flag("mirostat-ent")
    .with_param("mirostat_ent")
    .control(Control::slider("Mirostat target τ", "the surprise (bits) each token should carry; μ starts at 2τ", 10.0, 0.1, Group::Mirostat)),
    Field::new(
        "mirostat_eta",
        slot!(mirostat_eta: f64),
        Range::closed(0.0, MAX_MIROSTAT_ETA),
        "",
        "Mirostat's learning rate eta",
    )
    .with_flag("mirostat-lr")
    .with_param("mirostat_lr")
    .control(Control::slider("Mirostat learning rate η", "after each token μ moves by η × (τ − its surprise)", 1.0, 0.01, Group::Mirostat)),
];

/// The stage: mirostat at the step's mu (or its start, 2 tau).
pub(crate) const SPEC: StageSpec = StageSpec {
    name: "mirostat",
    label: "mirostat",
    what: "targets a surprise of tau bits: v2 keeps tokens with surprise <= mu, v1 a top-k estimated from a Zipf fit; mu moves by eta * (tau - observed surprise) after each token",
    engines: "llama.cpp (mirostat 1/2, mirostat_ent = tau, mirostat_lr = eta; llama.cpp then skips the other truncations)",
    reads: &["mirostat", "mirostat_tau", "mirostat_eta"],
    switches: &["mirostat"],
    fields: FIELDS,
    is_on: |s| s.mirostat != 0,
    apply: Apply::Cut(|c| c.at_least(mirostat_mask(c.probs, c.s, c.inputs))),
    alone: Some(AloneCut {
        always: false,
        key: |s, inputs| vec![f64::from(s.mirostat), mu_of(s, inputs)],
        mask: |raw, s, inputs| keep_at_least(mirostat_mask(&raw.probs, s, inputs), &raw.probs, s.min_keep),
    }),
    takes: Takes::Mu,
    shown_when_off: false,
};

/// The step's mu, or its start.
fn mu_of(s: &RuleSettings, inputs: &StepInputs) -> f64 {
    inputs.mirostat_mu.unwrap_or_else(|| initial_mu(s.mirostat_tau))
}

/// The version `s.mirostat` names, at the step's mu.
fn mirostat_mask(probs: &[f64], s: &RuleSettings, inputs: &StepInputs) -> Vec<bool> {
    let mu = mu_of(s, inputs);
    if s.mirostat == 1 { mirostat_v1_mask(probs, mu, probs.len()) } else { mirostat_v2_mask(probs, mu) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v2_keeps_surprise_at_most_mu() {
        // Surprises 1, 2, 3, 3 bits.
        let probs = [0.5, 0.25, 0.125, 0.125];
        assert_eq!(mirostat_v2_mask(&probs, 2.5), vec![true, true, false, false]);
        assert_eq!(mirostat_v2_mask(&probs, 0.1), vec![true, false, false, false]);
        assert_eq!(mirostat_v2_mask(&probs, 10.0), vec![true; 4]);
    }

    #[test]
    fn mu_moves_towards_the_target() {
        // A token of 1/8 has surprise 3 bits; tau 5: mu rises by eta * 2.
        assert!((next_mu(10.0, 5.0, 0.1, 0.125) - 10.2).abs() < 1e-12);
        assert_eq!(initial_mu(5.0), 10.0);
    }

    /// A Zipf distribution p_i ∝ 1/i has s_hat = 1 exactly... which makes
    /// e = 0 (0/0); p_i ∝ i^-2 gives s_hat = 2, e = 1, and with N = 4 and
    /// mu = 1: k = (1 * 2 / (1 - 1/4))^(1/2) = 1.633 -> 1.
    #[test]
    fn v1_worked_example() {
        let w: Vec<f64> = (1..=4).map(|i| 1.0 / (i * i) as f64).collect();
        let total: f64 = w.iter().sum();
        let probs: Vec<f64> = w.iter().map(|x| x / total).collect();
        assert_eq!(mirostat_v1_k(&probs, 1.0, 4), 1);
        // mu = 3: (8 / 0.75)^(1/2) = 3.27 -> 3.
        assert_eq!(mirostat_v1_k(&probs, 3.0, 4), 3);
    }
}
