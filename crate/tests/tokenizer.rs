//! Tokenizer properties: lossless round trips (ASCII, accents, CJK, emoji),
//! readable display of whitespace and partial UTF-8, streaming that holds
//! back half a character, refusals with clear messages, and a trained BPE
//! with the asked size that actually compresses text.

use nexttoken::tokenizer::{
    byte_to_char, char_to_byte, decode_complete, display_bytes, split_complete_utf8, train_bpe, BpeTokenizer,
    CharTokenizer, PieceTokenizer, Tokenizer, ENDOFTEXT,
};
use proptest::prelude::*;

/// Public-domain Shakespeare (Sonnet 18 and Hamlet's opening lines), the
/// kind of text the project's tokenizer is trained on.
const SHAKESPEARE: &str = "Shall I compare thee to a summer's day?\n\
Thou art more lovely and more temperate:\n\
Rough winds do shake the darling buds of May,\n\
And summer's lease hath all too short a date;\n\
Sometime too hot the eye of heaven shines,\n\
And often is his gold complexion dimm'd;\n\
And every fair from fair sometime declines,\n\
By chance or nature's changing course untrimm'd;\n\
But thy eternal summer shall not fade,\n\
Nor lose possession of that fair thou ow'st;\n\
Nor shall death brag thou wander'st in his shade,\n\
When in eternal lines to time thou grow'st:\n\
So long as men can breathe or eyes can see,\n\
So long lives this, and this gives life to thee.\n\n\
BERNARDO. Who's there?\n\
FRANCISCO. Nay, answer me: stand, and unfold yourself.\n\
BERNARDO. Long live the king!\n\
FRANCISCO. Bernardo?\n\
BERNARDO. He.\n\
FRANCISCO. You come most carefully upon your hour.\n";

const NON_ASCII: &str = "Café déjà vu, naïve façade — 你好，世界 🦀🎭 «¿qué?»\tend\r\n";

fn trained(vocab_size: usize) -> BpeTokenizer {
    let texts: Vec<String> = (0..8).map(|_| SHAKESPEARE.to_string()).collect();
    let json = train_bpe(&texts, vocab_size, &[ENDOFTEXT]).expect("training on a small text works");
    BpeTokenizer::from_json(&json).expect("the trained tokenizer.json loads")
}

fn utf8_bytes_shown(c: char) -> String {
    let mut buf = [0u8; 4];
    c.encode_utf8(&mut buf).bytes().map(|b| format!("<0x{b:02X}>")).collect()
}

#[test]
fn byte_level_alphabet_is_a_bijection_on_256_bytes() {
    let mut seen = std::collections::HashSet::new();
    for b in 0..=255u8 {
        let c = byte_to_char(b);
        assert!(seen.insert(c), "byte {b} shares its character {c:?}");
        assert_eq!(char_to_byte(c), Some(b));
    }
    // GPT-2's well-known spellings of space and newline.
    assert_eq!(byte_to_char(b' '), 'Ġ');
    assert_eq!(byte_to_char(b'\n'), 'Ċ');
    assert_eq!(char_to_byte('€'), None);
}

#[test]
fn trained_bpe_round_trips_shakespeare_and_non_ascii_text() {
    let tok = trained(400);
    for text in [SHAKESPEARE, NON_ASCII, "", " leading space", "trailing space ", "é", "你", "🦀"] {
        let ids = tok.encode(text).unwrap();
        assert_eq!(tok.decode(&ids), text, "round trip of {text:?}");
        let joined: Vec<u8> = ids.iter().flat_map(|&id| tok.token_bytes(id)).collect();
        assert_eq!(joined, text.as_bytes(), "token bytes of {text:?}");
    }
}

