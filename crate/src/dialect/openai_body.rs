//! An OpenAI-style request body's sampling fields, read and written: the
//! OpenAI API's own (temperature then top-p, penalties over what was said),
//! vLLM's extra fields (top_k, min_p, repetition_penalty, in vLLM's order)
//! and llama.cpp server's (its whole sampler set, with llama.cpp's defaults
//! and chain). The same body means different things to the three servers:
//! a body with a field only llama.cpp's server reads is read as llama.cpp's
//! server reads it, and `read_as` says which reading was taken.

use serde_json::{Value, json};

use super::engines::Engine;
use super::json_text::object_entries;
use super::llama_flag_names::{edit_distance, flag_of};
use super::llama_flags::{FlagState, flag_pairs, logit_bias};
use super::reading::{Reading, show};
use super::{Dialect, Exported, Imported, Note};
use crate::error::{Error, Result};
use crate::rules::{Order, StageKind, Ties};
use crate::settings::GenerationSettings;

/// The OpenAI API's sampling fields.
const OPENAI: &[&str] = &["temperature", "top_p", "presence_penalty", "frequency_penalty", "logit_bias", "seed", "max_tokens", "max_completion_tokens", "stop", "n"];
/// vLLM's extra sampling fields.
const VLLM: &[&str] = &["top_k", "min_p", "repetition_penalty"];
/// Fields only llama.cpp's server reads, with the flag that means the same.
const LLAMA_SERVER: &[(&str, &str)] = &[
    ("typical_p", "--typical"),
    ("repeat_penalty", "--repeat-penalty"),
    ("repeat_last_n", "--repeat-last-n"),
    ("dry_multiplier", "--dry-multiplier"),
    ("dry_base", "--dry-base"),
    ("dry_allowed_length", "--dry-allowed-length"),
    ("dry_penalty_last_n", "--dry-penalty-last-n"),
    ("xtc_probability", "--xtc-probability"),
    ("xtc_threshold", "--xtc-threshold"),
    ("mirostat", "--mirostat"),
    ("mirostat_tau", "--mirostat-ent"),
    ("mirostat_eta", "--mirostat-lr"),
    ("top_n_sigma", "--top-nsigma"),
    ("min_keep", "--min-keep"),
    ("n_predict", "-n"),
    ("dynatemp_range", "--dynatemp-range"),
    ("dynatemp_exponent", "--dynatemp-exp"),
];
/// Fields of the three that choose no rule here, with why.
const UNEXPRESSED: &[(&str, &str)] = &[
    ("n", "one continuation a run here (the compare panel runs several)"),
    ("best_of", "one continuation a run here"),
    ("min_tokens", "no minimum length here"),
    ("ignore_eos", "generation here always stops at the end-of-text token"),
    ("use_beam_search", "beam search runs from the Beam button"),
    ("length_penalty", "beam search's own setting (alpha)"),
    ("stop_token_ids", "stops here are strings"),
    ("bad_words", "banned words are token ids here"),
    ("allowed_token_ids", "no allow-list here: ban the others"),
    ("grammar", "grammars are not rules here"),
    ("json_schema", "grammars are not rules here"),
    ("response_format", "grammars are not rules here"),
    ("guided_json", "grammars are not rules here"),
    ("guided_regex", "grammars are not rules here"),
    ("guided_choice", "grammars are not rules here"),
    ("guided_grammar", "grammars are not rules here"),
    ("penalize_nl", "llama.cpp removed it; no such switch here"),
    ("dry_sequence_breakers", ""),
    ("samplers", ""),
];
/// Fields that are not sampling settings.
const NOT_SAMPLING: &[&str] = &[
    "model", "messages", "prompt", "stream", "stream_options", "user", "logprobs", "top_logprobs", "echo", "suffix", "tools",
    "tool_choice", "parallel_tool_calls", "service_tier", "store", "metadata", "modalities", "audio", "reasoning_effort",
    "prediction", "web_search_options", "functions", "function_call", "n_probs", "cache_prompt", "id_slot", "n_keep",
    "t_max_predict_ms", "post_sampling_probs", "return_tokens", "timings_per_token", "n_indent", "lora", "return_progress",
    "include_stop_str_in_output", "skip_special_tokens", "spaces_between_special_tokens", "truncate_prompt_tokens",
    "prompt_logprobs", "add_generation_prompt", "chat_template", "chat_template_kwargs", "continue_final_message", "documents",
    "echo", "priority", "request_id", "stop_sequences", "slot_id", "image_data", "input_extra",
];

