//! The readers against the engines' documented defaults and their own
//! words, round trips, and refusals that name the line.

use super::*;
use crate::rules::{Order, StageKind, Ties};

const VOCAB: usize = 1000;

fn read(text: &str, d: Dialect) -> Imported {
    import(text, Some(d), &GenerationSettings::default(), VOCAB).unwrap_or_else(|e| panic!("{text:?}: {}", e.message))
}

fn refused(text: &str, d: Option<Dialect>) -> String {
    import(text, d, &GenerationSettings::default(), VOCAB).expect_err(text).message
}

/// llama.cpp's `common_params_sampling` defaults (common/common.h): temp
/// 0.80, top_k 40, top_p 0.95, min_p 0.05, penalty_last_n 64, its own chain.
#[test]
fn empty_flags_are_llama_cpps_defaults() {
    let i = read("", Dialect::LlamaCpp);
    let s = &i.settings.rules;
    assert_eq!((s.temperature, s.top_k, s.top_p, s.min_p, s.penalty_window), (0.8, 40, 0.95, 0.05, 64));
    assert_eq!(s.order, Order::LlamaCpp);
    assert!(s.chain.is_empty());
    let filled: Vec<&str> = i.filled.iter().map(|f| f.engine_key.as_str()).collect();
    for flag in ["--temp", "--top-k", "--top-p", "--min-p"] {
        assert!(filled.contains(&flag), "{flag} is said to be filled in: {filled:?}");
    }
}

/// transformers' GenerationConfig: greedy unless do_sample; sampling's
/// defaults top_k 50, temperature 1; repetition_penalty over the whole input.
#[test]
fn hugging_faces_defaults_follow_do_sample() {
    let greedy = read("{}", Dialect::Hf).settings.rules;
    assert_eq!(greedy.temperature, 0.0);
    assert_eq!(greedy.top_k, 0);
    let sampling = read("{\"do_sample\": true}", Dialect::Hf);
    let s = &sampling.settings.rules;
    assert_eq!((s.temperature, s.top_k, s.top_p, s.penalty_window), (1.0, 50, 1.0, 0));
    assert_eq!(s.ties, Ties::KeepTied);
    assert_eq!(s.order, Order::HuggingFace);
    assert!(sampling.filled.iter().any(|f| f.key == "top_k" && f.value == "50"));
    let ignored = read("{\"temperature\": 0.7}", Dialect::Hf);
    assert_eq!(ignored.settings.rules.temperature, 0.0);
    assert!(ignored.notes.iter().any(|n| n.key == "temperature" && n.line == 1), "{:?}", ignored.notes);
}

/// OpenAI's API reference: temperature 1, top_p 1, no penalties.
#[test]
fn openai_defaults_and_vllm_and_llama_server_readings() {
    let i = read("{\"model\": \"gpt-4o\", \"messages\": []}", Dialect::Openai);
    assert_eq!((i.settings.rules.temperature, i.settings.rules.top_p), (1.0, 1.0));
    assert_eq!(i.settings.rules.order, Order::OpenAi);
    assert_eq!(i.notes.len(), 2, "model and messages are named as not sampling settings: {:?}", i.notes);
    let v = read("{\"temperature\": 0.7, \"top_k\": 20, \"min_p\": 0.1}", Dialect::Openai);
    assert!(v.read_as.contains("vLLM"));
    assert_eq!(v.settings.rules.stages()[..3], [StageKind::Penalties, StageKind::BiasBans, StageKind::Temperature]);
    let l = read("{\"temperature\": 0.7, \"repeat_penalty\": 1.1, \"samplers\": [\"top_k\", \"temperature\"]}", Dialect::Openai);
    assert!(l.read_as.contains("llama.cpp"));
    let s = &l.settings.rules;
    assert_eq!((s.top_k, s.top_p, s.min_p), (40, 1.0, 0.0), "top_p and min_p are outside the sequence, so llama.cpp does not apply them");
    assert_eq!(s.chain, [StageKind::BiasBans, StageKind::TopK, StageKind::Temperature]);
}

