//! The settings schema: every setting's default, allowed range and control
//! on the page, read off the same fields (`rules::RULE_FIELDS`), constants
//! and `Default` impls that `validate` and the engine use, with every
//! stage's spec and the course constants the page offers. On
//! the top floor beside `cli` and `wasm`: it reads the engine's modules
//! (rules, settings, models, training), none of which reads it. The CLI's `nexttoken settings` prints it; the page
//! imports it from `www/state/engine-settings.js`, a module generated from
//! it (`nexttoken settings --js`), which `crate/tests/settings_table.rs`
//! proves equal to this, so the page holds no copy of its own.
//!
//! Also here: the course constants the page offers (lesson 21's ten logits,
//! lesson 18's retraining), so the page takes them from the engine too.

use serde::Serialize;

use crate::settings::{ContextPolicy, GenerationSettings, MAX_ALPHA, MAX_BEAMS, MAX_NEW, MAX_SEED, MAX_TOP_N};
use crate::kv_cache::KvPrecision;
use crate::report::StopReason;
use crate::models::LESSON21_LOGITS;
use crate::rules::{ChainPreset, Control, Field, Group, Order, PenaltyMode, RULE_FIELDS, Range, StageInfo, StageKind, Ties};
use crate::train::bigram::{LESSON_SEED, LESSON_STEPS};

/// The range of one numeric setting.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NumberRange {
    /// The field of `GenerationSettings` (as serialised); `logit_bias` is
    /// the range of each bias amount.
    pub key: &'static str,
    pub min: f64,
    pub max: f64,
    /// `min` itself is refused: the range is `(min, max]` (top-p).
    pub min_excluded: bool,
    /// `max` itself is refused: the range is `[min, max)` (epsilon, eta).
    pub max_excluded: bool,
    /// Positive values below this are refused (temperature: 0 = greedy, or
    /// at least this).
    pub smallest_positive: Option<f64>,
    pub integer: bool,
    /// Its URL parameter when it is not `key` (the CLI flag's name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub param: Option<&'static str>,
    /// The page's control: a number with one is one the page shows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control: Option<Control>,
}

/// A setting that is one of a few names.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Choice {
    pub key: &'static str,
    /// The names `GenerationSettings` reads and writes, default first... in
    /// declaration order (the default is in `defaults`).
    pub options: Vec<String>,
}

/// What the page and the CLI take from the engine.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SettingsTable {
    /// Every setting's default: `GenerationSettings::default()` as it serialises.
    pub defaults: GenerationSettings,
    /// Every number, in the order the page lists its controls (by group).
    pub numbers: Vec<NumberRange>,
    pub choices: Vec<Choice>,
    /// Every stage a chain can hold (`chain`'s names), in a chain-building
    /// order, with what it does, its engines and the settings it reads.
    pub stages: Vec<StageInfo>,
    /// The chains `order` names; an empty `chain` is `order`'s.
    pub chain_presets: Vec<ChainPreset>,
    /// Why a generation stops: each reason's name in the reports, and its words.
    pub stop_reasons: Vec<StopWords>,
    /// The KV cache's number types a load may ask for (`KvPrecision::parse`'s names).
    pub kv_types: Vec<&'static str>,
    pub course: Course,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StopWords {
    pub name: String,
    pub words: &'static str,
}

/// The course's numbers the page offers as its starting points.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Course {
    /// Lesson 21's ten logits (the `logits10` model's own).
    pub logits10: Vec<f64>,
    /// Lesson 18's retraining of the bigram: AdamW steps and seed.
    pub bigram_steps: usize,
    pub bigram_seed: u64,
}

/// A generation setting's range (`GenerationSettings::validate` checks it),
/// and its control.
fn closed(key: &'static str, min: f64, max: f64, integer: bool, control: Option<Control>) -> NumberRange {
    NumberRange { key, min, max, min_excluded: false, max_excluded: false, smallest_positive: None, integer, param: None, control }
}

/// The serde names of an enum's values.
fn names<T: Serialize>(all: &[T]) -> Vec<String> {
    all.iter()
        .map(|v| match serde_json::to_value(v).expect("a unit enum serialises") {
            serde_json::Value::String(s) => s,
            other => panic!("{other} is not a name"),
        })
        .collect()
}

