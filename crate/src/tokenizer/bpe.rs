//! A BPE vocabulary, merged one of two ways:
//! - by rank, byte-level (a Hugging Face `tokenizer.json`: the project's
//!   trained models, SmolLM2, Qwen, Llama 3), run by the `tokenizers` crate;
//! - by score, SentencePiece-style (GGUF `llama` vocabularies: Gemma,
//!   Llama 2, Phi-3), run by [`SentencePiece`] as llama.cpp does.
//!
//! A byte-level token's bytes are worked out once at load time, so showing
//! a token never goes back through the `tokenizers` crate. A SentencePiece
//! token's are read off its piece (`▁` as a space, `<0xNN>` as the byte):
//! a second table would repeat the piece table's text (Gemma 3: 3 MB more
//! of a worker's memory, which never shrinks).

use std::borrow::Cow;
use std::collections::HashSet;

use super::byte_level::char_to_byte;
use super::spm::SentencePiece;
use super::token_attr::TokenAttr;
use super::{display_bytes, Tokenizer};
use crate::bail;
use crate::chat::ChatTemplate;
use crate::error::{Error, Result};

/// Names of end-of-sequence tokens, most specific first: a chat model's
/// `<|im_end|>` ends a turn, and SmolLM2 also carries `<|endoftext|>` (as
/// its unknown token), so the chat name wins when both are present.
const EOS_NAMES: [&str; 4] = ["<|im_end|>", "<|endoftext|>", "</s>", "<eos>"];

enum Engine {
    ByteLevel(Box<tokenizers::Tokenizer>, TokenBytes),
    /// The pieces' attributes beside the engine: what each piece's bytes are.
    SentencePiece(SentencePiece, Vec<TokenAttr>),
}

/// Every token's bytes as one buffer and end offsets (Gemma has 262,144).
#[derive(Default)]
struct TokenBytes {
    data: Vec<u8>,
    ends: Vec<u32>,
}

impl TokenBytes {
    fn from_entries(n: usize, entry: impl Fn(u32) -> Vec<u8>) -> Result<Self> {
        let mut t = TokenBytes { data: Vec::new(), ends: Vec::with_capacity(n) };
        for id in 0..n as u32 {
            t.data.extend_from_slice(&entry(id));
            t.ends.push(u32::try_from(t.data.len()).map_err(|_| Error::new("the vocabulary's bytes are over 4 GiB"))?);
        }
        // Kept as long as the model: not the spare half of the last doubling.
        t.data.shrink_to_fit();
        Ok(t)
    }

    fn get(&self, id: u32) -> &[u8] {
        let i = id as usize;
        if i >= self.ends.len() {
            return &[];
        }
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.data[start..self.ends[i] as usize]
    }
}

pub struct BpeTokenizer {
    engine: Engine,
    /// Special tokens, shown by name.
    special: HashSet<u32>,
    eos: Option<u32>,
    bos_to_add: Option<u32>,
    /// Tokens after which generation stops (EOS, end-of-turn markers).
    end_of_generation: Vec<u32>,
    chat: Option<ChatTemplate>,
    /// Measured once: the tokenizers crate counts its vocabulary by building
    /// a map of every piece (49,152 strings cloned for SmolLM2), which cost
    /// a step more than a third of its time when asked per call.
    vocab_size: usize,
}

impl BpeTokenizer {
    /// Reads a `tokenizer.json`.
    pub fn from_json(json: &[u8]) -> Result<Self> {
        // Malformed JSON is refused before the tokenizers crate reads it: its
        // decoder deserialiser panics on a syntax error inside "decoder"
        // (`expect("Helper")` in tokenizers 0.22.2; found by the
        // tokenizer_json fuzz target, tests/fixtures/fuzz-regressions/).
        // Parsed into values, not skipped: skipping a string does not check
        // that it is UTF-8, and invalid UTF-8 in a string panicked there too.
        serde_json::from_slice::<serde_json::Value>(json)
            .map_err(|e| Error::new(format!("tokenizer.json is not valid JSON: {e}")))?;
        let inner = tokenizers::Tokenizer::from_bytes(json)
            .map_err(|e| Error::new(format!("cannot read tokenizer.json: {e}")))?;
        Self::from_tokenizer(inner, is_byte_level(json)?)
    }

