//! The default model as shipped in www/models/bard: its files decode into
//! the architecture, and it behaves the same on both backends.

use std::path::Path;

use nexttoken::backend::BackendKind;
use nexttoken::kv_check::teacher_forced;
use nexttoken::loader::{model_from_files, read_model_files, session_from_path};
use nexttoken::lm::LanguageModel;
use nexttoken::rules::RuleSettings;
use nexttoken::session::GenerationSettings;
use nexttoken::weights::Manifest;

fn model_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../www/models/bard"))
}

/// Recorded from this model with `nexttoken generate --model www/models/bard
/// --prompt "ROMEO:" --temperature 0 --max-new 24`: a regression golden, so a
/// change to the model code that changes what the shipped weights compute fails here.
const GOLDEN_GREEDY: &str = "ROMEO:  Servant to PAGE.]\n\n[Enter COUNTESS and COSTARD.]\n\nP";

fn greedy_text(backend: BackendKind) -> String {
    let mut s = session_from_path(model_dir(), backend).unwrap();
    let settings = GenerationSettings {
        rules: RuleSettings { temperature: 0.0, ..RuleSettings::default() },
        max_new: 24,
        ..GenerationSettings::default()
    };
    s.start("ROMEO:", &settings).unwrap();
    loop {
        let rep = s.step(&settings).unwrap();
        if rep.stop.is_some() {
            return s.text();
        }
    }
}

#[test]
fn embedded_model_decodes_into_architecture() {
    let (manifest_json, weights, tokenizer) = read_model_files(model_dir()).unwrap();
    let manifest = Manifest::parse(&manifest_json).unwrap();
    let (lm, _) = model_from_files(&manifest_json, weights.clone(), &tokenizer, BackendKind::Flex).unwrap();
    let info = lm.info();
    assert_eq!(info.params, manifest.config.param_count());
    assert_eq!(info.vocab_size, manifest.config.vocab_size);
    // f32 SafeTensors: the weights file holds every parameter, plus a small header.
    assert!(weights.len() >= 4 * info.params && weights.len() < 4 * info.params + 64 * 1024);
    // The shipped files together stay small enough for a page.
    let total = manifest_json.len() + weights.len() + tokenizer.len();
    assert!(total < 10 * 1024 * 1024, "{total} bytes");
}

#[test]
fn greedy_decoding_of_a_fixed_prompt_gives_the_golden_text_on_flex() {
    assert_eq!(greedy_text(BackendKind::Flex), GOLDEN_GREEDY);
}

#[cfg(feature = "ndarray")]
#[test]
fn greedy_decoding_of_a_fixed_prompt_gives_the_golden_text_on_ndarray() {
    assert_eq!(greedy_text(BackendKind::Ndarray), GOLDEN_GREEDY);
}

#[test]
fn the_shipped_model_cache_matches_full_recompute_over_24_positions() {
    let (m, w, t) = read_model_files(model_dir()).unwrap();
    let (mut lm, tok) = model_from_files(&m, w, &t, BackendKind::Flex).unwrap();
    use nexttoken::tokenizer::Tokenizer;
    let ids = tok.encode("Friends, Romans, countrymen, lend me your ears; I come to bury Caesar, not to praise him. The evil that men do lives after them; the good is oft interred with their bones.").unwrap();
    assert!(ids.len() >= 8 + 24, "{} tokens", ids.len());
    let check = teacher_forced(&mut lm, &ids[..32], 8).unwrap();
    assert_eq!(check.positions, 25);
    assert!(check.max_abs_diff < 1e-4, "{}", check.max_abs_diff);
    assert_eq!(check.argmax_agree, 25);
}
