//! Settings written as llama.cpp's command-line flags (what `llama_flags`
//! reads back): every sampling flag whose value differs from llama.cpp's
//! default, the four most read ones always, `--samplers` when the chain is not
//! llama.cpp's sequence, and a note for each thing llama.cpp cannot say.

use super::engines::{Engine, LLAMA_SEQUENCE};
use super::llama_flag_names::SAMPLER_NAMES;
use super::reading::show;
use super::{Dialect, Exported, Note};
use crate::rules::{PenaltyMode, StageKind, Ties};
use crate::settings::GenerationSettings;

/// The settings as llama.cpp flags, one per line (a shell continuation
/// after each), with every sampling flag whose value differs from
/// llama.cpp's default, the four most read ones always.
pub(super) fn export(settings: &GenerationSettings) -> Exported {
    let s = &settings.rules;
    let mut notes = Vec::new();
    let mut note = |key: &str, message: String| notes.push(Note { line: 0, key: key.to_string(), message });
    let mut lines: Vec<String> = Vec::new();
    let defaults = Engine::LlamaCpp.defaults();
    let default_of = |key: &str| defaults.iter().find(|(k, _, _)| *k == key).map(|(_, _, v)| v.clone());
    let ours = serde_json::to_value(settings).expect("settings serialise");
    let differs = |key: &str| match default_of(key) {
        Some(d) => ours[key] != d,
        None => ours[key] != serde_json::to_value(GenerationSettings::default()).expect("settings serialise")[key],
    };
    for (flag, key) in [("--temp", "temperature"), ("--top-k", "top_k"), ("--top-p", "top_p"), ("--min-p", "min_p")] {
        lines.push(format!("{flag} {}", show(&ours[key])));
    }
    for (flag, key) in [
        ("--typical", "typical_p"),
        ("--repeat-penalty", "repetition_penalty"),
        ("--presence-penalty", "presence_penalty"),
        ("--frequency-penalty", "frequency_penalty"),
        ("--top-nsigma", "top_n_sigma"),
        ("--xtc-probability", "xtc_probability"),
        ("--xtc-threshold", "xtc_threshold"),
        ("--dry-multiplier", "dry_multiplier"),
        ("--dry-base", "dry_base"),
        ("--dry-allowed-length", "dry_allowed_length"),
        ("--dry-penalty-last-n", "dry_penalty_last_n"),
        ("--mirostat", "mirostat"),
        ("--mirostat-lr", "mirostat_eta"),
        ("--mirostat-ent", "mirostat_tau"),
        ("--min-keep", "min_keep"),
    ] {
        if differs(key) {
            lines.push(format!("{flag} {}", show(&ours[key])));
        }
    }
    if s.penalty_window != 64 {
        let n = if s.penalty_window == 0 { "-1".to_string() } else { s.penalty_window.to_string() };
        lines.push(format!("--repeat-last-n {n}"));
    }
    if s.dry_sequence_breakers != crate::rules::RuleSettings::default().dry_sequence_breakers {
        if s.dry_sequence_breakers.is_empty() {
            lines.push("--dry-sequence-breaker none".to_string());
        }
        for b in &s.dry_sequence_breakers {
            lines.push(format!("--dry-sequence-breaker {}", quote(&b.replace('\n', "\\n").replace('\t', "\\t"))));
        }
    }
    for (id, b) in &s.logit_bias {
        lines.push(format!("--logit-bias {id}{}{}", if *b < 0.0 { "-" } else { "+" }, b.abs()));
    }
    for id in &s.banned {
        lines.push(format!("--logit-bias {id}-inf"));
    }
    // The sequence: the chain's stages llama.cpp has, in the chain's order.
    let stages = s.stages();
    let seq: Vec<StageKind> = stages.iter().copied().filter(|k| SAMPLER_NAMES.iter().any(|(_, _, n)| n == k)).collect();
    if s.mirostat == 0 && seq != LLAMA_SEQUENCE {
        let names: Vec<&str> = seq.iter().filter_map(|k| SAMPLER_NAMES.iter().find(|(_, _, n)| n == k).map(|(n, _, _)| *n)).collect();
        lines.push(format!("--samplers {}", quote(&names.join(";"))));
    }
    if s.mirostat != 0 {
        for kind in LLAMA_SEQUENCE.iter().filter(|k| **k != StageKind::Temperature && k.is_on(s)) {
            note(kind.name(), format!("{}: llama.cpp's mirostat replaces the sampler sequence, so it would not run", kind.spec().label));
        }
    }
    for kind in stages.iter().filter(|k| k.is_on(s)) {
        let expressible = SAMPLER_NAMES.iter().any(|(_, _, n)| n == kind) || matches!(kind, StageKind::BiasBans | StageKind::Mirostat);
        if !expressible {
            note(kind.name(), format!("{}: llama.cpp has no such sampler: left out", kind.spec().label));
        }
    }
    if StageKind::BiasBans.is_on(s) && stages.iter().position(|k| *k == StageKind::BiasBans).is_some_and(|i| stages[..i].iter().any(|k| k.is_on(s))) {
        note("chain", "llama.cpp applies the logit bias before every other sampler; this chain has stages before it".to_string());
    }
    if s.ties == Ties::KeepTied && s.top_k != 0 {
        note("ties", "ties keep_tied: llama.cpp's top-k cuts a tie by its sort; left out".to_string());
    }
    if s.penalty_mode == PenaltyMode::PerOccurrence && s.repetition_penalty != 1.0 {
        note("penalty_mode", "per_occurrence: llama.cpp applies the repeat penalty once per token; left out".to_string());
    }
    lines.push(format!("--seed {}", settings.seed));
    lines.push(format!("-n {}", settings.max_new));
    for stop in &settings.stop {
        lines.push(format!("-r {}", quote(stop)));
    }
    Exported { dialect: Dialect::LlamaCpp, text: lines.join(" \\\n"), notes }
}

/// A word as a shell reads it back: bare when it is plain, else quoted.
fn quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.,:;/+".contains(c)) && !s.contains(';') {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

