//! The sliding-window layers' ring of KV pages (`kv_cache::ring`) against
//! the recompute path, which masks the same windows over every position
//! with burn's tensor operations and keeps no cache at all.
//!
//! Two models: the tiny Gemma 3 file of the llama.cpp fixtures
//! (`tests/fixtures/families/gemma3.gguf`: 8 layers, layer 5 global, the
//! others local with a window of 8, far inside a page), its context widened
//! so texts run over several rings; and random weights with a window of 200
//! (wider than a page, so a window spans pages). Both run with an f32 cache,
//! so the cached and the recomputed logits differ by f32 rounding only.
//!
//! With the Gemma 3 270M file present (`pkg-scripts/fetch-gemma3`), the last
//! test measures its cache at 1,000 tokens (`--nocapture`).

use nexttoken::backend::BackendKind;
use nexttoken::beam;
use nexttoken::config::{DecoderOptions, MlpKind, ModelConfig, NormKind, Positions, RopeStyle, SlidingWindow};
use nexttoken::counters::Counters;
use nexttoken::error::Result;
use nexttoken::gguf::{self, WeightStorage};
use nexttoken::kv_cache::{KvPrecision, PAGE, ring};
use nexttoken::lm::{LanguageModel, ModelInfo};
use nexttoken::model::DecoderLm;
use nexttoken::rules::RuleSettings;
use nexttoken::session::{GenerationSettings, Session};
use nexttoken::tokenizer::{BpeTokenizer, CharTokenizer, Tokenizer};

const CHARS: [char; 12] = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'];

/// The tiny Gemma 3 file with its context widened to `context`, an f32 cache.
fn tiny_gemma(context: usize) -> (DecoderLm, BpeTokenizer) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/families/gemma3.gguf");
    let bytes = std::fs::read(path).expect("the tiny gemma3 file is committed");
    let (lm, tok) = gguf::model_from_gguf(bytes, "tiny-gemma3", BackendKind::Flex, WeightStorage::Blocks).unwrap();
    let config = ModelConfig { context, ..lm.config.clone() };
    let mut lm = DecoderLm::new("tiny-gemma3", config, lm.model, BackendKind::Flex).unwrap();
    lm.set_kv_precision(KvPrecision::F32).unwrap();
    (lm, tok)
}

/// Random weights, Gemma's options, layers local, global, local with a
/// window of 200 (and the local rotary base of their own).
fn wide_window() -> DecoderLm {
    let config = ModelConfig {
        vocab_size: CHARS.len(),
        d_model: 32,
        n_layers: 3,
        n_heads: 2,
        n_kv_heads: 1,
        head_dim: 16,
        d_ff: 48,
        context: 1200,
        positions: Positions::Rope { base: 1e6, style: RopeStyle::RotateHalf },
        norm: NormKind::RmsNorm,
        norm_eps: 1e-6,
        mlp: MlpKind::GeGlu,
        tied_embeddings: true,
        bias: false,
        options: DecoderOptions {
            qk_norm: true,
            post_norms: true,
            embed_scale: Some(32f64.sqrt()),
            sliding_window: Some(SlidingWindow { size: 200, local: vec![true, false, true], rope_base: Some(1e4) }),
            ..DecoderOptions::default()
        },
    };
    DecoderLm::random("wide-window", config, 5, BackendKind::Flex).unwrap()
}

/// Token ids 0..vocab in a fixed pseudo-random walk (seeded by `salt`).
fn text(n: usize, vocab: usize, salt: usize) -> Vec<u32> {
    (0..n).map(|i| ((i * 7 + salt + (i * i + salt) / 5) % vocab) as u32).collect()
}

