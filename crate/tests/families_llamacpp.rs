//! Every architecture the engine runs, checked against llama.cpp on tiny
//! random-weight GGUF files.
//!
//! `pkg-scripts/make-family-fixtures` writes the files
//! (`tests/fixtures/families/*.gguf`, d_model 64, 2-8 layers, a 290-token
//! byte-level vocabulary) with gguf-py under the metadata keys and tensor
//! names llama.cpp reads, one per feature the families need (each model's
//! `features` in the fixture says which), and records llama.cpp's output on
//! them in `tests/fixtures/families-llamacpp.json`: the top-10 logits after
//! five token-id prompts, a 32-token greedy run after each, and the top-10
//! at every position of one teacher-forced sequence (for gemma3, 64 tokens
//! against its window of 8).
//!
//! # How close
//! The script also runs its own float64 numpy forward pass of each
//! architecture (its reading of llama.cpp's graph) and records how far
//! llama.cpp is from it (`llamacpp_vs_float64`): 0.02-0.04 on the F32 and
//! F16 files (llama.cpp's f16 KV cache and f16 activations against F16
//! matrices), 0.10 on gemma3 (its GELU reads an f16 table), 0.44 on the Q8_0
//! file (8-bit activations, which the float64 pass imitates but not to the
//! bit). The engine rounds in the same places but not always to the same
//! side, so its distance from the float64 model is of the same size and the
//! two add up at most: each model's `tolerance` is 3 times llama.cpp's gap
//! (the fixture's `tolerance_rule`). Measured (`--nocapture`, the largest
//! raw gap over all checks, against the tolerance): llama 0.021 (0.063),
//! llama-q8_0 0.32 (1.33), llama3 0.037 (0.11), qwen2 0.016 (0.072), qwen3
//! 0.034 (0.11), gemma3 0.095 (0.29), phi3 0.018 (0.11).
//!
//! The tests feed token ids, so they do not depend on the tokenizer. The
//! SmolLM2 copies requantised by llama.cpp (Q4_K_M, Q6_K, Q5_0) are checked
//! at the end when the script has left them in `.cache/` (not in CI).

mod llamacpp_support;

use std::path::PathBuf;
use std::sync::OnceLock;

use llamacpp_support::{Gap, check_greedy, compare, ids_of, read_json, top_of};
use nexttoken::backend::BackendKind;
use nexttoken::gguf::{self, WeightStorage};
use nexttoken::kv_cache::KvPrecision;
use nexttoken::lm::LanguageModel;
use nexttoken::model::DecoderLm;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn fixture() -> &'static Value {
    static FIXTURE: OnceLock<Value> = OnceLock::new();
    FIXTURE.get_or_init(|| read_json(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/families-llamacpp.json")))
}

fn model_entry(name: &str) -> &'static Value {
    fixture()["models"]
        .as_array()
        .expect("a model list")
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("the fixture has no model '{name}'"))
}

/// The committed file as the fixture describes it, loaded as the page and
/// the CLI load a file: matrices kept in the file's blocks.
fn load(entry: &Value) -> DecoderLm {
    let path = root().join(entry["file"].as_str().unwrap());
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{} is committed: {e}", path.display()));
    assert_eq!(bytes.len() as u64, entry["size"].as_u64().unwrap(), "{} is not the file the fixture was recorded on", path.display());
    let name = entry["name"].as_str().unwrap();
    let (lm, _tokenizer) = gguf::model_from_gguf(bytes, name, BackendKind::Flex, WeightStorage::Blocks)
        .unwrap_or_else(|e| panic!("the tiny {name} file ({}) does not load: {e}", entry["features"]));
    lm
}

