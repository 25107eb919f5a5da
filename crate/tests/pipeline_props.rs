//! Properties of the whole pipeline, from a model's logits to the drawn token:
//! wild logits (NaN, ±inf, huge values) are refused or handled, random
//! settings (valid and not) are accepted or refused by the documented ranges
//! and never silently dropped, and a session on a tiny model is deterministic
//! and rewinds exactly. (`rules_props.rs` checks each rule alone on tame logits.)
//!
//! The ranges below are written out from the README's URL table and the
//! settings' documentation, not read from the crate's constants, so a range
//! that drifts fails here.

use std::cell::Cell;

use nexttoken::backend::BackendKind;
use nexttoken::config::{MlpKind, ModelConfig, NormKind, Positions, RopeStyle};
use nexttoken::lm::LanguageModel;
use nexttoken::model::DecoderLm;
use nexttoken::rules::{Order, PenaltyMode, RuleSettings, Stage, run_pipeline, run_rules_alone, sample_inverse_cdf};
use nexttoken::session::{ContextPolicy, GenerationSettings, Session};
use nexttoken::tokenizer::CharTokenizer;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

const CHARS: [char; 12] = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'];
const VOCAB: usize = CHARS.len();

// ---------------------------------------------------------------- strategies

/// Any logit a broken or overflowing model might give, as f64 (the rules' type).
fn wild_logit() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => -30.0..30.0f64,
        2 => (-3i32..=3).prop_map(f64::from),
        1 => prop_oneof![1e30..1e300f64, -1e300..-1e30f64],
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
    ]
}

/// Like `wild_logit`, in the model's f32 (huge = up to f32::MAX).
fn wild_logit_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        6 => -30.0..30.0f32,
        1 => prop_oneof![1e30..f32::MAX, f32::MIN..-1e30f32],
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
    ]
}

/// Valid rule settings over a vocabulary of `n` (every rule possibly on;
/// rules added later stay at their defaults, which are off).
#[allow(clippy::needless_update)]
fn valid_rules(n: usize) -> impl Strategy<Value = RuleSettings> {
    let id = 0..n as u32;
    (
        (
            prop_oneof![Just(0.0), Just(1.0), Just(1e-4), Just(100.0), 1e-4..=100.0f64],
            prop_oneof![Just(0usize), 1usize..=n + 3, Just(1_000_000)],
            prop_oneof![Just(1.0), 1e-9..=1.0f64],
            prop_oneof![Just(0.0), 0.0..=1.0f64],
        ),
        (
            prop_oneof![Just(1.0), 1.0..=100.0f64],
            prop_oneof![Just(0usize), 1usize..20, Just(100_000)],
            prop_oneof![Just(PenaltyMode::PerToken), Just(PenaltyMode::PerOccurrence)],
            -2.0..=2.0f64,
            -2.0..=2.0f64,
        ),
        (
            prop::collection::vec((id.clone(), -100.0..=100.0f64), 0..3),
            prop::collection::vec(id, 0..3),
            prop_oneof![Just(Order::HuggingFace), Just(Order::LlamaCpp)],
        ),
    )
        .prop_map(|((temperature, top_k, top_p, min_p), (rho, window, mode, presence, frequency), (logit_bias, banned, order))| {
            RuleSettings {
                temperature,
                top_k,
                top_p,
                min_p,
                repetition_penalty: rho,
                penalty_window: window,
                penalty_mode: mode,
                presence_penalty: presence,
                frequency_penalty: frequency,
                logit_bias,
                banned,
                order,
                ..RuleSettings::default()
            }
        })
}

fn valid_generation(n: usize) -> impl Strategy<Value = GenerationSettings> {
    (valid_rules(n), prop_oneof![Just(0u64), Just((1u64 << 53) - 1), any::<u32>().prop_map(u64::from)], 1usize..=4096, 1usize..=16, 0.0..=2.0f64, 1usize..=100)
        .prop_map(|(rules, seed, max_new, beams, alpha, top_n)| GenerationSettings { rules, seed, max_new, beams, alpha, top_n, ..GenerationSettings::default() })
}

