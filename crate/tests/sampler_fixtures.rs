//! Every sampler against the reference engines' own output:
//! tests/fixtures/samplers-llamacpp.json (llama.cpp's samplers through
//! llama-cpp-python) and tests/fixtures/samplers-hf.json (Hugging Face's
//! logits processors and warpers), both written by
//! pkg-scripts/make-sampler-fixtures, which records each engine's version.
//!
//! Each case runs one sampler alone on a raw logit vector: here the chain is
//! that one stage, and its stage must keep the same tokens with the same
//! probabilities (within 1e-6; llama.cpp works in f32). Where the engine's
//! kept set cuts through tied logits (`ties_cut`: its sort chose among the
//! tied), the kept logits and the probabilities must agree as multisets.

use nexttoken::rules::{RawDistribution, RuleSettings, StageKind, StageMemo, StepInputs, next_mu, run_rules_with};
use serde_json::Value;

mod fixture_support;
use fixture_support::{floats, ids, load, sorted};

const TOLERANCE: f64 = 1e-6;


/// The defaults with the case's settings, the chain the one sampler.
fn settings_of(case: &Value) -> RuleSettings {
    let mut v = serde_json::to_value(RuleSettings::default()).unwrap();
    for (k, x) in case["settings"].as_object().unwrap() {
        v[k] = x.clone();
    }
    let kind = StageKind::from_name(case["sampler"].as_str().unwrap()).expect("a stage of ours");
    v["chain"] = serde_json::to_value([kind]).unwrap();
    serde_json::from_value(v).expect("the case's settings are ours")
}


/// Runs every case of `file`; returns how many were compared.
fn check_fixture(file: &str, engine_word: &str) -> usize {
    let data = load(file);
    let engine = data["engine"].as_str().unwrap();
    let version = data["version"].as_str().unwrap();
    assert!(engine.contains(engine_word), "{file} says it came from {engine}");
    let mut checked = 0;
    let mut mirostat_mu: Option<f64> = None;
    let mut failures = Vec::new();
    for (n, case) in data["cases"].as_array().unwrap().iter().enumerate() {
        let sampler = case["sampler"].as_str().unwrap();
        let vector = floats(&data["vectors"][case["vector"].as_str().unwrap()]);
        let history = ids(&case["history"]);
        let s = settings_of(case);
        let raw = RawDistribution::new(vector.clone()).unwrap();
        let mut inputs = StepInputs { xtc_coin: Some(0.0), dry_breakers: ids(&case["breaker_ids"]), ..Default::default() };
        if sampler == "mirostat" {
            // Step 0 starts from 2 tau; step 1 from mu moved by step 0's draw.
            if case["step"] == 0 {
                mirostat_mu = None;
            }
            inputs.mirostat_mu = mirostat_mu;
        }
        let what = format!("{engine} ({version}), case {n}: {sampler} on '{}' with {}", case["vector"], case["settings"]);
        let result = run_rules_with(&raw, &history, &s, &StageMemo::default(), &inputs);
        if case["all_removed"] == true {
            assert!(result.is_err(), "{what}: the engine removed every token; we must refuse");
            checked += 1;
            continue;
        }
        let stages = result.unwrap_or_else(|e| panic!("{what}: {e}")).0;
        let stage = stages.iter().find(|st| st.name == sampler).unwrap_or_else(|| panic!("{what}: no stage"));
        let kept: Vec<u32> = (0..vector.len() as u32).filter(|&i| stage.kept[i as usize]).collect();
        let want_kept = ids(&case["kept"]);
        let want_probs = floats(&case["probs"]);
        let ok = if case["ties_cut"] == true {
            let logits_of = |set: &[u32]| sorted(set.iter().map(|&i| vector[i as usize]).collect());
            logits_of(&kept) == logits_of(&want_kept)
                && sorted(stage.probs.to_vec()).iter().zip(sorted(want_probs.clone())).all(|(a, b)| (a - b).abs() < TOLERANCE)
        } else {
            kept == want_kept && stage.probs.iter().zip(&want_probs).all(|(a, b)| (a - b).abs() < TOLERANCE)
        };
        if !ok {
            failures.push(format!("{what}:\n  kept {kept:?}\n  want {want_kept:?}\n  probs {:?}\n  want  {want_probs:?}", stage.probs));
        }
        if sampler == "mirostat" {
            let selected = case["selected"].as_u64().expect("mirostat draws") as usize;
            let mu = inputs.mirostat_mu.unwrap_or(2.0 * s.mirostat_tau);
            mirostat_mu = Some(next_mu(mu, s.mirostat_tau, s.mirostat_eta, want_probs[selected]));
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "{} of {checked} cases differ from {engine}:\n{}", failures.len(), failures.join("\n"));
    checked
}

#[test]
fn every_sampler_matches_llama_cpp() {
    let n = check_fixture("samplers-llamacpp.json", "llama.cpp");
    assert!(n >= 100, "{n} cases");
}

#[test]
fn every_sampler_matches_hugging_face() {
    let n = check_fixture("samplers-hf.json", "Hugging Face");
    assert!(n >= 100, "{n} cases");
}

/// The fixtures cover every sampler this issue adds, with the engine that
/// defines it, and the vectors the issue asks for.
#[test]
fn the_fixtures_cover_every_new_sampler() {
    let names = |file: &str| -> Vec<String> {
        load(file)["cases"].as_array().unwrap().iter().map(|c| c["sampler"].as_str().unwrap().to_string()).collect()
    };
    let llama = names("samplers-llamacpp.json");
    for s in ["top_k", "top_p", "min_p", "typical_p_llama", "top_n_sigma", "xtc", "mirostat", "penalties", "dry"] {
        assert!(llama.iter().any(|n| n == s), "llama.cpp fixture lacks {s}");
    }
    let hf = names("samplers-hf.json");
    for s in ["typical_p", "epsilon_cutoff", "eta_cutoff", "min_p", "temperature", "penalties", "no_repeat_ngram", "sequence_bias"] {
        assert!(hf.iter().any(|n| n == s), "Hugging Face fixture lacks {s}");
    }
    let vectors = load("samplers-llamacpp.json")["vectors"].clone();
    for v in ["ties", "peaked", "flat", "smollm2"] {
        assert!(vectors.get(v).is_some(), "no '{v}' vector");
    }
}
