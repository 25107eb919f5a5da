//! `--model`: a folder (or model.json) of a trained model, or `builtin:NAME`.

use crate::backend::BackendKind;
use crate::builtin;
use crate::error::Result;
use crate::loader;
use crate::session::Session;

pub fn open_session(model: &str, backend: &str) -> Result<Session> {
    let backend = BackendKind::parse(backend)?;
    match model.strip_prefix("builtin:") {
        Some(name) => builtin::open(name),
        None => loader::session_from_path(std::path::Path::new(model), backend),
    }
}
