//! NaN and infinite logits (a corrupted model) are refused where they come
//! out of the model, with the position and the count, and never drawn from:
//! through the session (start, step, preview, rewind, beams), scoring, and
//! the CLI on a copy of the shipped model with one poisoned embedding row.

use nexttoken::backend::BackendKind;
use nexttoken::config::{MlpKind, ModelConfig, NormKind, Positions, RopeStyle};
use nexttoken::error::Result;
use nexttoken::lm::LanguageModel;
use nexttoken::model::DecoderLm;
use nexttoken::rules::RuleSettings;
use nexttoken::session::{GenerationSettings, Session};
use nexttoken::tokenizer::CharTokenizer;

const CHARS: [char; 8] = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

fn config() -> ModelConfig {
    ModelConfig {
        vocab_size: CHARS.len(),
        d_model: 16,
        n_layers: 1,
        n_heads: 2,
        n_kv_heads: 1,
        head_dim: 8,
        d_ff: 24,
        context: 32,
        positions: Positions::Rope { base: 10000.0, style: RopeStyle::RotateHalf },
        norm: NormKind::RmsNorm,
        norm_eps: 1e-5,
        mlp: MlpKind::SwiGlu,
        tied_embeddings: true,
        bias: false,
        options: Default::default(),
    }
}

/// A real model whose logits predicting position `at` are poisoned with
/// `bad` at token ids 1, 3 and 4 (only on the cached path when `naive_clean`).
struct Poisoned {
    lm: DecoderLm,
    at: usize,
    bad: [f32; 3],
    naive_clean: bool,
}

impl Poisoned {
    fn new(at: usize, bad: [f32; 3]) -> Self {
        Poisoned { lm: DecoderLm::random("poisoned", config(), 3, BackendKind::Flex).unwrap(), at, bad, naive_clean: false }
    }
    fn poison(&self, row: &mut [f32], predicts: usize) {
        if predicts == self.at {
            for (&id, &v) in [1, 3, 4].iter().zip(&self.bad) {
                row[id] = v;
            }
        }
    }
}

impl LanguageModel for Poisoned {
    fn info(&self) -> nexttoken::lm::ModelInfo {
        self.lm.info()
    }
    fn forward_cached(&mut self, tokens: &[u32]) -> Result<Vec<f32>> {
        let mut row = self.lm.forward_cached(tokens)?;
        self.poison(&mut row, self.lm.cache_len());
        Ok(row)
    }
    fn forward_naive(&mut self, tokens: &[u32]) -> Result<Vec<Vec<f32>>> {
        let mut rows = self.lm.forward_naive(tokens)?;
        if !self.naive_clean {
            for (i, row) in rows.iter_mut().enumerate() {
                self.poison(row, i + 1);
            }
        }
        Ok(rows)
    }
    fn cache_len(&self) -> usize {
        self.lm.cache_len()
    }
    fn truncate(&mut self, n: usize) {
        self.lm.truncate(n)
    }
    fn counters(&self) -> nexttoken::counters::Counters {
        self.lm.counters()
    }
    fn reset_counters(&mut self) {
        self.lm.reset_counters()
    }
}

fn session(model: Poisoned) -> Session {
    Session::new(Box::new(model), Box::new(CharTokenizer::new(&CHARS).unwrap())).unwrap()
}

fn sampling(use_cache: bool) -> GenerationSettings {
    GenerationSettings {
        use_cache,
        rules: RuleSettings { temperature: 1.0, ..RuleSettings::default() },
        max_new: 20,
        ..GenerationSettings::default()
    }
}

const NAN_NAN_INF: [f32; 3] = [f32::NAN, f32::NAN, f32::INFINITY];

fn assert_broken_at(result: std::result::Result<impl std::fmt::Debug, nexttoken::error::Error>, at: usize, counts: &str) {
    let e = result.expect_err("broken logits must be refused");
    let want = format!("the model's logits at position {at} are broken: {counts} of 8 values (the first at token id 1)");
    assert!(e.message.starts_with(&want), "got: {e}\nwanted it to start with: {want}");
    assert!(e.message.contains("nothing is sampled"), "{e}");
}

/// All 8 tokens are shown (top_n is 10) with finite probabilities summing to 1.
fn assert_usable(d: &nexttoken::report::Distribution) {
    assert_eq!(d.raw_top.len(), 8);
    let total: f64 = d.raw_top.iter().map(|t| t.prob).sum();
    assert!(d.raw_top.iter().all(|t| t.prob.is_finite() && t.logit.is_finite()));
    assert!((total - 1.0).abs() < 1e-9, "a distribution ({total})");
}

