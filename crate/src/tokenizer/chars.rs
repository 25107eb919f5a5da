//! One token per character, for the course's toy models (the lesson-18
//! bigram speaks `a`, `b`, `c`).

use super::Tokenizer;
use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CharTokenizer {
    /// Token id i is `chars[i]`.
    chars: Vec<char>,
}

impl CharTokenizer {
    /// A vocabulary of these characters, in this order (token id i is
    /// `chars[i]`); refuses an empty list or a repeated character.
    pub fn new(chars: &[char]) -> Result<Self> {
        if chars.is_empty() {
            return Err(Error::new("a character vocabulary needs at least one character"));
        }
        for (i, c) in chars.iter().enumerate() {
            if chars[..i].contains(c) {
                return Err(Error::new(format!("the character {c:?} appears twice in the vocabulary")));
            }
        }
        Ok(Self { chars: chars.to_vec() })
    }

    pub fn chars(&self) -> &[char] {
        &self.chars
    }

    fn describe_vocabulary(&self) -> String {
        let quoted: Vec<String> = self.chars.iter().map(|c| format!("{c:?}")).collect();
        format!("{{{}}}", quoted.join(", "))
    }
}

impl Tokenizer for CharTokenizer {
    fn vocab_size(&self) -> usize {
        self.chars.len()
    }

    fn encode(&self, text: &str) -> Result<Vec<u32>> {
        text.chars()
            .map(|c| {
                self.chars.iter().position(|&v| v == c).map(|i| i as u32).ok_or_else(|| {
                    Error::new(format!(
                        "the character {c:?} is not in this model's vocabulary; allowed: {}",
                        self.describe_vocabulary()
                    ))
                })
            })
            .collect()
    }

    fn token_bytes(&self, id: u32) -> Vec<u8> {
        match self.chars.get(id as usize) {
            Some(c) => c.to_string().into_bytes(),
            None => Vec::new(),
        }
    }

    fn eos_id(&self) -> Option<u32> {
        None
    }
}