fn known(key: &str) -> bool {
    OPENAI.contains(&key)
        || VLLM.contains(&key)
        || LLAMA_SERVER.iter().any(|(k, _)| *k == key)
        || UNEXPRESSED.iter().any(|(k, _)| *k == key)
        || NOT_SAMPLING.contains(&key)
}

fn nearest(key: &str) -> Option<&'static str> {
    OPENAI.iter().chain(VLLM).copied().chain(LLAMA_SERVER.iter().map(|(k, _)| *k)).map(|k| (edit_distance(k, key), k)).filter(|(d, _)| *d <= 2).min().map(|(_, k)| k)
}

/// A JSON value as the text a flag would take.
fn as_flag_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

pub(super) fn import(text: &str, base: &GenerationSettings) -> Result<Imported> {
    let entries = object_entries(text)?;
    for (key, _, line) in &entries {
        if !known(key) {
            let hint = nearest(key).map(|n| format!(" (did you mean {n}?)")).unwrap_or_default();
            crate::bail!("line {line}: '{key}' is not a sampling field of OpenAI's, vLLM's or llama.cpp server's requests{hint}");
        }
    }
    let server = entries.iter().any(|(k, _, _)| LLAMA_SERVER.iter().any(|(s, _)| s == k) || k == "samplers" || k == "dry_sequence_breakers");
    let vllm = !server && entries.iter().any(|(k, v, _)| VLLM.contains(&k.as_str()) && !v.is_null());
    if server {
        return import_llama_server(&entries, base);
    }
    let engine = if vllm { Engine::Vllm } else { Engine::OpenAi };
    let mut r = Reading::new(engine, base);
    for (key, value, line) in &entries {
        let (key, line) = (key.as_str(), *line);
        match key {
            "temperature" | "top_p" | "presence_penalty" | "frequency_penalty" | "min_p" | "repetition_penalty" => {
                if value.is_null() {
                    continue;
                }
                if !value.is_number() {
                    crate::bail!("line {line}: {key} {value}: expected a number");
                }
                r.set(line, key, key, value.clone())?;
            }
            "top_k" => match value.as_i64() {
                Some(k) if k <= 0 => r.set(line, key, "top_k", json!(0))?,
                Some(k) => r.set(line, key, "top_k", json!(k))?,
                None if value.is_null() => {}
                None => crate::bail!("line {line}: top_k {value}: expected a whole number (-1 or 0 = off)"),
            },
            "logit_bias" => {
                let mut biases = Vec::new();
                let Some(map) = value.as_object() else {
                    crate::bail!("line {line}: logit_bias: expected an object of token id to bias, e.g. {{\"50256\": -100}}");
                };
                for (id, b) in map {
                    let id: u32 = id.parse().map_err(|_| Error::new(format!("line {line}: logit_bias: '{id}' is not a token id")))?;
                    let b = b.as_f64().ok_or_else(|| Error::new(format!("line {line}: logit_bias for {id}: {b} is not a number")))?;
                    crate::rules::rule_field("logit_bias").expect("logit_bias has a field").check(&format!("line {line}: logit_bias for token {id}"), b)?;
                    biases.push((id, b));
                }
                r.put("logit_bias", json!(biases));
            }
            "seed" => match value.as_u64() {
                Some(s) => r.set(line, key, "seed", json!(s))?,
                None if value.is_null() => {}
                None => crate::bail!("line {line}: seed {value}: expected a whole number at least 0"),
            },
            "max_tokens" | "max_completion_tokens" => r.set_max_new(line, key, value)?,
            "stop" => r.set_stop(line, key, value)?,
            _ => other_field(&mut r, key, value, line),
        }
    }
    if r.get("presence_penalty") != &json!(0.0) || r.get("frequency_penalty") != &json!(0.0) {
        r.note(0, "penalty_window", "presence and frequency penalties: OpenAI and vLLM count the generated tokens only; here every token so far, the prompt's too");
    }
    let read_as = if vllm { "an OpenAI-style request with vLLM's fields (its order: temperature, then top-k, top-p, min-p)" } else { "an OpenAI API request" };
    r.finish(Dialect::Openai, read_as.to_string())
}