#[test]
fn llama_flags_read_as_llama_cpp_applies_them() {
    let i = read("llama-cli -m model.gguf \\\n  --temp 0.6 \\\n  --top-p 0.9 --samplers 'top_k;top_p;temperature' --min-p 0.2", Dialect::LlamaCpp);
    let s = &i.settings.rules;
    assert_eq!((s.temperature, s.top_p, s.top_k), (0.6, 0.9, 40));
    assert_eq!(s.min_p, 0.0, "min-p is not in the sequence");
    assert!(i.notes.iter().any(|n| n.key == "min_p" && n.line == 3), "{:?}", i.notes);
    assert!(i.notes.iter().any(|n| n.key == "m" && n.line == 1));
    let m = read("--mirostat 2 --top-k 10", Dialect::LlamaCpp).settings.rules;
    assert_eq!(m.chain, [StageKind::BiasBans, StageKind::Temperature, StageKind::Mirostat]);
    assert_eq!((m.top_k, m.top_p, m.min_p), (0, 1.0, 0.0));
    let g = read("--temp -1 --logit-bias 5+1.5 --logit-bias 7-inf --repeat-last-n -1 --seed 7", Dialect::LlamaCpp).settings;
    assert_eq!(g.rules.temperature, 0.0);
    assert_eq!(g.rules.logit_bias, [(5, 1.5)]);
    assert_eq!(g.rules.banned, [7]);
    assert_eq!(g.rules.penalty_window, 0);
    assert_eq!(g.seed, 7);
    let seq = read("--sampling-seq kpt --top-k 5", Dialect::LlamaCpp).settings.rules;
    assert_eq!(seq.chain, [StageKind::BiasBans, StageKind::TopK, StageKind::TopP, StageKind::Temperature]);
    assert_eq!(seq.min_p, 0.0);
}

/// Values the engines take that the playground used to refuse.
#[test]
fn values_the_engines_take_are_read() {
    let s = read("--top-p 0 --min-p 1.5 --presence-penalty 5", Dialect::LlamaCpp).settings.rules;
    assert_eq!((s.top_p, s.min_p, s.presence_penalty), (0.0, 1.5, 5.0));
    let h = read("{\"do_sample\": true, \"top_p\": 0, \"repetition_penalty\": 0.8}", Dialect::Hf).settings.rules;
    assert_eq!((h.top_p, h.repetition_penalty), (0.0, 0.8));
}

/// Import, export, import again: the same settings, in every dialect.
#[test]
fn round_trips_keep_the_settings() {
    let texts: &[(Dialect, &str)] = &[
        (Dialect::LlamaCpp, ""),
        (Dialect::LlamaCpp, "--temp 0.7 --top-k 20 --top-p 0.8 --min-p 0 --repeat-penalty 1.3 --repeat-last-n 8 --presence-penalty 0.5"),
        (Dialect::LlamaCpp, "--samplers 'min_p;temperature;top_k' --min-p 0.2 --top-k 3 --temp 2 --seed 9 -n 20"),
        (Dialect::LlamaCpp, "--mirostat 2 --mirostat-ent 3 --mirostat-lr 0.2 --logit-bias 3+2 --logit-bias 4-inf"),
        (Dialect::LlamaCpp, "--dry-multiplier 0.8 --dry-sequence-breaker none --xtc-probability 0.5 --xtc-threshold 0.2 --top-nsigma 1.5 --typical 0.7"),
        (Dialect::LlamaCpp, "--repeat-penalty 1.2 --logit-bias 3+2 -r 'User:' --dry-multiplier 1 --dry-sequence-breaker '\\n' --dry-sequence-breaker 'a b'"),
        (Dialect::Hf, "{}"),
        (Dialect::Hf, "{\"do_sample\": true}"),
        (Dialect::Hf, "{\"do_sample\": true, \"temperature\": 0.6, \"top_p\": 0.9, \"top_k\": 0, \"min_p\": 0.05, \"typical_p\": 0.8, \"epsilon_cutoff\": 0.001, \"eta_cutoff\": 0.002, \"repetition_penalty\": 1.2, \"no_repeat_ngram_size\": 3, \"sequence_bias\": [[[1, 2], -1.5]], \"suppress_tokens\": [5], \"max_new_tokens\": 30, \"stop_strings\": [\"\\n\"]}"),
        (Dialect::Hf, "do_sample=True, temperature=0.9, top_k=None"),
        (Dialect::Openai, "{}"),
        (Dialect::Openai, "{\"temperature\": 0.3, \"top_p\": 0.5, \"presence_penalty\": 1, \"frequency_penalty\": -0.5, \"logit_bias\": {\"12\": -100, \"4\": 3}, \"seed\": 5, \"max_tokens\": 40, \"stop\": [\"x\"]}"),
        (Dialect::Openai, "{\"temperature\": 0.3, \"top_k\": 8, \"min_p\": 0.1, \"repetition_penalty\": 1.1}"),
        (Dialect::Openai, "{\"temperature\": 0.5, \"typical_p\": 0.9, \"mirostat\": 0, \"logit_bias\": [[3, false], [4, 1.5]], \"n_predict\": 12}"),
    ];
    for (d, text) in texts {
        let first = read(text, *d);
        let out = export(&first.settings, *d);
        let again = read(&out.text, *d);
        assert_eq!(again.settings, first.settings, "{d:?} {text:?} exported as\n{}", out.text);
    }
}

