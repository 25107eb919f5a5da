//! The engine end to end on tiny random-weight models: the KV cache against
//! full recompute, the exact work counters, rewind, stops, beams, and the
//! two backends.

use nexttoken::backend::BackendKind;
use nexttoken::config::{MlpKind, ModelConfig, NormKind, Positions, RopeStyle};
use nexttoken::kv_check::teacher_forced;
use nexttoken::lm::LanguageModel;
use nexttoken::model::DecoderLm;
use nexttoken::report::StopReason;
use nexttoken::rules::RuleSettings;
use nexttoken::session::{ContextPolicy, GenerationSettings, Session};
use nexttoken::tokenizer::{CharTokenizer, Tokenizer};

const CHARS: [char; 8] = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

fn config(positions: Positions, norm: NormKind, mlp: MlpKind, heads: usize, kv_heads: usize) -> ModelConfig {
    ModelConfig {
        vocab_size: CHARS.len(),
        d_model: 32,
        n_layers: 2,
        n_heads: heads,
        n_kv_heads: kv_heads,
        head_dim: 32 / heads,
        d_ff: 48,
        context: 64,
        positions,
        norm,
        norm_eps: 1e-5,
        mlp,
        tied_embeddings: true,
        bias: false,
        options: Default::default(),
    }
}

/// Every architecture variant the config offers.
fn variants() -> Vec<(&'static str, ModelConfig)> {
    let rope = |style| Positions::Rope { base: 10000.0, style };
    vec![
        ("gpt2-like", config(Positions::Learned, NormKind::LayerNorm, MlpKind::Gelu, 4, 4)),
        ("llama-like, rotate-half, GQA 4/2", config(rope(RopeStyle::RotateHalf), NormKind::RmsNorm, MlpKind::SwiGlu, 4, 2)),
        ("llama-like, interleaved, GQA 4/1", config(rope(RopeStyle::Interleaved), NormKind::RmsNorm, MlpKind::SwiGlu, 4, 1)),
        ("untied head with biases", ModelConfig { tied_embeddings: false, bias: true, ..config(Positions::Learned, NormKind::LayerNorm, MlpKind::Gelu, 2, 2) }),
    ]
}

fn session(c: ModelConfig, seed: u64) -> Session {
    let lm = DecoderLm::random("test", c, seed, BackendKind::Flex).unwrap();
    Session::new(Box::new(lm), Box::new(CharTokenizer::new(&CHARS).unwrap())).unwrap()
}

fn greedy(max_new: usize) -> GenerationSettings {
    GenerationSettings { rules: RuleSettings { temperature: 0.0, ..RuleSettings::default() }, max_new, ..GenerationSettings::default() }
}

fn run_to_stop(s: &mut Session, settings: &GenerationSettings) -> nexttoken::report::StepReport {
    loop {
        let rep = s.step(settings).unwrap();
        if rep.stop.is_some() {
            return rep;
        }
    }
}

/// Pseudo-random token ids (no RNG needed: a fixed multiplicative walk).
fn tokens(n: usize) -> Vec<u32> {
    (0..n).map(|i| ((i * 5 + 3) % CHARS.len()) as u32).collect()
}

#[test]
fn cached_logits_equal_full_recompute_at_every_position() {
    // prompt: 8 tokens, then 24 more fed one at a time
    //   naive:  [t0 .. t31] in one pass    → logits at 0..31
    //   cached: [t0..t7] then t8, t9, ...  → logits at 7..31, compared with the naive ones
    for (name, c) in variants() {
        let mut lm = DecoderLm::random(name, c, 7, BackendKind::Flex).unwrap();
        let check = teacher_forced(&mut lm, &tokens(32), 8).unwrap();
        assert_eq!(check.positions, 25, "{name}");
        assert!(check.max_abs_diff < 1e-4, "{name}: max diff {}", check.max_abs_diff);
        assert_eq!(check.argmax_agree, 25, "{name}");
    }
}

