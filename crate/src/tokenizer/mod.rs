//! Tokenizers: text ⇄ token ids, plus what the page needs to show a token.
//!
//! One trait, three vocabularies:
//! - [`BpeTokenizer`]: a BPE, byte-level from a `tokenizer.json` or a GGUF
//!   `gpt2` vocabulary (the project's trained models, SmolLM2, Qwen, Llama 3)
//!   via the `tokenizers` crate, or SentencePiece-style from a GGUF `llama`
//!   vocabulary (Gemma, Llama 2, Phi-3) merged by score as llama.cpp does;
//! - [`CharTokenizer`]: one token per character (the lesson-18 `abc` bigram);
//! - [`PieceTokenizer`]: a few named tokens such as `t1`..`t10` (the
//!   lesson-21 ten-class logit vector).
//!
//! Every token stands for raw bytes ([`Tokenizer::token_bytes`]); text is
//! made from bytes only when whole, so a token holding half of a UTF-8
//! character is shown as `<0xNN>` and held back while streaming
//! ([`decode_complete`]).

mod bpe;
mod byte_level;
mod chars;
mod display;
mod packed_vocab;
mod piece_table;
mod pieces;
mod special_split;
mod spm;
mod stream;
mod token_attr;
#[cfg(not(target_arch = "wasm32"))]
mod train;

pub use bpe::BpeTokenizer;
pub use byte_level::{byte_to_char, char_to_byte};
pub use chars::CharTokenizer;
pub use packed_vocab::{PackedVocab, WireSink};
pub use display::display_bytes;
pub use piece_table::PieceTable;
pub use pieces::PieceTokenizer;
pub use spm::SentencePiece;
pub use token_attr::TokenAttr;
pub use stream::{decode_complete, split_complete_utf8, CompleteText};
#[cfg(not(target_arch = "wasm32"))]
pub use train::{train_bpe, train_bpe_files, ENDOFTEXT};

use crate::chat::ChatTemplate;
use crate::error::Result;

pub trait Tokenizer {
    /// Number of ids, special tokens included.
    fn vocab_size(&self) -> usize;

    /// Text to ids; no special tokens are added (no BOS, no EOS).
    fn encode(&self, text: &str) -> Result<Vec<u32>>;

    /// Ids to text: the tokens' bytes joined, then read as UTF-8 (a broken
    /// sequence becomes U+FFFD). Lossless for sequences whose bytes are
    /// valid UTF-8, so `decode(encode(s)) == s`.
    fn decode(&self, ids: &[u32]) -> String {
        let bytes: Vec<u8> = ids.iter().flat_map(|&id| self.token_bytes(id)).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// The raw bytes this token stands for (empty for an unknown id).
    fn token_bytes(&self, id: u32) -> Vec<u8>;

    /// A readable label: space → `␣`, newline → `↵`, tab → `⇥`, other
    /// control characters and bytes that are not a whole UTF-8 character
    /// as `<0xNN>`; special tokens by their name, e.g. `<|endoftext|>`.
    fn display(&self, id: u32) -> String {
        display_bytes(&self.token_bytes(id))
    }

    /// The end-of-sequence id, if the vocabulary has one.
    fn eos_id(&self) -> Option<u32>;

    /// The token a prompt starts with, where the vocabulary asks for one
    /// (GGUF `tokenizer.ggml.add_bos_token`: Gemma's `<bos>`); never part
    /// of [`Tokenizer::encode`]'s output.
    fn bos_to_add(&self) -> Option<u32> {
        None
    }

    /// Whether generating `id` ends the text: the EOS token, and in chat
    /// models the end-of-turn marker (`<end_of_turn>`, `<|im_end|>`), as
    /// llama.cpp's end-of-generation set.
    fn ends_generation(&self, id: u32) -> bool {
        Some(id) == self.eos_id()
    }

    /// Whether `id` is a special (control) token such as `<|im_start|>`,
    /// which the page shows as a token, not as text.
    fn is_special(&self, _id: u32) -> bool {
        false
    }

    /// The chat template that came with the vocabulary, if any.
    fn chat_template(&self) -> Option<&ChatTemplate> {
        None
    }

    /// The text of one token (lossy for a partial UTF-8 character).
    fn id_to_piece(&self, id: u32) -> String {
        String::from_utf8_lossy(&self.token_bytes(id)).into_owned()
    }
}
