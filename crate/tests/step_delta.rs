//! A step's report carries what the step changed (its token and the text it
//! completed), a prompt's or a rewind's the whole transcript: a reader that
//! replaces its copy on `full` and appends each step's token and
//! `text_delta` holds the session's transcript at every report, its text the
//! history's bytes read as UTF-8 up to the last whole character, also when
//! tokens split characters, and after a step that failed midway (the next
//! report is whole). And a step's report does not grow with the text.

use nexttoken::backend::BackendKind;
use nexttoken::config::{MlpKind, ModelConfig, NormKind, Positions, RopeStyle};
use nexttoken::model::DecoderLm;
use nexttoken::report::{StepReport, Transcript};
use nexttoken::rng::Rng;
use nexttoken::rules::RuleSettings;
use nexttoken::session::{GenerationSettings, Session};
use nexttoken::tokenizer::{CharTokenizer, Tokenizer};

/// Tokens that split characters as byte-level BPE and byte fallback do: "🦀"
/// (F0 9F A6 80) whole and in two halves, "中" (E4 B8 AD) whole and as a lead
/// byte then two continuation bytes, "é" (C3 A9) as two single bytes, a byte
/// that is never UTF-8 (FF), and plain ASCII.
const PIECES: [&[u8]; 12] = [
    b"a",
    b" ",
    "🦀".as_bytes(),
    &[0xF0, 0x9F],
    &[0xA6, 0x80],
    "中".as_bytes(),
    &[0xE4],
    &[0xB8, 0xAD],
    &[0xC3],
    &[0xA9],
    &[0xFF],
    b"b\n",
];
const A: u32 = 0;
const CRAB: u32 = 2;
const CRAB_HEAD: u32 = 3;
const CRAB_TAIL: u32 = 4;
const ZHONG_HEAD: u32 = 6;
const ZHONG_TAIL: u32 = 7;
const E_HEAD: u32 = 8;
const E_TAIL: u32 = 9;
const NEVER_UTF8: u32 = 10;

struct BytePieces;

impl Tokenizer for BytePieces {
    fn vocab_size(&self) -> usize {
        PIECES.len()
    }
    fn encode(&self, text: &str) -> nexttoken::error::Result<Vec<u32>> {
        // Only what the tests type: ASCII letters and spaces.
        Ok(text.bytes().map(|b| if b == b' ' { 1 } else { A }).collect())
    }
    fn token_bytes(&self, id: u32) -> Vec<u8> {
        PIECES.get(id as usize).map(|p| p.to_vec()).unwrap_or_default()
    }
    fn eos_id(&self) -> Option<u32> {
        None
    }
}

fn config(vocab_size: usize, context: usize) -> ModelConfig {
    ModelConfig {
        vocab_size,
        d_model: 16,
        n_layers: 1,
        n_heads: 2,
        n_kv_heads: 1,
        head_dim: 8,
        d_ff: 24,
        context,
        positions: Positions::Rope { base: 10000.0, style: RopeStyle::RotateHalf },
        norm: NormKind::RmsNorm,
        norm_eps: 1e-5,
        mlp: MlpKind::SwiGlu,
        tied_embeddings: true,
        bias: false,
        options: Default::default(),
    }
}

fn byte_session(seed: u64) -> Session {
    let lm = DecoderLm::random("test", config(PIECES.len(), 128), seed, BackendKind::Flex).unwrap();
    Session::new(Box::new(lm), Box::new(BytePieces)).unwrap()
}

/// What a reader of the reports keeps (the page's store does the same).
#[derive(Default)]
struct Reader {
    copy: Option<Transcript>,
}

impl Reader {
    fn take(&mut self, report: &StepReport) {
        match (&report.full, &mut self.copy) {
            (Some(full), _) => self.copy = Some(full.clone()),
            (None, Some(copy)) => {
                copy.generated.push(report.chosen.clone().expect("a report without `full` is a step's"));
                copy.text.push_str(&report.text_delta);
            }
            (None, None) => panic!("a step report came before any full transcript"),
        }
    }

    /// The copy against the session's and against the definition: the
    /// history's bytes as UTF-8, without a character still unfinished at the
    /// end (which `String::from_utf8_lossy` shows as one U+FFFD).
    fn check(&self, s: &Session, when: &str) {
        let copy = self.copy.as_ref().unwrap();
        assert_eq!(copy, &s.transcript(), "{when}: the reader's copy is the session's");
        let ids: Vec<u32> = copy.prompt_tokens.iter().map(|t| t.id).chain(copy.generated.iter().map(|t| t.id)).collect();
        assert_eq!(ids, s.history(), "{when}");
        let bytes: Vec<u8> = ids.iter().flat_map(|&id| PIECES[id as usize].iter().copied()).collect();
        let lossy = String::from_utf8_lossy(&bytes);
        let unfinished = ends_inside_a_character(&bytes);
        let expected = if unfinished { lossy.strip_suffix('\u{FFFD}').unwrap().to_string() } else { lossy.into_owned() };
        assert_eq!(copy.text, expected, "{when}: bytes {bytes:02X?}");
    }
}