/// One field set to a value outside its documented range, and the name the
/// refusal must mention.
#[derive(Clone, Debug)]
enum Bad {
    Temperature(f64),
    TopK(usize),
    TopP(f64),
    MinP(f64),
    RepetitionPenalty(f64),
    PenaltyWindow(usize),
    Presence(f64),
    Frequency(f64),
    BiasId(u32),
    BiasAmount(f64),
    Banned(u32),
    Seed(u64),
    MaxNew(usize),
    Beams(usize),
    Alpha(f64),
    TopN(usize),
    EmptyStop,
}

/// Not a finite number, or outside [lo, hi].
fn outside(lo: f64, hi: f64) -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        (1e-9..1e6f64).prop_map(move |d| lo - d),
        (1e-9..1e6f64).prop_map(move |d| hi + d),
    ]
}

/// NaN or an infinity.
fn not_finite() -> impl Strategy<Value = f64> {
    prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY)]
}

fn any_bad(n: usize) -> impl Strategy<Value = Bad> {
    prop_oneof![
        // temperature: 0, or [1e-100, any finite]
        prop_oneof![not_finite(), (1e-9..1e6f64).prop_map(|d| -d), 1e-300..9.99e-101f64].prop_map(Bad::Temperature),
        // top_k: 0 (off) to 1,000,000
        prop_oneof![Just(1_000_001usize), Just(usize::MAX), 1_000_001usize..10_000_000].prop_map(Bad::TopK),
        // top_p: [0, 1]
        outside(0.0, 1.0).prop_map(Bad::TopP),
        // min_p: 0 or more (llama.cpp takes above 1)
        prop_oneof![not_finite(), (1e-9..1e6f64).prop_map(|d| -d)].prop_map(Bad::MinP),
        // repetition_penalty: positive
        prop_oneof![not_finite(), Just(0.0), (1e-9..1e6f64).prop_map(|d| -d)].prop_map(Bad::RepetitionPenalty),
        // penalty_window: 0 (all) to 100,000
        (100_001usize..usize::MAX).prop_map(Bad::PenaltyWindow),
        // presence and frequency penalties: any finite value
        not_finite().prop_map(Bad::Presence),
        not_finite().prop_map(Bad::Frequency),
        // a bias's token outside the vocabulary, or its amount outside [-100, 100]
        (n as u32..u32::MAX).prop_map(Bad::BiasId),
        outside(-100.0, 100.0).prop_map(Bad::BiasAmount),
        (n as u32..u32::MAX).prop_map(Bad::Banned),
        // seed: 0 to 2^53 - 1 (what a JS number holds exactly)
        ((1u64 << 53)..u64::MAX).prop_map(Bad::Seed),
        // max_new: 1 to 4096
        prop_oneof![Just(0usize), 4097usize..usize::MAX].prop_map(Bad::MaxNew),
        // beams: 1 to 16
        prop_oneof![Just(0usize), 17usize..usize::MAX].prop_map(Bad::Beams),
        // alpha: [0, 2]
        outside(0.0, 2.0).prop_map(Bad::Alpha),
        // top_n: 1 to 100
        prop_oneof![Just(0usize), 101usize..usize::MAX].prop_map(Bad::TopN),
        Just(Bad::EmptyStop),
    ]
}

