//! The tokenizer a GGUF file carries (`tokenizer.ggml.*`), built to give
//! llama.cpp's token ids (src/llama-vocab.cpp is the reference).
//!
//! ```text
//! tokenizer.ggml.model   "gpt2": byte-level BPE, merged by rank (SmolLM2, Qwen, Llama 3): rebuilt
//!                        as a tokenizer.json for the `tokenizers` crate
//!                        "llama": SentencePiece, merged by score (Gemma, Llama 2, Phi-3): tokenizer::SentencePiece
//! tokenizer.ggml.pre     how "gpt2" text is split into words first (pre_tokenizer.rs)
//! tokenizer.ggml.tokens / scores / merges / token_type (1 normal, 2 unknown, 3 control,
//!                        4 user-defined, 5 unused, 6 byte)
//! tokenizer.ggml.bos_token_id, add_bos_token   the token every prompt starts with (Gemma: <bos>)
//! tokenizer.ggml.eos_token_id, eot_token_id, eom_token_id, unknown_token_id
//! tokenizer.ggml.add_space_prefix               "llama": a space before the text
//! tokenizer.chat_template                       Jinja; its format is recognised (chat.rs)
//! ```
//! Where a key is missing, llama.cpp's defaults for the model kind apply,
//! and so do its rules by token name: end-of-turn markers are control tokens
//! and end generation, control tokens named "unused…" are unused, and in
//! Phi-3 files special tokens take the whitespace after them.

use serde_json::{json, Value as Json};

use super::metadata::Value;
use super::pre_tokenizer::{self, PreTokenizer};
use super::reader::GgufFile;
use crate::bail;
use crate::chat::ChatTemplate;
use crate::error::{Error, Result};
use crate::tokenizer::{BpeTokenizer, PieceTable, SentencePiece, TokenAttr};

/// Tokens llama.cpp treats as ending generation, wherever they are in the
/// vocabulary (and forces to be control tokens).
const END_OF_GENERATION_NAMES: &[&str] = &[
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
    "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
    "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~[",
];

/// The two ways a GGUF vocabulary is merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VocabKind {
    /// `gpt2`: byte-level BPE, merges by rank.
    ByteLevelBpe,
    /// `llama`: SentencePiece BPE, merges by piece score.
    SentencePiece,
}

/// The file's tokenizer metadata, read and checked, before anything is built.
/// Fields are public so a test can vary one (a pre-tokenizer name, the
/// space prefix) on a real vocabulary.
pub struct GgufVocab<'f> {
    pub kind: VocabKind,
    /// `tokenizer.ggml.pre`, "default" when absent.
    pub pre: &'f str,
    /// `general.name` (llama.cpp's Phi-3 rule reads it).
    pub name: &'f str,
    pub tokens: Vec<&'f str>,
    /// Merge priority per token ("llama"); 0 when the file has none.
    pub scores: Vec<f32>,
    pub types: Vec<TokenAttr>,
    /// "gpt2" merges, "left right", in rank order.
    pub merges: Vec<&'f str>,
    pub bos_id: Option<u32>,
    pub eos_id: Option<u32>,
    pub eot_id: Option<u32>,
    pub eom_id: Option<u32>,
    pub add_bos: Option<bool>,
    pub add_space_prefix: Option<bool>,
    pub chat_template: Option<&'f str>,
}

fn strings<'f>(f: &'f GgufFile, key: &str) -> Result<Vec<&'f str>> {
    let items = f.require(key)?.as_array().ok_or_else(|| Error::new(format!("'{key}' must be an array")))?;
    let strs = items.strs().ok_or_else(|| Error::new(format!("'{key}' must hold strings, not {}s", items.elem().name())))?;
    Ok(strs.collect())
}

/// An optional per-token array of numbers, checked to have one entry per token.
fn per_token<'f>(f: &'f GgufFile, key: &str, n: usize) -> Result<Option<impl Iterator<Item = Value> + 'f>> {
    let Some(v) = f.get(key) else { return Ok(None) };
    let items = v.as_array().ok_or_else(|| Error::new(format!("'{key}' must be an array")))?;
    if items.len() != n {
        bail!("{key} has {} entries for {n} tokens", items.len());
    }
    let values = items.scalars().ok_or_else(|| Error::new(format!("'{key}' must hold numbers, not {}s", items.elem().name())))?;
    Ok(Some(values))
}

fn optional_bool(f: &GgufFile, key: &str) -> Result<Option<bool>> {
    match f.get(key) {
        None => Ok(None),
        Some(v) => v.as_bool().map(Some).ok_or_else(|| Error::new(format!("'{key}' must be a boolean, got a {}", v.type_name()))),
    }
}

fn optional_str<'f>(f: &'f GgufFile, key: &str) -> Result<Option<&'f str>> {
    match f.get(key) {
        None => Ok(None),
        Some(v) => v.as_str().map(Some).ok_or_else(|| Error::new(format!("'{key}' must be a string, got a {}", v.type_name()))),
    }
}