#[test]
fn an_8_token_prompt_and_24_new_tokens_project_31_kv_rows_cached_and_468_naive() {
    // cached: 8 prompt rows + 23 fed tokens (the 24th is never fed) = 31
    // naive:  recompute over 8, 9, ..., 31 tokens = 468
    for use_cache in [true, false] {
        let mut s = session(variants()[1].1.clone(), 3);
        let settings = GenerationSettings { use_cache, ..greedy(24) };
        s.start("abcdefgh", &settings).unwrap();
        let last = run_to_stop(&mut s, &settings);
        assert_eq!(last.stop, Some(StopReason::MaxNew));
        assert_eq!(s.generated_ids().len(), 24);
        assert_eq!(last.counters.cached.kv_rows, 31, "use_cache {use_cache}");
        assert_eq!(last.counters.naive.kv_rows, 468, "use_cache {use_cache}");
    }
}

#[test]
fn twelve_steps_from_an_empty_cache_compute_78_scores_cached_and_364_naive() {
    // cached: the query at position i scores i+1 keys: 1 + 2 + ... + 12 = 78
    // naive:  step t rebuilds the causal triangle t(t+1)/2: sum over t = 1..12 = 364
    let mut s = session(variants()[0].1.clone(), 4);
    let settings = greedy(12);
    s.start("a", &settings).unwrap();
    let last = run_to_stop(&mut s, &settings);
    assert_eq!(s.generated_ids().len(), 12);
    assert_eq!(last.counters.cached.scores, 78);
    assert_eq!(last.counters.naive.scores, 364);
}

#[test]
fn the_no_cache_path_gives_the_same_tokens_and_reports_the_live_difference() {
    let c = variants()[2].1.clone();
    let mut with = session(c.clone(), 5);
    let mut without = session(c, 5);
    let on = GenerationSettings { rules: RuleSettings { temperature: 0.8, ..RuleSettings::default() }, max_new: 16, ..GenerationSettings::default() };
    let off = GenerationSettings { use_cache: false, ..on.clone() };
    with.start("hgfe", &on).unwrap();
    without.start("hgfe", &off).unwrap();
    let a = run_to_stop(&mut with, &on);
    let b = run_to_stop(&mut without, &off);
    assert_eq!(with.text(), without.text());
    assert_eq!(with.generated_ids(), without.generated_ids());
    assert!(a.cache_check.is_none());
    let check = b.cache_check.expect("no-cache steps compare the two paths");
    assert!(check.max_abs_diff < 1e-4 && check.argmax_agree);
}

/// A model whose cached path is off by `SKEW` on token 0's logit: which
/// path a session's pending (sampled) logits came from is then plain.
struct SkewedCache(DecoderLm);

const SKEW: f32 = 5.0;

impl LanguageModel for SkewedCache {
    fn info(&self) -> nexttoken::lm::ModelInfo {
        self.0.info()
    }
    fn forward_cached(&mut self, tokens: &[u32]) -> nexttoken::error::Result<Vec<f32>> {
        let mut logits = self.0.forward_cached(tokens)?;
        logits[0] += SKEW;
        Ok(logits)
    }
    fn forward_naive(&mut self, tokens: &[u32]) -> nexttoken::error::Result<Vec<Vec<f32>>> {
        self.0.forward_naive(tokens)
    }
    fn cache_len(&self) -> usize {
        self.0.cache_len()
    }
    fn truncate(&mut self, n: usize) {
        self.0.truncate(n)
    }
    fn counters(&self) -> nexttoken::counters::Counters {
        self.0.counters()
    }
    fn reset_counters(&mut self) {
        self.0.reset_counters()
    }
}