fn worst(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// Logits of a cache and of the recompute agree to this (f32 rounding of
/// sums over a few hundred terms in another order).
const TOL: f32 = 1e-4;

fn local_layers(lm: &DecoderLm) -> Vec<usize> {
    lm.info().sliding_window.expect("a sliding-window model").local_layers
}

/// (a) and (b): a text of several rings, fed as a prompt and then in
/// pieces of 1 to 130 tokens (one crosses a page boundary): after each piece
/// the logits are the recompute's at that position, every local layer holds
/// at most its ring (and has recycled the start), every global layer holds
/// every position, and the report's bytes are those positions'.
#[test]
fn the_ring_gives_the_recompute_logits_and_stays_bounded() {
    let models = [tiny_gemma(1200).0, wide_window()];
    for mut lm in models {
        let name = lm.name.clone();
        let info = lm.info();
        let window = info.sliding_window.clone().unwrap();
        let locals = local_layers(&lm);
        assert!(!locals.is_empty() && locals.len() < info.layers, "{name}: local and global layers");
        let ids = text(1100, info.vocab_size, 3);
        let naive = lm.forward_naive(&ids).unwrap();
        let mut pieces = [300, 1, 7, 130, 1, 1, 60, 1, 200].into_iter().cycle();
        let (mut fed, mut most) = (0, 0);
        while fed < ids.len() {
            let n = pieces.next().unwrap().min(ids.len() - fed);
            let got = lm.forward_cached(&ids[fed..fed + n]).unwrap();
            fed += n;
            let gap = worst(&got, &naive[fed - 1]);
            assert!(gap < TOL, "{name}: after {fed} tokens the cached logits differ from the recompute's by {gap}");
            let cache = lm.cache();
            for layer in 0..info.layers {
                let allocated = cache.allocated_in(layer);
                if locals.contains(&layer) {
                    assert!(allocated <= window.ring, "{name}, layer {layer} at {fed}: {allocated} positions, ring {}", window.ring);
                    most = most.max(allocated);
                } else {
                    assert_eq!(allocated, fed.div_ceil(PAGE) * PAGE, "{name}, global layer {layer} at {fed}");
                }
            }
        }
        assert!(window.ring < ids.len() / 2 && most > window.size, "{name}: the text runs over the ring ({most} of {})", window.ring);
        for &l in &locals {
            assert!(!lm.cache().held_in(l)[0], "{name}: layer {l} recycled its first page");
        }
        let held = lm.kv_held();
        let per_position = 2 * info.kv_heads * info.head_dim * 4;
        assert_eq!(held.global_positions, ids.len());
        assert_eq!(held.global_bytes, (info.layers - locals.len()) * ids.len() * per_position);
        assert!(held.local_positions >= window.size && held.local_positions <= window.ring);
        assert_eq!(held.local_bytes, locals.len() * held.local_positions * per_position);
    }
}

/// Feeds `more` after a rewind and checks the logits after each piece
/// against the recompute over the same ids.
fn continue_and_check(lm: &mut DecoderLm, ids: &mut Vec<u32>, more: &[u32], what: &str) {
    for piece in more.chunks(37) {
        let got = lm.forward_cached(piece).unwrap();
        ids.extend_from_slice(piece);
        assert_eq!(lm.cache_len(), ids.len(), "{what}");
        let want = lm.forward_naive_last(ids).unwrap();
        let gap = worst(&got, &want);
        assert!(gap < TOL, "{what}: at {} the logits differ from a fresh run's by {gap}", ids.len());
    }
}

/// (c): stepping back by 1, by less than the slack (no recompute), and by
/// more than the ring (the text is fed again from its start), then going
/// on with other tokens: the logits are a fresh run's on the same ids.
#[test]
fn stepping_back_within_and_past_the_ring_gives_a_fresh_runs_logits() {
    let models = [tiny_gemma(1200).0, wide_window()];
    for mut lm in models {
        let name = lm.name.clone();
        let info = lm.info();
        let ring_len = info.sliding_window.clone().unwrap().ring;
        let vocab = info.vocab_size;
        let mut ids = text(800, vocab, 1);
        lm.forward_cached(&ids[..500]).unwrap();
        for &id in &ids[500..] {
            lm.forward_cached(&[id]).unwrap();
        }
        let last = *ids.last().unwrap();

        // By one: the last token again.
        lm.truncate(799);
        ids.truncate(799);
        continue_and_check(&mut lm, &mut ids, &[last], &format!("{name}, back by 1"));
        assert_eq!(lm.refills(), 0, "{name}: a step back by one needs no recompute");

        // By less than the slack, then other tokens.
        let back = ring::SLACK - 10;
        lm.truncate(ids.len() - back);
        ids.truncate(ids.len() - back);
        continue_and_check(&mut lm, &mut ids, &text(back + 40, vocab, 2), &format!("{name}, back by {back}"));
        assert_eq!(lm.refills(), 0, "{name}: a step back within the slack needs no recompute");

        // Past the ring: fed again from position 0, once.
        let to = ids.len() - ring_len - 50;
        lm.truncate(to);
        ids.truncate(to);
        assert_eq!(lm.cache_len(), to);
        continue_and_check(&mut lm, &mut ids, &text(150, vocab, 4), &format!("{name}, back to {to}"));
        assert_eq!(lm.refills(), 1, "{name}: a step back past the ring feeds the text again, once");

        // And a rewind to the start needs nothing held.
        lm.truncate(0);
        ids.clear();
        continue_and_check(&mut lm, &mut ids, &text(40, vocab, 5), &format!("{name}, from the start"));
        assert_eq!(lm.refills(), 1);
    }
}

/// Every beam's logits recomputed from scratch over its whole text: the
/// reference a cache must agree with (the cache is only the ids).
struct Recompute {
    lm: DecoderLm,
    ids: Vec<u32>,
}

impl LanguageModel for Recompute {
    fn info(&self) -> ModelInfo {
        self.lm.info()
    }
    fn forward_cached(&mut self, tokens: &[u32]) -> Result<Vec<f32>> {
        self.ids.extend_from_slice(tokens);
        self.lm.forward_naive_last(&self.ids)
    }
    fn forward_naive(&mut self, tokens: &[u32]) -> Result<Vec<Vec<f32>>> {
        self.lm.forward_naive(tokens)
    }
    fn cache_len(&self) -> usize {
        self.ids.len()
    }
    fn truncate(&mut self, n: usize) {
        self.ids.truncate(n);
    }
    fn counters(&self) -> Counters {
        self.lm.counters()
    }
    fn reset_counters(&mut self) {
        self.lm.reset_counters()
    }
}

/// (d): beam search from a prompt past the window, its beams running
/// deeper than the slack and across page boundaries, gives the beams the
/// recompute gives, and every rewind to its start finds the ring there.
#[test]
fn beam_search_across_the_window_edge_gives_the_recomputed_beams() {
    let (gemma, gemma_tok) = tiny_gemma(1200);
    let (gemma_ref, _) = tiny_gemma(1200);
    let chars = CharTokenizer::new(&CHARS).unwrap();
    let cases: [(DecoderLm, DecoderLm, &dyn Tokenizer, usize); 2] =
        [(gemma, gemma_ref, &gemma_tok, ring::SLACK + 20), (wide_window(), wide_window(), &chars, 40)];
    for (mut lm, reference, tok, depth) in cases {
        let name = lm.name.clone();
        // The prompt ends 10 short of a page, so the beams cross into the next one.
        let prompt = text(2 * PAGE - 10, lm.info().vocab_size, 6);
        let settings = GenerationSettings { beams: 3, max_new: depth, alpha: 0.7, ..GenerationSettings::default() };
        let pending: Vec<f64> = lm.forward_cached(&prompt).unwrap().iter().map(|&x| x as f64).collect();
        let got = beam::search(&mut lm, tok, &prompt, &pending, &settings).unwrap();
        let mut reference = Recompute { lm: reference, ids: prompt.clone() };
        let want = beam::search(&mut reference, tok, &prompt, &pending, &settings).unwrap();
        assert_eq!(got.beams.len(), want.beams.len(), "{name}");
        for (g, w) in got.beams.iter().zip(&want.beams) {
            assert_eq!(g.tokens, w.tokens, "{name}: the same beams");
            assert!((g.logprob - w.logprob).abs() < 1e-3, "{name}: log-probabilities {} and {}", g.logprob, w.logprob);
        }
        assert!(got.beams.iter().any(|b| b.length > 10), "{name}: the beams cross the page boundary");
        assert_eq!(lm.refills(), 0, "{name}: every rewind to the search's start found its ring");
        let ring_len = lm.info().sliding_window.unwrap().ring;
        for l in local_layers(&lm) {
            assert!(lm.cache().allocated_in(l) <= 2 * ring_len, "{name}: the search's start keeps a second ring at most");
        }
    }
}

/// The session's step-back on the tiny Gemma 3 file: rewound to a point
/// its local layers recycled long ago (the text is fed again), the pending
/// distribution is the one that step drew from and the same tokens follow;
/// the report's bytes are the cache's, by kind of layer.
#[test]
fn the_session_rewinds_past_the_ring_to_the_same_distribution_and_draws() {
    let (lm, tok) = tiny_gemma(1200);
    let info = lm.info();
    let ring_len = info.sliding_window.clone().unwrap().ring;
    let mut s = Session::new(Box::new(lm), Box::new(tok)).unwrap();
    let settings = GenerationSettings { rules: RuleSettings { temperature: 1.5, ..RuleSettings::default() }, max_new: 700, ..GenerationSettings::default() };
    let start = s.start("Once upon a time", &settings).unwrap();
    let prompt = start.kv.len;
    let first: Vec<_> = (0..ring_len + 150).map(|_| s.step(&settings).unwrap()).collect();
    let last = first.last().unwrap();
    let per_position = 2 * info.kv_heads * info.head_dim * info.bytes_per_number;
    assert!(last.kv.local_positions <= ring_len && last.kv.len == prompt + first.len());
    assert_eq!(last.kv.global_bytes, last.kv.len * per_position, "one global layer holds every position");
    assert_eq!(last.kv.local_bytes, 7 * last.kv.local_positions * per_position);
    assert_eq!(last.kv.bytes, last.kv.global_bytes + last.kv.local_bytes);
    let n = 40;
    let back = s.rewind(n, &settings).unwrap();
    assert_eq!(back.kv.len, prompt + n);
    let (was, now) = (&first[n].distribution.raw_top, &back.distribution.raw_top);
    for (a, b) in was.iter().zip(now) {
        assert_eq!(a.id, b.id);
        assert!((a.prob - b.prob).abs() < 1e-4, "{} against {}", a.prob, b.prob);
    }
    for want in &first[n..n + 20] {
        let got = s.step(&settings).unwrap();
        assert_eq!(got.chosen.unwrap().id, want.chosen.as_ref().unwrap().id);
    }
}

/// Gemma 3 270M at 1,000 tokens: the bytes each kind of layer holds in
/// the page's f16 cache, against what every layer holding every position
/// would take (`--nocapture` prints them); and in f32, the logits at the
/// end are the recompute's, its local layers past their ring.
#[test]
fn gemma3_270m_holds_a_ring_in_its_local_layers() {
    let path = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../www/models/gemma3/gemma-3-270m-q4_k_m.gguf"));
    let Ok(bytes) = std::fs::read(&path) else {
        if std::env::var("NEXTTOKEN_REQUIRE_GEMMA3").is_ok_and(|v| v == "1") {
            panic!("{} is required (NEXTTOKEN_REQUIRE_GEMMA3=1)", path.display());
        }
        eprintln!("SKIPPED: {} is absent; run pkg-scripts/fetch-gemma3", path.display());
        return;
    };
    let (mut lm, _tok) = gguf::model_from_gguf(bytes, "gemma3-270m", BackendKind::Flex, WeightStorage::Blocks).unwrap();
    let info = lm.info();
    let window = info.sliding_window.clone().expect("Gemma 3 has local layers");
    assert_eq!((window.size, window.local_layers.len(), info.layers), (512, 15, 18));
    let ids = text(1000, 256_000, 11);
    lm.forward_cached(&ids).unwrap();
    let held = lm.kv_held();
    let all = 2 * info.layers * info.kv_heads * ids.len() * info.head_dim * info.bytes_per_number;
    eprintln!(
        "Gemma 3 270M at {} tokens, {} KV cache: global layers {} B ({} positions each), local layers {} B ({} positions each, ring {}); \
         in all {} B, where every layer holding every position would be {all} B",
        ids.len(),
        lm.cache().precision().name(),
        held.global_bytes,
        held.global_positions,
        held.local_bytes,
        held.local_positions,
        window.ring,
        held.global_bytes + held.local_bytes
    );
    assert!(held.local_positions <= window.ring && held.global_positions == ids.len());
    // The same text with the weights in f32 and an f32 cache, against the
    // recompute: f32 rounding apart. (With the file's blocks both paths
    // round the activations to 8 bits, and a rounding flipped by an f32
    // difference moves the logits by up to 1; `gemma3_gguf` checks that
    // path against llama.cpp.)
    drop(lm);
    let (mut lm, _tok) = gguf::model_from_gguf(std::fs::read(&path).unwrap(), "gemma3-270m", BackendKind::Flex, WeightStorage::F32).unwrap();
    lm.set_kv_precision(KvPrecision::F32).unwrap();
    let cached = lm.forward_cached(&ids).unwrap();
    let recomputed = lm.forward_naive_last(&ids).unwrap();
    let gap = worst(&cached, &recomputed);
    eprintln!("f32 cache against the recompute at 1,000 tokens: largest logit difference {gap}");
    assert!(gap < 1e-2, "the cached logits at 1,000 tokens differ from the recompute's by {gap}");
}