impl Bad {
    fn apply(&self, s: &mut GenerationSettings) {
        let r = &mut s.rules;
        match *self {
            Bad::Temperature(v) => r.temperature = v,
            Bad::TopK(v) => r.top_k = v,
            Bad::TopP(v) => r.top_p = v,
            Bad::MinP(v) => r.min_p = v,
            Bad::RepetitionPenalty(v) => r.repetition_penalty = v,
            Bad::PenaltyWindow(v) => r.penalty_window = v,
            Bad::Presence(v) => r.presence_penalty = v,
            Bad::Frequency(v) => r.frequency_penalty = v,
            Bad::BiasId(id) => r.logit_bias.push((id, 1.0)),
            Bad::BiasAmount(v) => r.logit_bias.push((0, v)),
            Bad::Banned(id) => r.banned.push(id),
            Bad::Seed(v) => s.seed = v,
            Bad::MaxNew(v) => s.max_new = v,
            Bad::Beams(v) => s.beams = v,
            Bad::Alpha(v) => s.alpha = v,
            Bad::TopN(v) => s.top_n = v,
            Bad::EmptyStop => s.stop.push(String::new()),
        }
    }

    /// The word the refusal has to contain for the user to find the field.
    fn field(&self) -> &'static str {
        match self {
            Bad::Temperature(_) => "temperature",
            Bad::TopK(_) => "top_k",
            Bad::TopP(_) => "top_p",
            Bad::MinP(_) => "min_p",
            Bad::RepetitionPenalty(_) => "repetition_penalty",
            Bad::PenaltyWindow(_) => "penalty_window",
            Bad::Presence(_) => "presence_penalty",
            Bad::Frequency(_) => "frequency_penalty",
            Bad::BiasId(_) | Bad::BiasAmount(_) => "logit_bias",
            Bad::Banned(_) => "banned",
            Bad::Seed(_) => "seed",
            Bad::MaxNew(_) => "max_new",
            Bad::Beams(_) => "beams",
            Bad::Alpha(_) => "alpha",
            Bad::TopN(_) => "top_n",
            Bad::EmptyStop => "stop",
        }
    }

    /// Whether the rules themselves read this field (so `run_pipeline` refuses it too).
    fn is_rule(&self) -> bool {
        !matches!(self, Bad::Seed(_) | Bad::MaxNew(_) | Bad::Beams(_) | Bad::Alpha(_) | Bad::TopN(_) | Bad::EmptyStop)
    }
}

// ---------------------------------------------------------------- helpers

fn tiny_config(context: usize) -> ModelConfig {
    ModelConfig {
        vocab_size: VOCAB,
        d_model: 32,
        n_layers: 2,
        n_heads: 4,
        n_kv_heads: 2,
        head_dim: 8,
        d_ff: 48,
        context,
        positions: Positions::Rope { base: 10000.0, style: RopeStyle::RotateHalf },
        norm: NormKind::RmsNorm,
        norm_eps: 1e-5,
        mlp: MlpKind::SwiGlu,
        tied_embeddings: true,
        bias: false,
        options: Default::default(),
    }
}

fn tiny_session(model: impl LanguageModel + 'static) -> Session {
    Session::new(Box::new(model), Box::new(CharTokenizer::new(&CHARS).unwrap())).unwrap()
}

fn random_lm(seed: u64, context: usize) -> DecoderLm {
    DecoderLm::random("props", tiny_config(context), seed, BackendKind::Flex).unwrap()
}

/// A tiny model whose logits after the prompt are replaced by given ones.
struct Replaced {
    inner: DecoderLm,
    logits: Vec<f32>,
}

impl LanguageModel for Replaced {
    fn info(&self) -> nexttoken::lm::ModelInfo {
        self.inner.info()
    }
    fn forward_cached(&mut self, tokens: &[u32]) -> nexttoken::error::Result<Vec<f32>> {
        self.inner.forward_cached(tokens)?;
        Ok(self.logits.clone())
    }
    fn forward_naive(&mut self, tokens: &[u32]) -> nexttoken::error::Result<Vec<Vec<f32>>> {
        let mut rows = self.inner.forward_naive(tokens)?;
        if let Some(last) = rows.last_mut() {
            *last = self.logits.clone();
        }
        Ok(rows)
    }
    fn cache_len(&self) -> usize {
        self.inner.cache_len()
    }
    fn truncate(&mut self, n: usize) {
        self.inner.truncate(n)
    }
    fn counters(&self) -> nexttoken::counters::Counters {
        self.inner.counters()
    }
    fn reset_counters(&mut self) {
        self.inner.reset_counters()
    }
}

