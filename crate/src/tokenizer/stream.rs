//! Incremental decoding for streaming display: a byte-level token can end in
//! the middle of a UTF-8 character (an emoji is often two or three tokens),
//! so the text shown so far stops before such a tail and shows it once the
//! next token completes it.

use super::Tokenizer;

/// The text of a generated sequence that is ready to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompleteText {
    /// Complete UTF-8 so far (broken sequences in the middle become U+FFFD).
    pub text: String,
    /// Bytes of an unfinished character at the end, held back.
    pub pending: Vec<u8>,
}

/// Splits `bytes` into text made of whole characters and the bytes of an
/// unfinished character at the end. Invalid bytes that can never become a
/// character are replaced by U+FFFD, as `String::from_utf8_lossy` does.
pub fn split_complete_utf8(bytes: &[u8]) -> CompleteText {
    let mut text = String::new();
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                text.push_str(valid);
                return CompleteText { text, pending: Vec::new() };
            }
            Err(err) => {
                let (valid, after) = rest.split_at(err.valid_up_to());
                text.push_str(std::str::from_utf8(valid).unwrap_or_default());
                match err.error_len() {
                    // The input ended inside a character: wait for more bytes.
                    None => return CompleteText { text, pending: after.to_vec() },
                    Some(bad) => {
                        text.push(char::REPLACEMENT_CHARACTER);
                        rest = &after[bad..];
                    }
                }
            }
        }
    }
}

/// Decodes all `ids` generated so far, holding back a partial UTF-8 tail.
pub fn decode_complete(tokenizer: &dyn Tokenizer, ids: &[u32]) -> CompleteText {
    let bytes: Vec<u8> = ids.iter().flat_map(|&id| tokenizer.token_bytes(id)).collect();
    split_complete_utf8(&bytes)
}
