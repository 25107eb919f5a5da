//! The browser surface: one `Playground` object over a `Session`, with a
//! constructor from model files, the built-in course models, and a method
//! per worker message. Every error becomes a JS `Error` with the engine's
//! message; reports cross as plain JS objects (see www/PROTOCOL.md).

mod configs;
mod course;
mod file_buffer;
mod packed_vocab;
mod threads;

use serde::Serialize;
use wasm_bindgen::prelude::*;

pub use file_buffer::FileBuffer;

use crate::backend::BackendKind;
use crate::builtin;
use crate::error::Error;
use crate::loader;
use crate::session::{GenerationSettings, Session};

fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| js_sys::Error::new(&format!("could not hand the report to the page: {e}")).into())
}

/// An inside view as a JS object, each layer's attention weights a
/// Float32Array (SmolLM2 at 1,000 positions has 270,000 of them a step:
/// as JS numbers they would cost more than the step).
fn inside_to_js(mut inside: crate::inside::InsideReport) -> Result<JsValue, JsValue> {
    let weights: Vec<Vec<f32>> = inside.attention.iter_mut().map(|a| std::mem::take(&mut a.weights)).collect();
    let value = to_js(&inside)?;
    let layers = js_sys::Reflect::get(&value, &"attention".into())?;
    for (l, w) in weights.iter().enumerate() {
        let layer = js_sys::Reflect::get_u32(&layers, l as u32)?;
        js_sys::Reflect::set(&layer, &"weights".into(), &js_sys::Float32Array::from(w.as_slice()))?;
    }
    Ok(value)
}

/// A step report as a JS object, its inside view's weights as Float32Arrays.
fn report_to_js(mut report: crate::report::StepReport) -> Result<JsValue, JsValue> {
    let inside = report.inside.take();
    let value = to_js(&report)?;
    let inside = match inside {
        Some(i) => inside_to_js(i)?,
        None => JsValue::NULL,
    };
    js_sys::Reflect::set(&value, &"inside".into(), &inside)?;
    Ok(value)
}

fn err(e: Error) -> JsValue {
    js_sys::Error::new(&e.message).into()
}

fn settings(value: JsValue) -> Result<GenerationSettings, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Ok(GenerationSettings::default());
    }
    serde_wasm_bindgen::from_value(value).map_err(|e| js_sys::Error::new(&format!("settings: {e}")).into())
}

/// Makes Rust panics readable in the console (they still abort the module:
/// the worker restarts it).
#[wasm_bindgen]
pub fn set_panic_hook() {
    console_error_panic_hook::set_once();
}

/// The backends this wasm build contains, e.g. ["flex", "ndarray"].
#[wasm_bindgen]
pub fn backends() -> Vec<String> {
    BackendKind::available().iter().map(|b| b.name().to_string()).collect()
}

#[wasm_bindgen]
pub struct Playground {
    session: Session,
    /// Which built-in model this is, if any (set_logits and train_bigram need it).
    builtin: Option<String>,
}

/// A loaded session with its KV cache in `kv_type` when the page gave one
/// (absent or null: the model's default, `KvPrecision::default_for`).
fn with_kv_type(mut session: Session, kv_type: Option<String>) -> Result<Playground, JsValue> {
    if let Some(kv) = kv_type {
        session.set_kv_precision(crate::kv_cache::KvPrecision::parse(&kv).map_err(err)?).map_err(err)?;
    }
    Ok(Playground { session, builtin: None })
}

#[wasm_bindgen]
impl Playground {
    /// A trained model from its manifest, weights and tokenizer files.
    /// `kv_type` (optional, as in the GGUF loaders): `"f16"` or `"f32"`.
    pub fn from_files(manifest_json: &str, weights: Vec<u8>, tokenizer_json: &str, backend: Option<String>, kv_type: Option<String>) -> Result<Playground, JsValue> {
        let backend = BackendKind::parse(backend.as_deref().unwrap_or("flex")).map_err(err)?;
        let session = loader::session_from_files(manifest_json, weights, tokenizer_json.as_bytes(), backend).map_err(err)?;
        with_kv_type(session, kv_type)
    }

