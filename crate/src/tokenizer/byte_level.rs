//! The byte-level alphabet of GPT-2 style BPE vocabularies.
//!
//! Such vocabularies spell every byte as a printable character so that the
//! tokens are valid strings: the 188 bytes that are printable Latin-1
//! (`!`..`~`, `¡`..`¬`, `®`..`ÿ`) stand for themselves; the other 68 bytes
//! (controls, space, DEL, NBSP, soft hyphen) are given the characters
//! U+0100, U+0101, … in byte order. So space (0x20) is `Ġ` (U+0120) and
//! newline (0x0A) is `Ċ` (U+010A).

/// True for the bytes that are spelled as the Latin-1 character of the same value.
fn is_self_spelled(byte: u8) -> bool {
    matches!(byte, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF)
}

/// The character that spells `byte` in a byte-level vocabulary.
pub fn byte_to_char(byte: u8) -> char {
    if is_self_spelled(byte) {
        return char::from(byte);
    }
    // Rank of this byte among the bytes that are not self-spelled.
    let rank = (0..byte).filter(|&b| !is_self_spelled(b)).count() as u32;
    char::from_u32(256 + rank).expect("256..324 are valid scalar values")
}

/// The byte a byte-level character spells, or `None` for a character
/// outside the 256-character alphabet.
pub fn char_to_byte(c: char) -> Option<u8> {
    let code = c as u32;
    if code < 256 {
        let byte = code as u8;
        return is_self_spelled(byte).then_some(byte);
    }
    let rank = code.checked_sub(256)? as usize;
    (0..=255u8).filter(|&b| !is_self_spelled(b)).nth(rank)
}
