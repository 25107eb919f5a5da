//! The inside view of the two real models against Hugging Face transformers
//! (`tests/fixtures/inside-transformers.json`, written by
//! `pkg-scripts/make-inside-fixtures`: transformers loads the same GGUF
//! files, dequantised, and runs them in f32 with eager attention): each
//! layer's attention row of the last query, and the logit lens of each
//! layer, after the same token ids.
//!
//! TOLERANCE (see `tolerances`).

mod llamacpp_support;

use llamacpp_support::{Gap, compare, ids_of, read_json, real_model, top_of};
use nexttoken::backend::BackendKind;
use nexttoken::gguf::{self, WeightStorage};
use nexttoken::lm::LanguageModel;
use serde_json::Value;

fn fixture() -> Value {
    read_json(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/inside-transformers.json"))
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
fn check_model(key: &str, bytes: &[u8], attention_tol: f64, lens_tol: Gap) -> Measured {
    let fx = fixture();
    let m = &fx["models"][key];
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
    let measured = check_model("smollm2", &bytes, 1.0, Gap { abs: 100.0, centred: 100.0 });
    eprintln!("smollm2: {measured:?}");
}

#[test]
fn gemma3_inside_is_transformers() {
    let Some(bytes) = real_model("gemma3") else { return };
    let measured = check_model("gemma3", &bytes, 1.0, Gap { abs: 100.0, centred: 100.0 });
    eprintln!("gemma3: {measured:?}");
}
