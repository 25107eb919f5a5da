//! The bigram's one uncertain row, P(·|b), from the lesson's printed logits:
//! temperature cannot move the tie (τ = 0.5, 1, 2, 5), and the per-occurrence
//! repetition penalty (two recent a's, ρ = 2) breaks it; the entropy under
//! every control.

use serde_json::{json, Value};

use super::distributions::at_temperature;
use super::LOGITS_B;
use crate::rules::{entropy_bits, penalize_repetition, renormalize_kept, softmax, top_k_mask, top_p_mask, PenaltyMode};

/// P(·|b) and its entropy at τ = 0.5, 1, 2, 5.
pub fn tie_at_b() -> Value {
    let rows: Vec<Value> = [0.5, 1.0, 2.0, 5.0]
        .iter()
        .map(|&tau| {
            let q = at_temperature(&LOGITS_B, tau);
            json!({ "tau": tau, "probs": q, "bits": entropy_bits(&q) })
        })
        .collect();
    json!({ "logits": LOGITS_B, "rows": rows })
}

/// Two recent a's, ρ = 2, once per occurrence: P(·|b) before and after, and
/// H(P(·|b)) in bits under each control.
pub fn repetition_penalty() -> Value {
    let raw = softmax(&LOGITS_B);
    let penalised = penalize_repetition(&LOGITS_B, &[0, 0], 2.0, PenaltyMode::PerOccurrence);
    let pen = softmax(&penalised);
    let controls = vec![
        json!({ "name": "greedy", "bits": entropy_bits(&at_temperature(&LOGITS_B, 0.0)) }),
        json!({ "name": "tau=0.5", "bits": entropy_bits(&at_temperature(&LOGITS_B, 0.5)) }),
        json!({ "name": "tau=1", "bits": entropy_bits(&raw) }),
        json!({ "name": "tau=2", "bits": entropy_bits(&at_temperature(&LOGITS_B, 2.0)) }),
        json!({ "name": "top-K=2", "bits": entropy_bits(&renormalize_kept(&raw, &top_k_mask(&raw, 2))) }),
        json!({ "name": "top-P=0.9", "bits": entropy_bits(&renormalize_kept(&raw, &top_p_mask(&raw, 0.9))) }),
        json!({ "name": "penalty rho=2 on 'a' x2", "bits": entropy_bits(&pen) }),
    ];
    json!({ "logits": LOGITS_B, "penalised_logits": penalised, "raw": raw, "penalised": pen, "controls": controls })
}
