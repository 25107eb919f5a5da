//! Properties of the samplers of issue 14 (typical-p both ways, ε, η,
//! top-n-σ, XTC, mirostat v1/v2, DRY, no-repeat-ngram, sequence bias, and
//! min_keep in each truncation), in the pipeline and alone: every stage is a
//! distribution (sums to 1, never an empty kept set), each truncation keeps
//! at least min_keep tokens (or all it was given) and only tokens it was
//! given, and the same inputs give the same stages. Then the session: the
//! same seed gives the same text with XTC and mirostat on, and rewinding
//! restores mirostat's mu and the RNG.

use nexttoken::builtin;
use nexttoken::rules::*;
use nexttoken::session::GenerationSettings;
use proptest::prelude::*;

/// Logits with ties, -inf entries and a spread; at least one finite.
fn any_logits() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(
        prop_oneof![
            1 => Just(f64::NEG_INFINITY),
            2 => (-4i32..4).prop_map(|i| i as f64 * 0.5),
            4 => -8.0..8.0f64,
        ],
        1..48,
    )
    .prop_map(|mut z| {
        z[0] = if z[0] == f64::NEG_INFINITY { 0.0 } else { z[0] };
        z
    })
}

/// The truncations of this issue in one chain, each possibly on.
const TRUNCATIONS: [StageKind; 7] = [
    StageKind::TopNSigma,
    StageKind::TypicalP,
    StageKind::TypicalPLlama,
    StageKind::EpsilonCutoff,
    StageKind::EtaCutoff,
    StageKind::Xtc,
    StageKind::Mirostat,
];

fn any_settings() -> impl Strategy<Value = (RuleSettings, StepInputs)> {
    (
        (0usize..8, prop_oneof![Just(1.0), 0.01..=1.0f64], prop_oneof![Just(0.0), 0.0..0.5f64], prop_oneof![Just(0.0), 0.0..0.5f64]),
        (prop_oneof![Just(0.0), 0.01..3.0f64], 0.0..0.6f64, prop_oneof![Just(0.0), 0.0..=1.0f64], prop::option::of(0.0..1.0f64)),
        (0u8..3, 0.0..10.0f64, prop::option::of(0.0..20.0f64), any::<bool>()),
    )
        .prop_map(|((min_keep, typical_p, epsilon, eta), (sigma, xtc_t, xtc_p, coin), (mirostat, tau, mu, reversed))| {
            let mut chain = TRUNCATIONS.to_vec();
            if reversed {
                chain.reverse();
            }
            let s = RuleSettings {
                min_keep,
                typical_p,
                epsilon_cutoff: epsilon,
                eta_cutoff: eta,
                top_n_sigma: sigma,
                xtc_threshold: xtc_t,
                xtc_probability: xtc_p,
                mirostat,
                mirostat_tau: tau,
                chain,
                ..Default::default()
            };
            (s, StepInputs { xtc_coin: coin, mirostat_mu: mu, ..Default::default() })
        })
}

