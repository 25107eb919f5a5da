//! Properties every decoding rule must keep, on random logits (lengths
//! 1..300, values in [-30, 30], with deliberate ties and -inf entries).
//!
//! One file past 400 lines on purpose: one property (or two) per rule, all
//! drawing on the same logit strategies above, read as one checklist.

use nexttoken::rules::*;
use proptest::prelude::*;

/// One logit: mostly continuous, often a small integer (to make ties), sometimes -inf.
fn any_logit() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => -30.0..30.0f64,
        3 => (-3i32..=3).prop_map(f64::from),
        1 => Just(f64::NEG_INFINITY),
    ]
}

/// A logits vector with at least one finite entry (so some token is possible).
fn any_logits() -> impl Strategy<Value = Vec<f64>> {
    (
        prop::collection::vec(any_logit(), 1..300),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(mut z, at)| {
            if z.iter().all(|&v| v == f64::NEG_INFINITY) {
                let i = at.index(z.len());
                z[i] = 0.0;
            }
            z
        })
}

/// A probability vector as the rules see it: softmax of random logits.
fn any_probs() -> impl Strategy<Value = Vec<f64>> {
    any_logits().prop_map(|z| softmax(&z))
}

fn any_temperature() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(MIN_TEMPERATURE),
        Just(MAX_TEMPERATURE),
        Just(1.0),
        MIN_TEMPERATURE..MAX_TEMPERATURE
    ]
}

fn any_top_p() -> impl Strategy<Value = f64> {
    prop_oneof![Just(1.0), Just(1e-12), 1e-6..=1.0f64]
}

/// Settings with every rule possibly on; token ids are drawn below `n`.
fn any_settings(n: usize) -> impl Strategy<Value = RuleSettings> {
    let id = 0..n as u32;
    (
        (
            any_temperature(),
            0usize..20,
            any_top_p(),
            prop_oneof![Just(0.0), 0.0..=1.0f64],
        ),
        (
            prop_oneof![Just(1.0), 1.0..10.0f64],
            0usize..8,
            any::<bool>(),
            0.0..=2.0f64,
            0.0..=2.0f64,
        ),
        (
            prop::collection::vec((id.clone(), -5.0..5.0f64), 0..4),
            prop::collection::vec(id, 0..4),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (temperature, top_k, top_p, min_p),
                (rho, window, per_occ, presence, frequency),
                (bias, banned, llama),
            )| {
                RuleSettings {
                    temperature,
                    top_k,
                    top_p,
                    min_p,
                    repetition_penalty: rho,
                    penalty_window: window,
                    penalty_mode: if per_occ {
                        PenaltyMode::PerOccurrence
                    } else {
                        PenaltyMode::PerToken
                    },
                    presence_penalty: presence,
                    frequency_penalty: frequency,
                    logit_bias: bias,
                    banned,
                    order: if llama {
                        Order::LlamaCpp
                    } else {
                        Order::HuggingFace
                    },
                    ..Default::default()
                }
            },
        )
}

/// Logits, a history over their vocabulary, and settings for them.
fn any_case() -> impl Strategy<Value = (Vec<f64>, Vec<u32>, RuleSettings)> {
    any_logits().prop_flat_map(|z| {
        let n = z.len();
        (
            Just(z),
            prop::collection::vec(0..n as u32, 0..12),
            any_settings(n),
        )
    })
}

/// Reference order: descending probability, ties by lower id, by a full sort.
fn sorted_ids(probs: &[f64]) -> Vec<usize> {
    let mut ids: Vec<usize> = (0..probs.len()).filter(|&i| probs[i] > 0.0).collect();
    ids.sort_by(|&a, &b| probs[b].partial_cmp(&probs[a]).unwrap().then(a.cmp(&b)));
    ids
}

fn mask_from(ids: &[usize], n: usize) -> Vec<bool> {
    let mut m = vec![false; n];
    for &i in ids {
        m[i] = true;
    }
    m
}

