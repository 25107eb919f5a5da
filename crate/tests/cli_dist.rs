//! `nexttoken dist` run as a real process: its JSON, its table, its errors.
#![cfg(feature = "cli")]

use std::process::{Command, Output};

use serde_json::Value;

const COURSE_LOGITS: &str = "3.0,2.5,2.0,1.5,1.0,0.5,0.0,-0.5,-1.0,-1.5";

fn run_nexttoken(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nexttoken"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Runs `dist ... --json`, asserts success, and parses stdout.
fn run_dist_json(args: &[&str]) -> Value {
    let mut all = vec!["dist"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = run_nexttoken(&all);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?} failed: {stderr}");
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}

fn names_of(stages: &Value) -> Vec<String> {
    stages
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

fn probs_of(stage: &Value) -> Vec<f64> {
    stage["probs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

fn find_stage<'a>(stages: &'a Value, name: &str) -> &'a Value {
    stages
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no stage {name}"))
}

fn assert_six_decimals(got: &[f64], printed: &[f64]) {
    assert_eq!(got.len(), printed.len());
    for (g, p) in got.iter().zip(printed) {
        assert!(
            (g - p).abs() <= 0.5e-6 + 1e-15,
            "got {got:?}, printed {printed:?}"
        );
    }
}

#[test]
fn json_lists_every_stage_from_raw_to_final_in_hf_order() {
    let v = run_dist_json(&["--logits", COURSE_LOGITS, "--top-k", "3"]);
    assert_eq!(
        names_of(&v["stages"]),
        // transformers' _get_logits_processor order (processors, then warpers).
        [
            "raw",
            "sequence_bias",
            "penalties",
            "no_repeat_ngram",
            "bias_bans",
            "temperature",
            "top_k",
            "top_p",
            "min_p",
            "typical_p",
            "epsilon_cutoff",
            "eta_cutoff",
            "final"
        ]
    );
    assert_eq!(
        names_of(&v["rules_alone"]),
        [
            "greedy",
            "temperature",
            "top_k",
            "top_p",
            "min_p",
            "typical_p",
            "typical_p_llama",
            "epsilon_cutoff",
            "eta_cutoff",
            "top_n_sigma",
            "xtc",
            "mirostat"
        ]
    );
    let last = find_stage(&v["stages"], "final");
    let mut keys: Vec<&str> = last
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "entropy_bits",
            "entropy_nats",
            "kept",
            "kept_count",
            "kept_mass",
            "name",
            "probs"
        ]
    );
    assert_six_decimals(
        &probs_of(last),
        &[
            0.506480, 0.307196, 0.186324, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        ],
    );
    assert_eq!(last["kept_count"], 3);
    assert!((last["kept_mass"].as_f64().unwrap() - 0.7821398567522391).abs() < 1e-12);
}

#[test]
fn llama_order_puts_temperature_last() {
    let v = run_dist_json(&[
        "--logits",
        COURSE_LOGITS,
        "--order",
        "llama",
        "--temperature",
        "2",
    ]);
    assert_eq!(
        names_of(&v["stages"]),
        // llama.cpp's default chain: penalties, DRY, top-n-sigma, top-k,
        // typical, top-p, min-p, XTC, temperature (mirostat after it).
        [
            "raw",
            "penalties",
            "bias_bans",
            "dry",
            "top_n_sigma",
            "top_k",
            "typical_p_llama",
            "top_p",
            "min_p",
            "xtc",
            "temperature",
            "mirostat",
            "final"
        ]
    );
    // No truncation is on, so the final column is softmax(z / 2): the course's p_max at tau = 2.
    let p_max = probs_of(find_stage(&v["stages"], "final"))
        .into_iter()
        .fold(0.0, f64::max);
    assert!((p_max - 0.24098006525329924).abs() < 1e-12, "{p_max}");
}

