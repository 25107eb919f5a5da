//! Hugging Face transformers' generation settings: a `generation_config.json`
//! or `generate()`'s keyword arguments, read and written. `generate()` is
//! greedy unless `do_sample` is true, and then its `GenerationConfig`
//! defaults apply (top_k 50, temperature 1); its warpers keep every token
//! tied at a cut and its repetition penalty looks at the whole input.

use serde_json::{Value, json};

use super::engines::Engine;
use super::json_text::{Entry, kwargs_entries, looks_like_kwargs, object_entries};
use super::llama_flag_names::edit_distance;
use super::reading::{Reading, show};
use super::{Dialect, Exported, Imported, Note};
use crate::error::Result;
use crate::rules::{Order, PenaltyMode, RuleSettings, StageKind, Ties};
use crate::settings::{GenerationSettings, MAX_ALPHA, MAX_BEAMS};

/// Keys read into a rule: `(key, our key)`; the warpers (`do_sample` only).
const WARPERS: &[&str] = &["temperature", "top_k", "top_p", "min_p", "typical_p", "epsilon_cutoff", "eta_cutoff"];
const PROCESSORS: &[&str] = &["repetition_penalty", "no_repeat_ngram_size"];

/// Keys `GenerationConfig` has that choose no rule here: each with why.
const UNEXPRESSED: &[(&str, &str)] = &[
    ("min_new_tokens", "no minimum length here"),
    ("min_length", "no minimum length here"),
    ("max_length", "it counts the prompt too: set max_new_tokens"),
    ("early_stopping", "beam search here stops each beam at its end of text"),
    ("max_time", "no time limit here"),
    ("num_return_sequences", "one sequence a run here (the compare panel runs several)"),
    ("renormalize_logits", "every stage here is renormalised already"),
    ("guidance_scale", "no classifier-free guidance here"),
    ("diversity_penalty", "no group beam search here"),
    ("num_beam_groups", "no group beam search here"),
    ("penalty_alpha", "no contrastive search here"),
    ("exponential_decay_length_penalty", "no length penalty on the end-of-text token here"),
    ("begin_suppress_tokens", "no suppression at the first step only here"),
    ("forced_bos_token_id", "no forced tokens here"),
    ("forced_eos_token_id", "no forced tokens here"),
    ("forced_decoder_ids", "no forced tokens here"),
    ("encoder_repetition_penalty", "no encoder here"),
    ("encoder_no_repeat_ngram_size", "no encoder here"),
    ("constraints", "no constrained beam search here"),
    ("force_words_ids", "no constrained beam search here"),
    ("dola_layers", "no DoLa decoding here"),
    ("top_h", "no top-H here"),
    ("watermarking_config", "no watermarking here"),
    ("prompt_lookup_num_tokens", "no speculative decoding here"),
    ("assistant_model", "no speculative decoding here"),
    ("num_assistant_tokens", "no speculative decoding here"),
    ("token_healing", "no token healing here"),
];

/// Keys that are not decoding settings (ids, bookkeeping, outputs).
const NOT_DECODING: &[&str] = &[
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "decoder_start_token_id",
    "transformers_version",
    "_from_model_config",
    "output_attentions",
    "output_hidden_states",
    "output_scores",
    "output_logits",
    "return_dict_in_generate",
    "remove_invalid_values",
    "cache_implementation",
    "cache_config",
    "low_memory",
    "compile_config",
    "disable_compile",
    "return_legacy_cache",
    "is_assistant",
    "trust_remote_code",
    "num_assistant_tokens_schedule",
    "assistant_confidence_threshold",
];

/// Keys only `generate()` reads: a JSON object with one is Hugging Face's.
const ONLY_HF: &[&str] = &[
    "do_sample",
    "max_new_tokens",
    "num_beams",
    "no_repeat_ngram_size",
    "epsilon_cutoff",
    "eta_cutoff",
    "sequence_bias",
    "bad_words_ids",
    "suppress_tokens",
    "transformers_version",
    "_from_model_config",
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
];

pub(super) fn looks_like_hf(text: &str) -> bool {
    looks_like_kwargs(text) || ONLY_HF.iter().any(|k| text.contains(&format!("\"{k}\"")))
}

fn known(key: &str) -> bool {
    WARPERS.contains(&key)
        || PROCESSORS.contains(&key)
        || UNEXPRESSED.iter().any(|(k, _)| *k == key)
        || NOT_DECODING.contains(&key)
        || ["do_sample", "sequence_bias", "bad_words_ids", "suppress_tokens", "max_new_tokens", "num_beams", "length_penalty", "stop_strings", "use_cache"]
            .contains(&key)
}

fn nearest(key: &str) -> Option<&'static str> {
    WARPERS.iter().chain(PROCESSORS).chain(ONLY_HF).copied().map(|k| (edit_distance(k, key), k)).filter(|(d, _)| *d <= 2).min().map(|(_, k)| k)
}

fn ids(line: usize, key: &str, v: &Value) -> Result<Vec<u32>> {
    let bad = || crate::error::Error::new(format!("line {line}: {key}: expected a list of token ids, got {v}"));
    v.as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|x| x.as_u64().filter(|&n| n <= u32::MAX as u64).map(|n| n as u32).ok_or_else(bad))
        .collect()
}

