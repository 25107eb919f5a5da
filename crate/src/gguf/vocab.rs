//! The tokenizer a GGUF file carries (`tokenizer.ggml.*`), rebuilt as a
//! Hugging Face `tokenizer.json` and run by the `tokenizers` crate, so a
//! GGUF model and a folder model share one `BpeTokenizer`.
//!
//! ```text
//! tokenizer.ggml.model   "gpt2" (byte-level BPE)
//! tokenizer.ggml.pre     how text is split before BPE: "smollm" = every digit alone, then GPT-2's regex
//! tokenizer.ggml.tokens / merges / token_type (3 = control: special, 4 = user-defined: added)
//! tokenizer.ggml.eos_token_id, tokenizer.chat_template
//! ```

use serde_json::{json, Value as Json};

use super::metadata::Value;
use super::reader::GgufFile;
use crate::bail;
use crate::chat::ChatTemplate;
use crate::error::{Error, Result};
use crate::tokenizer::BpeTokenizer;

/// llama.cpp's token types.
const TYPE_CONTROL: i64 = 3;
const TYPE_USER_DEFINED: i64 = 4;

/// The pre-tokenizer for a `tokenizer.ggml.pre` name, as tokenizers JSON.
fn pre_tokenizer(pre: &str) -> Result<Json> {
    let byte_level = json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true});
    Ok(match pre {
        // StarCoder's family (SmolLM among them) splits digits one by one
        // before GPT-2's regex; llama.cpp groups these names together.
        "smollm" | "starcoder" | "refact" | "codeshell" => json!({
            "type": "Sequence",
            "pretokenizers": [{"type": "Digits", "individual_digits": true}, byte_level],
        }),
        "gpt2" | "gpt-2" | "default" => byte_level,
        other => bail!(
            "the GGUF tokenizer uses the pre-tokenizer '{other}', which this build does not implement (it knows smollm, starcoder, refact, codeshell, gpt2)"
        ),
    })
}

fn strings<'f>(f: &'f GgufFile, key: &str) -> Result<Vec<&'f str>> {
    let items = f.require(key)?.as_array().ok_or_else(|| Error::new(format!("'{key}' must be an array")))?;
    items
        .iter()
        .enumerate()
        .map(|(i, v)| v.as_str().ok_or_else(|| Error::new(format!("'{key}' entry {i} is a {}, not a string", v.type_name()))))
        .collect()
}

fn token_types(f: &GgufFile, n: usize) -> Result<Vec<i64>> {
    let Some(v) = f.get("tokenizer.ggml.token_type") else {
        return Ok(vec![1; n]);
    };
    let items: &[Value] = v.as_array().ok_or_else(|| Error::new("'tokenizer.ggml.token_type' must be an array"))?;
    if items.len() != n {
        bail!("tokenizer.ggml.token_type has {} entries for {n} tokens", items.len());
    }
    items.iter().map(|v| v.as_i64().ok_or_else(|| Error::new("tokenizer.ggml.token_type must hold integers"))).collect()
}

/// The tokenizer.json equivalent of the file's tokenizer.
pub fn tokenizer_json(f: &GgufFile) -> Result<Vec<u8>> {
    let model = f.string("tokenizer.ggml.model")?;
    if model != "gpt2" {
        bail!(
            "the GGUF tokenizer is '{model}': this build reads byte-level BPE tokenizers ('gpt2', as in SmolLM2); SentencePiece ('llama') vocabularies are not supported yet"
        );
    }
    let pre = match f.get("tokenizer.ggml.pre") {
        Some(v) => v.as_str().ok_or_else(|| Error::new("'tokenizer.ggml.pre' must be a string"))?,
        None => "default",
    };
    let tokens = strings(f, "tokenizer.ggml.tokens")?;
    let merges = strings(f, "tokenizer.ggml.merges")?;
    let types = token_types(f, tokens.len())?;

    let mut vocab = serde_json::Map::with_capacity(tokens.len());
    let mut added = Vec::new();
    for (id, (&tok, &ty)) in tokens.iter().zip(&types).enumerate() {
        if vocab.insert(tok.to_string(), json!(id)).is_some() {
            bail!("the GGUF vocabulary lists the token {tok:?} twice");
        }
        if ty == TYPE_CONTROL || ty == TYPE_USER_DEFINED {
            added.push(json!({
                "id": id, "content": tok, "single_word": false, "lstrip": false, "rstrip": false,
                "normalized": false, "special": ty == TYPE_CONTROL,
            }));
        }
    }
    let unk = f.get("tokenizer.ggml.unknown_token_id").and_then(Value::as_u64).and_then(|i| tokens.get(i as usize));
    let json = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": null,
        "pre_tokenizer": pre_tokenizer(pre)?,
        "post_processor": null,
        "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
        "model": {
            "type": "BPE", "dropout": null, "unk_token": unk, "continuing_subword_prefix": null,
            "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
            "vocab": vocab, "merges": merges,
        },
    });
    Ok(serde_json::to_vec(&json).expect("JSON values always serialise"))
}

/// The file's tokenizer, its end-of-sequence token and (for ChatML
/// templates) its chat template.
pub fn tokenizer(f: &GgufFile) -> Result<BpeTokenizer> {
    // "gpt2" vocabularies are byte-level (tokenizer_json refuses the others),
    // so the JSON is parsed once, by the tokenizers crate.
    let inner = tokenizers::Tokenizer::from_bytes(tokenizer_json(f)?)
        .map_err(|e| Error::new(format!("the GGUF tokenizer cannot be built: {e}")))?;
    let mut tok = BpeTokenizer::from_tokenizer(inner, true);
    if let Some(v) = f.get("tokenizer.ggml.eos_token_id") {
        let id = v.as_u64().and_then(|i| u32::try_from(i).ok());
        let Some(id) = id else { bail!("tokenizer.ggml.eos_token_id must be a token id, got {v:?}") };
        tok.set_eos_id(Some(id))?;
    }
    if let Some(template) = f.get("tokenizer.chat_template").and_then(Value::as_str) {
        tok.set_chat_template(ChatTemplate::from_jinja(template, |t| tok.token_to_id(t).is_some()));
    }
    Ok(tok)
}
