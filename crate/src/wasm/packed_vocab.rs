//! The packed vocabulary (`tokenizer::PackedVocab`) across the wasm boundary:
//! the worker's `Playground.vocab_packed` and the page's `Previewer.from_packed`.

use wasm_bindgen::prelude::*;

use super::{Playground, Previewer};
use crate::tokenizer::PackedVocab;

#[wasm_bindgen]
impl Playground {
    /// The vocabulary packed for the page's `Previewer.from_packed`:
    /// `[bytes, ends]`, a Uint8Array and a Uint32Array. Written straight
    /// into them a few KB at a time, never whole in this memory: for Gemma
    /// 3 that would be 6.5 MB more of a worker's memory, which never shrinks.
    pub fn vocab_packed(&self) -> Result<js_sys::Array, JsValue> {
        let tok = self.session.tokenizer();
        let (n, text, display) = (tok.vocab_size(), |id| tok.id_to_piece(id), |id| tok.display(id));
        let size = PackedVocab::measure(n, text, display).map_err(|e| js_sys::Error::new(&e))?;
        let mut sink = JsWire {
            bytes: js_sys::Uint8Array::new_with_length(size.bytes() as u32),
            ends: js_sys::Uint32Array::new_with_length(size.ends as u32),
            byte_buf: Vec::with_capacity(FLUSH_BYTES),
            end_buf: Vec::with_capacity(FLUSH_BYTES / 4),
            bytes_at: 0,
            ends_at: 0,
        };
        PackedVocab::write(n, text, display, &mut sink);
        sink.flush();
        debug_assert_eq!((sink.bytes_at, sink.ends_at), (size.bytes() as u32, size.ends as u32));
        Ok(js_sys::Array::of2(&sink.bytes, &sink.ends))
    }
}

/// How much `JsWire` gathers before a copy into the JS arrays (one call
/// across the boundary per entry would be 524,288 calls for Gemma 3).
const FLUSH_BYTES: usize = 64 * 1024;

/// The wire form written into two JS arrays sized by `PackedVocab::measure`.
struct JsWire {
    bytes: js_sys::Uint8Array,
    ends: js_sys::Uint32Array,
    byte_buf: Vec<u8>,
    end_buf: Vec<u32>,
    bytes_at: u32,
    ends_at: u32,
}

impl JsWire {
    fn flush(&mut self) {
        let (b, e) = (self.byte_buf.len() as u32, self.end_buf.len() as u32);
        self.bytes.subarray(self.bytes_at, self.bytes_at + b).copy_from(&self.byte_buf);
        self.ends.subarray(self.ends_at, self.ends_at + e).copy_from(&self.end_buf);
        (self.bytes_at, self.ends_at) = (self.bytes_at + b, self.ends_at + e);
        self.byte_buf.clear();
        self.end_buf.clear();
    }
}

impl crate::tokenizer::WireSink for JsWire {
    fn bytes(&mut self, piece: &[u8]) {
        if self.byte_buf.len() + piece.len() > FLUSH_BYTES {
            self.flush();
        }
        self.byte_buf.extend_from_slice(piece);
    }
    fn end(&mut self, offset: u32) {
        if self.end_buf.len() == self.end_buf.capacity() {
            self.flush();
        }
        self.end_buf.push(offset);
    }
}

#[wasm_bindgen]
impl Previewer {
    /// A Previewer over the vocabulary `Playground.vocab_packed` gave.
    pub fn from_packed(bytes: Vec<u8>, ends: Vec<u32>) -> Result<Previewer, JsValue> {
        let vocab = PackedVocab::from_wire(bytes, ends).map_err(|e| js_sys::Error::new(&format!("Previewer: {e}")))?;
        if vocab.is_empty() {
            return Err(js_sys::Error::new("Previewer: an empty vocabulary").into());
        }
        Ok(Previewer::with_vocab(vocab))
    }
}