fn is_subset(inner: &[bool], outer: &[bool]) -> bool {
    inner.iter().zip(outer).all(|(&a, &b)| !a || b)
}

fn stage<'a>(stages: &'a [Stage], name: &str) -> &'a Stage {
    stages.iter().find(|s| s.name == name).unwrap()
}

/// The one case the generated settings are refused in: bans (or -inf logits)
/// that leave no token possible. Tests that need a run skip it with
/// `prop_assume!`, which proptest counts (too many skips fail the test).
fn everything_banned(z: &[f64], s: &RuleSettings) -> bool {
    (0..z.len()).all(|i| s.banned.contains(&(i as u32)) || z[i] == f64::NEG_INFINITY)
}

/// First index of the largest probability.
fn first_argmax(p: &[f64]) -> usize {
    argmax(p)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn softmax_sums_to_one_and_zeroes_minus_infinity(z in any_logits()) {
        let p = softmax(&z);
        prop_assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        for (pi, zi) in p.iter().zip(&z) {
            prop_assert!(pi.is_finite() && *pi >= 0.0);
            if *zi == f64::NEG_INFINITY { prop_assert_eq!(*pi, 0.0); }
        }
    }

    #[test]
    fn entropy_lies_between_zero_and_log_n(p in any_probs()) {
        let n = p.len() as f64;
        let bits = entropy_bits(&p);
        prop_assert!(bits >= 0.0 && bits <= n.log2() + 1e-12, "H = {} bits for n = {}", bits, n);
        prop_assert!((entropy_nats(&p) - bits * std::f64::consts::LN_2).abs() < 1e-12);
    }

    #[test]
    fn temperature_never_gives_nan(z in any_logits(), tau in any_temperature()) {
        let q = softmax(&scale_by_temperature(&z, tau));
        prop_assert!(q.iter().all(|x| x.is_finite() && *x >= 0.0));
        prop_assert!((q.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // The first argmax always survives any temperature.
        prop_assert!(q[argmax(&z)] > 0.0);
    }

    #[test]
    fn top_k_matches_a_full_sort(p in any_probs(), k in 0usize..40) {
        let kept = top_k_mask(&p, k);
        let order = sorted_ids(&p);
        let take = if k == 0 { order.len() } else { k.min(order.len()) };
        prop_assert_eq!(&kept, &mask_from(&order[..take], p.len()));
        prop_assert!(kept[first_argmax(&p)]);
    }

    #[test]
    fn top_p_is_the_smallest_set_reaching_p(p in any_probs(), top_p in any_top_p()) {
        let kept = top_p_mask(&p, top_p);
        // Brute force: sort everything, walk the cumulative sum.
        let order = sorted_ids(&p);
        let mut mass = 0.0;
        let mut n = order.len();
        for (i, &id) in order.iter().enumerate() {
            mass += p[id];
            if mass >= top_p { n = i + 1; break; }
        }
        if top_p >= 1.0 { n = order.len(); }
        prop_assert_eq!(&kept, &mask_from(&order[..n], p.len()));
        prop_assert!(kept[first_argmax(&p)]);
        // Smallest: without its least likely member the set falls short of p.
        if n > 1 && top_p < 1.0 {
            let short: f64 = order[..n - 1].iter().map(|&i| p[i]).sum();
            prop_assert!(short < top_p);
        }
    }

    #[test]
    fn top_p_equal_to_a_prefix_mass_stops_at_that_prefix(p in any_probs(), at in any::<prop::sample::Index>()) {
        // "Reaches p" means >= p: a p that equals a prefix's mass exactly keeps
        // that prefix, or a shorter one when the float sum absorbed the tail
        // (adding a tiny probability left the running sum unchanged).
        let order = sorted_ids(&p);
        let cumulative: Vec<f64> = order.iter().scan(0.0, |acc, &i| { *acc += p[i]; Some(*acc) }).collect();
        let j = at.index(order.len());
        prop_assume!(cumulative[j] < 1.0);
        let n = cumulative.iter().position(|&c| c >= cumulative[j]).unwrap() + 1;
        prop_assert!(n <= j + 1);
        prop_assert_eq!(top_p_mask(&p, cumulative[j]), mask_from(&order[..n], p.len()));
    }

    #[test]
    fn min_p_keeps_exactly_the_tokens_above_the_threshold(p in any_probs(), m in 0.0..=1.0f64) {
        let kept = min_p_mask(&p, m);
        let p_max = p.iter().copied().fold(0.0, f64::max);
        for i in 0..p.len() {
            prop_assert_eq!(kept[i], p[i] > 0.0 && p[i] >= m * p_max);
        }
        prop_assert!(kept[first_argmax(&p)]);
    }

    #[test]
    fn pipeline_stages_are_distributions_that_narrow((z, history, s) in any_case()) {
        let result = run_pipeline(&z, &history, &s);
        if everything_banned(&z, &s) {
            prop_assert!(result.is_err());
            return Ok(());
        }
        let stages = result.unwrap();
        let raw = &stages[0].probs;
        for st in &stages {
            let sum: f64 = st.probs.iter().sum();
            prop_assert!((sum - 1.0).abs() < 1e-9, "{} sums to {}", st.name, sum);
            prop_assert!(st.probs.iter().all(|p| p.is_finite() && *p >= 0.0));
            for i in 0..z.len() { prop_assert_eq!(st.kept[i], st.probs[i] > 0.0); }
            prop_assert_eq!(st.kept_count, st.kept.iter().filter(|&&k| k).count());
            let mass: f64 = raw.iter().zip(st.kept.iter()).filter(|(_, k)| **k).map(|(p, _)| p).sum();
            prop_assert!((st.kept_mass - mass).abs() < 1e-12);
            prop_assert!(st.entropy_bits >= 0.0 && st.entropy_bits <= (z.len() as f64).log2() + 1e-12);
        }
        let narrowing: &[&str] = match s.order {
            Order::HuggingFace => &["temperature", "top_k", "top_p", "min_p", "final"],
            Order::LlamaCpp => &["bias_bans", "top_k", "top_p", "min_p", "temperature", "final"],
            Order::OpenAi => &["temperature", "top_p", "final"],
        };
        for pair in narrowing.windows(2) {
            let (outer, inner) = (stage(&stages, pair[0]), stage(&stages, pair[1]));
            prop_assert!(is_subset(&inner.kept, &outer.kept), "{} not within {}", pair[1], pair[0]);
        }
        // Each cut keeps the most likely token it was given (ties by id).
        for pair in narrowing.windows(2) {
            let top = first_argmax(&stage(&stages, pair[0]).probs);
            prop_assert!(stage(&stages, pair[1]).kept[top], "{} dropped the top token of {}", pair[1], pair[0]);
        }
        // So the most likely token entering the truncations survives, up to
        // rounding: a stage's renormalised probabilities can tie two tokens
        // that differed by an ulp before it (every logit 1e-307 at
        // temperature 6e307), and the tie then goes to the lower id.
        let entering = &stage(&stages, narrowing[0]).probs;
        let best = entering[first_argmax(entering)];
        let kept_best = (0..z.len()).filter(|&i| stage(&stages, "final").kept[i]).map(|i| entering[i]).fold(0.0, f64::max);
        prop_assert!(kept_best >= best * (1.0 - 1e-14), "final keeps at most {} of the top {}", kept_best, best);
        if s.top_k > 0 { prop_assert!(stage(&stages, "top_k").kept_count <= s.top_k); }
        prop_assert_eq!(&stages[stages.len() - 1].probs, &stages[stages.len() - 2].probs);
    }

    /// The stages before any truncation are computed from nearby ones (only
    /// the penalised, biased or banned tokens get a fresh exponential); they
    /// must equal the softmax of the logits each rule produces, computed here
    /// directly from the rule functions.
    #[test]
    fn stages_before_truncation_equal_the_direct_softmax((z, history, s) in any_case()) {
        let s = RuleSettings { order: Order::HuggingFace, ..s };
        prop_assume!(!everything_banned(&z, &s));
        let stages = run_pipeline(&z, &history, &s).unwrap();
        let recent = select_recent(&history, s.penalty_window);
        let penalised = penalize_presence_frequency(
            &penalize_repetition(&z, recent, s.repetition_penalty, s.penalty_mode),
            recent, s.presence_penalty, s.frequency_penalty);
        let biased = apply_bias_and_bans(&penalised, &s.logit_bias, &s.banned);
        let tempered = scale_by_temperature(&biased, s.temperature);
        for (name, logits) in [("penalties", &penalised), ("bias_bans", &biased), ("temperature", &tempered)] {
            let want = softmax(logits);
            let got = &stage(&stages, name).probs;
            for i in 0..z.len() {
                prop_assert!((got[i] - want[i]).abs() <= 1e-12 * want[i].max(got[i]) + 1e-300,
                    "{name}[{i}]: {} vs {}", got[i], want[i]);
                prop_assert_eq!(got[i] > 0.0, want[i] > 0.0, "{}[{}] kept differs", name, i);
            }
            prop_assert!((stage(&stages, name).entropy_nats - entropy_nats(&want)).abs() < 1e-9);
        }
    }

    /// The pipeline's top-k reads a hint off the raw ranking; the set must be
    /// exactly the rule's on the stage before it.
    #[test]
    fn pipeline_top_k_is_the_rule_on_the_stage_before((z, history, s) in any_case()) {
        prop_assume!(!everything_banned(&z, &s));
        let stages = run_pipeline(&z, &history, &s).unwrap();
        let before = match s.order { Order::HuggingFace | Order::OpenAi => "temperature", Order::LlamaCpp => "top_n_sigma" };
        let want = top_k_mask(&stage(&stages, before).probs, s.top_k);
        prop_assert_eq!(stage(&stages, "top_k").kept.as_slice(), want.as_slice());
    }

    #[test]
    fn orders_agree_at_temperature_one((z, history, s) in any_case()) {
        let hf = RuleSettings { temperature: 1.0, order: Order::HuggingFace, ..s.clone() };
        let llama = RuleSettings { order: Order::LlamaCpp, ..hf.clone() };
        match (run_pipeline(&z, &history, &hf), run_pipeline(&z, &history, &llama)) {
            (Ok(a), Ok(b)) => {
                let (fa, fb) = (stage(&a, "final"), stage(&b, "final"));
                prop_assert_eq!(&fa.kept, &fb.kept);
                for (x, y) in fa.probs.iter().zip(fb.probs.iter()) { prop_assert!((x - y).abs() < 1e-12); }
            }
            (Err(_), Err(_)) => prop_assert!(everything_banned(&z, &hf), "both orders refused settings they should run"),
            _ => prop_assert!(false, "one order failed and the other did not"),
        }
    }

    #[test]
    fn repetition_penalty_never_helps_a_penalised_token(
        (z, recent) in any_logits().prop_flat_map(|z| { let n = z.len() as u32; (Just(z), prop::collection::vec(0..n, 1..8)) }),
        rho in 1.0..10.0f64,
        per_occ in any::<bool>(),
    ) {
        let mode = if per_occ { PenaltyMode::PerOccurrence } else { PenaltyMode::PerToken };
        let out = penalize_repetition(&z, &recent, rho, mode);
        let is_recent = |i: usize| recent.contains(&(i as u32));
        for i in 0..z.len() {
            if is_recent(i) { prop_assert!(out[i] <= z[i]); } else { prop_assert_eq!(out[i], z[i]); }
        }
        let (before, after) = (softmax(&z), softmax(&out));
        let mass = |p: &[f64]| (0..z.len()).filter(|&i| is_recent(i)).map(|i| p[i]).sum::<f64>();
        prop_assert!(mass(&after) <= mass(&before) + 1e-12);
        // One distinct recent token: its own probability cannot rise.
        let only = recent[0];
        let single = penalize_repetition(&z, &[only], rho, mode);
        prop_assert!(softmax(&single)[only as usize] <= before[only as usize] + 1e-12);
    }

    #[test]
    fn presence_and_frequency_only_lower_recent_logits(
        (z, recent) in any_logits().prop_flat_map(|z| { let n = z.len() as u32; (Just(z), prop::collection::vec(0..n, 0..8)) }),
        presence in 0.0..=2.0f64,
        frequency in 0.0..=2.0f64,
    ) {
        let out = penalize_presence_frequency(&z, &recent, presence, frequency);
        for i in 0..z.len() {
            let count = recent.iter().filter(|&&r| r as usize == i).count() as f64;
            let expected = if count > 0.0 { z[i] - presence - frequency * count } else { z[i] };
            // Same subtraction, possibly grouped differently: compare to rounding.
            let close = out[i] == expected || (out[i] - expected).abs() <= 1e-12 * z[i].abs().max(1.0);
            prop_assert!(close, "token {}: {} vs {}", i, out[i], expected);
        }
        let before = softmax(&z);
        let after = softmax(&out);
        let mass = |p: &[f64]| recent.iter().collect::<std::collections::BTreeSet<_>>().iter().map(|&&i| p[i as usize]).sum::<f64>();
        prop_assert!(mass(&after) <= mass(&before) + 1e-12);
    }

    #[test]
    fn draw_matches_a_cdf_walk_and_never_picks_an_impossible_token(
        p in any_probs(),
        k in 0usize..10,
        coin in prop_oneof![0.0..1.0f64, Just(0.0), Just(1.0 - f64::EPSILON / 2.0)],
    ) {
        let q = renormalize_kept(&p, &top_k_mask(&p, k));
        let drawn = sample_inverse_cdf(&q, coin);
        prop_assert!(q[drawn] > 0.0);
        // Reference: the cumulative vector, first entry above the coin,
        // else (float tail) the last possible token.
        let cumulative: Vec<f64> = q.iter().scan(0.0, |acc, &x| { *acc += x; Some(*acc) }).collect();
        let expected = cumulative
            .iter()
            .position(|&c| c > coin)
            .unwrap_or_else(|| q.iter().rposition(|&x| x > 0.0).unwrap());
        prop_assert_eq!(drawn, expected);
    }
}

#[test]
fn tiny_top_p_keeps_exactly_the_top_token_in_the_pipeline() {
    let z = [1.0, 3.0, 3.0, -2.0];
    let s = RuleSettings {
        top_p: 1e-300,
        ..Default::default()
    };
    let stages = run_pipeline(&z, &[], &s).unwrap();
    assert_eq!(*stage(&stages, "final").kept, [false, true, false, false]);
}

#[test]
fn extreme_temperatures_keep_the_pipeline_finite() {
    let z = [30.0, -30.0, 29.9999, 0.0, f64::NEG_INFINITY];
    for tau in [MIN_TEMPERATURE, MAX_TEMPERATURE] {
        for order in [Order::HuggingFace, Order::LlamaCpp] {
            let s = RuleSettings {
                temperature: tau,
                order,
                ..Default::default()
            };
            for st in run_pipeline(&z, &[], &s).unwrap() {
                assert!(
                    st.probs.iter().all(|p| p.is_finite()),
                    "{} at tau {tau}",
                    st.name
                );
                assert!((st.probs.iter().sum::<f64>() - 1.0).abs() < 1e-6);
                assert!(st.entropy_bits.is_finite());
            }
        }
    }
}

#[test]
fn banning_everything_is_a_clear_error() {
    let s = RuleSettings {
        banned: vec![0, 1, 2],
        ..Default::default()
    };
    let err = run_pipeline(&[1.0, 2.0, 3.0], &[], &s).unwrap_err();
    assert!(
        err.message.contains("every token is banned"),
        "{}",
        err.message
    );
}