#[test]
fn negative_first_logit_works_with_and_without_equals() {
    let joined = run_dist_json(&["--logits=-1,2"]);
    let spaced = run_dist_json(&["--logits", "-1,2"]);
    assert_eq!(joined, spaced);
    let p = probs_of(find_stage(&joined["stages"], "raw"));
    // softmax([-1, 2]) = [1, e^3] / (1 + e^3)
    let e3 = 3f64.exp();
    assert_six_decimals(&p, &[1.0 / (1.0 + e3), e3 / (1.0 + e3)]);
}

#[test]
fn course_repetition_penalty_from_the_command_line() {
    let v = run_dist_json(&[
        "--logits",
        "8.391505,-8.841305,8.391505",
        "--repetition-penalty",
        "2",
        "--recent",
        "0,0",
        "--per-occurrence",
        "--window",
        "4",
    ]);
    let pen = find_stage(&v["stages"], "penalties");
    assert_six_decimals(&probs_of(pen), &[0.001845, 0.000000, 0.998155]);
    // Printed 0.019413435029058908 bits from unrounded logits; 2e-8 covers the 6-decimal input.
    assert!((pen["entropy_bits"].as_f64().unwrap() - 0.019413435029058908).abs() < 2e-8);
}

#[test]
fn bias_and_ban_reshape_the_distribution() {
    let v = run_dist_json(&["--logits", "0,0,0", "--bias", "2:-1.5,0:1", "--ban", "1"]);
    let p = probs_of(find_stage(&v["stages"], "bias_bans"));
    // Logits become [1, -inf, -1.5]: p0 = 1 / (1 + e^-2.5).
    let p0 = 1.0 / (1.0 + (-2.5f64).exp());
    assert_six_decimals(&p, &[p0, 0.0, 1.0 - p0]);
    assert_eq!(
        find_stage(&v["stages"], "final")["kept"],
        serde_json::json!([true, false, true])
    );
}

