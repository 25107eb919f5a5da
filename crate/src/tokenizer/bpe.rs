//! A BPE vocabulary read from a Hugging Face `tokenizer.json`, run by the
//! `tokenizers` crate. The bytes of every token are worked out once at load
//! time, so showing a token never goes back through the library.

use std::collections::HashMap;

use super::byte_level::char_to_byte;
use super::{display_bytes, Tokenizer};
use crate::chat::ChatTemplate;
use crate::error::{Error, Result};

/// Names of end-of-sequence tokens, most specific first: a chat model's
/// `<|im_end|>` ends a turn, and SmolLM2 also carries `<|endoftext|>` (as
/// its unknown token), so the chat name wins when both are present.
const EOS_NAMES: [&str; 4] = ["<|im_end|>", "<|endoftext|>", "</s>", "<eos>"];

pub struct BpeTokenizer {
    inner: tokenizers::Tokenizer,
    /// Raw bytes of token id i (empty where the vocabulary has a hole).
    bytes: Vec<Vec<u8>>,
    /// Special tokens, shown by name: id → name.
    special: HashMap<u32, String>,
    eos: Option<u32>,
    chat: Option<ChatTemplate>,
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
        Ok(Self::from_tokenizer(inner, is_byte_level(json)?))
    }

    /// A tokenizer already built, whose vocabulary spells bytes with the
    /// GPT-2 alphabet when `byte_level` (a GGUF's, which says so itself).
    pub fn from_tokenizer(inner: tokenizers::Tokenizer, byte_level: bool) -> Self {
        let vocab = inner.get_vocab(true);
        let size = vocab.values().map(|&id| id as usize + 1).max().unwrap_or(0);
        let mut bytes = vec![Vec::new(); size];
        for (piece, &id) in &vocab {
            bytes[id as usize] = piece_to_bytes(piece, byte_level);
        }
        // Added tokens are stored as their literal text, never byte-level spelled.
        let mut special = HashMap::new();
        for (id, token) in inner.get_added_tokens_decoder() {
            if let Some(slot) = bytes.get_mut(id as usize) {
                *slot = token.content.as_bytes().to_vec();
            }
            if token.special {
                special.insert(id, token.content.clone());
            }
        }
        let eos = EOS_NAMES.iter().find_map(|name| inner.token_to_id(name));
        Self { inner, bytes, special, eos, chat: None }
    }

    /// Overrides the end-of-sequence token (e.g. from a model file's metadata).
    pub fn set_eos_id(&mut self, eos: Option<u32>) -> Result<()> {
        if let Some(id) = eos {
            if id as usize >= self.vocab_size() {
                return Err(Error::new(format!(
                    "eos id {id} is outside the vocabulary of {} tokens",
                    self.vocab_size()
                )));
            }
        }
        self.eos = eos;
        Ok(())
    }

    /// The id of a token spelled exactly as in the vocabulary (e.g. `<|endoftext|>`).
    pub fn token_to_id(&self, piece: &str) -> Option<u32> {
        self.inner.token_to_id(piece)
    }

    pub fn set_chat_template(&mut self, template: Option<ChatTemplate>) {
        self.chat = template;
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
    if let Some(hex) = piece.strip_prefix("<0x").and_then(|p| p.strip_suffix('>')) {
        if let Ok(byte) = u8::from_str_radix(hex, 16) {
            if hex.len() == 2 {
                return vec![byte];
            }
        }
    }
    piece.replace('▁', " ").into_bytes()
}

impl Tokenizer for BpeTokenizer {
    fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true).max(self.bytes.len())
    }

    fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let encoding = self
            .inner
            .encode(text, false)
            .map_err(|e| Error::new(format!("cannot tokenise the text: {e}")))?;
        Ok(encoding.get_ids().to_vec())
    }

    fn token_bytes(&self, id: u32) -> Vec<u8> {
        self.bytes.get(id as usize).cloned().unwrap_or_default()
    }

    fn display(&self, id: u32) -> String {
        match self.special.get(&id) {
            Some(name) => name.clone(),
            None => display_bytes(&self.token_bytes(id)),
        }
    }

    fn eos_id(&self) -> Option<u32> {
        self.eos
    }

    fn is_special(&self, id: u32) -> bool {
        self.special.contains_key(&id)
    }

    fn chat_template(&self) -> Option<&ChatTemplate> {
        self.chat.as_ref()
    }
}