    /// A GGUF file of a supported family (SmolLM2, Gemma 3, or one the user opened). The
    /// bytes are copied once into the module's memory, and the model keeps
    /// its quantised matrices in that copy; a file this build cannot run
    /// gives an Error naming why. `kv_type` (optional): the KV cache's
    /// numbers, `"f16"` (a GGUF file's default, as llama.cpp) or `"f32"`.
    pub fn from_gguf(bytes: Vec<u8>, name: &str, backend: Option<String>, kv_type: Option<String>) -> Result<Playground, JsValue> {
        let backend = BackendKind::parse(backend.as_deref().unwrap_or("flex")).map_err(err)?;
        // The session takes the bytes over: the model's matrices stay in them.
        let session = crate::gguf::session_from_gguf(bytes, name, backend).map_err(err)?;
        with_kv_type(session, kv_type)
    }

    /// `from_gguf` over bytes the worker streamed into a `FileBuffer`: the
    /// model takes them over where they lie, with no copy at all.
    pub fn from_gguf_buffer(file: FileBuffer, name: &str, backend: Option<String>, kv_type: Option<String>) -> Result<Playground, JsValue> {
        let backend = BackendKind::parse(backend.as_deref().unwrap_or("flex")).map_err(err)?;
        let session = crate::gguf::session_from_gguf(file.into_bytes(), name, backend).map_err(err)?;
        with_kv_type(session, kv_type)
    }

    /// A built-in course model: "logits10", "bigram-abc" or "kv-demo".
    pub fn builtin(name: &str) -> Result<Playground, JsValue> {
        let session = builtin::open(name).map_err(err)?;
        Ok(Playground { session, builtin: Some(name.to_string()) })
    }

    pub fn info(&self) -> Result<JsValue, JsValue> {
        to_js(&self.session.info())
    }

    pub fn start(&mut self, prompt: &str, settings_js: JsValue) -> Result<JsValue, JsValue> {
        let s = settings(settings_js)?;
        report_to_js(self.session.start(prompt, &s).map_err(err)?)
    }

    pub fn step(&mut self, settings_js: JsValue) -> Result<JsValue, JsValue> {
        let s = settings(settings_js)?;
        report_to_js(self.session.step(&s).map_err(err)?)
    }

    pub fn preview(&self, settings_js: JsValue) -> Result<JsValue, JsValue> {
        let s = settings(settings_js)?;
        to_js(&self.session.preview(&s).map_err(err)?)
    }

    /// Starts comparing two configurations over `runs` continuations of
    /// `prompt` each (`Session::compare_start`); the worker calls
    /// `compare_next` until the progress says finished, then `compare_finish`.
    pub fn compare_start(&mut self, prompt: &str, settings_a: JsValue, settings_b: JsValue, runs: usize, max_new: usize) -> Result<JsValue, JsValue> {
        let (a, b) = (settings(settings_a)?, settings(settings_b)?);
        to_js(&self.session.compare_start(prompt, &a, &b, runs, max_new).map_err(err)?)
    }

    pub fn compare_next(&mut self) -> Result<JsValue, JsValue> {
        to_js(&self.session.compare_next().map_err(err)?)
    }

    pub fn compare_finish(&mut self) -> Result<JsValue, JsValue> {
        to_js(&self.session.compare_finish().map_err(err)?)
    }

    pub fn compare_cancel(&mut self) -> Result<(), JsValue> {
        self.session.compare_cancel().map_err(err)
    }

    pub fn rewind(&mut self, n_generated: usize, settings_js: JsValue) -> Result<JsValue, JsValue> {
        let s = settings(settings_js)?;
        report_to_js(self.session.rewind(n_generated, &s).map_err(err)?)
    }

    /// Whether reports carry the inside view (`StepReport.inside`): what the
    /// newest query read in every layer and the logit lens. Off, nothing of
    /// it is computed.
    pub fn set_inside(&mut self, on: bool) {
        self.session.set_inside(on);
    }

    /// Whether the inside view's reports run the logit lens (on by default;
    /// off: `lens` is empty, the attention is still there).
    pub fn set_inside_lens(&mut self, on: bool) {
        self.session.set_lens(on);
    }

    /// The inside view of the pending position (null for a model without
    /// layers); the generation is left as it was.
    pub fn inside_now(&mut self) -> Result<JsValue, JsValue> {
        match self.session.inside_now().map_err(err)? {
            Some(inside) => inside_to_js(inside),
            None => Ok(JsValue::NULL),
        }
    }

    /// Every token of `text` with the probability and rank the model gave it
    /// (teacher-forced, one pass); the generation state is left alone.
    pub fn score(&mut self, text: &str, chat: bool) -> Result<JsValue, JsValue> {
        to_js(&self.session.score(text, chat).map_err(err)?)
    }