#[test]
fn with_the_cache_off_the_sampled_logits_are_the_full_recompute() {
    let c = variants()[1].1.clone();
    let model = || DecoderLm::random("test", c.clone(), 9, BackendKind::Flex).unwrap();
    // The same weights, unskewed: the full recompute's logits, computed apart.
    let mut reference = model();
    for use_cache in [false, true] {
        let tok = CharTokenizer::new(&CHARS).unwrap();
        let mut s = Session::new(Box::new(SkewedCache(model())), Box::new(tok)).unwrap();
        let settings = GenerationSettings { use_cache, rules: RuleSettings { temperature: 0.9, ..RuleSettings::default() }, ..greedy(8) };
        s.start("abcd", &settings).unwrap();
        for step in 0..6 {
            if step == 4 {
                s.rewind(2, &settings).unwrap();
            }
            let recomputed = reference.forward_naive(&s.history()).unwrap().pop().unwrap();
            let pending = s.pending_logits();
            // Token 0 tells the paths apart; every other logit is the same on both.
            let off = pending[0] - recomputed[0] as f64;
            if use_cache {
                assert!((off - SKEW as f64).abs() < 1e-4, "step {step}: the cache on samples the cached logits ({off})");
            } else {
                for (i, (&p, &r)) in pending.iter().zip(&recomputed).enumerate() {
                    assert!((p - r as f64).abs() < 1e-5, "step {step}, token {i}: {p} is not the recompute's {r}");
                }
                let check = s.preview(&settings).and_then(|_| s.step(&settings)).unwrap().cache_check.unwrap();
                assert!((check.max_abs_diff - SKEW as f64).abs() < 1e-3, "the cached path is the comparison: {check:?}");
                continue;
            }
            s.step(&settings).unwrap();
        }
    }
}

#[test]
fn kv_bytes_follow_two_layers_kv_heads_positions_head_dim_four() {
    let c = variants()[1].1.clone(); // 2 layers, 2 KV heads, head_dim 8
    let mut s = session(c, 6);
    let settings = greedy(5);
    let rep = s.start("abc", &settings).unwrap();
    assert_eq!(rep.kv.len, 3);
    assert_eq!(rep.kv.bytes, 2 * 2 * 2 * 3 * 8 * 4);
    let rep = s.step(&settings).unwrap();
    assert_eq!(rep.kv.len, 4);
    assert_eq!(rep.kv.bytes, 2 * 2 * 2 * 4 * 8 * 4);
}

#[test]
fn rewinding_restores_the_distribution_and_the_draw() {
    let mut s = session(variants()[1].1.clone(), 8);
    let settings = GenerationSettings { rules: RuleSettings { temperature: 1.5, ..RuleSettings::default() }, max_new: 20, ..GenerationSettings::default() };
    s.start("abab", &settings).unwrap();
    let first: Vec<_> = (0..10).map(|_| s.step(&settings).unwrap()).collect();
    let back = s.rewind(4, &settings).unwrap();
    assert_eq!(back.full.as_ref().map(|t| t.generated.len()), Some(4));
    assert_eq!(back.kv.len, 4 + 4);
    // The pending distribution is the one step 5 drew from, to the last bit of f32 arithmetic.
    let (was, now) = (&first[4].distribution.raw_top, &back.distribution.raw_top);
    for (a, b) in was.iter().zip(now) {
        assert_eq!(a.id, b.id);
        assert!((a.prob - b.prob).abs() < 1e-6);
    }
    // And the RNG is back where it was: the same tokens follow.
    for want in &first[4..] {
        let got = s.step(&settings).unwrap();
        assert_eq!(got.chosen.unwrap().id, want.chosen.as_ref().unwrap().id);
    }
}

#[test]
fn a_full_context_stops_or_slides_as_chosen() {
    let mut c = variants()[0].1.clone();
    c.context = 10;
    let mut s = session(c.clone(), 9);
    let settings = GenerationSettings { max_new: 50, ..greedy(50) };
    s.start("abcdef", &settings).unwrap();
    let last = run_to_stop(&mut s, &settings);
    assert_eq!(last.stop, Some(StopReason::ContextFull));
    assert_eq!(last.kv.len, 10);
    assert!(s.start("abcdefghabc", &settings).unwrap_err().message.contains("context"));

    let sliding = GenerationSettings { context_policy: ContextPolicy::Sliding, ..settings };
    let mut s = session(c, 9);
    s.start("abcdefghabc", &sliding).unwrap();
    let last = run_to_stop(&mut s, &sliding);
    assert_eq!(last.stop, Some(StopReason::MaxNew));
    assert_eq!(s.generated_ids().len(), 50);
    assert!(last.kv.len <= 10 && last.kv.dropped > 0);
}

