//! The first step of tokenising, before any merging: the texts of control,
//! user-defined and unknown tokens (`<start_of_turn>`, `<|im_end|>`, Gemma's
//! runs of newlines, tabs and spaces) are cut out of the input as whole
//! tokens, the longest first, and only the text between them is merged.
//!
//! This follows llama.cpp (`tokenizer_st_partition`): one token at a time,
//! longest text first, each splitting every text fragment left
//! at all its occurrences. A token may strip ASCII whitespace on its left or
//! right (llama.cpp sets this for Phi-3's special tokens).

use super::piece_table::PieceTable;
use super::token_attr::TokenAttr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fragment<'t> {
    Text(&'t str),
    Token(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitToken {
    pub id: u32,
    pub lstrip: bool,
    pub rstrip: bool,
}

/// The tokens split out first, in the order they are applied. `strip` says
/// which whitespace each one takes with it (left, right).
pub fn split_tokens(table: &PieceTable, attrs: &[TokenAttr], strip: impl Fn(u32) -> (bool, bool)) -> Vec<SplitToken> {
    let mut ids: Vec<u32> = (0..attrs.len() as u32)
        .filter(|&id| attrs[id as usize].splits_first() && !table.piece(id).is_empty())
        .collect();
    // Among texts of one length the later id goes first: llama.cpp's order
    // there is whatever its unstable sort leaves, and on Gemma's vocabulary
    // (`\t` before `\n`, `  ` before `\n\n`) that is the later id. It only
    // matters where tokens strip whitespace or overlap.
    ids.sort_by_key(|&id| (std::cmp::Reverse(table.piece(id).len()), std::cmp::Reverse(id)));
    ids.into_iter()
        .map(|id| {
            let (lstrip, rstrip) = strip(id);
            SplitToken { id, lstrip, rstrip }
        })
        .collect()
}

/// C's `isspace` in the "C" locale, which llama.cpp strips with.
fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r')
}

/// `text` cut into raw text and the tokens in `order`.
pub fn split<'t>(text: &'t str, order: &[SplitToken], table: &PieceTable) -> Vec<Fragment<'t>> {
    let mut fragments = if text.is_empty() { Vec::new() } else { vec![Fragment::Text(text)] };
    for token in order {
        let needle = table.piece(token.id);
        if !fragments.iter().any(|f| matches!(f, Fragment::Text(t) if t.contains(needle))) {
            continue;
        }
        let mut next = Vec::with_capacity(fragments.len() + 2);
        for fragment in fragments {
            let Fragment::Text(mut rest) = fragment else {
                next.push(fragment);
                continue;
            };
            while let Some(at) = rest.find(needle) {
                let mut left = &rest[..at];
                if token.lstrip {
                    left = left.trim_end_matches(is_c_space);
                }
                if !left.is_empty() {
                    next.push(Fragment::Text(left));
                }
                next.push(Fragment::Token(token.id));
                rest = &rest[at + needle.len()..];
                if token.rstrip {
                    rest = rest.trim_start_matches(is_c_space);
                }
            }
            if !rest.is_empty() {
                next.push(Fragment::Text(rest));
            }
        }
        fragments = next;
    }
    fragments
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(pieces: &[&str], attrs: &[TokenAttr]) -> (PieceTable, Vec<SplitToken>) {
        let table = PieceTable::new(pieces.iter().copied()).unwrap();
        let order = split_tokens(&table, attrs, |_| (false, false));
        (table, order)
    }

    #[test]
    fn longest_token_first_then_the_rest_between() {
        let n = TokenAttr::NORMAL;
        let (u, c) = (TokenAttr::USER_DEFINED, TokenAttr::CONTROL);
        let (table, order) = setup(&["a", "\n", "\n\n", "<s>", "x"], &[n, u, u, c, n]);
        assert_eq!(order.iter().map(|t| t.id).collect::<Vec<_>>(), vec![3, 2, 1]);
        let (_, tie) = setup(&["\t", "\n"], &[u, u]);
        assert_eq!(tie.iter().map(|t| t.id).collect::<Vec<_>>(), vec![1, 0]);
        use Fragment::*;
        assert_eq!(split("a\n\n\nb<s>", &order, &table), vec![Text("a"), Token(2), Token(1), Text("b"), Token(3)]);
        assert_eq!(split("", &order, &table), vec![]);
        assert_eq!(split("plain", &order, &table), vec![Text("plain")]);
    }

    #[test]
    fn stripping_tokens_take_whitespace_with_them() {
        let table = PieceTable::new(["<|user|>"].into_iter()).unwrap();
        let order = [SplitToken { id: 0, lstrip: false, rstrip: true }];
        use Fragment::*;
        assert_eq!(split(" <|user|>\n Hi", &order, &table), vec![Text(" "), Token(0), Text("Hi")]);
    }
}
