//! `nexttoken compare`, `nexttoken config` and `--config`, as processes on
//! the shipped model (bard): the numbers follow from their definitions and
//! from the seeds, and a configuration file is read as its engine reads it.
#![cfg(feature = "cli")]

use std::process::Command;

use serde_json::Value;

const BARD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../www/models/bard");

fn nexttoken(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nexttoken")).args(args).output().expect("the binary runs");
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn compare(a: &str, b: &str, runs: &str) -> Value {
    let (code, out, err) = nexttoken(&["compare", "--model", BARD, "--prompt", "ROMEO:", "--a", a, "--b", b, "--runs", runs, "--max-new", "12", "--seed", "5"]);
    assert_eq!(code, Some(0), "{err}");
    serde_json::from_str(&out).expect("compare prints JSON")
}

fn temp_file(name: &str, text: &str) -> String {
    let path = std::env::temp_dir().join(format!("nexttoken-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// The same configuration on both sides draws the same continuations (the
/// same seeds), so every measure agrees; each measure is recomputed here
/// from the continuations by its definition.
#[test]
fn both_sides_alike_give_the_same_numbers_and_the_measures_follow_their_definitions() {
    let j = compare("--temp 0.9 --top-k 20 --top-p 1 --min-p 0", "--temp 0.9 --top-k 20 --top-p 1 --min-p 0", "4");
    assert_eq!(j["runs"]["a"], j["runs"]["b"]);
    assert_eq!(j["step"]["a_only"], 0);
    assert_eq!(j["step"]["b_only"], 0);
    assert_eq!(j["step"]["a"]["kept"], 20);
    let conts = j["runs"]["a"]["continuations"].as_array().unwrap();
    assert_eq!(conts.len(), 4);
    let tokens: Vec<Vec<u64>> = conts.iter().map(|c| c["tokens"].as_array().unwrap().iter().map(|t| t.as_u64().unwrap()).collect()).collect();
    let distinct = |n: usize| {
        let mut all = std::collections::HashSet::new();
        let mut total = 0;
        for t in &tokens {
            for g in t.windows(n) {
                all.insert(g.to_vec());
                total += 1;
            }
        }
        all.len() as f64 / total as f64
    };
    let stats = &j["runs"]["a"]["stats"];
    assert!((stats["distinct_1"].as_f64().unwrap() - distinct(1)).abs() < 1e-12);
    assert!((stats["distinct_2"].as_f64().unwrap() - distinct(2)).abs() < 1e-12);
    assert!(stats["mean_logprob"].as_f64().unwrap() < 0.0);
    // Different seeds give different continuations (bard at 0.9 is far from greedy).
    assert!(tokens.windows(2).any(|w| w[0] != w[1]), "{tokens:?}");
}

/// Greedy against sampling: greedy's continuations are all the same text,
/// so its distinct-n is as low as one continuation's, and it keeps one token.
#[test]
fn greedy_against_sampling() {
    let j = compare("--temp 0", "{\"do_sample\": true}", "3");
    assert_eq!(j["step"]["a"]["kept"], 1);
    assert_eq!(j["step"]["b"]["kept"], 50, "transformers' top_k 50 default");
    let a = j["runs"]["a"]["continuations"].as_array().unwrap();
    assert!(a.windows(2).all(|w| w[0]["tokens"] == w[1]["tokens"]));
    assert_eq!(j["b"]["read_as"], "Hugging Face generate() with do_sample true");
    assert!(j["b"]["filled"].as_array().unwrap().iter().any(|f| f["engine_key"] == "top_k"));
    // The draws use the same coin: greedy's token is the raw top, which B keeps.
    assert_eq!(j["step"]["rows"][0]["id"], j["step"]["a"]["drawn"]["id"]);
}

#[test]
fn a_config_file_is_read_and_flags_given_override_it() {
    let flags = temp_file("flags.txt", "llama-cli -m x.gguf \\\n  --temp 0 --top-k 3 --seed 11\n");
    let (code, out, err) = nexttoken(&["generate", "--model", BARD, "--prompt", "ROMEO:", "--max-new", "3", "--config", &flags, "--json"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("llama.cpp's defaults filled in") && err.contains("--top-p 0.95"), "{err}");
    assert!(err.contains("line 1") && err.contains("-m"), "the model flag is named as ignored: {err}");
    let kept = |out: &str, stage: &str| -> Value {
        let j: Value = serde_json::from_str(out).unwrap();
        j["steps"][0]["distribution"]["stages"].as_array().unwrap().iter().find(|s| s["name"] == stage).unwrap()["kept_count"].clone()
    };
    assert_eq!(kept(&out, "top_k"), 3);
    assert_eq!(kept(&out, "final"), 1, "greedy");
    // --top-k on the command line overrides the file's --top-k 3.
    let (code, out, err) = nexttoken(&["generate", "--model", BARD, "--prompt", "ROMEO:", "--max-new", "2", "--config", &flags, "--top-k", "2", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(kept(&out, "top_k"), 2, "top-k 2 from the flag, over the file's 3");
    assert_eq!(kept(&out, "final"), 1, "greedy from the file");
}

#[test]
fn config_converts_and_bad_files_are_refused_by_line() {
    let hf = temp_file("gen.json", "{\n  \"do_sample\": true,\n  \"temperature\": 0.6,\n  \"top_p\": 0.9,\n  \"eos_token_id\": 2\n}\n");
    let (code, out, err) = nexttoken(&["config", "--from", &hf, "--to", "llama_cpp"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("--temp 0.6") && out.contains("--top-k 50") && out.contains("--top-p 0.9"), "{out}");
    assert!(out.contains("--samplers"), "transformers' order (temperature first) is said with --samplers: {out}");
    let bad = temp_file("bad.json", "{\n  \"do_sample\": true,\n  \"top_p\": 7\n}\n");
    let (code, out, err) = nexttoken(&["config", "--from", &bad]);
    assert_eq!(code, Some(2));
    assert!(out.is_empty() && err.starts_with("error: ") && err.contains("line 3") && err.contains("top_p"), "{err}");
    let (code, _, err) = nexttoken(&["compare", "--model", BARD, "--prompt", "x", "--a", "--tmep 1", "--b", "default", "--runs", "1"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--a") && err.contains("did you mean --temp"), "{err}");
    let (code, _, err) = nexttoken(&["compare", "--model", BARD, "--prompt", "x", "--a", "default", "--b", "default", "--runs", "65"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("runs must be between 1 and 64"), "{err}");
}