    /// A tokenizer already built, whose vocabulary spells bytes with the
    /// GPT-2 alphabet when `byte_level` (a GGUF's, which says so itself).
    pub fn from_tokenizer(inner: tokenizers::Tokenizer, byte_level: bool) -> Result<Self> {
        let vocab = inner.get_vocab(true);
        let size = vocab.values().map(|&id| id as usize + 1).max().unwrap_or(0);
        let mut pieces: Vec<Option<&str>> = vec![None; size];
        for (piece, &id) in &vocab {
            pieces[id as usize] = Some(piece);
        }
        let added = inner.get_added_tokens_decoder();
        let bytes = TokenBytes::from_entries(size, |id| match (added.get(&id), pieces[id as usize]) {
            // Added tokens are stored as their literal text, never byte-level spelled.
            (Some(token), _) => token.content.as_bytes().to_vec(),
            (None, Some(piece)) => piece_to_bytes(piece, byte_level),
            (None, None) => Vec::new(),
        })?;
        let special = added.iter().filter(|(_, t)| t.special).map(|(&id, _)| id).collect();
        let eos = EOS_NAMES.iter().find_map(|name| inner.token_to_id(name));
        // `get_vocab_size(true)` would build the same map again.
        let vocab_size = vocab.len().max(bytes.ends.len());
        Ok(Self {
            engine: Engine::ByteLevel(Box::new(inner), bytes),
            vocab_size,
            special,
            eos,
            bos_to_add: None,
            end_of_generation: eos.into_iter().collect(),
            chat: None,
        })
    }

    /// A SentencePiece vocabulary; `attrs` by id say which tokens are shown
    /// by name and how the others are spelled.
    pub fn from_sentencepiece(spm: SentencePiece, attrs: Vec<TokenAttr>) -> Result<Self> {
        let n = spm.table().len();
        if attrs.len() != n {
            bail!("a SentencePiece vocabulary of {n} pieces needs as many token types, not {}", attrs.len());
        }
        let special = (0..n as u32).filter(|&id| attrs[id as usize].is_special()).collect();
        Ok(Self {
            engine: Engine::SentencePiece(spm, attrs),
            vocab_size: n,
            special,
            eos: None,
            bos_to_add: None,
            end_of_generation: Vec::new(),
            chat: None,
        })
    }

    fn check_id(&self, what: &str, id: u32) -> Result<()> {
        if id as usize >= self.vocab_size() {
            return Err(Error::new(format!("{what} id {id} is outside the vocabulary of {} tokens", self.vocab_size())));
        }
        Ok(())
    }

    /// Overrides the end-of-sequence token (e.g. from a model file's metadata).
    pub fn set_eos_id(&mut self, eos: Option<u32>) -> Result<()> {
        if let Some(id) = eos {
            self.check_id("eos", id)?;
        }
        self.eos = eos;
        Ok(())
    }

    /// The token every prompt starts with, when the vocabulary asks for one.
    pub fn set_bos_to_add(&mut self, bos: Option<u32>) -> Result<()> {
        if let Some(id) = bos {
            self.check_id("bos", id)?;
        }
        self.bos_to_add = bos;
        Ok(())
    }

    /// The tokens that end generation (the EOS token among them).
    pub fn set_end_of_generation(&mut self, ids: Vec<u32>) -> Result<()> {
        for &id in &ids {
            self.check_id("end-of-generation", id)?;
        }
        self.end_of_generation = ids;
        Ok(())
    }

    /// The id of a token spelled exactly as in the vocabulary (e.g. `<|endoftext|>`).
    pub fn token_to_id(&self, piece: &str) -> Option<u32> {
        match &self.engine {
            Engine::ByteLevel(inner, _) => inner.token_to_id(piece),
            Engine::SentencePiece(spm, _) => spm.table().id(piece),
        }
    }

    pub fn set_chat_template(&mut self, template: Option<ChatTemplate>) {
        self.chat = template;
    }

    /// Bytes the token table holds (its text and offsets), for the load report.
    pub fn table_bytes(&self) -> usize {
        match &self.engine {
            Engine::SentencePiece(spm, attrs) => spm.table().heap_bytes() + attrs.capacity(),
            Engine::ByteLevel(_, bytes) => bytes.data.capacity() + 4 * bytes.ends.capacity(),
        }
    }

