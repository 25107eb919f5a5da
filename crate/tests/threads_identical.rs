//! The same answers at any thread count: the kernels split a product into
//! bands of output columns (`nexttoken::threads`), each value computed as on
//! one thread, so SmolLM2 and Gemma 3 270M give bit-identical logits, and a
//! seeded sampling session the same tokens, probabilities and reports, on 1,
//! 2 and 4 threads. Each run is inside a rayon pool of that size, which is
//! what the kernels (and burn's own parallel operations) split over.
//!
//! The files come from `pkg-scripts/fetch-smollm2` and `fetch-gemma3`
//! (`pkg-scripts/test` requires them; elsewhere a missing file skips).
#![cfg(feature = "threads")]

mod llamacpp_support;

use llamacpp_support::real_model;
use nexttoken::backend::BackendKind;
use nexttoken::gguf::{self, WeightStorage};
use nexttoken::lm::LanguageModel;
use nexttoken::session::GenerationSettings;

const THREADS: [usize; 3] = [1, 2, 4];
const PROMPT: &str = "The best way to learn a language is to read a great deal of it, and then";

fn on_threads<R: Send>(n: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new().num_threads(n).build().expect("a thread pool").install(f)
}

/// Every logit of a prefill of the prompt and 12 greedy steps, as bits.
fn logits_bits(bytes: &[u8], name: &str) -> Vec<Vec<u32>> {
    let (mut lm, tok) = gguf::model_from_gguf(bytes.to_vec(), name, BackendKind::Flex, WeightStorage::Blocks).expect("the model loads");
    let ids = nexttoken::tokenizer::Tokenizer::encode(&tok, PROMPT).unwrap();
    let mut out = Vec::new();
    let mut logits = lm.forward_cached(&ids).unwrap();
    for _ in 0..12 {
        out.push(logits.iter().map(|v| v.to_bits()).collect::<Vec<u32>>());
        let next = (0..logits.len()).max_by(|&a, &b| logits[a].total_cmp(&logits[b])).unwrap() as u32;
        logits = lm.forward_cached(&[next]).unwrap();
    }
    out
}

/// A seeded sampling session's 16 reports, as JSON without the timings.
fn session_reports(bytes: &[u8], name: &str) -> Vec<serde_json::Value> {
    let mut s = gguf::session_from_gguf(bytes.to_vec(), name, BackendKind::Flex).expect("the model loads");
    let mut settings = GenerationSettings { seed: 11, max_new: 16, ..GenerationSettings::default() };
    settings.rules.temperature = 0.9;
    settings.stop.clear();
    let mut reports = vec![s.start(PROMPT, &settings).unwrap()];
    for _ in 0..16 {
        let r = s.step(&settings).unwrap();
        let stop = r.stop.is_some();
        reports.push(r);
        if stop {
            break;
        }
    }
    reports
        .iter()
        .map(|r| serde_json::json!({ "distribution": r.distribution, "chosen": r.chosen, "stop": r.stop, "text": r.text_delta, "kv": r.kv }))
        .collect()
}

fn check(name: &str, file: &str) {
    let Some(bytes) = real_model(file) else { return };
    let reference = on_threads(1, || logits_bits(&bytes, name));
    let reports = on_threads(1, || session_reports(&bytes, name));
    for n in &THREADS[1..] {
        let got = on_threads(*n, || logits_bits(&bytes, name));
        for (i, (a, b)) in reference.iter().zip(&got).enumerate() {
            let differing = a.iter().zip(b).filter(|(x, y)| x != y).count();
            assert_eq!(differing, 0, "{name}, {n} threads: {differing} logits of position {i} differ from one thread's");
        }
        assert_eq!(on_threads(*n, || session_reports(&bytes, name)), reports, "{name}, {n} threads: the session's reports");
    }
}

#[test]
fn smollm2_is_bit_identical_on_1_2_and_4_threads() {
    check("smollm2-135m", "smollm2");
}

#[test]
fn gemma3_is_bit_identical_on_1_2_and_4_threads() {
    check("gemma3-270m", "gemma3");
}