#[test]
fn stop_strings_fire_across_token_boundaries() {
    // Each character is a token, so "cd" can only appear across two tokens.
    let mut s = session(variants()[0].1.clone(), 10);
    let settings = GenerationSettings { rules: RuleSettings { temperature: 1.0, ..RuleSettings::default() }, max_new: 400, ..GenerationSettings::default() };
    s.start("a", &settings).unwrap();
    let mut stopped = None;
    for _ in 0..400 {
        let rep = s.step(&settings).unwrap();
        if rep.stop.is_some() {
            stopped = Some(rep);
            break;
        }
    }
    assert!(stopped.is_some());
    let text: String = s.transcript().generated.iter().map(|t| t.text.clone()).collect();
    let stop = GenerationSettings { stop: vec![text[text.len() - 2..].to_string()], ..settings.clone() };
    // Re-run with the last two characters as the stop string: it must stop exactly where they first appear.
    let mut s2 = session(variants()[0].1.clone(), 10);
    s2.start("a", &stop).unwrap();
    let last = run_to_stop(&mut s2, &stop);
    let got: String = s2.transcript().generated.iter().map(|t| t.text.clone()).collect();
    assert_eq!(last.stop, Some(StopReason::StopString));
    assert!(got.ends_with(&stop.stop[0]) && !got[..got.len() - 1].contains(&stop.stop[0]), "{got:?}");
}

#[test]
fn one_beam_is_greedy_and_beams_are_ranked_by_normalised_score() {
    let c = variants()[1].1.clone();
    let mut s = session(c.clone(), 11);
    let settings = GenerationSettings { beams: 1, alpha: 0.0, ..greedy(6) };
    s.start("abc", &settings).unwrap();
    let beams = s.beam(&settings).unwrap();
    let mut g = session(c, 11);
    g.start("abc", &settings).unwrap();
    let last = run_to_stop(&mut g, &settings);
    assert!(last.stop.is_some());
    let greedy_ids = g.generated_ids();
    assert_eq!(beams.beams[0].tokens, greedy_ids);

    let wide = GenerationSettings { beams: 4, alpha: 0.7, ..greedy(6) };
    let report = s.beam(&wide).unwrap();
    assert_eq!(report.beams.len(), 4);
    for b in &report.beams {
        assert!((b.score - b.logprob / (b.length as f64).powf(0.7)).abs() < 1e-12);
    }
    assert!(report.beams.windows(2).all(|w| w[0].score >= w[1].score));
    // The session itself is untouched by the search, its work counters included.
    let after = s.preview(&settings).unwrap();
    assert_eq!(after.position, 3);
    let rep = s.step(&settings).unwrap();
    assert_eq!(rep.counters.cached.kv_rows, 3 + 1);
    assert_eq!(rep.counters.naive.kv_rows, 3 + 4);
}

#[test]
fn a_beam_search_by_depths_equals_one_call_and_a_step_cancels_it() {
    let c = variants()[1].1.clone();
    let wide = GenerationSettings { beams: 3, alpha: 0.7, ..greedy(6) };
    let mut whole = session(c.clone(), 11);
    whole.start("abc", &wide).unwrap();
    let expected = whole.beam(&wide).unwrap();

    let mut s = session(c.clone(), 11);
    s.start("abc", &wide).unwrap();
    let first = s.beam_start(&wide).unwrap();
    assert_eq!((first.depth, first.of, first.done), (0, 6, false));
    let mut depths = Vec::new();
    loop {
        let p = s.beam_next().unwrap();
        depths.push(p.depth);
        if p.done {
            break;
        }
    }
    assert_eq!(depths, (1..=depths.len()).collect::<Vec<_>>());
    assert_eq!(s.beam_finish().unwrap(), expected);
    assert!(s.beam_next().is_err(), "the search has ended");

    // A step in the middle of a search cancels it and draws exactly what it
    // would have drawn with no search at all.
    let mut plain = session(c.clone(), 11);
    plain.start("abc", &wide).unwrap();
    let want = plain.step(&wide).unwrap();
    let mut t = session(c, 11);
    t.start("abc", &wide).unwrap();
    t.beam_start(&wide).unwrap();
    t.beam_next().unwrap();
    t.beam_next().unwrap();
    let got = t.step(&wide).unwrap();
    assert_eq!(got.chosen, want.chosen);
    assert_eq!(got.distribution, want.distribution);
    assert!(t.beam_next().is_err(), "the step cancelled the search");
}