#[test]
fn trained_bpe_has_the_asked_vocab_size_and_eos_at_zero() {
    for size in [300, 512] {
        let tok = trained(size);
        assert_eq!(tok.vocab_size(), size);
        assert_eq!(tok.eos_id(), Some(0));
        assert_eq!(tok.encode(ENDOFTEXT).unwrap(), vec![0]);
        assert_eq!(tok.display(0), ENDOFTEXT);
        assert!(tok.is_special(0));
    }
}

#[test]
fn trained_bpe_compresses_the_text_it_learned_from() {
    let tok = trained(512);
    let ids = tok.encode(SHAKESPEARE).unwrap();
    let bytes_per_token = SHAKESPEARE.len() as f64 / ids.len() as f64;
    // 250 merges learned from this very text: most words become one token.
    assert!(bytes_per_token > 3.0, "only {bytes_per_token:.2} bytes per token");
    // No merges at all means one token per byte.
    let bytes_only = trained(257);
    assert_eq!(bytes_only.encode(SHAKESPEARE).unwrap().len(), SHAKESPEARE.len());
}

#[test]
fn training_refuses_a_vocabulary_smaller_than_the_byte_alphabet() {
    let err = train_bpe(&[SHAKESPEARE.to_string()], 100, &[ENDOFTEXT]).unwrap_err();
    assert!(err.message.contains("257"), "{}", err.message);
}

#[test]
fn display_shows_whitespace_controls_and_partial_utf8() {
    assert_eq!(display_bytes(b" the\n"), "␣the↵");
    assert_eq!(display_bytes(b"\tx\r"), "⇥x<0x0D>");
    assert_eq!(display_bytes("é你".as_bytes()), "é你");
    let crab = "🦀".as_bytes();
    assert_eq!(display_bytes(&crab[..2]), "<0xF0><0x9F>");
    assert_eq!(display_bytes(&crab[2..]), "<0xA6><0x80>");
    assert_eq!(display_bytes(&[b'a', 0xFF, b'b']), "a<0xFF>b");

    // An emoji absent from the training text stays split into its bytes.
    let tok = trained(400);
    let ids = tok.encode("🦀").unwrap();
    assert_eq!(ids.len(), 4);
    let shown: String = ids.iter().map(|&id| tok.display(id)).collect();
    assert_eq!(shown, utf8_bytes_shown('🦀'));
    let space = tok.encode(" ").unwrap();
    assert_eq!(tok.display(space[0]), "␣");
    let newline = tok.encode("\n").unwrap();
    assert_eq!(tok.display(newline[0]), "↵");
}

#[test]
fn streaming_holds_back_an_unfinished_character() {
    let tok = trained(400);
    let ids = tok.encode("a🦀").unwrap();
    assert_eq!(ids.len(), 5, "one token for a, four for the crab's bytes");
    for n in 1..ids.len() {
        let shown = decode_complete(&tok, &ids[..n]);
        assert_eq!(shown.text, "a");
        assert_eq!(shown.pending, &"🦀".as_bytes()[..n - 1]);
    }
    let done = decode_complete(&tok, &ids);
    assert_eq!(done.text, "a🦀");
    assert!(done.pending.is_empty());
    // A byte that can never start a character is replaced, not held.
    assert_eq!(split_complete_utf8(&[b'x', 0xFF, b'y']).text, "x\u{FFFD}y");
}

#[test]
fn char_tokenizer_encodes_its_alphabet_and_refuses_others() {
    let tok = CharTokenizer::new(&['a', 'b', 'c']).unwrap();
    assert_eq!(tok.encode("abcb").unwrap(), vec![0, 1, 2, 1]);
    assert_eq!(tok.decode(&[2, 1, 0]), "cba");
    let err = tok.encode("abd").unwrap_err();
    assert!(err.message.contains("'d'"), "{}", err.message);
    assert!(err.message.contains("'a', 'b', 'c'"), "{}", err.message);
    assert!(CharTokenizer::new(&['a', 'a']).is_err());
    assert!(CharTokenizer::new(&[]).is_err());
    let ws = CharTokenizer::new(&[' ', '\n', '\t']).unwrap();
    assert_eq!((0..3).map(|id| ws.display(id)).collect::<Vec<_>>(), ["␣", "↵", "⇥"]);
    assert_eq!(tok.token_bytes(7), Vec::<u8>::new());
}

