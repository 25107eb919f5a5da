//! A vocabulary as one UTF-8 buffer and each entry's end offset: how the
//! worker hands the page's `Previewer` every token's text and visible form.
//!
//! ```text
//! bytes: "hello" " world" "�" … + "" "" "<0x80>" …  (texts of ids 0..n, then visible forms of ids 0..n)
//! ends:  [5, 11, 14, …, | …]                        (2n offsets, each the end of one entry)
//! ```
//! A visible form is written only where it is not the text's own
//! (`display_bytes` of the text: ␣ ↵ ⇥ for whitespace); an empty entry
//! stands for that. Most tokens' forms are their text's, so the page holds
//! about half the bytes (Gemma 3: its wasm memory 16.4 -> 14.3 MiB, which
//! never shrinks). A token whose bytes are not UTF-8 (its text is lossy)
//! and a special token whose name has whitespace keep their written form.
//!
//! As two typed arrays the vocabulary is transferred between threads and
//! copied into wasm once each way. As 2 × 49,152 JS strings (SmolLM2) it was
//! built, structured-cloned and rebuilt in both threads, and became 98,304
//! Rust strings in the page's wasm memory, which never shrinks: the SmolLM2
//! tab settled 40 MB higher after a load (230 against 190 MB private,
//! measured over five fresh loads each).

use std::borrow::Cow;

use super::display_bytes;

/// Every token's decoded text and visible form, by id.
#[derive(Debug, Clone, PartialEq)]
pub struct PackedVocab {
    bytes: String,
    /// 2n end offsets into `bytes`: text entries first, then display entries.
    ends: Vec<u32>,
}

/// Where `PackedVocab::write` puts the wire form, in order: every byte of
/// `bytes`, and every offset of `ends`.
pub trait WireSink {
    fn bytes(&mut self, piece: &[u8]);
    fn end(&mut self, offset: u32);
}

/// The wire form's sizes: bytes of the texts, of the visible forms, and offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireSize {
    pub text_bytes: usize,
    pub display_bytes: usize,
    pub ends: usize,
}

impl WireSize {
    pub fn bytes(&self) -> usize {
        self.text_bytes + self.display_bytes
    }
}

impl PackedVocab {
    /// What `write` will write for `n` tokens, measured first so that each
    /// buffer is allocated once at its final size and no vocabulary of
    /// separate strings is ever held (for Gemma 3's 262,144 tokens, growing
    /// buffers and kept strings took 13 to 25 MB of the worker's memory,
    /// which a wasm memory never gives back). `text` and `display` give the
    /// same string each time they are asked.
    pub fn measure(n: usize, text: impl Fn(u32) -> String, display: impl Fn(u32) -> String) -> Result<WireSize, String> {
        let (mut text_bytes, mut display_bytes) = (0usize, 0usize);
        for id in 0..n as u32 {
            let (t, d) = (text(id), display(id));
            if d.is_empty() && !t.is_empty() {
                return Err(format!("token {id} has text {t:?} but no visible form"));
            }
            text_bytes += t.len();
            display_bytes += written_form(&t, &d).len();
        }
        if u32::try_from(text_bytes + display_bytes).is_err() {
            return Err("the vocabulary's text is over 4 GiB".to_string());
        }
        Ok(WireSize { text_bytes, display_bytes, ends: 2 * n })
    }

    /// The wire form of `n` tokens into `sink`: the texts in id order, then
    /// the visible forms, each entry's end offset after its bytes. `measure`
    /// first: the offsets are only known to fit in a u32 from it.
    pub fn write(n: usize, text: impl Fn(u32) -> String, display: impl Fn(u32) -> String, sink: &mut impl WireSink) {
        let mut at = 0usize;
        let mut put = |s: &str| {
            sink.bytes(s.as_bytes());
            at += s.len();
            sink.end(at as u32);
        };
        for id in 0..n as u32 {
            put(&text(id));
        }
        for id in 0..n as u32 {
            put(written_form(&text(id), &display(id)));
        }
    }

    /// Packs `n` tokens' (text, visible form) here, checked as `from_wire` checks.
    pub fn pack(n: usize, text: impl Fn(u32) -> String, display: impl Fn(u32) -> String) -> Result<PackedVocab, String> {
        let size = PackedVocab::measure(n, &text, &display)?;
        let mut wire = (Vec::with_capacity(size.bytes()), Vec::with_capacity(size.ends));
        PackedVocab::write(n, text, display, &mut wire);
        PackedVocab::from_wire(wire.0, wire.1)
    }