#[test]
fn a_poisoned_position_is_refused_by_every_call_and_nothing_is_drawn_from_it() {
    for use_cache in [true, false] {
        let settings = sampling(use_cache);
        // "abcd" is 4 tokens: the prompt's logits predict position 4; 6 is two draws on.
        let mut s = session(Poisoned::new(6, NAN_NAN_INF));
        s.start("abcd", &settings).unwrap();
        s.step(&settings).unwrap();
        s.step(&settings).unwrap(); // feeds the token at position 5: the logits for 6 are the broken ones
        assert_eq!(s.history().len(), 6);
        assert_eq!(s.pending_position(), 6);
        assert_broken_at(s.step(&settings), 6, "2 NaN, 1 +inf");
        assert_eq!(s.history().len(), 6, "a refused step draws nothing (use_cache {use_cache})");
        assert_broken_at(s.preview(&settings), 6, "2 NaN, 1 +inf");
        let beams = GenerationSettings { beams: 2, max_new: 3, ..settings.clone() };
        assert_broken_at(s.beam(&beams), 6, "2 NaN, 1 +inf");
        // Rewinding to before the broken position gives a usable distribution back.
        let back = s.rewind(1, &settings).unwrap();
        assert_eq!(s.pending_position(), 5);
        assert_eq!(back.distribution.position, 5);
        assert_usable(&back.distribution);
        s.step(&settings).unwrap();
        assert_broken_at(s.step(&settings), 6, "2 NaN, 1 +inf");
    }
}

#[test]
fn broken_prompt_logits_fail_the_start_and_minus_infinity_is_refused_too() {
    let settings = sampling(true);
    let mut s = session(Poisoned::new(4, [f32::NEG_INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY]));
    assert_broken_at(s.start("abcd", &settings), 4, "3 -inf");
    assert_broken_at(s.preview(&settings), 4, "3 -inf");
    // The same model is fine where it is not poisoned.
    let report = s.start("abc", &settings).unwrap();
    assert_usable(&report.distribution);
    assert!(s.step(&settings).is_ok(), "position 3 is clean");
    assert_broken_at(s.step(&settings), 4, "3 -inf");
}

#[test]
fn a_beam_search_refuses_broken_logits_it_reaches_on_its_own() {
    // Pending is clean at position 4; a beam's second depth computes position 5.
    let mut s = session(Poisoned::new(5, NAN_NAN_INF));
    let settings = sampling(true);
    s.start("abcd", &settings).unwrap();
    let beams = GenerationSettings { beams: 2, max_new: 3, ..settings.clone() };
    assert_broken_at(s.beam(&beams), 5, "2 NaN, 1 +inf");
    // The session is put back: its own position still draws.
    assert_eq!(s.pending_position(), 4);
    assert!(s.step(&settings).is_ok());
}

#[test]
fn with_the_cache_off_a_broken_cached_path_is_reported_as_a_nan_difference() {
    // The sampled logits are the recompute's (clean); the cached ones only the comparison.
    let mut model = Poisoned::new(5, NAN_NAN_INF);
    model.naive_clean = true;
    let mut s = session(model);
    let settings = sampling(false);
    s.start("abcd", &settings).unwrap();
    let report = s.step(&settings).unwrap(); // feeds position 4: cached logits for 5 are broken
    assert!(report.cache_check.unwrap().max_abs_diff.is_nan(), "{:?}", report.cache_check);
    assert!(s.step(&settings).is_ok(), "the recomputed logits it samples from are clean");
}

#[test]
fn scoring_names_the_broken_position() {
    let mut s = session(Poisoned::new(3, NAN_NAN_INF));
    assert_broken_at(s.score("abcdef", false), 3, "2 NaN, 1 +inf");
    assert!(s.score("ab", false).is_ok(), "positions 1 and 2 are clean");
}

/// The CLI on a copy of `bard` whose embedding row 2047 is NaN: with tied
/// embeddings that row is also the head's, so exactly one logit in 2,048 is
/// NaN at every position (while the prompt avoids token 2047).
#[cfg(feature = "cli")]
#[test]
fn the_cli_exits_with_the_message_on_a_corrupted_model() {
    use std::process::Command;
    let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../www/models/bard");
    let dir = std::env::temp_dir().join(format!("nexttoken-broken-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["model.json", "tokenizer.json"] {
        std::fs::copy(shipped.join(f), dir.join(f)).unwrap();
    }
    let mut bytes = std::fs::read(shipped.join("model.safetensors")).unwrap();
    let header_len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + header_len]).unwrap();
    let emb = &header["tok_emb.weight"];
    assert_eq!(emb["dtype"], "F32");
    assert_eq!(emb["shape"], serde_json::json!([2048, 192]));
    let start = 8 + header_len + emb["data_offsets"][0].as_u64().unwrap() as usize + 2047 * 192 * 4;
    for v in bytes[start..start + 192 * 4].chunks_exact_mut(4) {
        v.copy_from_slice(&f32::NAN.to_le_bytes());
    }
    std::fs::write(dir.join("model.safetensors"), &bytes).unwrap();

    // The prompt's length in tokens, from the shipped (clean) model's tokenizer.
    let clean = nexttoken::loader::session_from_path(&shipped, BackendKind::Flex).unwrap();
    let prompt_ids = clean.tokenizer().encode("ROMEO:").unwrap();
    assert!(!prompt_ids.contains(&2047));

    let out = Command::new(env!("CARGO_BIN_EXE_nexttoken"))
        .args(["generate", "--model", dir.to_str().unwrap(), "--prompt", "ROMEO:", "--max-new", "5", "--seed", "1"])
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    let want = format!(
        "error: the model's logits at position {} are broken: 1 NaN of 2048 values (the first at token id 2047)",
        prompt_ids.len()
    );
    assert!(stderr.contains(&want), "stderr: {stderr}\nwanted: {want}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
