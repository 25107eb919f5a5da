//! The CLI on bad input, as a process: every case exits with status 2 and an
//! `error: …` line that says what is wrong (the README's promise), and a
//! prompt longer than the context is kept to its newest part with the
//! sliding window instead of refused.
#![cfg(feature = "cli")]

use std::process::Command;

const BARD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../www/models/bard");

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn nexttoken(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_nexttoken")).args(args).output().expect("the binary runs");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Exits 2 with one `error:` line containing every one of `words`.
fn refused(args: &[&str], words: &[&str]) {
    let r = nexttoken(args);
    assert_eq!(r.code, Some(2), "{args:?}: status {:?}, stderr {}", r.code, r.stderr);
    assert!(r.stderr.starts_with("error: "), "{args:?}: {}", r.stderr);
    let first = r.stderr.lines().next().unwrap_or_default();
    for w in words {
        assert!(first.contains(w), "{args:?}: {first:?} does not say {w:?}");
    }
    assert!(r.stdout.is_empty(), "{args:?} printed {}", r.stdout);
}

fn generate<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["generate", "--model", BARD, "--max-new", "2"];
    args.extend_from_slice(extra);
    args
}

#[test]
fn an_empty_prompt_is_refused() {
    refused(&generate(&["--prompt", ""]), &["prompt is empty"]);
    refused(&["check-cache", "--model", BARD, "--prompt", ""], &["prompt is empty"]);
}

#[test]
fn a_prompt_longer_than_the_context_is_refused_or_slid_as_chosen() {
    // Each "ROMEO: " is at least two tokens of bard's: 400 of them far exceed its 128 positions.
    let long = "ROMEO: ".repeat(400);
    refused(&generate(&["--prompt", &long]), &["128", "sliding"]);
    let r = nexttoken(&generate(&["--prompt", &long, "--context-policy", "sliding", "--temperature", "0", "--json"]));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let out: serde_json::Value = serde_json::from_str(&r.stdout).expect("one JSON object");
    let last = out["steps"].as_array().and_then(|s| s.last()).expect("the steps' reports");
    let (len, dropped) = (last["kv"]["len"].as_u64().unwrap(), last["kv"]["dropped"].as_u64().unwrap());
    assert_eq!(out["generated"].as_array().unwrap().len(), 2);
    assert!(len <= 128, "the cache holds {len} positions");
    assert!(dropped > 0, "the oldest tokens were dropped");
}

#[test]
fn text_the_tokenizer_cannot_encode_is_refused_by_character() {
    refused(&["generate", "--model", "builtin:bigram-abc", "--prompt", "abx"], &["'x'", "a", "b", "c"]);
    refused(&["generate", "--model", "builtin:logits10", "--prompt", "zz"], &["zz"]);
}

#[test]
fn a_seed_that_is_not_a_non_negative_integer_is_refused() {
    for bad in ["-1", "1.5", "abc", "", "1e3"] {
        refused(&generate(&["--prompt", "x", "--seed", bad]), &["--seed"]);
    }
    refused(&generate(&["--prompt", "x", "--seed=-1"]), &["--seed"]);
    // 2^53: a JS number (the page, the URL) could not hold the next seed exactly.
    refused(&generate(&["--prompt", "x", "--seed", "9007199254740992"]), &["seed", "9007199254740992"]);
    refused(&generate(&["--prompt", "x", "--seed", "18446744073709551616"]), &["--seed"]);
}

#[test]
fn negative_zero_or_huge_lengths_are_refused() {
    let max_new = |v: &str| vec!["generate", "--model", BARD, "--prompt", "x", "--max-new", v].into_iter().map(String::from).collect::<Vec<_>>();
    for (v, word) in [("-3", "--max-new"), ("0", "max_new"), ("4097", "4096"), ("99999999999999999999", "--max-new"), ("2.5", "--max-new")] {
        let args = max_new(v);
        refused(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[word]);
    }
    for (v, word) in [("-1", "--steps"), ("0", "--steps"), ("100000", "--steps")] {
        refused(&["check-cache", "--model", BARD, "--prompt", "x", "--steps", v], &[word]);
    }
}

#[test]
fn unknown_model_names_and_paths_say_what_a_model_is() {
    refused(&["generate", "--model", "bard", "--prompt", "x"], &["no model at 'bard'", "builtin:", "logits10"]);
    refused(&["generate", "--model", "builtin:nope", "--prompt", "x"], &["unknown built-in model 'nope'", "logits10"]);
    refused(&["generate", "--model", "builtin:../../etc/passwd", "--prompt", "x"], &["unknown built-in model"]);
    refused(&["generate", "--model", "/no/such/folder", "--prompt", "x"], &["no model at '/no/such/folder'"]);
    // A file that exists but is no model: named as not a manifest, nothing else read.
    refused(&["generate", "--model", "/etc/hostname", "--prompt", "x"], &["manifest"]);
}

#[test]
fn a_top_k_past_the_vocabulary_is_taken_and_said_to_keep_every_token() {
    // bard has 2,048 tokens: top-k 30000 keeps them all, as top-k 0 (off) does, with a note.
    let wide = nexttoken(&generate(&["--top-k", "30000", "--seed", "3", "--prompt", "ROMEO:"]));
    let off = nexttoken(&generate(&["--top-k", "0", "--seed", "3", "--prompt", "ROMEO:"]));
    assert_eq!(wide.code, Some(0), "{}", wide.stderr);
    assert_eq!(wide.stdout, off.stdout, "the same tokens as with top-k off");
    assert!(wide.stderr.contains("--top-k 30000 is more than the vocabulary's 2048 tokens: it keeps every token"), "{}", wide.stderr);
    assert!(!off.stderr.contains("more than the vocabulary"));
    // The ten-logit `dist` too.
    let d = nexttoken(&["dist", "--logits", "1,2,3", "--top-k", "5"]);
    assert_eq!(d.code, Some(0), "{}", d.stderr);
    assert!(d.stderr.contains("--top-k 5 is more than the vocabulary's 3 tokens"), "{}", d.stderr);
}

/// `nexttoken inside` on a model without layers says so; on bard it prints
/// the InsideReport, whose lens's last layer follows the raw top-1 at rank 1
/// and whose attention rows each sum to 1.
#[test]
fn inside_refuses_a_model_without_layers_and_reports_a_transformer() {
    refused(&["inside", "--model", "builtin:logits10", "--prompt", "t1"], &["logits10", "no layers"]);
    refused(&["inside", "--model", BARD, "--prompt", ""], &["empty"]);
    let r = nexttoken(&["inside", "--model", BARD, "--prompt", "ROMEO:", "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let layers = report["layers"].as_u64().unwrap() as usize;
    let lens = report["lens"].as_array().unwrap();
    assert_eq!(lens.len(), layers + 1);
    assert_eq!(lens[layers]["token_rank"], 1);
    assert_eq!(report["token_is_chosen"], false);
    for a in report["attention"].as_array().unwrap() {
        let weights: Vec<f64> = a["weights"].as_array().unwrap().iter().map(|w| w.as_f64().unwrap()).collect();
        let heads = report["heads"].as_u64().unwrap() as usize;
        for row in weights.chunks(weights.len() / heads) {
            assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-5);
        }
    }
}