    /// Checks what arrived before anything reads it: an even, non-zero count
    /// of offsets that never decrease, end at the buffer's length and fall on
    /// character boundaries of valid UTF-8.
    pub fn from_wire(bytes: Vec<u8>, ends: Vec<u32>) -> Result<PackedVocab, String> {
        if ends.is_empty() || ends.len() % 2 != 0 {
            return Err(format!("a packed vocabulary needs two offsets per token (text and display), not {}", ends.len()));
        }
        let bytes = String::from_utf8(bytes).map_err(|e| format!("the packed vocabulary is not UTF-8 ({e})"))?;
        let mut start = 0usize;
        for (i, &end) in ends.iter().enumerate() {
            let end = end as usize;
            if end < start || end > bytes.len() || !bytes.is_char_boundary(end) {
                return Err(format!("offset {i} of the packed vocabulary ({end}) is out of order or not on a character boundary"));
            }
            start = end;
        }
        if start != bytes.len() {
            return Err(format!("the packed vocabulary's offsets end at {start}, its bytes at {}", bytes.len()));
        }
        Ok(PackedVocab { bytes, ends })
    }

    /// The two arrays, for the other thread.
    pub fn into_wire(self) -> (Vec<u8>, Vec<u32>) {
        (self.bytes.into_bytes(), self.ends)
    }

    /// Tokens in the vocabulary.
    pub fn len(&self) -> usize {
        self.ends.len() / 2
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn entry(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }

    /// Token `id`'s decoded text.
    pub fn text(&self, id: u32) -> &str {
        self.entry(id as usize)
    }

    /// Token `id`'s visible form (␣ ↵ ⇥, <0xNN>).
    pub fn display(&self, id: u32) -> Cow<'_, str> {
        match self.entry(self.len() + id as usize) {
            "" => Cow::Owned(display_bytes(self.text(id).as_bytes())),
            written => Cow::Borrowed(written),
        }
    }
}

/// The display entry written for a token: empty where the visible form is
/// the text's own (`display` gives that back), the form itself elsewhere.
fn written_form<'a>(text: &str, display: &'a str) -> &'a str {
    if display == display_bytes(text.as_bytes()) { "" } else { display }
}

/// The wire form in this thread's memory.
impl WireSink for (Vec<u8>, Vec<u32>) {
    fn bytes(&mut self, piece: &[u8]) {
        self.0.extend_from_slice(piece);
    }
    fn end(&mut self, offset: u32) {
        self.1.push(offset);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_back_by_id_including_empty_and_multibyte_ones() {
        let words = [("a", "a"), ("", "∅"), (" Paris", "␣Paris"), ("\n", "↵"), ("é", "é"), ("\u{FFFD}", "<0x80>"), ("<eos>", "<eos>"), ("", "")];
        let v = PackedVocab::pack(words.len(), |id| words[id as usize].0.to_string(), |id| words[id as usize].1.to_string()).unwrap();
        assert_eq!(v.len(), words.len());
        for (id, (t, d)) in words.iter().enumerate() {
            assert_eq!((v.text(id as u32), v.display(id as u32).as_ref()), (*t, *d));
        }
        let (bytes, ends) = v.clone().into_wire();
        let texts: usize = words.iter().map(|w| w.0.len()).sum();
        assert_eq!(bytes.len(), texts + "∅".len() + "<0x80>".len(), "only forms that are not the text's own are written");
        assert_eq!(PackedVocab::from_wire(bytes, ends).unwrap(), v);
    }

    #[test]
    fn a_text_without_a_visible_form_is_refused() {
        let err = PackedVocab::pack(2, |id| ["", "a"][id as usize].to_string(), |_| String::new()).unwrap_err();
        assert!(err.contains("token 1") && err.contains("no visible form"), "{err}");
    }

    #[test]
    fn malformed_wires_are_refused_with_a_reason() {
        let refused = |bytes: &[u8], ends: &[u32]| PackedVocab::from_wire(bytes.to_vec(), ends.to_vec()).unwrap_err();
        assert!(refused(b"ab", &[]).contains("two offsets per token"));
        assert!(refused(b"abc", &[1, 2, 3]).contains("two offsets per token"));
        assert!(refused(b"ab", &[2, 1]).contains("out of order"));
        assert!(refused(b"ab", &[1, 5]).contains("out of order"));
        assert!(refused("é".as_bytes(), &[1, 2]).contains("character boundary"));
        assert!(refused(&[0xff, 0xfe], &[1, 2]).contains("not UTF-8"));
        assert!(refused(b"abcd", &[1, 2]).contains("end at 2"));
    }
}
