//! Decoding configurations in the words of the engines people deploy:
//! llama.cpp's command-line flags, a Hugging Face `generation_config.json`
//! (or `generate()` keywords) and an OpenAI-style request body (with vLLM's
//! and llama.cpp server's extra fields). `import` reads one into
//! `GenerationSettings`, filling each engine's own defaults where the text is
//! silent and naming everything it cannot express; `export` writes the
//! settings in force back in each engine's words, naming what that engine
//! cannot say. The engines' defaults and chains are in `engines`.

mod engines;
mod hf_config;
mod json_text;
mod llama_export;
mod llama_flag_names;
mod llama_flags;
mod openai_body;
mod reading;

use serde::Serialize;

use crate::error::Result;
use crate::settings::GenerationSettings;

pub use engines::Engine;
pub use reading::{Filled, Note};

/// The longest configuration text read: a pasted config is a few hundred
/// bytes; anything past this is refused before it is parsed.
pub const MAX_CONFIG_BYTES: usize = 64 * 1024;

/// The three ways of writing a decoding configuration.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// llama.cpp's command-line flags (`llama-cli`, `llama-server`).
    LlamaCpp,
    /// Hugging Face transformers: `generation_config.json` or `generate()`'s keywords as JSON.
    Hf,
    /// An OpenAI-style request body (OpenAI, vLLM, llama.cpp's server).
    Openai,
}

impl Dialect {
    pub const ALL: [Dialect; 3] = [Dialect::LlamaCpp, Dialect::Hf, Dialect::Openai];

    pub fn name(self) -> &'static str {
        match self {
            Dialect::LlamaCpp => "llama_cpp",
            Dialect::Hf => "hf",
            Dialect::Openai => "openai",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Dialect::LlamaCpp => "llama.cpp flags",
            Dialect::Hf => "Hugging Face generation_config.json",
            Dialect::Openai => "OpenAI-style request body",
        }
    }

    /// An example of the dialect, for a paste box's placeholder.
    pub fn placeholder(self) -> &'static str {
        match self {
            Dialect::LlamaCpp => "--temp 0.7 --top-k 40 --top-p 0.9 --min-p 0.05 --repeat-penalty 1.1",
            Dialect::Hf => "{\n  \"do_sample\": true,\n  \"temperature\": 0.7,\n  \"top_p\": 0.9\n}",
            Dialect::Openai => "{\n  \"temperature\": 0.7,\n  \"top_p\": 0.9,\n  \"presence_penalty\": 0.5\n}",
        }
    }

    /// The dialect a name means: its own name, or a common other name
    /// (`llama.cpp`, `transformers`, `vllm`).
    pub fn from_name(name: &str) -> Result<Dialect> {
        let n = name.trim().to_ascii_lowercase().replace(['-', '.'], "_");
        Ok(match n.as_str() {
            "llama_cpp" | "llama" | "llamacpp" | "flags" => Dialect::LlamaCpp,
            "hf" | "huggingface" | "hugging_face" | "transformers" | "generation_config" => Dialect::Hf,
            "openai" | "vllm" | "request" | "llama_server" => Dialect::Openai,
            _ => {
                let names: Vec<&str> = Dialect::ALL.iter().map(|d| d.name()).collect();
                crate::bail!("'{name}' is not a configuration format: use {}", names.join(", "))
            }
        })
    }

    /// The dialect a text is written in: flags start with `-` (or a
    /// program's name), JSON with `{`; a JSON object is Hugging Face's when it
    /// has a key only `generate()` reads, else a request body.
    pub fn detect(text: &str) -> Result<Dialect> {
        let t = text.trim_start();
        if t.starts_with('{') {
            return Ok(if hf_config::looks_like_hf(t) { Dialect::Hf } else { Dialect::Openai });
        }
        if json_text::looks_like_kwargs(t) {
            return Ok(Dialect::Hf);
        }
        if t.is_empty() || t.starts_with('-') || llama_flags::starts_with_program(t) {
            return Ok(Dialect::LlamaCpp);
        }
        crate::bail!(
            "line 1: this is neither llama.cpp flags (they start with --) nor JSON (it starts with {{): paste flags such as --temp 0.7, or a JSON object"
        )
    }
}

/// A configuration read into settings.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Imported {
    pub dialect: Dialect,
    /// How the text was read, in words ("llama.cpp flags", "an OpenAI-style
    /// request with llama.cpp server's fields").
    pub read_as: String,
    pub settings: GenerationSettings,
    /// The engine's defaults filled in where the text was silent.
    pub filled: Vec<Filled>,
    /// What the text says that the playground reads differently, ignores or
    /// cannot express, each with its line.
    pub notes: Vec<Note>,
}

/// Settings written in one engine's words.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Exported {
    pub dialect: Dialect,
    pub text: String,
    /// What in the settings this engine cannot say (left out of `text`, or
    /// said as near as it can).
    pub notes: Vec<Note>,
}

/// Reads `text` in `dialect` (detected when `None`) into settings. Fields no
/// engine speaks of (the top rows shown, chat mode, the cache switch) come
/// from `base`; every decoding field starts from the engine's defaults. A
/// value out of range, an unknown key or flag, or text that does not parse is
/// refused with a message naming its line, and nothing is returned.
pub fn import(text: &str, dialect: Option<Dialect>, base: &GenerationSettings, vocab_size: usize) -> Result<Imported> {
    if text.len() > MAX_CONFIG_BYTES {
        crate::bail!(
            "the pasted text is {} bytes; a configuration is at most {} KB: paste only the sampling flags or fields",
            text.len(),
            MAX_CONFIG_BYTES / 1024
        );
    }
    let dialect = match dialect {
        Some(d) => d,
        None => Dialect::detect(text)?,
    };
    let imported = match dialect {
        Dialect::LlamaCpp => llama_flags::import(text, base)?,
        Dialect::Hf => hf_config::import(text, base)?,
        Dialect::Openai => openai_body::import(text, base)?,
    };
    imported.settings.validate(vocab_size).map_err(|e| crate::error::Error::new(format!("{}: {}", dialect.label(), e.message)))?;
    Ok(imported)
}

/// The settings in `dialect`'s words.
pub fn export(settings: &GenerationSettings, dialect: Dialect) -> Exported {
    match dialect {
        Dialect::LlamaCpp => llama_export::export(settings),
        Dialect::Hf => hf_config::export(settings),
        Dialect::Openai => openai_body::export(settings),
    }
}

#[cfg(test)]
mod tests;
