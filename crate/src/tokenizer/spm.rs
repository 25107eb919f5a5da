//! SentencePiece-style BPE as GGUF files carry it (`tokenizer.ggml.model =
//! "llama"`: Llama 2, Gemma, Phi-3): pieces with scores, spaces written `▁`,
//! and bytes no piece covers spelled with `<0xNN>` byte pieces.
//!
//! Encoding follows llama.cpp's SPM tokenizer, the reference these files are
//! checked against:
//! 1. control, user-defined and unknown tokens are cut out first
//!    ([`super::special_split`]);
//! 2. each text fragment between them gets a leading space when the file
//!    asks for one (`add_space_prefix`) and it starts the text or follows a
//!    cut-out token; every space becomes `▁`;
//! 3. the fragment starts as one symbol per character; repeatedly, of all
//!    adjacent pairs whose joined text is a piece, the one whose piece has
//!    the highest score is joined (the leftmost on a tie);
//! 4. each final symbol is its piece, or, when no piece has its text, its
//!    bytes as byte pieces.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::piece_table::PieceTable;
use super::special_split::{self, Fragment, SplitToken};
use super::token_attr::TokenAttr;
use crate::error::{Error, Result};

const SPACE_MARK: &str = "\u{2581}";

pub struct SentencePiece {
    table: PieceTable,
    /// Merge priority by id (NaN read as -∞, -0 as 0: llama.cpp compares with
    /// `<`, where -0 and 0 are equal).
    scores: Vec<f32>,
    /// The piece of each byte: `<0xNN>`, or for ASCII the character itself.
    byte_ids: Box<[Option<u32>; 256]>,
    split_order: Vec<SplitToken>,
    add_space_prefix: bool,
}

/// A candidate join of two adjacent symbols.
struct Pair {
    score: f32,
    left: usize,
    right: usize,
    /// Bytes of the joined text: a join is stale once either side changed size.
    len: usize,
}

impl PartialEq for Pair {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Pair {}
impl PartialOrd for Pair {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Pair {
    /// The max-heap pops the highest score, then the leftmost pair.
    fn cmp(&self, other: &Self) -> Ordering {
        self.score.total_cmp(&other.score).then(other.left.cmp(&self.left))
    }
}

#[derive(Clone, Copy)]
struct Symbol {
    start: usize,
    len: usize,
    prev: Option<usize>,
    next: Option<usize>,
}

impl SentencePiece {
    /// `strip(id)` says which whitespace a cut-out token takes with it (left, right).
    pub fn new(
        table: PieceTable,
        scores: &[f32],
        attrs: &[TokenAttr],
        add_space_prefix: bool,
        strip: impl Fn(u32) -> (bool, bool),
    ) -> Result<Self> {
        if scores.len() != table.len() || attrs.len() != table.len() {
            return Err(Error::new(format!(
                "{} scores and {} token types for {} pieces",
                scores.len(),
                attrs.len(),
                table.len()
            )));
        }
        let scores = scores.iter().map(|&s| if s.is_nan() { f32::NEG_INFINITY } else { s + 0.0 }).collect();
        let mut byte_ids = Box::new([None; 256]);
        for (b, slot) in byte_ids.iter_mut().enumerate() {
            *slot = table.id(&format!("<0x{b:02X}>")).or_else(|| if b < 128 { table.id(&(b as u8 as char).to_string()) } else { None });
        }
        let split_order = special_split::split_tokens(&table, attrs, strip);
        Ok(SentencePiece { table, scores, byte_ids, split_order, add_space_prefix })
    }

    pub fn table(&self) -> &PieceTable {
        &self.table
    }

    /// Text to ids; no BOS or EOS added.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let mut out = Vec::new();
        let mut after_token = true;
        for fragment in special_split::split(text, &self.split_order, &self.table) {
            match fragment {
                Fragment::Token(id) => {
                    out.push(id);
                    after_token = true;
                }
                Fragment::Text(raw) => {
                    let prefix = if self.add_space_prefix && after_token { " " } else { "" };
                    let escaped = format!("{prefix}{raw}").replace(' ', SPACE_MARK);
                    self.merge(&escaped, &mut out)?;
                    after_token = false;
                }
            }
        }
        Ok(out)
    }

    fn try_pair(&self, text: &str, symbols: &[Symbol], left: Option<usize>, right: Option<usize>, heap: &mut BinaryHeap<Pair>) {
        let (Some(left), Some(right)) = (left, right) else { return };
        let (l, r) = (symbols[left], symbols[right]);
        let joined = &text[l.start..r.start + r.len];
        if let Some(id) = self.table.id(joined) {
            heap.push(Pair { score: self.scores[id as usize], left, right, len: joined.len() });
        }
    }

