//! The inside view of the two real models against Hugging Face transformers
//! (`tests/fixtures/inside-transformers.json`, written by
//! `pkg-scripts/make-inside-fixtures`: transformers loads the same GGUF
//! files, dequantised, and runs them in f32 with eager attention): each
//! layer's attention row of the last query, and the logit lens of each
//! layer, after the same token ids.
//!
//! # Tolerance
//! The engine, like llama.cpp, rounds the activations entering each
//! quantised product to 8 bits and keeps its keys and values in f16;
//! transformers computes in f32. How far that arithmetic alone moves the
//! numbers is in the fixture: the script runs transformers a second time
//! with exactly that rounding (`models.<m>.rounding`: per module, the
//! activation blocks llama.cpp uses for that weight's type, and f16 keys
//! and values after the norm and rotation) and records the largest gap to
//! its own f32 run: attention 0.059 (SmolLM2) and 0.045 (Gemma 3), the lens
//! over every layer 0.56 / 0.44 and 2.40 / 2.05 (raw / centred, as
//! `llamacpp_support::compare` measures). Rounding is one random draw of
//! errors (its variants in the fixture differ by up to 2×), so the
//! tolerance is 1.5 times each, as the llama.cpp comparisons take 1.5 times
//! llama.cpp's own rounding. Measured against the f32 run: attention 0.067
//! and 0.032, the lens 0.57 / 0.42 and 1.76 / 0.64. The top-1 of a layer is
//! checked wherever transformers' top-2 margin exceeds the centred tolerance.
//!
//! The last lens layer is the step's own logits, exactly.

mod llamacpp_support;

use llamacpp_support::{Gap, compare, ids_of, read_json, real_model, top_of};
use nexttoken::backend::BackendKind;
use nexttoken::gguf::{self, WeightStorage};
use nexttoken::lm::LanguageModel;
use serde_json::Value;

fn fixture() -> Value {
    read_json(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/inside-transformers.json"))
}

/// 1.5 times the rounding reference's gaps (see the module doc): the
/// attention weights' and the lens's.
fn tolerances(m: &Value) -> (f64, Gap) {
    let r = &m["rounding"];
    let lens = Gap::from_json(&r["lens"]);
    (1.5 * r["attention_max_abs_diff"].as_f64().unwrap(), Gap { abs: 1.5 * lens.abs, centred: 1.5 * lens.centred })
}

/// What one prompt's comparison measured.
#[derive(Debug, Default)]
struct Measured {
    attention: f64,
    lens: Gap,
    top1_checked: usize,
}

/// Runs `model`'s prompts through the engine (f16 KV cache, as the page)
/// and compares every layer with the fixture.
fn check_model(key: &str, bytes: &[u8]) -> Measured {
    let fx = fixture();
    let m = &fx["models"][key];
    assert_eq!(bytes.len() as u64, m["size"].as_u64().unwrap(), "{key}: not the file the fixture was recorded on");
    let (attention_tol, lens_tol) = tolerances(m);
    let mut total = Measured::default();
    for p in m["prompts"].as_array().expect("prompts") {
        let name = p["name"].as_str().unwrap();
        let (mut lm, _) = gguf::model_from_gguf(bytes.to_vec(), key, BackendKind::Flex, WeightStorage::Blocks).unwrap();
        let ids = ids_of(&p["ids"]);
        let (logits, capture) = lm.forward_cached_inside(&ids).unwrap();
        let capture = capture.expect("a transformer captures");
        let last = ids.len() - 1;
        for (l, heads) in p["attention"].as_array().unwrap().iter().enumerate() {
            let first = capture.attention[l].first;
            for (h, row) in heads.as_array().unwrap().iter().enumerate() {
                let reference: Vec<f64> = row.as_array().unwrap().iter().map(|w| w.as_f64().unwrap()).collect();
                assert_eq!(reference.len(), last + 1);
                // Outside the window transformers' mask gives exactly 0: where it starts is where ours starts.
                let reference_first = reference.iter().position(|&w| w > 0.0).unwrap();
                assert!(reference_first <= first && reference[..first].iter().all(|&w| w < 1e-12), "{key} {name} layer {l}: the window starts at {first}, transformers reads from {reference_first}");
                let ours = capture.row(l, h);
                let sum: f64 = ours.iter().map(|&w| w as f64).sum();
                assert!((sum - 1.0).abs() < 1e-5, "{key} {name} layer {l} head {h}: the row sums to {sum}");
                let gap = ours.iter().zip(&reference[first..]).map(|(&a, &b)| (a as f64 - b).abs()).fold(0.0, f64::max);
                total.attention = total.attention.max(gap);
                assert!(gap <= attention_tol, "{key} {name} layer {l} head {h}: attention differs from transformers' by {gap} (tolerance {attention_tol})");
            }
        }
        let mut lens = Vec::new();
        lm.lens(&capture.residuals, &mut |_, row| {
            lens.push(row.to_vec());
            Ok(())
        })
        .unwrap();
        assert_eq!(lens.last().unwrap(), &logits, "{key} {name}: the last lens layer is the step's logits");
        for (l, reference) in p["lens"].as_array().unwrap().iter().enumerate() {
            let top = top_of(&reference["top"]);
            let gap = compare(&format!("{key} {name} lens layer {l}"), &lens[l], &top, lens_tol, false);
            total.lens = total.lens.max(gap);
            total.top1_checked += usize::from(llamacpp_support::margin(&top) > lens_tol.centred);
        }
    }
    total
}

#[test]
fn smollm2_inside_is_transformers() {
    let Some(bytes) = real_model("smollm2") else { return };
    let measured = check_model("smollm2", &bytes);
    eprintln!("smollm2: {measured:?}");
    assert!(measured.top1_checked >= 20, "the lens's top-1 was compared at only {} layers", measured.top1_checked);
}

#[test]
fn gemma3_inside_is_transformers() {
    let Some(bytes) = real_model("gemma3") else { return };
    let measured = check_model("gemma3", &bytes);
    eprintln!("gemma3: {measured:?}");
    assert!(measured.top1_checked >= 5, "the lens's top-1 was compared at only {} layers", measured.top1_checked);
}