fn assert_distribution(st: &Stage) -> Result<(), TestCaseError> {
    let sum: f64 = st.probs.iter().sum();
    prop_assert!((sum - 1.0).abs() < 1e-9, "{} sums to {sum}", st.name);
    prop_assert!(st.kept_count >= 1, "{} kept nothing", st.name);
    prop_assert!(st.probs.iter().all(|p| p.is_finite() && *p >= 0.0));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn truncations_are_distributions_that_keep_min_keep(z in any_logits(), (s, inputs) in any_settings()) {
        let raw = RawDistribution::new(z.clone()).unwrap();
        let (stages, alone) = run_rules_with(&raw, &[], &s, &StageMemo::default(), &inputs).unwrap();
        for pair in stages.windows(2) {
            let (before, after) = (&pair[0], &pair[1]);
            assert_distribution(after)?;
            // Only tokens the stage was given, and at least min_keep of them.
            prop_assert!(after.kept.iter().zip(before.kept.iter()).all(|(a, b)| !a || *b), "{} revived a token", after.name);
            prop_assert!(after.kept_count >= s.min_keep.max(1).min(before.kept_count),
                "{} kept {} of {} with min_keep {}", after.name, after.kept_count, before.kept_count, s.min_keep);
        }
        for st in alone.iter().filter(|st| st.name != "greedy") {
            assert_distribution(st)?;
            prop_assert!(st.kept_count >= s.min_keep.max(1).min(raw.stage.kept_count), "{} alone", st.name);
        }
        // The same inputs, the same stages (a fresh memo and a warm one).
        let memo = StageMemo::default();
        let again = run_rules_with(&raw, &[], &s, &memo, &inputs).unwrap();
        prop_assert_eq!(&again, &(stages, alone));
        prop_assert_eq!(run_rules_with(&raw, &[], &s, &memo, &inputs).unwrap(), again);
    }

    /// Typical sampling at p = 1 is off; below, Hugging Face's cut keeps at
    /// least as many tokens as llama.cpp's at the same p when p is not hit
    /// exactly (ties kept vs cut).
    #[test]
    fn typical_variants_nest(z in any_logits(), p in 0.01..0.99f64) {
        let probs = softmax(&z);
        let hf = typical_p_mask(&probs, p, 1);
        let llama = typical_p_llama_mask(&probs, p, 1);
        let count = |m: &[bool]| m.iter().filter(|&&k| k).count();
        prop_assert!(count(&hf) >= 1 && count(&llama) >= 1);
        prop_assert!(count(&hf) + 1 >= count(&llama), "hf {} llama {}", count(&hf), count(&llama));
        prop_assert_eq!(typical_p_mask(&probs, 1.0, 1), probs.iter().map(|&q| q > 0.0).collect::<Vec<_>>());
    }

    /// DRY, no-repeat-ngram and the sequence bias on any history: the
    /// stages are distributions, or the settings are refused only when
    /// no-repeat-ngram banned every token.
    #[test]
    fn history_stages_are_distributions_or_a_clear_refusal(
        z in any_logits(),
        history in prop::collection::vec(0u32..6, 0..30),
        (mult, base, allowed, last_n) in (0.0..5.0f64, 1.0..4.0f64, 0usize..4, prop_oneof![Just(-1i64), 0i64..20]),
        ngram in 0usize..4,
        bias in prop::collection::vec((prop::collection::vec(0u32..6, 1..3), -5.0..5.0f64), 0..3),
        breakers in prop::collection::vec(0u32..6, 0..2),
    ) {
        let n = z.len() as u32;
        let history: Vec<u32> = history.into_iter().map(|t| t % n).collect();
        let bias: Vec<(Vec<u32>, f64)> = bias.into_iter().map(|(ids, b)| (ids.into_iter().map(|t| t % n).collect(), b)).collect();
        let mut breakers: Vec<u32> = breakers.into_iter().map(|t| t % n).collect();
        breakers.sort_unstable();
        breakers.dedup();
        let s = RuleSettings {
            dry_multiplier: mult, dry_base: base, dry_allowed_length: allowed, dry_penalty_last_n: last_n,
            no_repeat_ngram_size: ngram, sequence_bias: bias,
            chain: vec![StageKind::SequenceBias, StageKind::Dry, StageKind::NoRepeatNgram],
            ..Default::default()
        };
        let inputs = StepInputs { dry_breakers: breakers, ..Default::default() };
        let raw = RawDistribution::new(z.clone()).unwrap();
        match run_rules_with(&raw, &history, &s, &StageMemo::default(), &inputs) {
            Ok((stages, _)) => {
                for st in &stages { assert_distribution(st)?; }
                // DRY only lowers logits: it keeps no token the stage before dropped.
                prop_assert!(stages[2].kept.iter().zip(stages[1].kept.iter()).all(|(a, b)| !a || *b));
            }
            Err(e) => {
                let banned = banned_by_ngrams(&history, ngram);
                let possible = z.iter().enumerate().filter(|(i, v)| v.is_finite() && !banned.contains(&(*i as u32))).count();
                prop_assert!(possible == 0 && e.message.contains("no_repeat_ngram"), "{e}");
            }
        }
    }
}

