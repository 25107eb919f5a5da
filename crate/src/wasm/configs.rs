//! Decoding configurations in the engines' own words, for the page
//! (`crate::dialect`): the formats, import and export.

use wasm_bindgen::prelude::*;

use super::{err, settings, to_js};

/// The configuration formats `import_config` reads: name, label, an example.
#[wasm_bindgen]
pub fn config_dialects() -> Result<JsValue, JsValue> {
    let list: Vec<serde_json::Value> = crate::dialect::Dialect::ALL
        .iter()
        .map(|d| serde_json::json!({"name": d.name(), "label": d.label(), "placeholder": d.placeholder()}))
        .collect();
    to_js(&list)
}

/// A configuration in an engine's words read into settings
/// (`dialect::import`); `dialect` "" detects it; `base` gives the fields
/// engines do not speak of; token ids are checked against `vocab_size` when
/// it is given. Bad text throws, naming its line.
#[wasm_bindgen]
pub fn import_config(text: &str, dialect: &str, base: JsValue, vocab_size: Option<usize>) -> Result<JsValue, JsValue> {
    let d = if dialect.trim().is_empty() { None } else { Some(crate::dialect::Dialect::from_name(dialect).map_err(err)?) };
    let base = settings(base)?;
    to_js(&crate::dialect::import(text, d, &base, vocab_size.unwrap_or(u32::MAX as usize)).map_err(err)?)
}

/// The settings in an engine's words (`dialect::export`).
#[wasm_bindgen]
pub fn export_config(settings_js: JsValue, dialect: &str) -> Result<JsValue, JsValue> {
    let d = crate::dialect::Dialect::from_name(dialect).map_err(err)?;
    to_js(&crate::dialect::export(&settings(settings_js)?, d))
}