    /// The bytes a token stands for (empty for an id outside the vocabulary).
    fn bytes_of(&self, id: u32) -> Cow<'_, [u8]> {
        match &self.engine {
            Engine::ByteLevel(_, bytes) => Cow::Borrowed(bytes.get(id)),
            Engine::SentencePiece(spm, attrs) => match attrs.get(id as usize) {
                Some(&attr) => sentencepiece_bytes(spm.table().piece(id), attr),
                None => Cow::Borrowed(&[]),
            },
        }
    }
}

/// Whether the vocabulary spells bytes with the GPT-2 byte-level alphabet:
/// a `ByteLevel` step in the decoder or the pre-tokenizer.
fn is_byte_level(json: &[u8]) -> Result<bool> {
    let value: serde_json::Value = serde_json::from_slice(json)
        .map_err(|e| Error::new(format!("tokenizer.json is not valid JSON: {e}")))?;
    fn mentions_byte_level(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::Object(map) => {
                map.get("type").and_then(|t| t.as_str()) == Some("ByteLevel")
                    || map.values().any(mentions_byte_level)
            }
            serde_json::Value::Array(items) => items.iter().any(mentions_byte_level),
            _ => false,
        }
    }
    Ok(["decoder", "pre_tokenizer"].iter().any(|k| value.get(k).is_some_and(mentions_byte_level)))
}

/// The bytes a `<0xNN>` piece stands for.
fn byte_piece(piece: &str) -> Option<u8> {
    let hex = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    (hex.len() == 2).then(|| u8::from_str_radix(hex, 16).ok()).flatten()
}

/// The bytes a vocabulary entry stands for.
fn piece_to_bytes(piece: &str, byte_level: bool) -> Vec<u8> {
    if byte_level {
        if let Some(bytes) = piece.chars().map(char_to_byte).collect::<Option<Vec<u8>>>() {
            return bytes;
        }
        // A piece outside the alphabet can only be literal text.
        return piece.as_bytes().to_vec();
    }
    // SentencePiece conventions: `<0xNN>` is a fallback byte, `▁` a space.
    if let Some(byte) = byte_piece(piece) {
        return vec![byte];
    }
    piece.replace('▁', " ").into_bytes()
}

/// A SentencePiece token's bytes as llama.cpp renders it (with special
/// tokens shown): control, unknown and user-defined tokens as their text,
/// normal ones with `▁` as a space, byte pieces as their byte, anything
/// else (unused, undefined) as nothing.
fn sentencepiece_bytes(piece: &str, attr: TokenAttr) -> Cow<'_, [u8]> {
    if attr.any(TokenAttr::CONTROL.union(TokenAttr::UNKNOWN).union(TokenAttr::USER_DEFINED)) {
        Cow::Borrowed(piece.as_bytes())
    } else if attr.any(TokenAttr::NORMAL) {
        if piece.contains('▁') { Cow::Owned(piece.replace('▁', " ").into_bytes()) } else { Cow::Borrowed(piece.as_bytes()) }
    } else if attr.any(TokenAttr::BYTE) {
        Cow::Owned(byte_piece(piece).map(|b| vec![b]).unwrap_or_default())
    } else {
        Cow::Borrowed(&[])
    }
}

impl Tokenizer for BpeTokenizer {
    fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    fn encode(&self, text: &str) -> Result<Vec<u32>> {
        match &self.engine {
            Engine::ByteLevel(inner, _) => {
                let encoding =
                    inner.encode(text, false).map_err(|e| Error::new(format!("cannot tokenise the text: {e}")))?;
                Ok(encoding.get_ids().to_vec())
            }
            Engine::SentencePiece(spm, _) => spm.encode(text),
        }
    }

    fn token_bytes(&self, id: u32) -> Vec<u8> {
        self.bytes_of(id).into_owned()
    }

    fn display(&self, id: u32) -> String {
        if self.special.contains(&id) {
            String::from_utf8_lossy(&self.bytes_of(id)).into_owned()
        } else {
            display_bytes(&self.bytes_of(id))
        }
    }

    fn eos_id(&self) -> Option<u32> {
        self.eos
    }

    fn bos_to_add(&self) -> Option<u32> {
        self.bos_to_add
    }

    fn ends_generation(&self, id: u32) -> bool {
        Some(id) == self.eos || self.end_of_generation.contains(&id)
    }

    fn is_special(&self, id: u32) -> bool {
        self.special.contains(&id)
    }

    fn chat_template(&self) -> Option<&ChatTemplate> {
        self.chat.as_ref()
    }
}
