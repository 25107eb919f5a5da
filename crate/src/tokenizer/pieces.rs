//! A vocabulary of a few named tokens, such as `t1`..`t10` for the lesson-21
//! ten-class logit vector (the lesson numbers its classes 1..10; a `t`
//! prefix keeps `t1` and `t10` apart when pieces are written side by side).
//! Text is read by longest match, so `t10t1` is `[t10, t1]`.

use super::Tokenizer;
use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PieceTokenizer {
    /// Token id i is `pieces[i]`.
    pieces: Vec<String>,
}

impl PieceTokenizer {
    /// A vocabulary of these pieces, in this order; refuses an empty list,
    /// an empty piece or a repeated one.
    pub fn new(pieces: &[&str]) -> Result<Self> {
        if pieces.is_empty() {
            return Err(Error::new("a piece vocabulary needs at least one piece"));
        }
        for (i, piece) in pieces.iter().enumerate() {
            if piece.is_empty() {
                return Err(Error::new(format!("piece {i} is empty")));
            }
            if pieces[..i].contains(piece) {
                return Err(Error::new(format!("the piece {piece:?} appears twice")));
            }
        }
        Ok(Self { pieces: pieces.iter().map(|p| p.to_string()).collect() })
    }

    /// `prefix1`, `prefix2`, … `prefix{count}`: e.g. `t1`..`t10`.
    pub fn numbered(prefix: &str, count: usize) -> Result<Self> {
        let names: Vec<String> = (1..=count).map(|i| format!("{prefix}{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        Self::new(&refs)
    }

    pub fn pieces(&self) -> &[String] {
        &self.pieces
    }

    /// The id of the longest piece that starts `text`.
    fn match_longest(&self, text: &str) -> Option<u32> {
        self.pieces
            .iter()
            .enumerate()
            .filter(|(_, p)| text.starts_with(p.as_str()))
            .max_by_key(|(_, p)| p.len())
            .map(|(i, _)| i as u32)
    }
}

impl Tokenizer for PieceTokenizer {
    fn vocab_size(&self) -> usize {
        self.pieces.len()
    }

    fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let mut ids = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let Some(id) = self.match_longest(rest) else {
                let shown: String = rest.chars().take(12).collect();
                return Err(Error::new(format!(
                    "no token of this model starts the text at {shown:?}; its tokens are {}",
                    self.pieces.join(", ")
                )));
            };
            ids.push(id);
            rest = &rest[self.pieces[id as usize].len()..];
        }
        Ok(ids)
    }

    fn token_bytes(&self, id: u32) -> Vec<u8> {
        self.pieces.get(id as usize).map(|p| p.as_bytes().to_vec()).unwrap_or_default()
    }

    fn eos_id(&self) -> Option<u32> {
        None
    }
}