pub(super) fn import(text: &str, base: &GenerationSettings) -> Result<Imported> {
    let entries: Vec<Entry> = if text.trim_start().starts_with('{') { object_entries(text)? } else { kwargs_entries(text)? };
    for (key, _, line) in &entries {
        if !known(key) {
            let hint = nearest(key).map(|n| format!(" (did you mean {n}?)")).unwrap_or_default();
            crate::bail!("line {line}: '{key}' is not a Hugging Face generation setting{hint}");
        }
    }
    let get = |k: &str| entries.iter().find(|(key, _, _)| key == k);
    let sampling = match get("do_sample") {
        Some((_, Value::Bool(b), _)) => *b,
        Some((_, Value::Null, _)) | None => false,
        Some((_, v, line)) => crate::bail!("line {line}: do_sample {v}: expected true or false"),
    };
    let engine = if sampling { Engine::HfSampling } else { Engine::HfGreedy };
    let mut r = Reading::new(engine, base);
    let mut sequence_bias: Vec<(Vec<u32>, f64)> = Vec::new();
    let mut banned: Vec<u32> = Vec::new();
    for (key, value, line) in &entries {
        let (key, line) = (key.as_str(), *line);
        if WARPERS.contains(&key) && !sampling {
            if !value.is_null() {
                r.note(line, key, format!("{key} {}: do_sample is not true, so generate() is greedy and ignores it", show(value)));
            }
            continue;
        }
        match key {
            "do_sample" => {}
            "temperature" | "top_p" | "min_p" | "typical_p" | "epsilon_cutoff" | "eta_cutoff" | "repetition_penalty" | "top_k" | "no_repeat_ngram_size" => {
                let off = serde_json::to_value(RuleSettings::default()).expect("settings serialise")[key].clone();
                let v = if value.is_null() { off } else { value.clone() };
                if !v.is_number() {
                    crate::bail!("line {line}: {key} {value}: expected a number");
                }
                if key == "temperature" && v.as_f64() == Some(0.0) {
                    crate::bail!("line {line}: temperature 0 with do_sample true: transformers refuses it (it must be strictly positive); for greedy, set do_sample false");
                }
                if key == "top_k" && v.as_f64().is_some_and(|k| k < 0.0) {
                    crate::bail!("line {line}: top_k {value}: transformers takes 0 (off) or a positive whole number");
                }
                r.set(line, key, key, v)?;
            }
            "sequence_bias" => {
                if let Some(list) = value.as_array() {
                    for pair in list {
                        let (seq, b) = match pair.as_array().map(Vec::as_slice) {
                            Some([seq, b]) => (seq, b),
                            _ => crate::bail!("line {line}: sequence_bias: each entry is [[token ids], bias], got {pair}"),
                        };
                        let b = b.as_f64().ok_or_else(|| crate::error::Error::new(format!("line {line}: sequence_bias: {b} is not a number")))?;
                        let field = crate::rules::rule_field("sequence_bias").expect("sequence_bias has a field");
                        field.check(&format!("line {line}: sequence_bias for {seq}"), b)?;
                        sequence_bias.push((ids(line, key, seq)?, b));
                    }
                } else if !value.is_null() {
                    crate::bail!("line {line}: sequence_bias: expected a list of [[token ids], bias]");
                }
            }
            "bad_words_ids" => {
                for seq in value.as_array().into_iter().flatten() {
                    let seq = ids(line, key, seq)?;
                    if let [id] = seq[..] {
                        banned.push(id);
                    } else {
                        r.note(line, key, format!("bad_words_ids {seq:?}: a banned sequence of several tokens has no rule here: left out"));
                    }
                }
            }
            "suppress_tokens" => {
                if !value.is_null() {
                    banned.extend(ids(line, key, value)?);
                }
            }
            "max_new_tokens" => r.set_max_new(line, key, value)?,
            "num_beams" => match value.as_u64() {
                Some(1) | None if value.is_null() || value == &json!(1) => {}
                Some(n) if (2..=MAX_BEAMS as u64).contains(&n) => {
                    r.set(line, key, "beams", json!(n))?;
                    r.note(line, key, format!("num_beams {n}: beam search runs from the Beam button (nexttoken generate --beams {n}); a run samples"));
                }
                _ => crate::bail!("line {line}: num_beams {value}: beam search here keeps 1 to {MAX_BEAMS} beams"),
            },
            "length_penalty" => match value.as_f64() {
                Some(a) if (0.0..=MAX_ALPHA).contains(&a) => r.set(line, key, "alpha", json!(a))?,
                _ if value.is_null() => {}
                _ => r.note(line, key, format!("length_penalty {value}: beam search here takes 0 to {MAX_ALPHA}: left out")),
            },
            "stop_strings" => r.set_stop(line, key, value)?,
            "use_cache" => r.set(line, key, "use_cache", json!(value.as_bool().unwrap_or(true)))?,
            _ => {
                if let Some((_, why)) = UNEXPRESSED.iter().find(|(k, _)| *k == key) {
                    if !value.is_null() {
                        r.note(line, key, format!("{key} {}: {why}: ignored", show(value)));
                    }
                } else {
                    r.note(line, key, format!("{key}: not a decoding setting: ignored"));
                }
            }
        }
    }
    if !sequence_bias.is_empty() {
        r.put("sequence_bias", json!(sequence_bias));
    }
    if !banned.is_empty() {
        banned.sort_unstable();
        banned.dedup();
        r.put("banned", json!(banned));
    }
    let read_as = if sampling { "Hugging Face generate() with do_sample true" } else { "Hugging Face generate() with do_sample false: greedy" };
    r.finish(Dialect::Hf, read_as.to_string())
}