fn other_field(r: &mut Reading, key: &str, value: &Value, line: usize) {
    if let Some((_, why)) = UNEXPRESSED.iter().find(|(k, _)| *k == key) {
        if !value.is_null() && value != &json!(false) && value != &json!(1) {
            r.note(line, key, format!("{key} {}: {why}: ignored", show(value)));
        }
    } else {
        r.note(line, key, format!("{key}: not a sampling setting: ignored"));
    }
}

/// A body with llama.cpp server's fields: its defaults, its chain, each
/// field read as the flag that means the same.
fn import_llama_server(entries: &[super::json_text::Entry], base: &GenerationSettings) -> Result<Imported> {
    let mut r = Reading::new(Engine::LlamaServer, base);
    let mut state = FlagState::default();
    for (key, value, line) in entries {
        let (key, line) = (key.as_str(), *line);
        if value.is_null() {
            continue;
        }
        let flag = match key {
            "temperature" => Some("--temp"),
            "top_k" => Some("--top-k"),
            "top_p" => Some("--top-p"),
            "min_p" => Some("--min-p"),
            "presence_penalty" => Some("--presence-penalty"),
            "frequency_penalty" => Some("--frequency-penalty"),
            "repetition_penalty" => Some("--repeat-penalty"),
            "seed" => Some("--seed"),
            "max_tokens" | "max_completion_tokens" => Some("-n"),
            k => LLAMA_SERVER.iter().find(|(s, _)| *s == k).map(|(_, f)| *f),
        };
        if let Some(flag) = flag {
            let f = flag_of(flag).expect("a flag of the table");
            state.apply(&mut r, f, key, as_flag_value(value), line)?;
            continue;
        }
        match key {
            "samplers" => {
                let names = match value {
                    Value::String(s) => s.clone(),
                    Value::Array(a) => a.iter().map(|v| v.as_str().unwrap_or("?").to_string()).collect::<Vec<_>>().join(";"),
                    _ => crate::bail!("line {line}: samplers: expected a list of sampler names"),
                };
                state.apply(&mut r, flag_of("--samplers").expect("a flag"), key, names, line)?;
            }
            "dry_sequence_breakers" => {
                let list = value.as_array().ok_or_else(|| Error::new(format!("line {line}: dry_sequence_breakers: expected a list of strings")))?;
                if list.is_empty() {
                    state.apply(&mut r, flag_of("--dry-sequence-breaker").expect("a flag"), key, "none".into(), line)?;
                }
                for b in list {
                    let b = b.as_str().ok_or_else(|| Error::new(format!("line {line}: dry_sequence_breakers: {b} is not a string")))?;
                    state.apply(&mut r, flag_of("--dry-sequence-breaker").expect("a flag"), key, b.replace('\n', "\\n"), line)?;
                }
            }
            "logit_bias" => {
                let pairs: Vec<(String, Value)> = match value {
                    Value::Object(m) => m.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                    Value::Array(a) => a
                        .iter()
                        .map(|p| match p.as_array().map(Vec::as_slice) {
                            Some([id, b]) => Ok((as_flag_value(id), b.clone())),
                            _ => Err(Error::new(format!("line {line}: logit_bias: each entry is [token id, bias], got {p}"))),
                        })
                        .collect::<Result<_>>()?,
                    _ => crate::bail!("line {line}: logit_bias: expected [[id, bias], ...] or {{\"id\": bias}}"),
                };
                for (id, b) in pairs {
                    let amount = match b {
                        Value::Bool(false) => "-inf".to_string(),
                        Value::Number(n) => {
                            let x = n.as_f64().unwrap_or(0.0);
                            if x < 0.0 { format!("{x}") } else { format!("+{x}") }
                        }
                        b => crate::bail!("line {line}: logit_bias for {id}: {b} is not a number or false"),
                    };
                    state.apply(&mut r, flag_of("--logit-bias").expect("a flag"), key, format!("{id}{amount}"), line)?;
                }
            }
            "stop" => r.set_stop(line, key, value)?,
            _ => other_field(&mut r, key, value, line),
        }
    }
    state.finish(&mut r)?;
    r.finish(Dialect::Openai, "a request to llama.cpp's server (its defaults and sampler chain)".to_string())
}