/// Whether some token is still possible: a logit above -inf that is not banned.
fn some_token_possible(z: &[f64], s: &RuleSettings) -> bool {
    z.iter().enumerate().any(|(i, &v)| v > f64::NEG_INFINITY && !s.banned.contains(&(i as u32)))
}

fn stage<'a>(stages: &'a [Stage], name: &str) -> &'a Stage {
    stages.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no stage {name}"))
}

/// Every stage is a distribution: finite, in [0, 1], summing to 1, a kept set
/// that is not empty and is exactly the tokens with probability above 0.
fn assert_distribution(st: &Stage) -> Result<(), TestCaseError> {
    let sum: f64 = st.probs.iter().sum();
    prop_assert!(st.probs.iter().all(|p| p.is_finite() && (0.0..=1.0).contains(p)), "{}: {:?}", st.name, st.probs);
    prop_assert!((sum - 1.0).abs() < 1e-9, "{}: probabilities sum to {sum}", st.name);
    let kept = st.probs.iter().filter(|&&p| p > 0.0).count();
    prop_assert!(kept >= 1, "{}: empty kept set", st.name);
    prop_assert_eq!(kept, st.kept_count, "{}", &st.name);
    prop_assert!(st.probs.iter().zip(st.kept.iter()).all(|(&p, &k)| k == (p > 0.0)), "{}", &st.name);
    prop_assert!(st.entropy_nats.is_finite() && st.entropy_nats >= -1e-12, "{}: H = {}", st.name, st.entropy_nats);
    Ok(())
}

fn is_subset(inner: &[bool], outer: &[bool]) -> bool {
    inner.iter().zip(outer).all(|(&a, &b)| !a || b)
}

// ---------------------------------------------------------------- the rules on wild logits