/// Settings an engine cannot say are named by its export.
#[test]
fn exports_name_what_the_engine_cannot_say() {
    let hf = read("{\"do_sample\": true, \"no_repeat_ngram_size\": 2, \"epsilon_cutoff\": 0.01}", Dialect::Hf).settings;
    let llama = export(&hf, Dialect::LlamaCpp);
    assert!(llama.notes.iter().any(|n| n.key == "no_repeat_ngram"), "{:?}", llama.notes);
    assert!(llama.notes.iter().any(|n| n.key == "epsilon_cutoff"), "{:?}", llama.notes);
    assert!(llama.notes.iter().any(|n| n.key == "ties"), "{:?}", llama.notes);
    let l = read("--presence-penalty 0.5 --dry-multiplier 0.8", Dialect::LlamaCpp).settings;
    let hf = export(&l, Dialect::Hf);
    assert!(hf.notes.iter().any(|n| n.key == "presence_penalty"), "{:?}", hf.notes);
    assert!(hf.notes.iter().any(|n| n.key == "dry"), "{:?}", hf.notes);
    assert!(hf.notes.iter().any(|n| n.key == "chain"), "temperature last is not transformers' order: {:?}", hf.notes);
}

#[test]
fn bad_text_is_refused_naming_the_line() {
    assert!(refused("hello there", None).starts_with("line 1:"));
    let m = refused("{\n  \"do_sample\": true,\n  \"temprature\": 0.7\n}", Some(Dialect::Hf));
    assert!(m.starts_with("line 3:") && m.contains("did you mean temperature"), "{m}");
    let m = refused("--temp 0.7\n--top-p 1.5e400", Some(Dialect::LlamaCpp));
    assert!(m.starts_with("line 2:"), "{m}");
    let m = refused("--top-k abc", Some(Dialect::LlamaCpp));
    assert!(m.contains("line 1") && m.contains("abc"), "{m}");
    let m = refused("{\n\"temperature\": -3\n}", Some(Dialect::Openai));
    assert!(m.starts_with("line 2:") && m.contains("temperature"), "{m}");
    let m = refused("{\n\"do_sample\": true,\n\"temperature\": 0\n}", Some(Dialect::Hf));
    assert!(m.starts_with("line 3:"), "{m}");
    let m = refused("{\"temperature\": 0.7,", None);
    assert!(m.starts_with("line 1:") && m.contains("JSON"), "{m}");
    let big = format!("--temp 0.7 {}", " ".repeat(2 * MAX_CONFIG_BYTES));
    assert!(refused(&big, None).contains("at most 64 KB"));
    let m = refused("{\"logit_bias\": {\"5000\": 1}}", Some(Dialect::Openai));
    assert!(m.contains("5000") && m.contains("vocabulary"), "{m}");
}

#[test]
fn the_dialect_is_detected() {
    assert_eq!(Dialect::detect("--temp 1").unwrap(), Dialect::LlamaCpp);
    assert_eq!(Dialect::detect("./llama-server -m x").unwrap(), Dialect::LlamaCpp);
    assert_eq!(Dialect::detect("{\"do_sample\": true}").unwrap(), Dialect::Hf);
    assert_eq!(Dialect::detect("do_sample=True").unwrap(), Dialect::Hf);
    assert_eq!(Dialect::detect("{\"temperature\": 1, \"messages\": []}").unwrap(), Dialect::Openai);
}
