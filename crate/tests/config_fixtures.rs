//! A configuration written in an engine's own words, imported here, runs
//! the engine's whole chain: tests/fixtures/configs-llamacpp.json (llama.cpp
//! flags, the chain llama.cpp's common_sampler builds, through
//! llama-cpp-python) and tests/fixtures/configs-hf.json (generation_config
//! JSON, the processors transformers' generate() builds), both written by
//! pkg-scripts/make-config-fixtures with the engine's version.
//!
//! Each case imports the text with the engine's defaults for what it does
//! not say, runs our chain on the case's logits and history, and compares
//! the final distribution with the engine's: the same kept tokens and
//! probabilities within 1e-6 (llama.cpp works in f32). Where the engine's
//! sort chose among tied logits (`ties_cut`), kept logits and probabilities
//! agree as multisets.

use nexttoken::dialect::{self, Dialect};
use nexttoken::rules::{RawDistribution, StageMemo, StepInputs, run_rules_with};
use nexttoken::settings::GenerationSettings;

mod fixture_support;
use fixture_support::{floats, ids, load, sorted};

const TOLERANCE: f64 = 1e-6;



/// Runs every case of `file` read as `dialect`; returns how many were compared.
fn check(file: &str, dialect: Dialect, engine_word: &str) -> usize {
    let data = load(file);
    let engine = data["engine"].as_str().unwrap().to_string() + " " + data["version"].as_str().unwrap();
    assert!(engine.contains(engine_word), "{file} says it came from {engine}");
    let (mut checked, mut failures) = (0, Vec::new());
    for (n, case) in data["cases"].as_array().unwrap().iter().enumerate() {
        let config = case["config"].as_str().unwrap();
        let what = format!("{engine}, case {n}: {config:?} on '{}'", case["vector"]);
        if case.get("error").is_some() {
            continue;
        }
        let vector = floats(&data["vectors"][case["vector"].as_str().unwrap()]);
        let history = ids(&case["history"]);
        let imported = dialect::import(config, Some(dialect), &GenerationSettings::default(), vector.len())
            .unwrap_or_else(|e| panic!("{what}: not imported: {}", e.message));
        let s = &imported.settings.rules;
        let raw = RawDistribution::new(vector.clone()).unwrap();
        // XTC's coin below any probability: the fixtures' XTC always fires.
        let inputs = StepInputs { xtc_coin: Some(0.0), ..Default::default() };
        let stages = run_rules_with(&raw, &history, s, &StageMemo::default(), &inputs).unwrap_or_else(|e| panic!("{what}: {e}")).0;
        let last = stages.last().unwrap();
        let kept: Vec<u32> = (0..vector.len() as u32).filter(|&i| last.kept[i as usize]).collect();
        if case["do_sample"] == false {
            // generate() takes the argmax of the processed scores.
            let selected = case["selected"].as_u64().expect("greedy records its choice") as u32;
            if kept != [selected] {
                failures.push(format!("{what}: greedy kept {kept:?}, transformers chose {selected}"));
            }
            checked += 1;
            continue;
        }
        let want_kept = ids(&case["kept"]);
        let want_probs = floats(&case["probs"]);
        let ok = if case["ties_cut"] == true {
            let logits_of = |set: &[u32]| sorted(set.iter().map(|&i| vector[i as usize]).collect());
            logits_of(&kept) == logits_of(&want_kept)
                && sorted(last.probs.to_vec()).iter().zip(sorted(want_probs.clone())).all(|(a, b)| (a - b).abs() < TOLERANCE)
        } else {
            kept == want_kept && last.probs.iter().zip(&want_probs).all(|(a, b)| (a - b).abs() < TOLERANCE)
        };
        if !ok {
            failures.push(format!("{what}: chain {:?}\n  kept {kept:?}\n  want {want_kept:?}\n  probs {:?}\n  want  {want_probs:?}", case["chain"], last.probs));
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "{} of {checked} cases differ from {engine}:\n{}", failures.len(), failures.join("\n"));
    checked
}

#[test]
fn llama_cpp_flags_run_llama_cpps_chain() {
    let n = check("configs-llamacpp.json", Dialect::LlamaCpp, "llama");
    assert!(n >= 70, "{n} cases");
}

#[test]
fn hugging_face_configs_run_transformers_processors() {
    let n = check("configs-hf.json", Dialect::Hf, "transformers");
    assert!(n >= 60, "{n} cases");
}

/// The fixtures hold each engine's defaults alone (an empty text), and the
/// defaults the engine reported are the ones the import fills in.
#[test]
fn the_fixtures_hold_the_engines_defaults() {
    let llama = load("configs-llamacpp.json");
    assert!(llama["cases"].as_array().unwrap().iter().any(|c| c["config"] == ""));
    let d = &llama["defaults"];
    let s = dialect::import("", Some(Dialect::LlamaCpp), &GenerationSettings::default(), 10).unwrap().settings.rules;
    assert_eq!(s.temperature, d["temp"].as_f64().unwrap());
    assert_eq!(s.top_k as u64, d["top_k"].as_u64().unwrap());
    assert!((s.top_p - d["top_p"].as_f64().unwrap()).abs() < 1e-7);
    assert!((s.min_p - d["min_p"].as_f64().unwrap()).abs() < 1e-7);
    assert_eq!(s.penalty_window as u64, d["penalty_last_n"].as_u64().unwrap());
    assert_eq!(s.dry_penalty_last_n, d["dry_penalty_last_n"].as_i64().unwrap());
    let hf = load("configs-hf.json");
    assert!(hf["cases"].as_array().unwrap().iter().any(|c| c["config"].as_str().unwrap().chars().filter(|c| !c.is_whitespace()).collect::<String>() == "{\"do_sample\":true}"));
}