#[test]
fn piece_tokenizer_reads_the_longest_piece() {
    let tok = PieceTokenizer::numbered("t", 10).unwrap();
    assert_eq!(tok.vocab_size(), 10);
    assert_eq!(tok.encode("t10t1t2").unwrap(), vec![9, 0, 1]);
    assert_eq!(tok.decode(&[9, 0]), "t10t1");
    let err = tok.encode("t1 t2").unwrap_err();
    assert!(err.message.contains("\" t2\""), "{}", err.message);
    assert!(PieceTokenizer::new(&["x", "x"]).is_err());
    assert!(PieceTokenizer::new(&["x", ""]).is_err());
}

#[test]
fn from_json_refuses_garbage_with_a_message() {
    let err = BpeTokenizer::from_json(b"{not json").err().expect("refused");
    assert!(err.message.contains("tokenizer.json"), "{}", err.message);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn any_string_round_trips_through_the_trained_bpe(text in "\\PC{0,40}") {
        let tok = trained(300);
        let ids = tok.encode(&text).unwrap();
        prop_assert_eq!(tok.decode(&ids), text.clone());
        let complete = decode_complete(&tok, &ids);
        prop_assert_eq!(complete.text, text);
        prop_assert!(complete.pending.is_empty());
    }
}

/// The real corpus (run `pkg-scripts/fetch-corpus` first, then
/// `cargo test --test tokenizer -- --ignored`).
#[test]
#[ignore = "needs .cache/corpus/shakespeare from pkg-scripts/fetch-corpus"]
fn bpe_trained_on_the_corpus_compresses_it_plausibly() {
    use nexttoken::train::corpus::{load_corpus, DEFAULT_HELD_OUT};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.cache/corpus/shakespeare");
    let corpus = load_corpus(&dir, DEFAULT_HELD_OUT).unwrap();
    let json = train_bpe(&corpus.train_texts(), 2048, &[ENDOFTEXT]).unwrap();
    let tok = BpeTokenizer::from_json(&json).unwrap();
    assert_eq!(tok.vocab_size(), 2048);
    let val = corpus.validation_texts().join("");
    let ids = tok.encode(&val).unwrap();
    let bytes_per_token = val.len() as f64 / ids.len() as f64;
    eprintln!("validation: {} bytes, {} tokens, {bytes_per_token:.3} bytes/token", val.len(), ids.len());
    // English with 2048 byte-level tokens: well above 1 byte per token, below
    // a whole word (5-6 bytes with its space) per token.
    assert!((2.0..4.0).contains(&bytes_per_token), "{bytes_per_token}");
    assert_eq!(tok.decode(&ids), val);

    // The count baselines the trained transformer must beat.
    use nexttoken::train::baselines::measure_baselines;
    let encode_all = |docs: &[nexttoken::train::corpus::Document]| -> Vec<Vec<u32>> {
        docs.iter().map(|d| tok.encode(&d.text).unwrap()).collect()
    };
    let (train_ids, val_ids) = (encode_all(&corpus.train), encode_all(&corpus.validation));
    let chars = corpus.validation_stats().chars;
    let b = measure_baselines(&train_ids, &val_ids, chars, tok.vocab_size()).unwrap();
    eprintln!("train {:?}, validation {:?}", corpus.train_stats(), corpus.validation_stats());
    eprintln!("unigram {:?}\nbigram {:?}\ntokens {}", b.unigram, b.bigram, b.tokens);
    assert!(b.bigram.nats_per_token < b.unigram.nats_per_token);
    // Both must do better than a uniform guess over the vocabulary.
    assert!(b.unigram.nats_per_token < (2048f64).ln());
}