#[cfg(feature = "ndarray")]
#[test]
fn flex_and_ndarray_give_the_same_logits() {
    use nexttoken::weights::{load_weights, weights_to_bytes};
    for (name, c) in variants() {
        let flex = DecoderLm::random(name, c.clone(), 12, BackendKind::Flex).unwrap();
        let bytes = weights_to_bytes(&flex.model).unwrap();
        let device = BackendKind::Ndarray.device().unwrap();
        let model = load_weights(&c, bytes, &device).unwrap();
        let mut nd = DecoderLm::new(name, c, model, BackendKind::Ndarray).unwrap();
        let mut flex = flex;
        let a = flex.forward_naive(&tokens(20)).unwrap();
        let b = nd.forward_naive(&tokens(20)).unwrap();
        let diff = a.iter().flatten().zip(b.iter().flatten()).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
        assert!(diff < 1e-5, "{name}: flex vs ndarray differ by {diff}");
        let check = teacher_forced(&mut nd, &tokens(32), 8).unwrap();
        assert!(check.max_abs_diff < 1e-4, "{name} on ndarray: {}", check.max_abs_diff);
    }
}

#[test]
fn a_seed_means_the_same_weights_and_another_seed_other_weights() {
    // Compared through the logits: SafeTensors files may order their tensors differently.
    let c = variants()[1].1.clone();
    let logits = |seed| DecoderLm::random("s", c.clone(), seed, BackendKind::Flex).unwrap().forward_naive(&tokens(12)).unwrap();
    let (a, b, other) = (logits(5), logits(5), logits(6));
    assert_eq!(a, b);
    assert_ne!(a, other);
}

/// A character vocabulary that asks for a BOS token and ends generation on
/// one chosen token (as Gemma's `<bos>` and `<end_of_turn>`).
struct BosChars {
    inner: CharTokenizer,
    bos: u32,
    end: u32,
}

impl Tokenizer for BosChars {
    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }
    fn encode(&self, text: &str) -> nexttoken::error::Result<Vec<u32>> {
        self.inner.encode(text)
    }
    fn token_bytes(&self, id: u32) -> Vec<u8> {
        self.inner.token_bytes(id)
    }
    fn eos_id(&self) -> Option<u32> {
        None
    }
    fn bos_to_add(&self) -> Option<u32> {
        Some(self.bos)
    }
    fn ends_generation(&self, id: u32) -> bool {
        id == self.end
    }
}

#[test]
fn prompts_start_with_the_bos_token_and_an_end_of_generation_token_stops() {
    let c = variants()[0].1.clone();
    let bos = 7;
    // The first token the model picks after BOS + "abc", found without the wrapper.
    let mut plain = session(c.clone(), 5);
    plain.start_tokens(&[bos, 0, 1, 2], &greedy(4)).unwrap();
    let first = plain.step(&greedy(4)).unwrap().chosen.unwrap().id;

    let lm = DecoderLm::random("test", c, 5, BackendKind::Flex).unwrap();
    let tok = BosChars { inner: CharTokenizer::new(&CHARS).unwrap(), bos, end: first };
    let mut s = Session::new(Box::new(lm), Box::new(tok)).unwrap();
    assert_eq!(s.encode_prompt("abc", false).unwrap(), vec![bos, 0, 1, 2]);
    assert!(s.start("", &greedy(4)).unwrap_err().message.contains("empty"), "no BOS alone for an empty prompt");
    s.start("abc", &greedy(4)).unwrap();
    let last = run_to_stop(&mut s, &greedy(4));
    assert_eq!(s.generated_ids(), vec![first]);
    assert_eq!(last.stop, Some(StopReason::Eos));
}