/// Whether `bytes` end with the start of a UTF-8 character that more bytes
/// could still complete (a lead byte and fewer continuation bytes than it announces).
fn ends_inside_a_character(bytes: &[u8]) -> bool {
    for back in 1..=3.min(bytes.len()) {
        let b = bytes[bytes.len() - back];
        if b & 0xC0 == 0x80 {
            continue;
        }
        let needs = match b {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => return false,
        };
        return back < needs && std::str::from_utf8(&bytes[bytes.len() - back..]).err().is_some_and(|e| e.error_len().is_none());
    }
    false
}

/// Greedy with one token pushed far ahead of the others: the step draws it.
fn forcing(id: u32) -> GenerationSettings {
    GenerationSettings {
        rules: RuleSettings { temperature: 0.0, logit_bias: vec![(id, 100.0)], ..RuleSettings::default() },
        max_new: 100,
        ..GenerationSettings::default()
    }
}

#[test]
fn deltas_join_into_the_text_across_split_characters_and_step_backs() {
    let mut s = byte_session(1);
    let mut reader = Reader::default();
    reader.take(&s.start("a a", &forcing(A)).unwrap());
    reader.check(&s, "start");
    let mut deltas = Vec::new();
    for (i, id) in [CRAB_HEAD, CRAB_TAIL, A, ZHONG_HEAD, ZHONG_TAIL, E_HEAD, E_TAIL, NEVER_UTF8, CRAB_HEAD, A, CRAB].into_iter().enumerate() {
        let rep = s.step(&forcing(id)).unwrap();
        assert_eq!(rep.chosen.as_ref().map(|c| c.id), Some(id), "the bias forces token {id}");
        assert!(rep.full.is_none(), "a step carries only what it changed");
        deltas.push(rep.text_delta.clone());
        reader.take(&rep);
        reader.check(&s, &format!("step {i}"));
    }
    // Each token's text appears with the token that completes its character;
    // a lead byte followed by a non-continuation is U+FFFD, as decode says.
    let want = ["", "🦀", "a", "", "中", "", "é", "\u{FFFD}", "", "\u{FFFD}a", "🦀"];
    assert_eq!(deltas, want);
    assert_eq!(reader.copy.as_ref().unwrap().text, s.text(), "nothing unfinished: the text is the whole decode");

    // A step back to between the crab's halves: the whole transcript again,
    // the half held back, and the next token completes it.
    let back = s.rewind(1, &forcing(CRAB_TAIL)).unwrap();
    assert!(back.chosen.is_none() && back.text_delta.is_empty());
    reader.take(&back);
    reader.check(&s, "rewound into the crab");
    assert_eq!(reader.copy.as_ref().unwrap().text, "a a", "the half crab is held back");
    assert!(s.text().ends_with('\u{FFFD}'), "decode shows the unfinished character");
    let rep = s.step(&forcing(CRAB_TAIL)).unwrap();
    assert_eq!(rep.text_delta, "🦀");
    reader.take(&rep);
    reader.check(&s, "after the step back");
    // A step back to the prompt, and a new prompt, reset the copy.
    reader.take(&s.rewind(0, &forcing(A)).unwrap());
    reader.check(&s, "rewound to the prompt");
    reader.take(&s.step(&forcing(ZHONG_HEAD)).unwrap());
    reader.take(&s.start("b", &forcing(A)).unwrap());
    reader.check(&s, "a new prompt after an unfinished character");
    let rep = s.step(&forcing(ZHONG_TAIL)).unwrap();
    assert_eq!(rep.text_delta, "\u{FFFD}\u{FFFD}", "stray continuation bytes are U+FFFD each, as decode shows them");
    reader.take(&rep);
    reader.check(&s, "continuation bytes after a new prompt");
}