impl SettingsTable {
    pub fn new() -> Self {
        let mut numbers: Vec<NumberRange> = RULE_FIELDS.iter().copied().map(NumberRange::of).collect();
        numbers.extend([
            closed("seed", 0.0, MAX_SEED as f64, true, Some(Control::slider("Seed", "same seed, same text", 100.0, 1.0, Group::Run).no_slider())),
            closed("max_new", 1.0, MAX_NEW as f64, true, Some(Control::slider("Max new tokens", "the run stops after this many", 256.0, 1.0, Group::Run))),
            closed("beams", 1.0, MAX_BEAMS as f64, true, Some(Control::slider("Beams B", "beam search keeps the B best prefixes", 8.0, 1.0, Group::Beam))),
            closed("alpha", 0.0, MAX_ALPHA, false, Some(Control::slider("Length normalisation α", "score = log p / length^α", 2.0, 0.05, Group::Beam))),
            closed("top_n", 1.0, MAX_TOP_N as f64, true, None),
        ]);
        numbers.sort_by_key(|n| n.control.map_or(usize::MAX, |c| c.group as usize));
        let choices = vec![
            Choice { key: "order", options: names(&Order::ALL) },
            Choice { key: "penalty_mode", options: names(&PenaltyMode::ALL) },
            Choice { key: "ties", options: names(&Ties::ALL) },
            Choice { key: "context_policy", options: names(&ContextPolicy::ALL) },
        ];
        let course = Course {
            logits10: LESSON21_LOGITS.iter().map(|&z| f64::from(z)).collect(),
            bigram_steps: LESSON_STEPS,
            bigram_seed: LESSON_SEED,
        };
        let stop_reasons = StopReason::ALL.iter().zip(names(&StopReason::ALL)).map(|(r, name)| StopWords { name, words: r.describe() }).collect();
        let stages = StageKind::ALL.iter().map(|k| k.info()).collect();
        let kv_types = KvPrecision::ALL.iter().map(|p| p.name()).collect();
        Self { defaults: GenerationSettings::default(), numbers, choices, stages, chain_presets: Order::presets(), stop_reasons, kv_types, course }
    }

    pub fn number(&self, key: &str) -> Option<&NumberRange> {
        self.numbers.iter().find(|n| n.key == key)
    }

    /// The table as JSON (`nexttoken settings`).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("the table serialises")
    }

    /// The page's module (`nexttoken settings --js` > www/state/engine-settings.js).
    pub fn to_page_module(&self) -> String {
        format!(
            "// Generated by `nexttoken settings --js > www/state/engine-settings.js` from the\n\
             // engine's settings schema (crate/src/schema.rs): do not edit.\n\
             // crate/tests/settings_table.rs fails when this file is stale.\n\
             // One file, over 400 lines: it is data, one JSON object, and splitting it\n\
             // would only add a second generated file to keep in step.\n\
             export default {};\n",
            self.to_json()
        )
    }
}

impl Default for SettingsTable {
    fn default() -> Self {
        Self::new()
    }
}

impl NumberRange {
    /// A rule field's range, as the page reads it.
    fn of(f: &Field) -> NumberRange {
        let r = f.range;
        NumberRange {
            key: f.key,
            min: r.min,
            max: r.max,
            min_excluded: r.min_excluded,
            max_excluded: r.max_excluded,
            smallest_positive: r.smallest_positive,
            integer: r.integer,
            param: f.param,
            control: f.control,
        }
    }