proptest! {
    #![proptest_config(Config { cases: 400, ..Config::default() })]

    /// NaN and +inf (and all -inf) are refused with an error; anything else
    /// gives distributions at every stage, and the draw lands in the final
    /// kept set, never on a banned token.
    #[test]
    fn wild_logits_are_refused_or_give_distributions_and_a_kept_draw(
        (z, s, history, coin) in (1usize..40).prop_flat_map(|n| (
            prop::collection::vec(wild_logit(), n),
            valid_rules(n),
            prop::collection::vec(0..n as u32, 0..12),
            0.0..1.0f64,
        ))
    ) {
        let broken = z.iter().any(|v| v.is_nan() || *v == f64::INFINITY) || z.iter().all(|&v| v == f64::NEG_INFINITY);
        let result = run_pipeline(&z, &history, &s);
        if broken {
            prop_assert!(result.is_err(), "broken logits {z:?} were accepted");
            return Ok(());
        }
        if !some_token_possible(&z, &s) {
            prop_assert!(result.is_err(), "every possible token is banned, yet the pipeline ran");
            return Ok(());
        }
        let stages = result.map_err(|e| TestCaseError::fail(format!("{e} on {z:?} with {s:?}")))?;
        for st in &stages {
            assert_distribution(st)?;
        }
        let last = stage(&stages, "final");
        let id = sample_inverse_cdf(&last.probs, coin);
        prop_assert!(last.kept[id], "drew {id}, outside the final kept set");
        prop_assert!(!s.banned.contains(&(id as u32)), "drew the banned token {id}");
        prop_assert!(z[id] > f64::NEG_INFINITY, "drew token {id}, whose logit is -inf");
        for &b in &s.banned {
            prop_assert_eq!(last.probs[b as usize], 0.0);
        }
    }

    /// The temperature stage alone: the entropy never falls as tau grows.
    #[test]
    fn entropy_does_not_decrease_with_temperature(
        z in prop::collection::vec(prop_oneof![4 => -30.0..30.0f64, 1 => (-3i32..=3).prop_map(f64::from), 1 => Just(f64::NEG_INFINITY)], 1..60)
            .prop_filter("some token possible", |z| z.iter().any(|v| v.is_finite())),
        a in 1e-4..=100.0f64,
        b in 1e-4..=100.0f64,
    ) {
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        let h = |tau: f64| {
            let s = RuleSettings { temperature: tau, ..RuleSettings::default() };
            stage(&run_rules_alone(&z, &s).unwrap(), "temperature").entropy_nats
        };
        let (h_lo, h_hi) = (h(lo), h(hi));
        prop_assert!(h_lo <= h_hi + 1e-9 * h_hi.max(1.0), "H({lo}) = {h_lo} > H({hi}) = {h_hi}");
        // And through the pipeline, where temperature comes after penalties and bias.
        let s = |tau: f64| RuleSettings { temperature: tau, ..RuleSettings::default() };
        let p_lo = stage(&run_pipeline(&z, &[], &s(lo)).unwrap(), "temperature").entropy_nats;
        let p_hi = stage(&run_pipeline(&z, &[], &s(hi)).unwrap(), "temperature").entropy_nats;
        prop_assert!(p_lo <= p_hi + 1e-9 * p_hi.max(1.0), "pipeline: H({lo}) = {p_lo} > H({hi}) = {p_hi}");
    }

    /// Top-k's and top-p's kept sets grow with k and p, alone and in the
    /// pipeline (the other settings held fixed).
    #[test]
    fn kept_sets_are_nested_as_k_and_p_grow(
        (z, s, history, k1, k2, p1, p2) in (1usize..50).prop_flat_map(|n| (
            prop::collection::vec(prop_oneof![4 => -30.0..30.0f64, 1 => (-3i32..=3).prop_map(f64::from), 1 => Just(f64::NEG_INFINITY)], n)
                .prop_filter("some token possible", |z| z.iter().any(|v| v.is_finite())),
            valid_rules(n),
            prop::collection::vec(0..n as u32, 0..8),
            0usize..=n + 2, 0usize..=n + 2, 1e-9..=1.0f64, 1e-9..=1.0f64,
        ))
    ) {
        let s = RuleSettings { banned: vec![], ..s };
        let (k1, k2) = (k1.min(k2), k1.max(k2));
        let (p1, p2) = (p1.min(p2), p1.max(p2));
        // Alone, on the raw distribution.
        let alone = |name: &str, s: RuleSettings| stage(&run_rules_alone(&z, &s).unwrap(), name).kept.to_vec();
        let with_k = |k| RuleSettings { top_k: k, ..s.clone() };
        let with_p = |p| RuleSettings { top_p: p, ..s.clone() };
        if k1 > 0 {
            prop_assert!(is_subset(&alone("top_k", with_k(k1)), &alone("top_k", with_k(k2))), "top_k alone: {k1} ⊄ {k2}");
        }
        // k = 0 is "off": the largest set of all.
        prop_assert!(is_subset(&alone("top_k", with_k(k2.max(1))), &alone("top_k", with_k(0))), "top_k = 0 keeps everything");
        prop_assert!(is_subset(&alone("top_p", with_p(p1)), &alone("top_p", with_p(p2))), "top_p alone: {p1} ⊄ {p2}");
        // In the pipeline, the top_k stage (penalties, bias and temperature before it, in HF order).
        let piped = |s: RuleSettings, name: &str| stage(&run_pipeline(&z, &history, &s).unwrap(), name).kept.to_vec();
        let hf = |s: RuleSettings| RuleSettings { order: Order::HuggingFace, ..s };
        if k1 > 0 {
            prop_assert!(is_subset(&piped(hf(with_k(k1)), "top_k"), &piped(hf(with_k(k2)), "top_k")), "pipeline top_k: {k1} ⊄ {k2}");
        }
        let top_p_only = |p| hf(RuleSettings { top_k: 0, top_p: p, ..s.clone() });
        prop_assert!(is_subset(&piped(top_p_only(p1), "top_p"), &piped(top_p_only(p2), "top_p")), "pipeline top_p: {p1} ⊄ {p2}");
    }
}