/// The settings as an OpenAI-style request body: OpenAI's fields, and
/// vLLM's (which llama.cpp's server also reads) for top-k, min-p and the
/// repetition penalty when they are on.
pub(super) fn export(settings: &GenerationSettings) -> Exported {
    if settings.rules.order == Order::LlamaCpp {
        return export_llama_server(settings);
    }
    let s = &settings.rules;
    let mut notes = Vec::new();
    let mut note = |key: &str, message: String| notes.push(Note { line: 0, key: key.to_string(), message });
    let mut out = serde_json::Map::new();
    out.insert("temperature".into(), json!(s.temperature));
    out.insert("top_p".into(), json!(s.top_p));
    if s.presence_penalty != 0.0 {
        out.insert("presence_penalty".into(), json!(s.presence_penalty));
    }
    if s.frequency_penalty != 0.0 {
        out.insert("frequency_penalty".into(), json!(s.frequency_penalty));
    }
    if !(-2.0..=2.0).contains(&s.presence_penalty) || !(-2.0..=2.0).contains(&s.frequency_penalty) {
        note("presence_penalty", "OpenAI's API takes penalties in [-2, 2]; vLLM and llama.cpp's server take more".to_string());
    }
    let mut bias = serde_json::Map::new();
    for (id, b) in &s.logit_bias {
        bias.insert(id.to_string(), json!(b));
    }
    for id in &s.banned {
        bias.insert(id.to_string(), json!(-100));
    }
    if !s.banned.is_empty() {
        note("banned", "banned tokens: written as a logit bias of -100, OpenAI's strongest".to_string());
    }
    if !bias.is_empty() {
        out.insert("logit_bias".into(), Value::Object(bias));
    }
    out.insert("seed".into(), json!(settings.seed));
    out.insert("max_tokens".into(), json!(settings.max_new));
    if !settings.stop.is_empty() {
        out.insert("stop".into(), json!(settings.stop));
    }
    let mut extras = Vec::new();
    if s.top_k != 0 {
        out.insert("top_k".into(), json!(s.top_k));
        extras.push("top_k");
    }
    if s.min_p > 0.0 {
        out.insert("min_p".into(), json!(s.min_p));
        extras.push("min_p");
    }
    if s.repetition_penalty != 1.0 {
        out.insert("repetition_penalty".into(), json!(s.repetition_penalty));
        extras.push("repetition_penalty");
    }
    if !extras.is_empty() {
        note("top_k", format!("{}: vLLM's fields (llama.cpp's server reads them too); OpenAI's API refuses them", extras.join(", ")));
    }
    let openai: &[StageKind] = if extras.is_empty() { Order::OpenAi.preset() } else { &super::engines::VLLM_CHAIN };
    let stages = s.stages();
    for kind in stages.iter().filter(|k| k.is_on(s)) {
        if !openai.contains(kind) {
            note(kind.name(), format!("{}: not a field of OpenAI's or vLLM's requests: left out", kind.spec().label));
        }
    }
    let on: Vec<StageKind> = stages.iter().copied().filter(|k| k.is_on(s) && openai.contains(k)).collect();
    if !on.windows(2).all(|w| openai.iter().position(|k| *k == w[0]) < openai.iter().position(|k| *k == w[1])) {
        note("chain", "the chain's order: these servers apply temperature before top-k, top-p and min-p".to_string());
    }
    if s.penalty_window != 0 && (s.presence_penalty != 0.0 || s.frequency_penalty != 0.0 || s.repetition_penalty != 1.0) {
        note("penalty_window", format!("penalty_window {}: these servers' penalties have no window", s.penalty_window));
    }
    if s.ties == Ties::KeepTied && s.top_k != 0 {
        note("ties", "ties keep_tied: these servers' top-k cuts a tie by their sort".to_string());
    }
    let text = serde_json::to_string_pretty(&Value::Object(out)).expect("json serialises");
    Exported { dialect: Dialect::Openai, text, notes }
}

