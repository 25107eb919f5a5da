//! A session forced through a text token by token, checking the step
//! reports' `text_delta` on a real vocabulary: shared by the real-model
//! tests (`smollm2_gguf.rs`: byte-level BPE splitting characters over
//! tokens; `gemma3_gguf.rs`: SentencePiece's `<0xNN>` byte fallback).

use nexttoken::rules::RuleSettings;
use nexttoken::session::{GenerationSettings, Session};

/// Greedy with `id` pushed far ahead of every other token.
pub fn forcing(id: u32) -> GenerationSettings {
    GenerationSettings {
        rules: RuleSettings { temperature: 0.0, logit_bias: vec![(id, 100.0)], ..RuleSettings::default() },
        max_new: 200,
        ..GenerationSettings::default()
    }
}

/// Starts `s` on "Say:" and forces `target`'s tokens: each step's report
/// carries only its token and `text_delta`, and the start's text with the
/// deltas joined is the session's transcript at every step and, at the end,
/// its decoded text ending in `target`. Then a step back to just after the
/// first token that ends inside a character reports the whole transcript,
/// as it was at that step, while decode shows the unfinished character; the
/// rest forced again ends where the first pass did. Returns the text, with
/// `s` after the last token.
pub fn check_deltas_through_a_split_character(s: &mut Session, target: &str) -> String {
    let ids = s.tokenizer().encode(target).unwrap();
    let inside = (0..ids.len())
        .find(|&k| std::str::from_utf8(&ids[..=k].iter().flat_map(|&i| s.tokenizer().token_bytes(i)).collect::<Vec<_>>()).is_err())
        .expect("the vocabulary splits one of these characters over tokens");
    let mut text = s.start("Say:", &forcing(ids[0])).unwrap().full.expect("a start reports the whole transcript").text;
    let mut texts = Vec::new();
    for &id in &ids {
        let rep = s.step(&forcing(id)).unwrap();
        assert_eq!(rep.chosen.as_ref().map(|c| c.id), Some(id));
        assert!(rep.full.is_none());
        text.push_str(&rep.text_delta);
        assert_eq!(text, s.transcript().text);
        texts.push(text.clone());
    }
    assert_eq!(text, s.text(), "the whole text once every character is finished");
    assert!(text.ends_with(target), "{text:?}");
    let back = s.rewind(inside + 1, &forcing(ids[inside + 1])).unwrap();
    let mut text = back.full.expect("a step back reports the whole transcript").text;
    assert_eq!(text, texts[inside]);
    assert!(s.text().ends_with('\u{FFFD}'), "decode shows the unfinished character");
    for &id in &ids[inside + 1..] {
        text.push_str(&s.step(&forcing(id)).unwrap().text_delta);
    }
    assert_eq!(text, texts[ids.len() - 1]);
    text
}
