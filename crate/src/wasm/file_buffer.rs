//! A model file's bytes, written into the engine's memory piece by piece as
//! they arrive (download or cache), so the page never holds a second copy:
//! a 98 MB GGUF read into a JS buffer first would be kept twice while the
//! model is built, and the engine's memory never shrinks back.

use wasm_bindgen::prelude::*;

/// The largest file the engine accepts: wasm32 memory ends at 4 GiB, and
/// the model, its cache and the page need room beside the file.
pub const MAX_FILE_BYTES: usize = 2 << 30;

#[wasm_bindgen]
pub struct FileBuffer {
    bytes: Vec<u8>,
    /// Where the bytes were when `view` first gave them out (0: not yet).
    viewed_at: usize,
    /// A `push` moved the bytes after a view was given: every view is stale.
    moved: bool,
}

#[wasm_bindgen]
impl FileBuffer {
    /// Room for `expected` bytes (0 when the size is unknown), reserved up
    /// front; refused before anything is allocated when it cannot fit. The
    /// size comes as the JS number it is: taken as a `usize`, wasm-bindgen
    /// would wrap a 5 GiB file's size to 1 GiB without a word.
    #[wasm_bindgen(constructor)]
    pub fn new(expected: f64) -> Result<FileBuffer, JsValue> {
        if !(expected >= 0.0 && expected.fract() == 0.0) {
            return Err(js_sys::Error::new(&format!("a model file's size must be a whole number of bytes, not {expected}")).into());
        }
        if expected > MAX_FILE_BYTES as f64 {
            return Err(too_large(expected));
        }
        let expected = expected as usize;
        let mut bytes = Vec::new();
        bytes
            .try_reserve_exact(expected)
            .map_err(|_| js_sys::Error::new(&format!("not enough memory for a {expected}-byte model file")))?;
        Ok(FileBuffer { bytes, viewed_at: 0, moved: false })
    }

    /// Appends the next piece of the file.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), JsValue> {
        let len = self.bytes.len() + chunk.len();
        if len > MAX_FILE_BYTES {
            return Err(too_large(len as f64));
        }
        self.bytes
            .try_reserve(chunk.len())
            .map_err(|_| js_sys::Error::new(&format!("not enough memory for a {len}-byte model file")))?;
        self.bytes.extend_from_slice(chunk);
        Ok(())
    }

    /// Bytes `start..end` as a view of the engine's memory, not a copy: what
    /// the cache's copy of a download reads, so the download makes no
    /// garbage the size of the file (a worker busy in a long prefill cannot
    /// collect it, and the tab holds it meanwhile). The memory is shared, so
    /// growing it leaves the view in place; only this buffer moving would
    /// not, when a file outgrows the size announced for it. `undefined` then
    /// (and from then on, as every view given before is stale too), and for
    /// a range outside what was written.
    pub fn view(&mut self, start: usize, end: usize) -> Option<js_sys::Uint8Array> {
        let at = self.bytes.as_ptr() as usize;
        self.moved |= self.viewed_at != 0 && self.viewed_at != at;
        if self.moved || start > end || end > self.bytes.len() {
            return None;
        }
        self.viewed_at = at;
        // SAFETY: the view reads bytes that stay where they are while the
        // buffer lives: they are never written again, and a push that moves
        // them is seen above. The caller stops reading before it frees the
        // buffer (downloads.js fails the cache's copy first).
        Some(unsafe { js_sys::Uint8Array::view(&self.bytes[start..end]) })
    }

    /// Bytes written so far.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> usize {
        self.bytes.len()
    }
}

impl FileBuffer {
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

fn too_large(bytes: f64) -> JsValue {
    js_sys::Error::new(&format!("a {bytes}-byte model file is larger than this engine takes ({MAX_FILE_BYTES} bytes)")).into()
}
