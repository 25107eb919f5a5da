//! Dequantisation of every supported GGUF tensor type, block by block,
//! against the `gguf` Python package's numpy dequantisers (an implementation
//! independent of ours and of llama.cpp's C), recorded by
//! `pkg-scripts/make-llama-fixture --blocks` into tests/fixtures/gguf-blocks.json
//! from SmolLM2's Q4_1 file and copies llama.cpp requantised to Q4_K_M,
//! Q6_K, Q4_0, Q5_1, F16, BF16 and IQ4_XS (with IQ4_NL), and (for the
//! K-quants no such file holds: Q2_K, Q3_K, Q5_K) from one row of its weights quantised by llama.cpp's
//! `ggml_quantize_chunk`.
//!
//! When those files are present (`.cache/gguf-requant/`, written by the same
//! script), whole tensors are checked too, by the sums the fixture records.

use std::path::Path;

use nexttoken::gguf::quant::{dequantize, GgmlType};
use nexttoken::gguf::GgufFile;
use serde_json::Value;

fn fixture() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/gguf-blocks.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("the blocks fixture is committed")).expect("valid JSON")
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex")).collect()
}

/// The two f32 values are the same number, or within the rounding of one
/// product of three f32 factors (gguf-py multiplies in another order).
fn close(a: f32, b: f32) -> bool {
    a == b || (a - b).abs() <= 4.0 * f32::EPSILON * a.abs().max(b.abs())
}

#[test]
fn every_type_dequantises_like_gguf_py() {
    let f = fixture();
    let blocks = f["blocks"].as_array().unwrap();
    let mut seen = Vec::new();
    for b in blocks {
        let name = b["type"].as_str().unwrap();
        let ty = GgmlType::from_id(b["type_id"].as_u64().unwrap() as u32).unwrap();
        assert_eq!(ty.name(), name);
        assert_eq!(ty.block_bytes(), b["block_bytes"].as_u64().unwrap(), "{name} block bytes");
        assert_eq!(ty.block_size(), b["block_values"].as_u64().unwrap(), "{name} block values");
        let bytes = hex(b["bytes_hex"].as_str().unwrap());
        let want: Vec<f32> = b["values"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
        let got = dequantize(ty, &bytes, want.len()).unwrap();
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(close(*g, *w), "{name} ({}) value {i}: ours {g}, gguf-py {w}", b["tensor"]);
        }
        seen.push(name.to_string());
    }
    for needed in ["F32", "Q4_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q4_0", "IQ4_NL", "IQ4_XS"] {
        assert!(seen.iter().any(|s| s == needed), "the fixture has no {needed} block (it has {seen:?})");
    }
}

#[test]
fn whole_tensors_sum_like_gguf_py_when_the_files_are_here() {
    let f = fixture();
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let mut checked = 0;
    for t in f["tensors"].as_array().unwrap() {
        let file = root.join(t["file"].as_str().unwrap());
        let Ok(bytes) = std::fs::read(&file) else {
            eprintln!("SKIPPED whole-tensor check of {}: {} is absent (pkg-scripts/make-llama-fixture writes it)", t["tensor"], file.display());
            continue;
        };
        let g = GgufFile::parse(&bytes).unwrap();
        let info = g.tensor(t["tensor"].as_str().unwrap()).unwrap();
        assert_eq!(info.ggml_type.name(), t["type"].as_str().unwrap());
        let v = dequantize(info.ggml_type, g.tensor_bytes(info), info.n_elements() as usize).unwrap();
        let sum: f64 = v.iter().map(|&x| x as f64).sum();
        let sum_abs: f64 = v.iter().map(|&x| (x as f64).abs()).sum();
        let (want, want_abs) = (t["sum"].as_f64().unwrap(), t["sum_abs"].as_f64().unwrap());
        assert!((sum - want).abs() <= 1e-6 * want_abs, "{}: sum {sum} vs {want}", t["tensor"]);
        assert!((sum_abs - want_abs).abs() <= 1e-6 * want_abs, "{}: sum |x| {sum_abs} vs {want_abs}", t["tensor"]);
        checked += 1;
    }
    eprintln!("whole tensors checked: {checked}");
}
