//! GGUF tokenizers against llama.cpp: the same token ids for every string of
//! `tests/fixtures/tokenizers-llamacpp.json`, written by
//! `pkg-scripts/make-tokenizer-fixtures` with llama-cpp-python.
//!
//! Vocabularies: Gemma 3 270M (SentencePiece, 262,144 pieces) as its file
//! has it, then with a space prefix, then as a Phi-3 file (whitespace after
//! special tokens stripped); SmolLM2 (byte-level BPE, "smollm"), then its
//! tokens and merges under each other pre-tokenizer name, which checks the
//! pre-tokenizer's split itself where no real file of that family is here.
//! The variants are the real vocabularies with the fixture's overrides
//! applied to the metadata read ([`GgufVocab`]), as the script applied them
//! to the file.
//!
//! The model files come from `pkg-scripts/fetch-gemma3` and
//! `pkg-scripts/fetch-smollm2`; without one, its vocabularies print that
//! they are skipped (NEXTTOKEN_REQUIRE_GEMMA3=1 / NEXTTOKEN_REQUIRE_SMOLLM2=1
//! make a missing file fail).

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;

use nexttoken::gguf::vocab::GgufVocab;
use nexttoken::gguf::GgufFile;
use nexttoken::tokenizer::{BpeTokenizer, TokenAttr, Tokenizer};
use serde_json::Value;

fn fixture() -> &'static Value {
    static FIXTURE: OnceLock<Value> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/tokenizers-llamacpp.json");
        serde_json::from_str(&std::fs::read_to_string(path).expect("the fixture is committed")).expect("valid JSON")
    })
}

/// The model file behind a fixture "file" name, with its require variable.
fn model(file: &str) -> (PathBuf, &'static str) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../www/models/");
    match file {
        "gemma3" => (PathBuf::from(root).join("gemma3/gemma-3-270m-q4_k_m.gguf"), "NEXTTOKEN_REQUIRE_GEMMA3"),
        "smollm2" => (PathBuf::from(root).join("smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"), "NEXTTOKEN_REQUIRE_SMOLLM2"),
        other => panic!("the fixture names an unknown file {other}"),
    }
}

fn bytes_of(file: &str) -> Option<Vec<u8>> {
    let (path, require) = model(file);
    match std::fs::read(&path) {
        Ok(b) => Some(b),
        Err(e) if std::env::var(require).is_ok_and(|v| v == "1") => panic!("{} is required ({require}=1): {e}", path.display()),
        Err(_) => {
            eprintln!("SKIPPED {file}: {} is absent (pkg-scripts/fetch-{file})", path.display());
            None
        }
    }
}

fn ids_of(v: &Value) -> Vec<u32> {
    v.as_array().expect("an id list").iter().map(|x| x.as_u64().expect("an id") as u32).collect()
}

/// The tokenizer of a fixture vocabulary: the file's metadata with the
/// fixture's overrides.
fn build(bytes: &[u8], entry: &'static Value) -> BpeTokenizer {
    let file = GgufFile::parse(bytes).expect("the model file parses");
    let mut vocab = GgufVocab::read(&file).expect("the vocabulary reads");
    if let Some(overrides) = entry["overrides"].as_object() {
        for (key, value) in overrides {
            match key.as_str() {
                "tokenizer.ggml.pre" => vocab.pre = value.as_str().unwrap(),
                "tokenizer.ggml.add_space_prefix" => vocab.add_space_prefix = value.as_bool(),
                "general.name" => vocab.name = value.as_str().unwrap(),
                other => panic!("the test does not apply the override {other}"),
            }
        }
    }
    for added in entry["added_control_tokens"].as_array().into_iter().flatten() {
        vocab.tokens.push(added.as_str().unwrap());
        vocab.scores.push(0.0);
        vocab.types.push(TokenAttr::CONTROL);
    }
    vocab.build().expect("the tokenizer builds")
}