    fn merge(&self, text: &str, out: &mut Vec<u32>) -> Result<()> {
        let mut symbols: Vec<Symbol> = Vec::with_capacity(text.len());
        for (start, c) in text.char_indices() {
            let i = symbols.len();
            symbols.push(Symbol { start, len: c.len_utf8(), prev: i.checked_sub(1), next: Some(i + 1) });
        }
        let Some(last) = symbols.last_mut() else { return Ok(()) };
        last.next = None;

        let mut heap = BinaryHeap::with_capacity(symbols.len());
        for i in 1..symbols.len() {
            self.try_pair(text, &symbols, Some(i - 1), Some(i), &mut heap);
        }
        while let Some(pair) = heap.pop() {
            let (l, r) = (symbols[pair.left], symbols[pair.right]);
            if l.len == 0 || r.len == 0 || l.len + r.len != pair.len {
                continue;
            }
            symbols[pair.left].len += r.len;
            symbols[pair.right].len = 0;
            symbols[pair.left].next = r.next;
            if let Some(n) = r.next {
                symbols[n].prev = Some(pair.left);
            }
            self.try_pair(text, &symbols, l.prev, Some(pair.left), &mut heap);
            self.try_pair(text, &symbols, Some(pair.left), r.next, &mut heap);
        }

        let mut at = Some(0);
        while let Some(i) = at {
            let s = symbols[i];
            let piece = &text[s.start..s.start + s.len];
            match self.table.id(piece) {
                Some(id) => out.push(id),
                None => {
                    for &b in piece.as_bytes() {
                        let id = self.byte_ids[b as usize].ok_or_else(|| {
                            Error::new(format!("the vocabulary has no piece for the byte 0x{b:02X} (no <0x{b:02X}> byte piece)"))
                        })?;
                        out.push(id);
                    }
                }
            }
            at = s.next;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spm(pieces: &[(&str, f32, TokenAttr)], add_space_prefix: bool) -> SentencePiece {
        let table = PieceTable::new(pieces.iter().map(|p| p.0)).unwrap();
        let scores: Vec<f32> = pieces.iter().map(|p| p.1).collect();
        let attrs: Vec<TokenAttr> = pieces.iter().map(|p| p.2).collect();
        SentencePiece::new(table, &scores, &attrs, add_space_prefix, |_| (false, false)).unwrap()
    }

    const N: TokenAttr = TokenAttr::NORMAL;

    #[test]
    fn joins_the_best_scoring_pair_first() {
        // "abc" with no piece "abc": a|b joins first when "ab" scores
        // higher, b|c when "bc" does.
        let s = spm(&[("a", 0.0, N), ("b", 0.0, N), ("c", 0.0, N), ("ab", -1.0, N), ("bc", -2.0, N)], false);
        assert_eq!(s.encode("abc").unwrap(), vec![3, 2]);
        let s = spm(&[("a", 0.0, N), ("b", 0.0, N), ("c", 0.0, N), ("ab", -2.0, N), ("bc", -1.0, N)], false);
        assert_eq!(s.encode("abc").unwrap(), vec![0, 4]);
        // A join whose text is a piece is made even when reached through
        // another: "bc" first, then "a"+"bc" = "abc".
        let s = spm(&[("a", 0.0, N), ("b", 0.0, N), ("c", 0.0, N), ("bc", -1.0, N), ("abc", -3.0, N)], false);
        assert_eq!(s.encode("abc").unwrap(), vec![4]);
    }

    #[test]
    fn spaces_become_marks_with_an_optional_leading_one() {
        let s = spm(&[("▁", 0.0, N), ("a", 0.0, N), ("▁a", -1.0, N)], true);
        assert_eq!(s.encode("a a").unwrap(), vec![2, 2]);
        let s = spm(&[("▁", 0.0, N), ("a", 0.0, N), ("▁a", -1.0, N)], false);
        assert_eq!(s.encode("a a").unwrap(), vec![1, 2]);
        assert_eq!(s.encode("").unwrap(), Vec::<u32>::new());
    }

    #[test]
    fn characters_without_a_piece_fall_back_to_byte_pieces() {
        let b = TokenAttr::BYTE;
        let s = spm(&[("a", 0.0, N), ("<0xC3>", 0.0, b), ("<0xA9>", 0.0, b)], false);
        assert_eq!(s.encode("aé").unwrap(), vec![0, 1, 2]);
        let err = s.encode("ü").unwrap_err();
        assert!(err.to_string().contains("0xC3") || err.to_string().contains("0xBC"), "{err}");
    }
}