impl<'f> GgufVocab<'f> {
    pub fn read(f: &'f GgufFile) -> Result<Self> {
        let model = f.string("tokenizer.ggml.model")?;
        let kind = match model {
            "gpt2" => VocabKind::ByteLevelBpe,
            "llama" => VocabKind::SentencePiece,
            other => bail!(
                "the GGUF tokenizer is '{other}': this build reads byte-level BPE ('gpt2': SmolLM2, Qwen, Llama 3) and SentencePiece ('llama': Gemma, Llama 2, Phi-3) vocabularies"
            ),
        };
        let tokens = strings(f, "tokenizer.ggml.tokens")?;
        let n = tokens.len();
        let scores = match per_token(f, "tokenizer.ggml.scores", n)? {
            None => vec![0.0; n],
            Some(items) => items
                .map(|v| v.as_f64().map(|s| s as f32).ok_or_else(|| Error::new("tokenizer.ggml.scores must hold numbers")))
                .collect::<Result<_>>()?,
        };
        let types = match per_token(f, "tokenizer.ggml.token_type", n)? {
            None => vec![TokenAttr::NORMAL; n],
            Some(items) => items
                .map(|v| v.as_i64().map(TokenAttr::from_gguf_type).ok_or_else(|| Error::new("tokenizer.ggml.token_type must hold integers")))
                .collect::<Result<_>>()?,
        };
        let merges = match kind {
            VocabKind::ByteLevelBpe => strings(f, "tokenizer.ggml.merges")?,
            VocabKind::SentencePiece => Vec::new(),
        };
        // llama.cpp ignores an id outside the vocabulary (and keeps its default).
        let id = |key: &str| -> Result<Option<u32>> {
            match f.get(key) {
                None => Ok(None),
                Some(v) => {
                    let id = v.as_u64().ok_or_else(|| Error::new(format!("'{key}' must be a token id, got {v:?}")))?;
                    Ok((id < n as u64).then_some(id as u32))
                }
            }
        };
        Ok(GgufVocab {
            kind,
            pre: optional_str(f, "tokenizer.ggml.pre")?.unwrap_or("default"),
            name: optional_str(f, "general.name")?.unwrap_or(""),
            tokens,
            scores,
            types,
            merges,
            bos_id: id("tokenizer.ggml.bos_token_id")?,
            eos_id: id("tokenizer.ggml.eos_token_id")?,
            eot_id: id("tokenizer.ggml.eot_token_id")?,
            eom_id: id("tokenizer.ggml.eom_token_id")?,
            add_bos: optional_bool(f, "tokenizer.ggml.add_bos_token")?,
            add_space_prefix: optional_bool(f, "tokenizer.ggml.add_space_prefix")?,
            chat_template: optional_str(f, "tokenizer.chat_template")?,
        })
    }