#[test]
fn table_shows_tokens_stages_and_entropies() {
    let out = run_nexttoken(&["dist", "--logits", COURSE_LOGITS, "--top-p", "0.9"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let header = text.lines().next().unwrap();
    for column in ["token", "raw", "top_p", "final", "greedy*"] {
        assert!(header.contains(column), "header lacks {column}: {header}");
    }
    // 10 token rows after the header, then the summary rows.
    assert!(text.lines().nth(10).unwrap().trim_start().starts_with('9'));
    let h_bits = text
        .lines()
        .find(|l| l.trim_start().starts_with("H bits"))
        .expect("an entropy row");
    assert!(
        h_bits.contains("2.011528"),
        "top-p 0.9 entropy in bits: {h_bits}"
    );
}

#[test]
fn bad_arguments_exit_nonzero_with_a_message_and_no_panic() {
    let cases: &[(&[&str], &str)] = &[
        (&["dist"], "--logits"),
        (&["dist", "--logits", "1,x,3"], "item 2 'x' is not a number"),
        (&["dist", "--logits", "1,,3"], "item 2 is empty"),
        (&["dist", "--logits", "1,nan"], "NaN"),
        (&["dist", "--logits", "1,inf"], "+inf"),
        (&["dist", "--logits", "-inf,-inf"], "no token is possible"),
        (&["dist", "--logits", "1,2", "--top-p", "-0.1"], "top_p"),
        (&["dist", "--logits", "1,2", "--top-p", "1.5"], "top_p"),
        (
            &["dist", "--logits", "1,2", "--temperature", "-1"],
            "temperature",
        ),
        (
            &["dist", "--logits", "1,2", "--temperature", "1e-101"],
            "temperature",
        ),
        (&["dist", "--logits", "1,2", "--min-p", "-0.5"], "min_p"),
        (
            &["dist", "--logits", "1,2", "--repetition-penalty", "0"],
            "repetition_penalty",
        ),
        (
            &[
                "dist",
                "--logits",
                "1,2",
                "--recent",
                "0,5",
                "--repetition-penalty",
                "2",
            ],
            "history token 5",
        ),
        (
            &["dist", "--logits", "1,2", "--ban", "0,1"],
            "every token is banned",
        ),
        (&["dist", "--logits", "1,2", "--ban", "7"], "banned"),
        (&["dist", "--logits", "1,2", "--bias", "1-2"], "ID:BIAS"),
        (&["dist", "--logits", "1,2", "--bias", "9:1"], "logit_bias"),
        (
            &["dist", "--logits", "1,2", "--order", "random"],
            "'hf' or 'llama'",
        ),
        (&["dist", "--logits", "1,2", "--top-k", "-1"], "--top-k"),
        (
            &["dist", "--logits", "1,2", "--ban", "-1"],
            "'-1' is not a token id",
        ),
        (&["frobnicate"], "frobnicate"),
    ];
    for (args, expected) in cases {
        let out = run_nexttoken(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} should fail");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("error"), "{args:?}: {stderr}");
        assert!(
            stderr.contains(expected),
            "{args:?}: expected '{expected}' in: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    }
}

#[test]
fn a_user_chain_runs_its_stages_in_its_order() {
    // Temperature 0.5 after top-k 2: the two kept, then sharpened.
    let v = run_dist_json(&["--logits", "2,1,0", "--chain", "top_k,temperature", "--top-k", "2", "--temperature", "0.5"]);
    assert_eq!(names_of(&v["stages"]), ["raw", "top_k", "temperature", "final"]);
    // softmax((2, 1) / 0.5) = (e^4, e^2) / (e^4 + e^2).
    let e = (4f64.exp(), 2f64.exp());
    assert_six_decimals(&probs_of(find_stage(&v["stages"], "final")), &[e.0 / (e.0 + e.1), e.1 / (e.0 + e.1), 0.0]);
    let v = run_dist_json(&["--logits", "2,1,0", "--chain", "openai"]);
    assert_eq!(names_of(&v["stages"]), ["raw", "penalties", "bias_bans", "temperature", "top_p", "final"]);
}

#[test]
fn a_sampler_outside_the_chain_and_an_unknown_stage_are_refused() {
    let out = run_nexttoken(&["dist", "--logits", "2,1,0", "--chain", "openai", "--top-k", "2"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("top_k") && stderr.contains("openai"), "{stderr}");
    let out = run_nexttoken(&["dist", "--logits", "2,1,0", "--chain", "top_k,nucleus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'nucleus' is not a stage"));
}

#[test]
fn the_new_samplers_flags_reach_their_stages() {
    // Epsilon 0.2 on softmax(2, 1, 0) = (0.665, 0.245, 0.090): token 2 goes.
    let v = run_dist_json(&["--logits", "2,1,0", "--epsilon-cutoff", "0.2"]);
    assert_eq!(find_stage(&v["stages"], "epsilon_cutoff")["kept_count"], 2);
    // min_tokens_to_keep 3 keeps all three.
    let v = run_dist_json(&["--logits", "2,1,0", "--epsilon-cutoff", "0.2", "--min-tokens-to-keep", "3"]);
    assert_eq!(find_stage(&v["stages"], "epsilon_cutoff")["kept_count"], 3);
    // Top-n-sigma 1 on (2, 1, 0): std 0.816, keeps z >= 1.18: one token.
    let v = run_dist_json(&["--logits", "2,1,0", "--order", "llama", "--top-nsigma", "1"]);
    assert_eq!(find_stage(&v["stages"], "top_n_sigma")["kept_count"], 1);
    // No-repeat-ngram 2 after "0 1 0": token 1 would repeat "0 1".
    let v = run_dist_json(&["--logits", "2,1,0", "--recent", "0,1,0", "--no-repeat-ngram-size", "2"]);
    assert_eq!(find_stage(&v["stages"], "no_repeat_ngram")["kept"], serde_json::json!([true, false, true]));
    // Mirostat v2 with tau 0.5: mu = 1 bit keeps p >= 0.5: token 0 only.
    let v = run_dist_json(&["--logits", "2,1,0", "--order", "llama", "--mirostat", "2", "--mirostat-ent", "0.5", "--mirostat-lr", "0.1"]);
    assert_eq!(find_stage(&v["stages"], "mirostat")["kept_count"], 1);
}