/// All checks on one tiny model; prints the largest gaps (`--nocapture`).
fn check_model(name: &str) {
    let entry = model_entry(name);
    let tol = Gap::from_json(&entry["tolerance"]);
    let mut lm = load(entry);
    let info = lm.info();
    let config = &entry["config"];
    assert_eq!(
        (info.layers, info.d_model, info.heads, info.kv_heads, info.head_dim, info.vocab_size),
        (
            config["layers"].as_u64().unwrap() as usize,
            config["d_model"].as_u64().unwrap() as usize,
            config["heads"].as_u64().unwrap() as usize,
            config["kv_heads"].as_u64().unwrap() as usize,
            config["head_dim"].as_u64().unwrap() as usize,
            config["vocab"].as_u64().unwrap() as usize,
        ),
        "{name}: the shape read from the file"
    );

    let (mut prompt_gap, mut greedy_gap) = (Gap::default(), Gap::default());
    let mut greedy_steps = Vec::new();
    for p in entry["prompts"].as_array().unwrap() {
        let what = format!("{name}, prompt {}", p["name"].as_str().unwrap());
        let ids = ids_of(&p["ids"]);
        lm.truncate(0);
        let logits = lm.forward_cached(&ids).unwrap();
        prompt_gap = prompt_gap.max(compare(&what, &logits, &top_of(&p["top10"]), tol, true));
        let g = check_greedy(&what, &mut lm, logits, &ids_of(&p["greedy"]), p["greedy_top10"].as_array().unwrap(), tol);
        greedy_gap = greedy_gap.max(g.gap);
        greedy_steps.push((g.equal_steps, g.near_tie_at));
    }

    // Teacher forcing, both ways: one recompute over the whole sequence,
    // and the cache filled one token at a time (for gemma3 across the
    // window's edge, where a cache that keeps only the window must drop the
    // oldest positions exactly as the mask does).
    let tf = &entry["teacher_forced"];
    let ids = ids_of(&tf["ids"]);
    let refs = tf["per_position_top10"].as_array().unwrap();
    assert_eq!(refs.len(), ids.len());
    let mut pass_gap = Gap::default();
    let mut seen = 0;
    lm.for_each_position(&ids, &mut |i, row| {
        pass_gap = pass_gap.max(compare(&format!("{name}, one pass, position {i}"), row, &top_of(&refs[i]), tol, false));
        seen += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(seen, ids.len());
    lm.truncate(0);
    let mut cached_gap = Gap::default();
    for (i, &id) in ids.iter().enumerate() {
        let row = lm.forward_cached(&[id]).unwrap();
        cached_gap = cached_gap.max(compare(&format!("{name}, cached, position {i}"), &row, &top_of(&refs[i]), tol, false));
    }
    eprintln!(
        "{name}: largest gaps to llama.cpp (tolerance {tol:?}): prompts {prompt_gap:?}, greedy {greedy_gap:?}, \
         one pass {pass_gap:?}, cached {cached_gap:?}; greedy (equal steps, first near-tie) {greedy_steps:?}"
    );
}

/// The fixture is sharp enough to tell the features apart: llama.cpp agrees
/// with the script's float64 model far inside each tolerance, and for gemma3
/// an engine that ignored the window would be far outside it.
#[test]
fn the_fixture_separates_right_from_wrong() {
    let models = fixture()["models"].as_array().unwrap();
    let names: Vec<&str> = models.iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["llama", "llama-q8_0", "llama3", "qwen2", "qwen3", "gemma3", "phi3"]);
    for m in models {
        let tol = Gap::from_json(&m["tolerance"]);
        let measured = &m["llamacpp_vs_float64"];
        assert!(measured["max_centred"].as_f64().unwrap() < tol.centred, "{}", m["name"]);
        let file = root().join(m["file"].as_str().unwrap());
        let size = std::fs::metadata(&file).unwrap().len();
        assert!(size < 1 << 20, "{} is {size} bytes: the tiny files stay under 1 MB", file.display());
    }
    let gemma = model_entry("gemma3");
    let without = &gemma["teacher_forced"]["without_window"];
    let tol = Gap::from_json(&gemma["tolerance"]);
    assert!(without["max_centred"].as_f64().unwrap() > 10.0 * tol.centred, "{without}");
    assert!(without["top1_differs_at"].as_u64().unwrap() > 10, "{without}");
    assert!(gemma["teacher_forced"]["ids"].as_array().unwrap().len() > 4 * gemma["config"]["window"].as_u64().unwrap() as usize);
}

#[test]
fn llama_with_its_own_output_matrix_matches_llama_cpp() {
    check_model("llama");
}

#[test]
fn llama_in_q8_0_blocks_matches_llama_cpp() {
    check_model("llama-q8_0");
}

#[test]
fn llama3_rope_freqs_match_llama_cpp() {
    check_model("llama3");
}

#[test]
fn qwen2_with_qkv_biases_matches_llama_cpp() {
    check_model("qwen2");
}

#[test]
fn qwen3_with_qk_norm_matches_llama_cpp() {
    check_model("qwen3");
}

#[test]
fn gemma3_with_sliding_window_matches_llama_cpp() {
    check_model("gemma3");
}

#[test]
fn phi3_with_fused_matrices_matches_llama_cpp() {
    check_model("phi3");
}

/// SmolLM2 requantised by llama.cpp to Q4_K_M, Q6_K and Q5_0: the copies
/// `pkg-scripts/make-family-fixtures` leaves in `.cache/gguf-requant-families/`
/// (ignored by git, so not in CI: making them needs llama.cpp). Each copy
/// that is there, and is the file the fixture describes, is compared with
/// llama.cpp's top-10 after three prompts; the others are named as skipped.
/// The tolerance is smollm2_gguf.rs's, measured on the block formats there.
#[test]
fn requantized_smollm2_copies_match_llama_cpp_when_present() {
    const SMOLLM2_TOLERANCE: Gap = Gap { abs: 1.5, centred: 0.75 };
    let Some(copies) = fixture()["smollm2_requantized"].as_array() else {
        eprintln!("SKIPPED: the fixture has no requantized SmolLM2 copies");
        return;
    };
    let mut checked = Vec::new();
    for copy in copies {
        let ftype = copy["ftype"].as_str().unwrap();
        let path = root().join(copy["file"].as_str().unwrap());
        let Ok(bytes) = std::fs::read(&path) else {
            eprintln!("SKIPPED the {ftype} copy: {} is absent (pkg-scripts/make-family-fixtures writes it)", path.display());
            continue;
        };
        if bytes.len() as u64 != copy["size"].as_u64().unwrap() {
            eprintln!("SKIPPED the {ftype} copy: {} is not the file the fixture describes", path.display());
            continue;
        }
        let (mut lm, _tokenizer) = gguf::model_from_gguf(bytes, "smollm2-135m", BackendKind::Flex, WeightStorage::Blocks)
            .unwrap_or_else(|e| panic!("the {ftype} copy does not load: {e}"));
        // The f32 cache, as smollm2_gguf.rs runs its copies: these check each
        // format's block kernels, not the cache's rounding.
        lm.set_kv_precision(KvPrecision::F32).unwrap();
        let mut worst = Gap::default();
        for p in copy["prompts"].as_array().unwrap() {
            lm.truncate(0);
            let logits = lm.forward_cached(&ids_of(&p["ids"])).unwrap();
            let what = format!("{ftype}: {}", p["name"].as_str().unwrap());
            worst = worst.max(compare(&what, &logits, &top_of(&p["top10"]), SMOLLM2_TOLERANCE, true));
        }
        eprintln!("{ftype} ({}): largest difference {worst:?}", copy["tensor_types"]);
        checked.push(ftype.to_string());
    }
    eprintln!("requantized SmolLM2 copies checked against llama.cpp: {checked:?}");
}
