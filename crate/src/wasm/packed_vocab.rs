//! The packed vocabulary (`tokenizer::PackedVocab`) across the wasm boundary:
//! the worker's `Playground.vocab_packed` and the page's `Previewer.from_packed`.

use wasm_bindgen::prelude::*;

use super::{Playground, Previewer};
use crate::tokenizer::PackedVocab;

#[wasm_bindgen]
impl Playground {
    /// The vocabulary packed for the page's `Previewer.from_packed`:
    /// `[bytes, ends]`, a Uint8Array and a Uint32Array.
    pub fn vocab_packed(&self) -> Result<js_sys::Array, JsValue> {
        let tok = self.session.tokenizer();
        let vocab = PackedVocab::pack(tok.vocab_size(), |id| (tok.id_to_piece(id), tok.display(id))).map_err(|e| js_sys::Error::new(&e))?;
        let (bytes, ends) = vocab.into_wire();
        Ok(js_sys::Array::of2(&js_sys::Uint8Array::from(&bytes[..]), &js_sys::Uint32Array::from(&ends[..])))
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