/// Settings in llama.cpp's order (temperature last) as a request to
/// llama.cpp's server, whose fields say what OpenAI's and vLLM's cannot: the
/// same settings the llama.cpp flags export says, field by field.
fn export_llama_server(settings: &GenerationSettings) -> Exported {
    let flags = super::llama_export::export(settings);
    let mut out = serde_json::Map::new();
    let (mut bias, mut breakers, mut stops) = (Vec::new(), None::<Vec<String>>, Vec::new());
    for (flag, value) in flag_pairs(&flags.text) {
        match flag.as_str() {
            "--samplers" => {
                out.insert("samplers".into(), json!(value.split(';').collect::<Vec<_>>()));
            }
            "--logit-bias" => match logit_bias(0, &value) {
                Ok(Some((id, b))) if b == f64::NEG_INFINITY => bias.push(json!([id, false])),
                Ok(Some((id, b))) => bias.push(json!([id, b])),
                _ => {}
            },
            "--dry-sequence-breaker" => {
                let list = breakers.get_or_insert_with(Vec::new);
                if value != "none" {
                    list.push(value.replace("\\n", "\n").replace("\\t", "\t"));
                }
            }
            "-r" => stops.push(value),
            flag => {
                let key = match flag {
                    "--temp" => "temperature",
                    "--top-k" => "top_k",
                    "--top-p" => "top_p",
                    "--min-p" => "min_p",
                    "--presence-penalty" => "presence_penalty",
                    "--frequency-penalty" => "frequency_penalty",
                    "--seed" => "seed",
                    f => match LLAMA_SERVER.iter().find(|(_, g)| *g == f) {
                        Some((k, _)) => k,
                        None => continue,
                    },
                };
                out.insert(key.into(), serde_json::from_str(&value).unwrap_or(Value::String(value)));
            }
        }
    }
    if !bias.is_empty() {
        out.insert("logit_bias".into(), Value::Array(bias));
    }
    if let Some(b) = breakers {
        out.insert("dry_sequence_breakers".into(), json!(b));
    }
    if !stops.is_empty() {
        out.insert("stop".into(), json!(stops));
    }
    let mut notes = flags.notes;
    notes.push(Note {
        line: 0,
        key: "order".to_string(),
        message: "llama.cpp's order (temperature last): written for llama.cpp's server; OpenAI and vLLM apply temperature first".to_string(),
    });
    let text = serde_json::to_string_pretty(&Value::Object(out)).expect("json serialises");
    Exported { dialect: Dialect::Openai, text, notes }
}
