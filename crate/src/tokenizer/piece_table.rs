//! Every piece of a vocabulary as one buffer plus offsets, with a hash index
//! from text to id: Gemma's 262,144 pieces are 2.3 MB of text, and as many
//! separate strings (a `HashMap<String, u32>`) they took five times that
//! and a heap allocation each, built while the page waits.
//!
//! ```text
//! text:  "<pad><eos>…▁the…"      ends: [5, 10, …]     (piece i = text[ends[i-1]..ends[i]])
//! slots: [id+1 or 0; 2^k ≥ 2n]   (open addressing, linear probing, FNV-1a)
//! ```

use crate::error::{Error, Result};

pub struct PieceTable {
    text: String,
    ends: Vec<u32>,
    /// `id + 1` of the piece hashed to this slot, 0 where empty.
    slots: Vec<u32>,
}

fn hash(piece: &[u8]) -> u64 {
    // FNV-1a: short keys, no adversary to fear (a hostile vocabulary only
    // slows its own load), and identical natively and in wasm.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in piece {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl PieceTable {
    /// The table of `pieces` in id order. A piece listed twice is refused
    /// (two ids for one text: which one the text encodes to is undefined).
    /// Empty pieces get an id but are never found by text.
    pub fn new<'p>(pieces: impl ExactSizeIterator<Item = &'p str>) -> Result<Self> {
        let n = pieces.len();
        if n >= u32::MAX as usize / 2 {
            return Err(Error::new(format!("a vocabulary of {n} pieces is too large")));
        }
        let mut text = String::new();
        let mut ends = Vec::with_capacity(n);
        for piece in pieces {
            text.push_str(piece);
            let end = u32::try_from(text.len()).map_err(|_| Error::new("the vocabulary's text is over 4 GiB"))?;
            ends.push(end);
        }
        // Grown by doubling, the text could hold twice its bytes for as long
        // as the model stays loaded (Gemma's 262,144 pieces: about 2 MB spare).
        text.shrink_to_fit();
        let slots = vec![0u32; (2 * n).max(2).next_power_of_two()];
        let mut table = PieceTable { text, ends, slots };
        for id in 0..n as u32 {
            let piece = table.piece(id);
            if piece.is_empty() {
                continue;
            }
            let mask = table.slots.len() - 1;
            let mut slot = hash(piece.as_bytes()) as usize & mask;
            loop {
                match table.slots[slot] {
                    0 => {
                        table.slots[slot] = id + 1;
                        break;
                    }
                    other if table.piece(other - 1) == piece => {
                        return Err(Error::new(format!("the vocabulary lists the piece {piece:?} twice (ids {} and {id})", other - 1)));
                    }
                    _ => slot = (slot + 1) & mask,
                }
            }
        }
        Ok(table)
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The text of piece `id` (empty for an id outside the table).
    pub fn piece(&self, id: u32) -> &str {
        let i = id as usize;
        if i >= self.ends.len() {
            return "";
        }
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }

    /// The id whose piece is exactly `text`.
    pub fn id(&self, text: &str) -> Option<u32> {
        if text.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut slot = hash(text.as_bytes()) as usize & mask;
        loop {
            match self.slots[slot] {
                0 => return None,
                other if self.piece(other - 1) == text => return Some(other - 1),
                _ => slot = (slot + 1) & mask,
            }
        }
    }

    /// Bytes held: the text, the offsets and the index.
    pub fn heap_bytes(&self) -> usize {
        self.text.capacity() + 4 * self.ends.capacity() + 4 * self.slots.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_piece_by_text_and_nothing_else() {
        let pieces = ["a", "ab", "▁the", "", "<0x0A>", "b"];
        let t = PieceTable::new(pieces.iter().copied()).unwrap();
        for (id, p) in pieces.iter().enumerate() {
            assert_eq!(t.piece(id as u32), *p);
            if !p.is_empty() {
                assert_eq!(t.id(p), Some(id as u32), "{p:?}");
            }
        }
        assert_eq!(t.id(""), None);
        assert_eq!(t.id("abc"), None);
        assert_eq!(t.id("▁th"), None);
        assert_eq!(t.piece(99), "");
    }

    #[test]
    fn a_piece_listed_twice_is_refused_by_name() {
        let err = PieceTable::new(["x", "y", "x"].into_iter()).err().expect("refused");
        assert!(err.to_string().contains("\"x\" twice (ids 0 and 2)"), "{err}");
    }

    #[test]
    fn many_pieces_collide_and_are_still_found() {
        let pieces: Vec<String> = (0..5000).map(|i| format!("p{i}")).collect();
        let t = PieceTable::new(pieces.iter().map(String::as_str)).unwrap();
        assert!(pieces.iter().enumerate().all(|(i, p)| t.id(p) == Some(i as u32)));
    }
}
