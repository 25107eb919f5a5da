//! The 10-class logit vector under each rule: temperature τ = 0.5, 1, 2, top-k
//! = 3, top-p = 0.9, the four-panel comparison with its six entropies, the
//! 30-frame temperature sweep, and the entropy-against-τ curves with the
//! slope check dH/dln τ = Var_q(z) at τ = 1.

use serde_json::{json, Value};

use super::{LOGITS10, LOGITS_B};
use crate::rules::{
    entropy_bits, entropy_nats, renormalize_kept, scale_by_temperature, softmax, top_k_mask, top_p_mask,
};

fn max_of(p: &[f64]) -> f64 {
    p.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// softmax(z / τ) through the engine's temperature rule (τ = 0: greedy).
pub fn at_temperature(z: &[f64], tau: f64) -> Vec<f64> {
    softmax(&scale_by_temperature(z, tau))
}

/// `n` points from `lo` to `hi`, evenly spaced in log τ (the lesson's logspace).
pub fn log_spaced(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let (a, b) = (lo.log10(), hi.log10());
    (0..n).map(|k| 10f64.powf(a + (b - a) * k as f64 / (n - 1) as f64)).collect()
}

fn entropies(q: &[f64]) -> Value {
    json!({ "bits": entropy_bits(q), "nats": entropy_nats(q) })
}

/// τ = 0.5, 1, 2: p_max and the entropy in bits and nats.
pub fn temperature() -> Value {
    let rows: Vec<Value> = [0.5, 1.0, 2.0]
        .iter()
        .map(|&tau| {
            let q = at_temperature(&LOGITS10, tau);
            json!({ "tau": tau, "p_max": max_of(&q), "entropy": entropies(&q), "probs": q })
        })
        .collect();
    json!({ "logits": LOGITS10, "rows": rows, "uniform_bits": 10f64.log2() })
}

/// Top-k = 3: the renormalised probabilities, the mass kept before renormalising, the support.
pub fn top_k3() -> Value {
    let p = softmax(&LOGITS10);
    let mask = top_k_mask(&p, 3);
    let kept_mass: f64 = p.iter().zip(&mask).filter(|(_, k)| **k).map(|(x, _)| x).sum();
    let q = renormalize_kept(&p, &mask);
    json!({
        "k": 3, "base": p, "probs": q, "kept_mass": kept_mass,
        "support": mask.iter().filter(|&&k| k).count(), "entropy": entropies(&q),
    })
}

/// Top-p = 0.9: the sorted cumulative masses, where the cut falls, the support.
pub fn top_p09() -> Value {
    let p = softmax(&LOGITS10);
    let mut sorted = p.clone();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let cumulative: Vec<f64> = sorted
        .iter()
        .scan(0.0, |acc, &x| {
            *acc += x;
            Some(*acc)
        })
        .collect();
    let mask = top_p_mask(&p, 0.9);
    let support = mask.iter().filter(|&&k| k).count();
    let q = renormalize_kept(&p, &mask);
    json!({
        "p": 0.9, "base": p, "cumulative": cumulative, "support": support, "probs": q,
        "below": cumulative[support - 2], "reaches": cumulative[support - 1], "entropy": entropies(&q),
    })
}

/// The lesson's four panels (τ = 0.5, τ = 2, top-k = 3, top-p = 0.9) and the
/// six entropies in its order: greedy, top-k = 3, τ = 0.5, top-p = 0.9, τ = 1, τ = 2.
pub fn four_panel() -> Value {
    let p = softmax(&LOGITS10);
    let t05 = at_temperature(&LOGITS10, 0.5);
    let t2 = at_temperature(&LOGITS10, 2.0);
    let k3 = renormalize_kept(&p, &top_k_mask(&p, 3));
    let p09 = renormalize_kept(&p, &top_p_mask(&p, 0.9));
    let greedy = at_temperature(&LOGITS10, 0.0);
    let panels = vec![
        json!({ "title": "Temperature τ = 0.5 (sharpened)", "probs": t05 }),
        json!({ "title": "Temperature τ = 2.0 (flattened)", "probs": t2 }),
        json!({ "title": "Top-K = 3", "probs": k3 }),
        json!({ "title": "Top-P = 0.9", "probs": p09 }),
    ];
    let ordering: Vec<Value> = [
        ("greedy", &greedy),
        ("top-K=3", &k3),
        ("tau=0.5", &t05),
        ("top-P=0.9", &p09),
        ("tau=1.0", &p),
        ("tau=2.0", &t2),
    ]
    .iter()
    .map(|(name, q)| json!({ "name": name, "bits": entropy_bits(q), "nats": entropy_nats(q) }))
    .collect();
    json!({ "panels": panels, "entropies": ordering })
}

/// τ from 0.2 to 5 over 30 log-spaced frames: each frame's distribution and entropy.
pub fn sweep() -> Value {
    let frames: Vec<Value> = log_spaced(0.2, 5.0, 30)
        .into_iter()
        .map(|tau| {
            let q = at_temperature(&LOGITS10, tau);
            json!({ "tau": tau, "bits": entropy_bits(&q), "probs": q })
        })
        .collect();
    json!({ "frames": frames, "uniform_bits": 10f64.log2() })
}

/// H(τ) in bits of the 10-class vector and of P(·|b), 60 points on
/// τ = 10^-1.5 … 10^2, the reference lines, and the slope check at τ = 1.
pub fn entropy_curves() -> Value {
    let taus = log_spaced(10f64.powf(-1.5), 100.0, 60);
    let h10: Vec<f64> = taus.iter().map(|&t| entropy_bits(&at_temperature(&LOGITS10, t))).collect();
    let hb: Vec<f64> = taus.iter().map(|&t| entropy_bits(&at_temperature(&LOGITS_B, t))).collect();
    let h_nats = |tau: f64| entropy_nats(&at_temperature(&LOGITS10, tau));
    let slope = (h_nats(1.001) - h_nats(0.999)) / (1.001f64.ln() - 0.999f64.ln());
    let p = softmax(&LOGITS10);
    let mean: f64 = p.iter().zip(&LOGITS10).map(|(q, z)| q * z).sum();
    let var: f64 = p.iter().zip(&LOGITS10).map(|(q, z)| q * (z - mean).powi(2)).sum();
    json!({
        "taus": taus, "h10_bits": h10, "hb_bits": hb,
        "references": [
            { "label": "log₂ 10 = 3.32 (uniform over 10)", "bits": 10f64.log2() },
            { "label": "log₂ 3 = 1.58 (uniform over 3)", "bits": 3f64.log2() },
            { "label": "1 bit: the tie", "bits": 1.0 },
        ],
        "slope_fd_nats": slope, "var_z": var,
    })
}
