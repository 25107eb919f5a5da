//! One configuration being read: the settings so far (the engine's
//! defaults, then what the text says), which settings the text said, and
//! the notes on what it reads differently or cannot express. Every value is
//! checked against its field's range as it is read, so a refusal names the
//! line it came from.

use serde::Serialize;
use serde_json::Value;

use super::engines::Engine;
use super::{Dialect, Imported};
use crate::error::{Error, Result};
use crate::rules::rule_field;
use crate::settings::GenerationSettings;

/// An engine default the text was silent on.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Filled {
    /// The setting's name here.
    pub key: String,
    /// Its name in the engine's words (`--top-k`, `top_k`).
    pub engine_key: String,
    pub value: String,
    /// The engine whose default it is.
    pub engine: String,
}

/// Something the text says that is read differently here, ignored or not
/// expressible, with its line (1-based; 0 = the whole text).
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Note {
    pub line: usize,
    pub key: String,
    pub message: String,
}

pub(super) struct Reading {
    pub engine: Engine,
    /// The settings as JSON (the serde names are the keys everything uses).
    settings: Value,
    /// Settings the text set, by our name, with the line that set them.
    said: Vec<(String, usize)>,
    pub notes: Vec<Note>,
}

impl Reading {
    /// `base` with every decoding setting at `engine`'s default.
    pub fn new(engine: Engine, base: &GenerationSettings) -> Reading {
        let mut settings = serde_json::to_value(engine.base_settings(base)).expect("settings serialise");
        for (key, _, value) in engine.defaults() {
            settings[*key] = value.clone();
        }
        Reading { engine, settings, said: Vec::new(), notes: Vec::new() }
    }

    /// Sets our setting `key` from the text's `engine_key` on `line`: a
    /// number is checked against its field's range (and a count against
    /// being whole) here, so the message names the line.
    pub fn set(&mut self, line: usize, engine_key: &str, key: &str, value: Value) -> Result<()> {
        if let (Some(field), Some(v)) = (rule_field(key), value.as_f64()) {
            field.check(&format!("line {line}: {engine_key} {}", show(&value)), v).map_err(|e| {
                Error::new(e.message.replacen(&format!(" = {v}"), "", 1))
            })?;
            if field.range.integer && v.fract() != 0.0 {
                crate::bail!("line {line}: {engine_key} {}: must be a whole number", show(&value));
            }
        }
        // A whole-number field holds an integer ("-1", not "-1.0"), so the
        // settings read back.
        let value = match (rule_field(key), value.as_f64()) {
            (Some(field), Some(v)) if field.range.integer => Value::from(v as i64),
            _ => value,
        };
        let before = self.settings[key].clone();
        self.settings[key] = value.clone();
        if !rule_field(key).is_some() {
            // The fields beyond the rules check as a whole; the line is ours to add.
            if let Err(e) = self.current().and_then(|s| s.validate_beyond_rules()) {
                self.settings[key] = before;
                crate::bail!("line {line}: {engine_key} {}: {}", show(&value), e.message);
            }
        }
        self.said.retain(|(k, _)| k != key);
        self.said.push((key.to_string(), line));
        Ok(())
    }

    /// The length cap from `value` (null: the base's); past the page's
    /// longest run it is that, with a note.
    pub fn set_max_new(&mut self, line: usize, engine_key: &str, value: &Value) -> Result<()> {
        let longest = crate::settings::MAX_NEW;
        match value.as_u64() {
            Some(n) if n as usize > longest => {
                self.note(line, engine_key, format!("{engine_key} {n}: a run here makes at most {longest} tokens"));
                self.set(line, engine_key, "max_new", Value::from(longest))
            }
            Some(n) => self.set(line, engine_key, "max_new", Value::from(n)),
            None if value.is_null() => Ok(()),
            None => crate::bail!("line {line}: {engine_key} {value}: expected a whole number"),
        }
    }

    /// The stop strings from `value`: one string or a list of them.
    pub fn set_stop(&mut self, line: usize, engine_key: &str, value: &Value) -> Result<()> {
        let list: Option<Vec<String>> = match value {
            Value::Null => Some(Vec::new()),
            Value::String(s) => Some(vec![s.clone()]),
            Value::Array(a) => a.iter().map(|s| s.as_str().map(str::to_string)).collect(),
            _ => None,
        };
        match list {
            Some(list) => self.set(line, engine_key, "stop", Value::from(list)),
            None => crate::bail!("line {line}: {engine_key} {value}: expected a string or a list of strings"),
        }
    }

    /// Puts `key` back to off (`value`) with a note: the engine reads it but
    /// would not apply it here (a stage outside its sampler list).
    pub fn turn_off(&mut self, key: &str, value: Value, why: &str) {
        if self.settings[key] == value {
            return;
        }
        let line = self.line_of(key);
        self.notes.push(Note { line, key: key.to_string(), message: format!("{key} {}: {why}", show(&self.settings[key])) });
        self.settings[key] = value;
    }

    pub fn get(&self, key: &str) -> &Value {
        &self.settings[key]
    }

    pub fn said(&self, key: &str) -> bool {
        self.said.iter().any(|(k, _)| k == key)
    }

    /// The line that set `key` (0 when the text did not).
    pub fn line_of(&self, key: &str) -> usize {
        self.said.iter().find(|(k, _)| k == key).map_or(0, |(_, l)| *l)
    }

    /// Sets a setting the reader derives (the chain, the order) without
    /// counting it as said.
    pub fn put(&mut self, key: &str, value: Value) {
        self.settings[key] = value;
    }

    pub fn note(&mut self, line: usize, key: &str, message: impl Into<String>) {
        self.notes.push(Note { line, key: key.to_string(), message: message.into() });
    }

    /// The settings read so far.
    pub fn settings(&self) -> Result<GenerationSettings> {
        self.current()
    }

    fn current(&self) -> Result<GenerationSettings> {
        serde_json::from_value(self.settings.clone()).map_err(|e| Error::new(format!("the settings do not read back: {e}")))
    }

    /// The settings read, with the defaults the text was silent on.
    pub fn finish(self, dialect: Dialect, read_as: String) -> Result<Imported> {
        let settings = self.current()?;
        let ours = serde_json::to_value(GenerationSettings::default()).expect("settings serialise");
        let filled = self
            .engine
            .defaults()
            .iter()
            .filter(|(key, _, value)| !self.said(key) && self.settings[*key] == *value && ours[*key] != *value)
            .map(|(key, engine_key, value)| Filled {
                key: key.to_string(),
                engine_key: engine_key.to_string(),
                value: show(value),
                engine: self.engine.label().to_string(),
            })
            .collect();
        Ok(Imported { dialect, read_as, settings, filled, notes: self.notes })
    }
}

/// A value as the text would write it (strings without quotes).
pub(super) fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}