    /// The range in words, for help texts: "[0, 1]", "(0, 1]", "[0, 1)", "0 or [0.0001, 100]".
    pub fn describe(&self) -> String {
        let range = Range {
            min: self.min,
            max: self.max,
            min_excluded: self.min_excluded,
            max_excluded: self.max_excluded,
            smallest_positive: self.smallest_positive,
            integer: self.integer,
        };
        range.describe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::UNBOUNDED;
    use serde_json::{Value, json};

    /// The defaults with one field set (a bias is one pair on token 0).
    fn with(key: &str, value: f64) -> GenerationSettings {
        let mut v = serde_json::to_value(GenerationSettings::default()).unwrap();
        // A chain with every stage, so that any sampler a value turns on has its stage.
        v["chain"] = serde_json::to_value(StageKind::ALL).unwrap();
        let value = if key == "logit_bias" {
            json!([[0, value]])
        } else if key == "sequence_bias" {
            json!([[[0, 1], value]])
        } else if value.fract() == 0.0 && value.abs() < 1e16 {
            json!(value as i64)
        } else {
            json!(value)
        };
        v[key] = value.clone();
        serde_json::from_value(v).unwrap_or_else(|e| panic!("{key} = {value:?}: {e}"))
    }

    fn accepted(key: &str, value: f64) -> bool {
        with(key, value).validate(4).is_ok()
    }

    /// Every range in the table is exactly what `validate` accepts: its ends
    /// pass, and just outside them is refused.
    #[test]
    fn the_table_is_the_range_validate_enforces() {
        let table = SettingsTable::new();
        for r in &table.numbers {
            // An end at UNBOUNDED has nothing finite beyond it to refuse.
            let (max_bounded, min_bounded) = (r.max < UNBOUNDED, r.min > -UNBOUNDED);
            let scale = [r.min, r.max].iter().filter(|v| v.abs() < UNBOUNDED).fold(1.0f64, |m, v| m.max(v.abs()));
            let step = if r.integer { 1.0 } else { 1e-9 * scale };
            if r.max_excluded {
                assert!(!accepted(r.key, r.max), "{} max {} excluded", r.key, r.max);
                assert!(accepted(r.key, r.max - step), "{} just below max", r.key);
            } else {
                assert!(accepted(r.key, r.max), "{} max {}", r.key, r.max);
            }
            if max_bounded {
                assert!(!accepted(r.key, r.max + step) || r.max + step == r.max, "{} above max", r.key);
            }
            if r.min_excluded {
                assert!(!accepted(r.key, r.min), "{} min {} excluded", r.key, r.min);
                assert!(accepted(r.key, r.min + step), "{} just above min", r.key);
            } else {
                assert!(accepted(r.key, r.min), "{} min {}", r.key, r.min);
                if !(r.integer && r.min == 0.0) && min_bounded {
                    assert!(!accepted(r.key, r.min - step), "{} below min", r.key);
                }
            }
            if let Some(low) = r.smallest_positive {
                assert!(accepted(r.key, low) && !accepted(r.key, low / 2.0), "{} smallest positive", r.key);
            }
        }
    }

    /// A stage's `switches` are exactly the settings it reads that turn it on
    /// when moved alone from their defaults: what the page reads to know which
    /// setting needs which stage (xtc_threshold and dry_base only shape theirs).
    #[test]
    fn a_stage_is_turned_on_by_its_switches_and_by_nothing_else_it_reads() {
        let table = SettingsTable::new();
        let defaults = serde_json::to_value(&table.defaults).unwrap();
        let moved = |key: &str| -> GenerationSettings {
            let value = match key {
                "logit_bias" | "sequence_bias" => return with(key, 1.0),
                "banned" => json!([0]),
                "penalty_mode" => json!("per_occurrence"),
                "ties" => json!("keep_tied"),
                "dry_sequence_breakers" => json!(["x"]),
                _ => {
                    let r = table.number(key).unwrap_or_else(|| panic!("{key} has a range"));
                    let d = defaults[key].as_f64().unwrap();
                    let v = match (r.max != d, r.max_excluded, r.min_excluded) {
                        (true, true, _) => r.max - 1e-6,
                        (true, false, _) => r.max,
                        (false, _, true) => r.min + 1e-6,
                        (false, _, false) => r.min,
                    };
                    return with(key, v);
                }
            };
            let mut v = defaults.clone();
            v[key] = value;
            serde_json::from_value(v).unwrap()
        };
        for kind in StageKind::ALL {
            let info = kind.info();
            for &key in info.settings {
                let s = moved(key);
                assert!(s.validate(4).is_ok(), "{key} moved is valid");
                assert_eq!(kind.is_on(&s.rules), info.switches.contains(&key), "{}: {key} moved alone", info.name);
            }
        }
    }

    #[test]
    fn choices_are_the_names_the_settings_read_and_the_defaults_are_among_them() {
        let table = SettingsTable::new();
        let defaults = serde_json::to_value(&table.defaults).unwrap();
        for c in &table.choices {
            assert!(c.options.iter().any(|o| defaults[c.key] == Value::String(o.clone())), "{}", c.key);
            for o in &c.options {
                let mut v = defaults.clone();
                v[c.key] = json!(o);
                assert!(serde_json::from_value::<GenerationSettings>(v).is_ok(), "{} = {o}", c.key);
            }
        }
        // Every numeric default lies in its range.
        for r in &table.numbers {
            if let Some(d) = defaults[r.key].as_f64() {
                assert!(accepted(r.key, d), "default {} = {d}", r.key);
            }
        }
    }
}