#[test]
fn random_runs_with_random_step_backs_keep_the_readers_copy_exact() {
    let mut pick = Rng::new(7);
    for seed in 0..6 {
        let mut s = byte_session(seed);
        let settings = GenerationSettings {
            rules: RuleSettings { temperature: 3.0, ..RuleSettings::default() },
            max_new: 100,
            seed,
            ..GenerationSettings::default()
        };
        let mut reader = Reader::default();
        reader.take(&s.start("a", &settings).unwrap());
        let mut split = 0;
        for step in 0..90 {
            let rep = s.step(&settings).unwrap();
            let id = rep.chosen.as_ref().unwrap().id;
            split += usize::from(std::str::from_utf8(PIECES[id as usize]).is_err());
            reader.take(&rep);
            reader.check(&s, &format!("seed {seed}, step {step}"));
            if pick.next_u64().is_multiple_of(9) {
                let n = s.generated_ids().len();
                let to = n.saturating_sub(1 + (pick.next_u64() % 6) as usize);
                reader.take(&s.rewind(to, &settings).unwrap());
                reader.check(&s, &format!("seed {seed}, back to {to}"));
            }
        }
        assert!(split > 10, "seed {seed}: the run drew tokens that split characters ({split})");
    }
}

#[test]
fn a_step_report_does_not_grow_with_the_text() {
    let chars: Vec<char> = ('a'..='p').collect();
    let lm = DecoderLm::random("test", config(chars.len(), 256), 3, BackendKind::Flex).unwrap();
    let mut s = Session::new(Box::new(lm), Box::new(CharTokenizer::new(&chars).unwrap())).unwrap();
    let settings = GenerationSettings {
        rules: RuleSettings { temperature: 1.0, ..RuleSettings::default() },
        max_new: 220,
        ..GenerationSettings::default()
    };
    let size = |rep: &StepReport| serde_json::to_string(rep).unwrap().len();
    s.start("abc", &settings).unwrap();
    let mut sizes = Vec::new();
    for _ in 0..200 {
        sizes.push(size(&s.step(&settings).unwrap()));
    }
    // The numbers' digits vary from step to step; the tokens and text of the
    // 200 steps would add thousands of bytes (a generated token alone is
    // about 80 bytes of JSON).
    let (early, late) = (sizes[4], sizes[199]);
    assert!(late <= early + 400, "step 5's report is {early} bytes, step 200's {late}");
    let full = size(&s.rewind(200, &settings).unwrap());
    assert!(full > late + 200 * 60, "the full transcript after 200 steps is {full} bytes (a step's {late})");
}

/// A model whose cached forward pass fails once, when the cache holds `at` positions.
struct FailsOnce {
    lm: DecoderLm,
    at: Option<usize>,
}

impl nexttoken::lm::LanguageModel for FailsOnce {
    fn info(&self) -> nexttoken::lm::ModelInfo {
        self.lm.info()
    }
    fn forward_cached(&mut self, tokens: &[u32]) -> nexttoken::error::Result<Vec<f32>> {
        if self.at == Some(self.lm.cache_len()) {
            self.at = None;
            return Err(nexttoken::error::Error::new("the test's model fails here"));
        }
        self.lm.forward_cached(tokens)
    }
    fn forward_naive(&mut self, tokens: &[u32]) -> nexttoken::error::Result<Vec<Vec<f32>>> {
        self.lm.forward_naive(tokens)
    }
    fn cache_len(&self) -> usize {
        self.lm.cache_len()
    }
    fn truncate(&mut self, n: usize) {
        self.lm.truncate(n)
    }
    fn counters(&self) -> nexttoken::counters::Counters {
        self.lm.counters()
    }
    fn reset_counters(&mut self) {
        self.lm.reset_counters()
    }
}

#[test]
fn after_a_step_that_failed_midway_the_next_report_carries_the_whole_transcript() {
    let lm = DecoderLm::random("test", config(PIECES.len(), 64), 4, BackendKind::Flex).unwrap();
    // The prompt is 3 tokens: feeding the 3rd generated token finds 5 cached positions.
    let mut s = Session::new(Box::new(FailsOnce { lm, at: Some(5) }), Box::new(BytePieces)).unwrap();
    let mut reader = Reader::default();
    reader.take(&s.start("a a", &forcing(A)).unwrap());
    for id in [CRAB_HEAD, CRAB_TAIL] {
        reader.take(&s.step(&forcing(id)).unwrap());
    }
    assert!(s.step(&forcing(ZHONG_HEAD)).is_err(), "the model fails while feeding the token");
    assert_eq!(s.generated_ids().len(), 3, "the drawn token stays in the history");
    let rep = s.step(&forcing(ZHONG_TAIL)).unwrap();
    assert!(rep.full.is_some(), "the reader never heard of the failed step's token");
    reader.take(&rep);
    reader.check(&s, "after the failed step");
    assert_eq!(reader.copy.as_ref().unwrap().text, "a a🦀中");
    let rep = s.step(&forcing(A)).unwrap();
    assert!(rep.full.is_none(), "owed once");
    reader.take(&rep);
    reader.check(&s, "the step after");
}