// ---------------------------------------------------------------- settings: refused or accepted, counted

/// Valid settings, each with zero, one or two fields pushed outside their
/// documented ranges: the valid ones are accepted by validation, the rules
/// and a session step; the invalid ones refused by all three with a message
/// naming the field (and the session does not move). Both kinds are counted,
/// so neither can be silently skipped.
#[test]
fn random_settings_are_accepted_or_refused_by_their_ranges_never_dropped() {
    let cases = 600u32;
    let mut runner = TestRunner::new(Config { cases, ..Config::default() });
    let (accepted, refused) = (Cell::new(0u32), Cell::new(0u32));
    let z: Vec<f64> = (0..VOCAB).map(|i| (i as f64 * 0.7).sin() * 3.0).collect();
    let session = std::cell::RefCell::new(tiny_session(random_lm(11, 64)));
    session.borrow_mut().start("abc", &GenerationSettings::default()).unwrap();
    let strategy = (valid_generation(VOCAB), prop::collection::vec(any_bad(VOCAB), 0..=2), prop::bool::weighted(0.5));
    runner
        .run(&strategy, |(mut s, bads, clean)| {
            let bads = if clean { vec![] } else { bads };
            for b in &bads {
                b.apply(&mut s);
            }
            let mut session = session.borrow_mut();
            let before = session.history();
            let valid = s.validate(VOCAB);
            let piped = run_pipeline(&z, &before, &s.rules);
            let stepped = session.step(&s);
            if bads.is_empty() {
                accepted.set(accepted.get() + 1);
                prop_assert!(valid.is_ok(), "valid settings refused: {:?}: {s:?}", valid.err());
                prop_assert!(piped.is_ok(), "the pipeline refused valid settings: {:?}", piped.err());
                let rep = stepped.map_err(|e| TestCaseError::fail(format!("step refused valid settings: {e}")))?;
                let id = rep.chosen.expect("a step draws").id;
                prop_assert!(!s.rules.banned.contains(&id));
                // Keep the session short: rewind what this case generated.
                session.rewind(0, &GenerationSettings::default()).unwrap();
            } else {
                refused.set(refused.get() + 1);
                let message = valid.err().map(|e| e.message).ok_or_else(|| TestCaseError::fail(format!("{bads:?} accepted: {s:?}")))?;
                prop_assert!(bads.iter().any(|b| message.contains(b.field())), "{message:?} names none of {bads:?}");
                if bads.iter().all(Bad::is_rule) {
                    prop_assert!(piped.is_err(), "the pipeline ran on {bads:?}");
                }
                let e = stepped.err().ok_or_else(|| TestCaseError::fail(format!("a step ran with {bads:?}")))?;
                prop_assert!(bads.iter().any(|b| e.message.contains(b.field())), "step: {:?} names none of {bads:?}", e.message);
                prop_assert_eq!(session.history(), before, "a refused step moved the session");
            }
            Ok(())
        })
        .unwrap();
    let (a, r) = (accepted.get(), refused.get());
    assert_eq!(a + r, cases, "every case counted once");
    // Half the cases are clean by construction; both kinds must be well represented.
    assert!(a >= cases / 4 && r >= cases / 4, "accepted {a}, refused {r} of {cases}");
}

// ---------------------------------------------------------------- a session on the model's wild logits