    /// A cancellable beam search: `beam_start`, then `beam_next` once per
    /// depth (the worker yields in between, so a new request can cancel),
    /// then `beam_finish` for the report; `beam_cancel` drops it. Each
    /// returns `{ depth, of, done }` but `beam_finish` (a BeamReport).
    pub fn beam_start(&mut self, settings_js: JsValue) -> Result<JsValue, JsValue> {
        let s = settings(settings_js)?;
        to_js(&self.session.beam_start(&s).map_err(err)?)
    }

    pub fn beam_next(&mut self) -> Result<JsValue, JsValue> {
        to_js(&self.session.beam_next().map_err(err)?)
    }

    pub fn beam_finish(&mut self) -> Result<JsValue, JsValue> {
        to_js(&self.session.beam_finish().map_err(err)?)
    }

    pub fn beam_cancel(&mut self) -> Result<(), JsValue> {
        self.session.beam_cancel().map_err(err)
    }

    pub fn beam(&mut self, settings_js: JsValue) -> Result<JsValue, JsValue> {
        let s = settings(settings_js)?;
        to_js(&self.session.beam(&s).map_err(err)?)
    }

    /// "logits10" only: replaces the logit vector and returns the new distribution
    /// (the prompt is restarted with the given settings).
    pub fn set_logits(&mut self, logits: Vec<f64>, prompt: &str, settings_js: JsValue) -> Result<JsValue, JsValue> {
        if self.builtin.as_deref() != Some("logits10") {
            return Err(js_sys::Error::new("set_logits works only on the logits10 model").into());
        }
        let s = settings(settings_js)?;
        self.session = builtin::logits_session(&logits).map_err(err)?;
        report_to_js(self.session.start(prompt, &s).map_err(err)?)
    }

    /// "bigram-abc" only: retrains the lesson-18 bigram in the browser and
    /// swaps it in; returns the loss curve and the learned P(next | token).
    pub fn train_bigram(&mut self, steps: usize, seed: u64) -> Result<JsValue, JsValue> {
        if self.builtin.as_deref() != Some("bigram-abc") {
            return Err(js_sys::Error::new("train_bigram works only on the bigram-abc model").into());
        }
        let (session, summary) = builtin::retrained_bigram(steps, seed).map_err(err)?;
        self.session = session;
        to_js(&summary)
    }
}

#[wasm_bindgen]
impl Playground {
    /// The raw logits of the next position, for a `Previewer` on the page's
    /// thread (as f64, the precision the rules run in, so both threads agree).
    pub fn pending_logits(&self) -> Vec<f64> {
        self.session.pending_logits().to_vec()
    }

    /// `pending_logits` written into `out`, an array the page handed back
    /// (www/worker.js recycles them), so a step allocates no new 393 KB
    /// array on a 49,152-token vocabulary; false, and `out` untouched, when
    /// its length is not the vocabulary's. Copied straight from this memory:
    /// taken as a `&mut [f64]`, `out` would be copied in and back out through
    /// a buffer of its size here (Gemma 3: 2 MB at every step).
    pub fn pending_logits_into(&self, out: &js_sys::Float64Array) -> bool {
        let logits = self.session.pending_logits();
        if out.length() as usize != logits.len() {
            return false;
        }
        out.copy_from(logits);
        true
    }

    /// Every token so far (prompt then generated): what the penalties look at.
    pub fn history(&self) -> Vec<u32> {
        self.session.history()
    }

    pub fn pending_position(&self) -> usize {
        self.session.pending_position()
    }

    /// The RNG's next number and mirostat's mu: the page's Previewer takes
    /// them (`Previewer.set_sampler_state`) so its XTC and mirostat cuts are the step's.
    pub fn pending_sampler_state(&self) -> Result<JsValue, JsValue> {
        to_js(&self.session.sampler_state())
    }

    /// Each vocabulary entry's decoded text, by id.
    pub fn vocab_text(&self) -> Vec<String> {
        let tok = self.session.tokenizer();
        (0..tok.vocab_size() as u32).map(|id| tok.id_to_piece(id)).collect()
    }

    /// Each vocabulary entry's visible form (␣ ↵ ⇥, <0xNN>), by id.
    pub fn vocab_display(&self) -> Vec<String> {
        let tok = self.session.tokenizer();
        (0..tok.vocab_size() as u32).map(|id| tok.display(id)).collect()
    }
}

