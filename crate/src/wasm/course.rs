//! The course presets' numbers for the page (`www/lessons/`): the same
//! `crate::course` functions `nexttoken lesson` prints, as plain JS objects.

use wasm_bindgen::prelude::*;

use super::{err, to_js, Playground};
use crate::course::{self, kv::KvShape};

/// Every preset's name.
#[wasm_bindgen]
pub fn course_names() -> Vec<String> {
    course::NAMES.iter().map(|s| s.to_string()).collect()
}

/// One preset's numbers and figure data (the JSON of `nexttoken lesson <name>`).
#[wasm_bindgen]
pub fn course_lesson(name: &str) -> Result<JsValue, JsValue> {
    to_js(&course::lesson(name).map_err(err)?)
}

/// The KV-cache size calculator (the JSON of `nexttoken lesson kv-size --...`).
#[wasm_bindgen]
pub fn course_kv_size(
    layers: usize,
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
    context: usize,
    bytes_per_number: usize,
) -> Result<JsValue, JsValue> {
    let shape = KvShape { layers, heads, kv_heads, head_dim, context, bytes_per_number };
    course::kv::check_shape(&shape).map_err(err)?;
    to_js(&course::kv::size(&shape).to_json())
}

/// The bigram retrained with `steps` and `seed` (the lesson: 600, 18).
#[wasm_bindgen]
pub fn course_retrain(steps: usize, seed: u64) -> Result<JsValue, JsValue> {
    to_js(&course::bigram::retrain(steps, seed).map_err(err)?)
}

/// Diversity (course text 000): the tokens the model in `pg` generates after
/// `prompt` at temperature `tau` with this seed; the page counts the distinct
/// ones over seeds 1…40, yielding between seeds. `pg`'s session is restarted.
#[wasm_bindgen]
pub fn course_completion(pg: &mut Playground, prompt: &str, tau: f64, seed: u64, len: usize) -> Result<Vec<u32>, JsValue> {
    course::diversity::completion(&mut pg.session, prompt, tau, seed, len).map_err(err)
}