/// The settings as a `generation_config.json`.
pub(super) fn export(settings: &GenerationSettings) -> Exported {
    let s = &settings.rules;
    let mut notes = Vec::new();
    let mut note = |key: &str, message: String| notes.push(Note { line: 0, key: key.to_string(), message });
    let mut out = serde_json::Map::new();
    let sampling = s.temperature != 0.0;
    out.insert("do_sample".into(), json!(sampling));
    if sampling {
        out.insert("temperature".into(), json!(s.temperature));
        out.insert("top_k".into(), json!(s.top_k));
        out.insert("top_p".into(), json!(s.top_p));
        for (key, on) in [("min_p", s.min_p > 0.0), ("typical_p", s.typical_p < 1.0), ("epsilon_cutoff", s.epsilon_cutoff > 0.0), ("eta_cutoff", s.eta_cutoff > 0.0)] {
            if on {
                out.insert(key.into(), serde_json::to_value(s).expect("settings serialise")[key].clone());
            }
        }
        if s.min_p > 1.0 {
            note("min_p", format!("min_p {}: transformers takes at most 1", s.min_p));
        }
    }
    if s.repetition_penalty != 1.0 {
        out.insert("repetition_penalty".into(), json!(s.repetition_penalty));
        if s.penalty_window != 0 {
            note("penalty_window", format!("penalty_window {}: transformers' repetition_penalty looks at the whole input", s.penalty_window));
        }
        if s.penalty_mode == PenaltyMode::PerOccurrence {
            note("penalty_mode", "per_occurrence: transformers penalises each token once".to_string());
        }
    }
    if s.no_repeat_ngram_size > 0 {
        out.insert("no_repeat_ngram_size".into(), json!(s.no_repeat_ngram_size));
    }
    let mut sequences: Vec<(Vec<u32>, f64)> = s.sequence_bias.clone();
    sequences.extend(s.logit_bias.iter().map(|&(id, b)| (vec![id], b)));
    if !sequences.is_empty() {
        out.insert("sequence_bias".into(), json!(sequences));
        if !s.logit_bias.is_empty() {
            note("logit_bias", "logit_bias: written as sequence_bias of one token each (transformers' own logit bias)".to_string());
        }
    }
    if !s.banned.is_empty() {
        out.insert("suppress_tokens".into(), json!(s.banned));
    }
    out.insert("max_new_tokens".into(), json!(settings.max_new));
    if !settings.stop.is_empty() {
        out.insert("stop_strings".into(), json!(settings.stop));
    }
    for kind in s.stages().iter().filter(|k| k.is_on(s)) {
        if matches!(kind, StageKind::Penalties) && (s.presence_penalty != 0.0 || s.frequency_penalty != 0.0) {
            note("presence_penalty", "presence and frequency penalties: transformers has none: left out".to_string());
        }
        if matches!(kind, StageKind::Dry | StageKind::Xtc | StageKind::TopNSigma | StageKind::Mirostat) {
            note(kind.name(), format!("{}: transformers has no such processor: left out", kind.spec().label));
        }
        if matches!(kind, StageKind::TypicalPLlama) {
            note(kind.name(), "typical (llama.cpp's): written as transformers' typical_p, which sorts and cuts a little differently".to_string());
        }
    }
    let stages = s.stages();
    let hf = Order::HuggingFace.preset();
    let on: Vec<StageKind> = stages.iter().copied().filter(|k| k.is_on(s) && *k != StageKind::TypicalPLlama).collect();
    let in_hf_order = on.windows(2).all(|w| hf.iter().position(|k| *k == w[0]) < hf.iter().position(|k| *k == w[1]));
    if sampling && !in_hf_order {
        note("chain", "the chain's order: transformers runs its processors in its own order (temperature before the truncations)".to_string());
    }
    if s.ties == Ties::ById && s.top_k != 0 && sampling {
        note("ties", "ties by_id: transformers' top-k keeps every token tied with the k-th".to_string());
    }
    if s.min_keep > 1 {
        note("min_keep", format!("min_keep {}: generation_config has no min_tokens_to_keep (a warper's argument)", s.min_keep));
    }
    note("seed", format!("seed {}: transformers takes it in code (set_seed({})), not in the config", settings.seed, settings.seed));
    let text = serde_json::to_string_pretty(&Value::Object(out)).expect("json serialises");
    Exported { dialect: Dialect::Hf, text, notes }
}
