//! Trains a byte-level BPE vocabulary with the `tokenizers` crate.
//!
//! Choices, and why:
//! - No prefix space (`add_prefix_space = false`): with it, the tokenizer
//!   encodes "Hello" as " Hello" and decoding gives back the extra space, so
//!   `decode(encode(s)) != s`. Without it a word at the start of a text gets
//!   a different token than mid-sentence, as in GPT-2; a prompt is a text
//!   like any other, so that is acceptable.
//! - The GPT-2 split regex (`use_regex = true`): merges never cross the
//!   boundaries between words, numbers, punctuation and whitespace runs.
//! - The full 256-character byte alphabet is in the vocabulary from the
//!   start, so every byte sequence can be encoded (no unknown token).
//! - The special tokens take the first ids, in the order given:
//!   `<|endoftext|>` first makes it id 0, the end-of-sequence token.
//!
//! Native only: the trainer's parallel counting is not needed in the browser.

use std::collections::HashSet;

use tokenizers::models::bpe::{BpeTrainerBuilder, BPE};
use tokenizers::models::TrainerWrapper;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::{AddedToken, Tokenizer as HfTokenizer};

use crate::error::{Error, Result};

/// The end-of-sequence token of the project's own vocabularies.
pub const ENDOFTEXT: &str = "<|endoftext|>";

/// Trains on `texts` and returns the `tokenizer.json` bytes; `vocab_size`
/// counts the special tokens and the 256 byte characters.
pub fn train_bpe(texts: &[String], vocab_size: usize, special: &[&str]) -> Result<Vec<u8>> {
    let minimum = 256 + special.len();
    if vocab_size < minimum {
        return Err(Error::new(format!(
            "a byte-level vocabulary with {} special tokens needs at least {minimum} tokens, asked for {vocab_size}",
            special.len()
        )));
    }
    let byte_level = ByteLevel::new(false, true, true);
    let mut tokenizer = HfTokenizer::new(BPE::default());
    tokenizer.with_pre_tokenizer(Some(byte_level));
    tokenizer.with_decoder(Some(byte_level));

    let alphabet: HashSet<char> = ByteLevel::alphabet().into_iter().collect();
    let special_tokens: Vec<AddedToken> =
        special.iter().map(|s| AddedToken::from(s.to_string(), true)).collect();
    let trainer = BpeTrainerBuilder::new()
        .vocab_size(vocab_size)
        .min_frequency(0)
        .show_progress(false)
        .initial_alphabet(alphabet)
        .special_tokens(special_tokens)
        .build();
    let mut trainer = TrainerWrapper::from(trainer);
    tokenizer
        .train(&mut trainer, texts.iter())
        .map_err(|e| Error::new(format!("BPE training failed: {e}")))?;
    let json = tokenizer
        .to_string(false)
        .map_err(|e| Error::new(format!("cannot serialise the trained tokenizer: {e}")))?;
    Ok(json.into_bytes())
}

/// [`train_bpe`] over the contents of text files.
pub fn train_bpe_files(paths: &[std::path::PathBuf], vocab_size: usize, special: &[&str]) -> Result<Vec<u8>> {
    let texts = paths
        .iter()
        .map(|p| {
            std::fs::read_to_string(p).map_err(|e| Error::new(format!("cannot read {}: {e}", p.display())))
        })
        .collect::<Result<Vec<String>>>()?;
    train_bpe(&texts, vocab_size, special)
}
