//! The numbers printed in lesson 21 (course/003_*.txt), reproduced by the
//! rule functions and the pipeline.
//!
//! Tolerances follow the printed digits: a 6-decimal print means
//! |x - printed| <= 0.5e-6; a 16/17-digit print is compared at 1e-12
//! relative. The lesson-18 logits at 'b' are themselves printed to 6
//! decimals, so results computed from them carry the error that rounding
//! implies; those tolerances are the spread of the result when each logit is
//! moved by ±5e-7 (measured once with a short Python script, not shipped).

use nexttoken::rules::*;

/// The lesson's hand-written 10-class logit vector.
const LOGITS: [f64; 10] = [3.0, 2.5, 2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0, -1.5];
/// The trained lesson-18 model's logits at 'b', as printed (6 decimals).
const LOGITS_B: [f64; 3] = [8.391505, -8.841305, 8.391505];

fn assert_six_decimals(got: &[f64], printed: &[f64]) {
    for (i, (g, p)) in got.iter().zip(printed).enumerate() {
        assert!(
            (g - p).abs() <= 0.5e-6 + 1e-15,
            "entry {i}: got {g}, printed {p}"
        );
    }
}

fn assert_full_precision(got: f64, printed: f64) {
    let tol = 1e-12 * printed.abs().max(1e-300);
    assert!(
        (got - printed).abs() <= tol,
        "got {got:.17}, printed {printed:.17}"
    );
}

fn assert_within(got: f64, printed: f64, tol: f64) {
    assert!(
        (got - printed).abs() <= tol,
        "got {got:.17}, printed {printed:.17}, tolerance {tol:e}"
    );
}

fn max_of(p: &[f64]) -> f64 {
    p.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// Stage `name` of a pipeline run.
fn stage<'a>(stages: &'a [Stage], name: &str) -> &'a Stage {
    stages
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no stage {name}"))
}

#[test]
fn base_distribution_matches_the_lesson() {
    let p = softmax(&LOGITS);
    assert_six_decimals(
        &p[..8],
        &[
            0.396139, 0.240270, 0.145731, 0.088390, 0.053612, 0.032517, 0.019723, 0.011962,
        ],
    );
    // The course is 1-based: "argmax: 1".
    assert_eq!(argmax(&LOGITS), 0);
    assert_full_precision(p[0], 0.39613850050808724);
    assert_full_precision(entropy_bits(&p), 2.398942379757357);
}

#[test]
fn temperature_sharpens_and_flattens_as_printed() {
    // (tau, p_max, H bits, H nats)
    let printed = [
        (
            0.5,
            0.6321492583604867,
            1.5006227545290947,
            1.040152431385941,
        ),
        (
            1.0,
            0.39613850050808724,
            2.398942379757357,
            1.6628201468545776,
        ),
        (
            2.0,
            0.24098006525329924,
            3.000344393648524,
            2.079680257166313,
        ),
    ];
    for (tau, p_max, bits, nats) in printed {
        let q = softmax(&scale_by_temperature(&LOGITS, tau));
        assert_full_precision(max_of(&q), p_max);
        assert_full_precision(entropy_bits(&q), bits);
        assert_full_precision(entropy_nats(&q), nats);
    }
}

#[test]
fn greedy_has_zero_entropy() {
    let q = softmax(&scale_by_temperature(&LOGITS, 0.0));
    assert_eq!(entropy_nats(&q), 0.0);
    assert_eq!(entropy_bits(&q), 0.0);
}

#[test]
fn top_k_three_matches_the_lesson_alone_and_in_the_pipeline() {
    let s = RuleSettings {
        top_k: 3,
        ..Default::default()
    };
    let alone = run_rules_alone(&LOGITS, &s).unwrap();
    let piped = run_pipeline(&LOGITS, &[], &s).unwrap();
    for st in [
        stage(&alone, "top_k"),
        stage(&piped, "top_k"),
        stage(&piped, "final"),
    ] {
        assert_six_decimals(
            &st.probs,
            &[
                0.506480, 0.307196, 0.186324, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
            ],
        );
        assert_eq!(st.kept_count, 3);
        assert_full_precision(st.kept_mass, 0.7821398567522391);
        assert_full_precision(st.entropy_nats, 1.0201913367268314);
        assert_full_precision(st.entropy_bits, 1.4718249822536822);
    }
}