    /// The ids of these names, in one pass over the vocabulary (Gemma's
    /// has 262,144 entries).
    fn ids_of<const N: usize>(&self, names: [&[&str]; N]) -> std::collections::HashMap<&'f str, u32> {
        let mut found = std::collections::HashMap::new();
        for (id, &text) in self.tokens.iter().enumerate() {
            if names.iter().any(|list| list.contains(&text)) {
                found.entry(text).or_insert(id as u32);
            }
        }
        found
    }

    fn pre_tokenizer(&self) -> Result<PreTokenizer> {
        pre_tokenizer::by_name(self.pre).ok_or_else(|| {
            Error::new(format!(
                "the GGUF tokenizer uses the pre-tokenizer '{}', which this build does not implement (it knows {})",
                self.pre,
                pre_tokenizer::KNOWN.join(", ")
            ))
        })
    }

    /// The token attributes after llama.cpp's rules by name: end-of-turn
    /// markers are control tokens; control tokens named "unused…" are unused.
    pub fn attrs(&self) -> Vec<TokenAttr> {
        let mut attrs = self.types.clone();
        for (attr, &text) in attrs.iter_mut().zip(&self.tokens) {
            if END_OF_GENERATION_NAMES.contains(&text) {
                *attr = attr.with(TokenAttr::CONTROL);
            }
            if attr.any(TokenAttr::CONTROL) && text.contains("unused") {
                *attr = attr.with(TokenAttr::UNUSED);
            }
        }
        attrs
    }

    /// (lstrip, rstrip) for each cut-out token: in a Phi-3 file (by its
    /// name, as llama.cpp decides) special tokens and `</s>` strip the
    /// whitespace after them, `<unk>`, `<s>` and `<|endoftext|>` do not.
    fn strip(&self) -> impl Fn(u32) -> (bool, bool) + '_ {
        let name = self.name.to_lowercase();
        let phi3 = name.contains("phi-3") || name.contains("phi3");
        move |id| {
            let text = self.tokens.get(id as usize).copied().unwrap_or("");
            (false, phi3 && !matches!(text, "<unk>" | "<s>" | "<|endoftext|>"))
        }
    }

    /// The special ids with llama.cpp's defaults where the file has none.
    fn bos_eos(&self) -> (Option<u32>, Option<u32>) {
        let n = self.tokens.len() as u32;
        let default = |id: u32| (id < n).then_some(id);
        match self.kind {
            VocabKind::SentencePiece => (self.bos_id.or(default(1)), self.eos_id.or(default(2))),
            VocabKind::ByteLevelBpe => {
                let bos = if matches!(self.pre, "chatglm-bpe" | "glm4") { self.bos_id } else { self.bos_id.or(default(11)) };
                (bos, self.eos_id.or(default(11)))
            }
        }
    }

    /// The end-of-generation set: EOS, EOT, EOM and every token named as one.
    fn end_of_generation(&self, eos: Option<u32>) -> Vec<u32> {
        const EOT: [&str; 11] = [
            "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>",
            "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>",
        ];
        let named = self.ids_of([&EOT, END_OF_GENERATION_NAMES]);
        let eot = self.eot_id.or_else(|| EOT.iter().find_map(|name| named.get(name).copied()));
        let mut ids: Vec<u32> = [eos, eot, self.eom_id].into_iter().flatten().collect();
        ids.extend(END_OF_GENERATION_NAMES.iter().filter_map(|name| named.get(name).copied()));
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// The tokenizer.json equivalent of a "gpt2" vocabulary.
    pub fn tokenizer_json(&self) -> Result<Vec<u8>> {
        if self.kind != VocabKind::ByteLevelBpe {
            bail!("a SentencePiece ('llama') vocabulary has no byte-level tokenizer.json form");
        }
        let pre = self.pre_tokenizer()?;
        let mut steps: Vec<Json> = pre
            .regexes
            .iter()
            .map(|r| json!({"type": "Split", "pattern": {"Regex": r}, "behavior": "Isolated", "invert": false}))
            .collect();
        steps.push(json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}));

        let attrs = self.attrs();
        let strip = self.strip();
        let mut vocab = serde_json::Map::with_capacity(self.tokens.len());
        let mut added = Vec::new();
        for (id, (&tok, &attr)) in self.tokens.iter().zip(&attrs).enumerate() {
            if vocab.insert(tok.to_string(), json!(id)).is_some() {
                bail!("the GGUF vocabulary lists the token {tok:?} twice");
            }
            if attr.splits_first() && !tok.is_empty() {
                let (lstrip, rstrip) = strip(id as u32);
                added.push(json!({
                    "id": id, "content": tok, "single_word": false, "lstrip": lstrip, "rstrip": rstrip,
                    "normalized": false, "special": attr.is_special(),
                }));
            }
        }
        let json = json!({
            "version": "1.0",
            "truncation": null,
            "padding": null,
            "added_tokens": added,
            "normalizer": null,
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": steps},
            "post_processor": null,
            "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
            "model": {
                "type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
                "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false,
                "ignore_merges": pre.ignore_merges, "vocab": vocab, "merges": self.merges,
            },
        });
        Ok(serde_json::to_vec(&json).expect("JSON values always serialise"))
    }

    /// The tokenizer, with its BOS, EOS, end-of-generation tokens and chat template.
    pub fn build(&self) -> Result<BpeTokenizer> {
        let (add_bos_default, mut tok) = match self.kind {
            VocabKind::ByteLevelBpe => {
                let inner = tokenizers::Tokenizer::from_bytes(self.tokenizer_json()?)
                    .map_err(|e| Error::new(format!("the GGUF tokenizer cannot be built: {e}")))?;
                (self.pre_tokenizer()?.add_bos, BpeTokenizer::from_tokenizer(inner, true)?)
            }
            VocabKind::SentencePiece => {
                let attrs = self.attrs();
                let table = PieceTable::new(self.tokens.iter().copied())?;
                let spm = SentencePiece::new(table, &self.scores, &attrs, self.add_space_prefix.unwrap_or(true), self.strip())?;
                (true, BpeTokenizer::from_sentencepiece(spm, attrs)?)
            }
        };
        let (bos, eos) = self.bos_eos();
        tok.set_eos_id(eos)?;
        let add_bos = self.add_bos.unwrap_or(add_bos_default);
        if add_bos && bos.is_none() {
            bail!("the GGUF tokenizer asks for a BOS token (tokenizer.ggml.add_bos_token) but names none (tokenizer.ggml.bos_token_id)");
        }
        tok.set_bos_to_add(if add_bos { bos } else { None })?;
        tok.set_end_of_generation(self.end_of_generation(eos))?;
        if let Some(template) = self.chat_template {
            tok.set_chat_template(ChatTemplate::from_jinja(template, |t| tok.token_to_id(t).is_some()));
        }
        Ok(tok)
    }
}

/// The tokenizer.json equivalent of a "gpt2" file's tokenizer.
pub fn tokenizer_json(f: &GgufFile) -> Result<Vec<u8>> {
    GgufVocab::read(f)?.tokenizer_json()
}

/// The file's tokenizer.
pub fn tokenizer(f: &GgufFile) -> Result<BpeTokenizer> {
    GgufVocab::read(f)?.build()
}