fn sampling(seed: u64) -> GenerationSettings {
    let mut g = GenerationSettings { seed, max_new: 24, ..GenerationSettings::default() };
    g.rules.order = Order::LlamaCpp;
    g.rules.xtc_probability = 0.5;
    g.rules.xtc_threshold = 0.1;
    g.rules.mirostat = 2;
    g.rules.mirostat_tau = 1.0;
    g.rules.mirostat_eta = 0.3;
    g
}

/// Generates up to `max_new` tokens; returns the ids and each step's mu.
fn generate(session: &mut nexttoken::session::Session, settings: &GenerationSettings, from: usize) -> (Vec<u32>, Vec<Option<f64>>) {
    let mut mus = Vec::new();
    for _ in from..settings.max_new {
        let report = session.step(settings).unwrap();
        mus.push(report.distribution.step_inputs.mirostat_mu);
        if report.stop.is_some() {
            break;
        }
    }
    (session.generated_ids(), mus)
}

#[test]
fn the_same_seed_gives_the_same_text_with_xtc_and_mirostat_and_rewind_restores_them() {
    let settings = sampling(7);
    let mut a = builtin::open("bigram-abc").unwrap();
    let first = a.start("a", &settings).unwrap();
    // mu starts at 2 tau, and the XTC coin a preview shows is the step's.
    assert_eq!(first.distribution.step_inputs.mirostat_mu, Some(2.0));
    let coin = first.distribution.step_inputs.xtc_coin.expect("XTC is on");
    let mut rng = nexttoken::rng::Rng::new(7);
    assert_eq!(coin, rng.next_f64(), "XTC's coin is the seeded RNG's next number");
    let (ids_a, mus_a) = generate(&mut a, &settings, 0);
    let mut b = builtin::open("bigram-abc").unwrap();
    b.start("a", &settings).unwrap();
    let (ids_b, mus_b) = generate(&mut b, &settings, 0);
    assert_eq!(ids_a, ids_b);
    assert_eq!(mus_a, mus_b);
    assert!(mus_a.windows(2).any(|w| w[0] != w[1]), "mu moves: {mus_a:?}");
    // Rewinding to 5 and generating again gives the same tokens and mu.
    let k = 5.min(ids_a.len());
    let report = a.rewind(k, &settings).unwrap();
    assert_eq!(report.distribution.step_inputs.mirostat_mu, mus_a.get(k).copied().flatten());
    let (ids_c, mus_c) = generate(&mut a, &settings, k);
    assert_eq!(ids_c, ids_a);
    assert_eq!(mus_c, mus_a[k..].to_vec());
    // Another seed, another coin.
    let mut c = builtin::open("bigram-abc").unwrap();
    let other = c.start("a", &sampling(8)).unwrap();
    assert_ne!(other.distribution.step_inputs.xtc_coin, Some(coin));
}

#[test]
fn mirostat_mu_follows_its_update_rule_in_the_session() {
    let settings = sampling(3);
    let mut s = builtin::open("bigram-abc").unwrap();
    s.start("a", &settings).unwrap();
    let mut mu = 2.0 * settings.rules.mirostat_tau;
    for _ in 0..10 {
        let report = s.step(&settings).unwrap();
        assert!((report.distribution.step_inputs.mirostat_mu.unwrap() - mu).abs() < 1e-12);
        let chosen = report.chosen.unwrap();
        // By the definition: surprise in bits of the drawn token.
        mu -= settings.rules.mirostat_eta * (-chosen.prob.log2() - settings.rules.mirostat_tau);
        if report.stop.is_some() {
            break;
        }
    }
}