#[test]
fn top_p_nine_tenths_keeps_five_as_printed() {
    let p = softmax(&LOGITS);
    // The logits are already sorted, so the cumulative sum in index order is the sorted one.
    let cumulative: Vec<f64> = p
        .iter()
        .scan(0.0, |acc, &x| {
            *acc += x;
            Some(*acc)
        })
        .collect();
    assert_six_decimals(
        &cumulative[..8],
        &[
            0.396139, 0.636409, 0.782140, 0.870530, 0.924142, 0.956659, 0.976381, 0.988344,
        ],
    );
    assert_full_precision(cumulative[3], 0.8705303038115675);
    assert_full_precision(cumulative[4], 0.9241418199787566);

    let kept = top_p_mask(&p, 0.9);
    assert_eq!(
        kept,
        [
            true, true, true, true, true, false, false, false, false, false
        ]
    );

    let s = RuleSettings {
        top_p: 0.9,
        ..Default::default()
    };
    let alone = run_rules_alone(&LOGITS, &s).unwrap();
    let piped = run_pipeline(&LOGITS, &[], &s).unwrap();
    for st in [stage(&alone, "top_p"), stage(&piped, "final")] {
        assert_eq!(st.kept_count, 5);
        assert_full_precision(st.kept_mass, 0.9241418199787566);
        assert_full_precision(st.entropy_nats, 1.3942849625089193);
        assert_full_precision(st.entropy_bits, 2.0115280009976724);
    }
}

#[test]
fn entropy_slope_equals_logit_variance_at_tau_one() {
    let h_nats_at = |tau: f64| entropy_nats(&softmax(&scale_by_temperature(&LOGITS, tau)));
    let slope = (h_nats_at(1.001) - h_nats_at(0.999)) / (1.001f64.ln() - 0.999f64.ln());
    assert_full_precision(slope, 0.808682795298878);

    let p = softmax(&LOGITS);
    let mean: f64 = p.iter().zip(&LOGITS).map(|(pi, z)| pi * z).sum();
    let var: f64 = p
        .iter()
        .zip(&LOGITS)
        .map(|(pi, z)| pi * (z - mean).powi(2))
        .sum();
    assert_full_precision(var, 0.8086827002533895);
}

#[test]
fn temperature_cannot_move_the_tie_at_b() {
    // (tau, P(.|b) to 6 decimals, H bits, tolerance from the 6-decimal logits)
    let printed = [
        (0.5, [0.5, 0.0, 0.5], 1.0000000000000275, 1e-12),
        (1.0, [0.5, 0.0, 0.5], 1.000000431403955, 1e-12),
        (2.0, [0.499955, 0.000091, 0.499955], 1.001256212153058, 1e-9),
        (
            5.0,
            [0.492161, 0.015678, 0.492161],
            1.1007526326437544,
            3e-8,
        ),
    ];
    for (tau, probs, bits, tol) in printed {
        let q = softmax(&scale_by_temperature(&LOGITS_B, tau));
        assert_six_decimals(&q, &probs);
        assert_within(entropy_bits(&q), bits, tol);
    }
}

#[test]
fn per_occurrence_repetition_penalty_inverts_the_tie() {
    let penalised = penalize_repetition(&LOGITS_B, &[0, 0], 2.0, PenaltyMode::PerOccurrence);
    let p = softmax(&penalised);
    assert_six_decimals(&p, &[0.001845, 0.000000, 0.998155]);
    assert_within(entropy_bits(&p), 0.019413435029058908, 2e-8);

    // The same through the pipeline: history "a a", a 4-token window, greedy after.
    let s = RuleSettings {
        repetition_penalty: 2.0,
        penalty_mode: PenaltyMode::PerOccurrence,
        penalty_window: 4,
        ..Default::default()
    };
    let stages = run_pipeline(&LOGITS_B, &[0, 0], &s).unwrap();
    let after = stage(&stages, "penalties");
    assert_six_decimals(&after.probs, &[0.001845, 0.000000, 0.998155]);
    assert_within(after.entropy_bits, 0.019413435029058908, 2e-8);
    // Greedy on the penalised logits picks c (id 2): the cycle is broken.
    let greedy = run_pipeline(
        &LOGITS_B,
        &[0, 0],
        &RuleSettings {
            temperature: 0.0,
            ..s
        },
    )
    .unwrap();
    assert_eq!(argmax(&stage(&greedy, "final").probs), 2);
}

#[test]
fn every_other_control_leaves_one_bit_at_b() {
    let p_b = softmax(&LOGITS_B);
    let greedy = softmax(&scale_by_temperature(&LOGITS_B, 0.0));
    assert_eq!(entropy_bits(&greedy), 0.0);
    let top_k2 = renormalize_kept(&p_b, &top_k_mask(&p_b, 2));
    assert_full_precision(entropy_bits(&top_k2), 1.0);
    let top_p09 = renormalize_kept(&p_b, &top_p_mask(&p_b, 0.9));
    assert_full_precision(entropy_bits(&top_p09), 1.0);
}