/// The decoding rules alone, for the page's own thread: a slider move is
/// answered from the last raw logits without a round trip to the worker,
/// so every panel repaints in the same frame. It is a `Position` (the
/// worker's pending one, handed over after each reply) with the vocabulary's
/// text: the session's own preview path.
#[wasm_bindgen]
pub struct Previewer {
    /// Every token's text and visible form (`packed_vocab`).
    vocab: crate::tokenizer::PackedVocab,
    position: crate::position::Position,
}

#[wasm_bindgen]
impl Previewer {
    /// `text` and `display`: every token's decoded text and visible form, by id
    /// (from `Playground.vocab_text()` / `vocab_display()`).
    #[wasm_bindgen(constructor)]
    pub fn new(text: Vec<String>, display: Vec<String>) -> Result<Previewer, JsValue> {
        if text.len() != display.len() || text.is_empty() {
            return Err(js_sys::Error::new("Previewer: text and display must list the same, non-empty vocabulary").into());
        }
        let vocab = crate::tokenizer::PackedVocab::pack(text.len(), |id| text[id as usize].clone(), |id| display[id as usize].clone())
            .map_err(|e| js_sys::Error::new(&format!("Previewer: {e}")))?;
        Ok(Previewer::with_vocab(vocab))
    }

    /// The state after a step: the pending raw logits, the history, the
    /// position. The logits are copied straight into the last state's
    /// buffer (whose summary goes first), so this memory never holds two
    /// states' logits, nor a copy of the array on its way in.
    pub fn set_state(&mut self, raw: &js_sys::Float64Array, history: Vec<u32>, position: usize) -> Result<(), JsValue> {
        let n = raw.length() as usize;
        if n != self.vocab.len() {
            return Err(js_sys::Error::new(&format!("Previewer: {n} logits for a vocabulary of {}", self.vocab.len())).into());
        }
        let mut logits = self.position.take_logits_buffer();
        logits.resize(n, 0.0);
        raw.copy_to(&mut logits);
        self.position.set_logits(logits, Ok(()));
        self.position.summary().map_err(err)?;
        self.position.history = history;
        self.position.index = position;
        Ok(())
    }

    /// The worker's sampler state after its last reply
    /// (`Playground.pending_sampler_state`), so a preview here cuts as the
    /// worker's step will, whichever settings the preview is for.
    pub fn set_sampler_state(&mut self, state_js: JsValue) -> Result<(), JsValue> {
        self.position.state = serde_wasm_bindgen::from_value(state_js).map_err(|e| js_sys::Error::new(&e.to_string()))?;
        Ok(())
    }

    /// The same Distribution `Playground.preview` returns, computed here.
    pub fn preview(&self, settings_js: JsValue) -> Result<JsValue, JsValue> {
        if !self.position.is_set() {
            return Err(js_sys::Error::new("Previewer: no logits yet (call set_state after a step)").into());
        }
        let s = settings(settings_js)?;
        let names = |id: u32| (self.vocab.text(id).to_string(), self.vocab.display(id).to_string());
        let text = |id: u32| self.vocab.text(id).to_string();
        let vocab = crate::position::Vocabulary { size: self.vocab.len(), text: &text };
        to_js(&self.position.preview(&s, &vocab, &names).map_err(err)?)
    }

    /// Two configurations side by side here (`compare::side_by_side`).
    pub fn compare(&self, settings_a: JsValue, settings_b: JsValue) -> Result<JsValue, JsValue> {
        if !self.position.is_set() {
            return Err(js_sys::Error::new("Previewer: no logits yet (call set_state after a step)").into());
        }
        let (a, b) = (settings(settings_a)?, settings(settings_b)?);
        let names = |id: u32| (self.vocab.text(id).to_string(), self.vocab.display(id).to_string());
        let text = |id: u32| self.vocab.text(id).to_string();
        let vocab = crate::position::Vocabulary { size: self.vocab.len(), text: &text };
        to_js(&crate::compare::side_by_side(&self.position, &a, &b, &vocab, &names).map_err(err)?)
    }
}

impl Previewer {
    /// A Previewer over `vocab`, before any state.
    fn with_vocab(vocab: crate::tokenizer::PackedVocab) -> Previewer {
        Previewer { vocab, position: Default::default() }
    }
}