proptest! {
    #![proptest_config(Config { cases: 150, ..Config::default() })]

    /// The model's own logits (f32, as the session sees them): any NaN or
    /// ±inf is refused by a step with a message saying they are broken, the
    /// session stays where it was, and rewinding still works; finite ones,
    /// however huge, give a drawn token that is possible and not banned.
    #[test]
    fn a_session_refuses_broken_logits_and_draws_from_finite_ones(
        logits in prop::collection::vec(wild_logit_f32(), VOCAB),
        s in valid_rules(VOCAB),
        seed in 0u64..1000,
    ) {
        let model = Replaced { inner: random_lm(3, 64), logits: logits.clone() };
        let mut session = tiny_session(model);
        let settings = GenerationSettings { rules: s.clone(), seed, ..GenerationSettings::default() };
        let start = session.start("ab", &settings);
        let broken = logits.iter().any(|v| !v.is_finite());
        if broken {
            // start reports the position's distribution: refused already, or at the step.
            if start.is_ok() {
                let e = session.step(&settings).expect_err("a step drew from broken logits");
                prop_assert!(e.message.contains("broken"), "{}", e.message);
                prop_assert_eq!(session.generated_ids().len(), 0);
            } else {
                prop_assert!(start.unwrap_err().message.contains("broken"));
            }
            return Ok(());
        }
        let rep = start.map_err(|e| TestCaseError::fail(e.message))?;
        prop_assert!(rep.distribution.stages.iter().all(|st| st.kept_count >= 1 && st.entropy_bits.is_finite()));
        let rep = session.step(&settings).map_err(|e| TestCaseError::fail(e.message))?;
        let chosen = rep.chosen.unwrap();
        prop_assert!(!s.banned.contains(&chosen.id), "drew banned {}", chosen.id);
        prop_assert!(chosen.prob > 0.0 && chosen.prob <= 1.0, "drew {} with p = {}", chosen.id, chosen.prob);
    }
}

// ---------------------------------------------------------------- determinism and rewinding

/// Settings a session can run many steps with (no bans that leave nothing).
fn runnable(n: usize) -> impl Strategy<Value = GenerationSettings> {
    (valid_generation(n), prop_oneof![Just(ContextPolicy::Error), Just(ContextPolicy::Sliding)], any::<bool>())
        .prop_map(move |(mut s, policy, use_cache)| {
            s.rules.banned.truncate(1);
            s.max_new = 4096;
            s.context_policy = policy;
            s.use_cache = use_cache;
            s
        })
}

/// Steps until `n` tokens or a stop; the generated ids.
fn generate(session: &mut Session, s: &GenerationSettings, n: usize) -> Vec<u32> {
    for _ in session.generated_ids().len()..n {
        if session.step(s).unwrap().stop.is_some() {
            break;
        }
    }
    session.generated_ids()
}

proptest! {
    #![proptest_config(Config { cases: 64, ..Config::default() })]

    /// The same model, prompt, settings and seed give the same tokens; and
    /// rewinding to any earlier token and stepping again gives the same tokens
    /// again, across the context limit (context 16, sliding or stopping).
    #[test]
    fn a_fixed_seed_is_deterministic_and_rewinding_replays_the_same_tokens(
        s in runnable(VOCAB),
        model_seed in 0u64..50,
        n in 1usize..28,
        back in prop::collection::vec(any::<prop::sample::Index>(), 1..4),
    ) {
        let mut a = tiny_session(random_lm(model_seed, 16));
        let mut b = tiny_session(random_lm(model_seed, 16));
        a.start("abcdef", &s).unwrap();
        b.start("abcdef", &s).unwrap();
        let first = generate(&mut a, &s, n);
        prop_assert_eq!(&generate(&mut b, &s, n), &first, "two sessions, one seed");
        prop_assert!(!first.iter().any(|id| s.rules.banned.contains(id)));
        for at in back {
            let m = at.index(first.len() + 1);
            let rep = a.rewind(m, &s).unwrap();
            prop_assert_eq!(rep.full.map(|t| t.generated.len()), Some(m));
            prop_assert_eq!(&a.generated_ids()[..], &first[..m]);
            prop_assert_eq!(&generate(&mut a, &s, first.len()), &first, "rewound to {}", m);
        }
    }
}