/// Every string of every vocabulary built from `file`; returns the mismatches.
fn check_file(file: &str) -> Vec<String> {
    let Some(bytes) = bytes_of(file) else { return Vec::new() };
    let texts = fixture()["texts"].as_object().unwrap();
    let mut failures = Vec::new();
    let mut vocabs = 0;
    for (label, entry) in fixture()["vocabs"].as_object().unwrap() {
        if entry["file"] != file {
            continue;
        }
        vocabs += 1;
        let start = Instant::now();
        let tok = build(&bytes, entry);
        let built = start.elapsed();
        let expected_bos = entry["bos"].as_u64().map(|b| b as u32);
        if tok.bos_to_add() != expected_bos {
            failures.push(format!("{label}: BOS to add {:?}, llama.cpp adds {expected_bos:?}", tok.bos_to_add()));
        }
        let mut matched = 0;
        for (name, ids) in entry["ids"].as_object().unwrap() {
            let text = texts[name].as_str().unwrap();
            let want = ids_of(ids);
            match tok.encode(text) {
                Ok(got) if got == want => matched += 1,
                Ok(got) => failures.push(format!("{label} / {name} {text:?}:\n  ours      {got:?}\n  llama.cpp {want:?}")),
                Err(e) => failures.push(format!("{label} / {name} {text:?}: {e}")),
            }
        }
        eprintln!("{label}: {matched}/{} strings match llama.cpp (tokenizer built in {built:.1?})", texts.len());
    }
    assert!(vocabs > 0, "the fixture has no vocabulary from {file}");
    failures
}

#[test]
fn gemma3_sentencepiece_ids_equal_llama_cpp() {
    let failures = check_file("gemma3");
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn smollm2_and_every_pre_tokenizer_ids_equal_llama_cpp() {
    let failures = check_file("smollm2");
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}

/// The tokens' bytes put back together are the text (what the page shows
/// token by token adds up to what was typed), where nothing was added.
/// SentencePiece cannot tell a typed `▁` from a space, so texts with one
/// come back with a space there (as from llama.cpp).
#[test]
fn token_bytes_join_back_into_the_text() {
    for file in ["gemma3", "smollm2"] {
        let Some(bytes) = bytes_of(file) else { continue };
        let tok = build(&bytes, &fixture()["vocabs"][file]);
        for (name, text) in fixture()["texts"].as_object().unwrap() {
            let text = text.as_str().unwrap();
            if file == "gemma3" && text.contains('▁') {
                continue;
            }
            let ids = tok.encode(text).unwrap();
            let joined: Vec<u8> = ids.iter().flat_map(|&id| tok.token_bytes(id)).collect();
            assert_eq!(String::from_utf8_lossy(&joined), text, "{file} / {name}");
        }
    }
}

/// Gemma's special tokens: shown by name, BOS added, generation ending on
/// `<eos>` and on `<end_of_turn>`, byte pieces standing for their byte.
#[test]
fn gemma3_special_tokens_and_byte_pieces() {
    let Some(bytes) = bytes_of("gemma3") else { return };
    let tok = build(&bytes, &fixture()["vocabs"]["gemma3"]);
    let id = |t: &str| tok.token_to_id(t).unwrap_or_else(|| panic!("{t} is a token"));
    assert_eq!(tok.vocab_size(), 262_144);
    assert_eq!(tok.bos_to_add(), Some(id("<bos>")));
    assert_eq!(tok.eos_id(), Some(id("<eos>")));
    assert!(tok.ends_generation(id("<eos>")) && tok.ends_generation(id("<end_of_turn>")));
    assert!(!tok.ends_generation(id("<start_of_turn>")));
    assert!(tok.is_special(id("<start_of_turn>")) && !tok.is_special(id("\n")));
    assert_eq!(tok.display(id("<start_of_turn>")), "<start_of_turn>");
    assert_eq!(tok.token_bytes(id("<0x0A>")), b"\n");
    assert_eq!(tok.token_bytes(id("<0xE2>")), [0xE2]);
    assert_eq!(tok.token_bytes(id("▁the")), b" the");
    assert_eq!(tok.display(id("▁the")), "␣the");
}
