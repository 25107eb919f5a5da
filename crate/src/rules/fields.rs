//! What a setting of the rules is, as data: its key, range, what its special
//! values mean, its help line, its CLI flag, its URL name and its control on
//! the page. Each stage's file declares the fields it owns (its spec's
//! `fields`); `registry::RULE_FIELDS` lists them all, validation (`chain`)
//! checks from it, the settings schema (`crate::schema`) publishes it to the
//! page and the CLI makes its flags from it, so a field is written once.

use serde::Serialize;

use super::settings::{MAX_TOP_K, RuleSettings, UNBOUNDED};
use crate::error::Result;

/// The range of one numeric setting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    pub min: f64,
    pub max: f64,
    /// `min` itself is refused: `(min, max]` (top-p).
    pub min_excluded: bool,
    /// `max` itself is refused: `[min, max)` (epsilon, eta).
    pub max_excluded: bool,
    /// Positive values below this are refused (temperature: 0 = greedy, or
    /// at least this).
    pub smallest_positive: Option<f64>,
    pub integer: bool,
}

impl Range {
    pub const fn closed(min: f64, max: f64) -> Range {
        Range { min, max, min_excluded: false, max_excluded: false, smallest_positive: None, integer: false }
    }

    pub const fn integers(min: f64, max: f64) -> Range {
        Range { integer: true, ..Range::closed(min, max) }
    }

    pub fn contains(&self, v: f64) -> bool {
        let low = if self.min_excluded { v > self.min } else { v >= self.min };
        let high = if self.max_excluded { v < self.max } else { v <= self.max };
        let gap = matches!(self.smallest_positive, Some(sp) if v > 0.0 && v < sp);
        low && high && !gap
    }

    /// The range in words: "[0, 1]", "(0, 1]", "[0, 1)", "0 or [1e-100, ∞)";
    /// an end at `UNBOUNDED` is "∞" (any finite value reaches it).
    pub fn describe(&self) -> String {
        let open = if self.min_excluded || self.min == -UNBOUNDED { "(" } else { "[" };
        let close = if self.max_excluded || self.max == UNBOUNDED { ")" } else { "]" };
        let end = |v: f64| match v {
            UNBOUNDED => "∞".to_string(),
            v if v == -UNBOUNDED => "-∞".to_string(),
            v => v.to_string(),
        };
        match self.smallest_positive {
            Some(low) => format!("{} or [{low:e}, {}{close}", self.min, end(self.max)),
            None => format!("{open}{}, {}{close}", end(self.min), end(self.max)),
        }
    }
}

/// One setting of the rules, declared once by the stage that reads it (its
/// spec's `fields`) or, read by many, in `GENERAL_FIELDS`: its range, its
/// words, its CLI flag, its URL name and its control on the page.
pub struct Field {
    /// The serde name (as in the URL's JSON, the reports, the page).
    pub key: &'static str,
    pub range: Range,
    /// What its special values mean, for messages and help: "0 = off".
    pub note: &'static str,
    /// The CLI's help line, before the range.
    pub help: &'static str,
    /// Where `RuleSettings` holds it.
    pub slot: Slot,
    /// The CLI's flag when it is not the key with dashes (llama.cpp's `top-nsigma`).
    pub flag: Option<&'static str>,
    /// The page's URL parameter when it is not the key (the CLI's name).
    pub param: Option<&'static str>,
    /// The page's control, if it has one.
    pub control: Option<Control>,
}

/// Where `RuleSettings` holds a field, by its type (the CLI parses each type
/// as its own: `--top-k 1.5` is refused as not a whole number).
#[derive(Clone, Copy)]
pub enum Slot {
    Real(fn(&RuleSettings) -> f64, fn(&mut RuleSettings, f64)),
    Count(fn(&RuleSettings) -> usize, fn(&mut RuleSettings, usize)),
    Signed(fn(&RuleSettings) -> i64, fn(&mut RuleSettings, i64)),
    Small(fn(&RuleSettings) -> u8, fn(&mut RuleSettings, u8)),
    /// A list, each entry checked on its own (`logit_bias`): no flag of its own.
    List,
}

/// `slot!(top_k: usize)`: the `Slot` of `RuleSettings::top_k`.
macro_rules! slot {
    ($f:ident: f64) => { $crate::rules::fields::Slot::Real(|s| s.$f, |s, v| s.$f = v) };
    ($f:ident: usize) => { $crate::rules::fields::Slot::Count(|s| s.$f, |s, v| s.$f = v) };
    ($f:ident: i64) => { $crate::rules::fields::Slot::Signed(|s| s.$f, |s, v| s.$f = v) };
    ($f:ident: u8) => { $crate::rules::fields::Slot::Small(|s| s.$f, |s, v| s.$f = v) };
}
pub(crate) use slot;

impl Slot {
    /// The value, as a number (`None` for a list).
    pub fn get(&self, s: &RuleSettings) -> Option<f64> {
        match *self {
            Slot::Real(get, _) => Some(get(s)),
            Slot::Count(get, _) => Some(get(s) as f64),
            Slot::Signed(get, _) => Some(get(s) as f64),
            Slot::Small(get, _) => Some(f64::from(get(s))),
            Slot::List => None,
        }
    }

    /// The value as its type prints it ("1", "0.1", "64"): the CLI's default.
    pub fn show(&self, s: &RuleSettings) -> Option<String> {
        match *self {
            Slot::Real(get, _) => Some(get(s).to_string()),
            Slot::Count(get, _) => Some(get(s).to_string()),
            Slot::Signed(get, _) => Some(get(s).to_string()),
            Slot::Small(get, _) => Some(get(s).to_string()),
            Slot::List => None,
        }
    }
}

/// The page's fieldsets, in the order the page lists their controls (and
/// writes them into a link) and the CLI its flags.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    Rules,
    Penalties,
    Run,
    Beam,
    Samplers,
    Repeats,
    Mirostat,
}

/// How the page shows a number: a slider and a number box (the box takes
/// the whole range, the slider ends at `slider_end`), or a select.
#[derive(Serialize, Clone, Copy, Debug, PartialEq)]
pub struct Control {
    pub label: &'static str,
    /// One line under the control.
    pub help: &'static str,
    pub slider_end: f64,
    pub step: f64,
    pub group: Group,
    /// A number box only: changing it re-runs the model (the seed).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_slider: bool,
    /// A select of the whole numbers 0, 1, ... with these names instead of a slider.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub pick: &'static [&'static str],
}

impl Control {
    pub const fn slider(label: &'static str, help: &'static str, slider_end: f64, step: f64, group: Group) -> Control {
        Control { label, help, slider_end, step, group, no_slider: false, pick: &[] }
    }

    pub const fn no_slider(self) -> Control {
        Control { no_slider: true, ..self }
    }

    pub const fn pick(self, names: &'static [&'static str]) -> Control {
        Control { pick: names, ..self }
    }
}

impl Field {
    /// A field with no flag or URL name of its own and no control yet.
    pub const fn new(key: &'static str, slot: Slot, range: Range, note: &'static str, help: &'static str) -> Field {
        Field { key, range, note, help, slot, flag: None, param: None, control: None }
    }

    pub const fn control(self, control: Control) -> Field {
        Field { control: Some(control), ..self }
    }

    /// Its CLI flag, when it is not the key with dashes (`top-nsigma`).
    pub const fn with_flag(self, flag: &'static str) -> Field {
        Field { flag: Some(flag), ..self }
    }

    /// Its URL parameter, when it is not the key (`top_nsigma`).
    pub const fn with_param(self, param: &'static str) -> Field {
        Field { param: Some(param), ..self }
    }

    /// The CLI's flag, without its dashes: `flag`, or the key with dashes.
    pub fn flag_name(&self) -> String {
        self.flag.map_or_else(|| self.key.replace('_', "-"), str::to_string)
    }

    /// Where the page and the CLI list it (lists, with no control, last).
    pub fn group(&self) -> Option<Group> {
        self.control.map(|c| c.group)
    }
}

/// The rules' fields that no one stage owns.
pub const GENERAL_FIELDS: &[Field] = &[Field::new(
    "min_keep",
    slot!(min_keep: usize),
    Range::integers(0.0, MAX_TOP_K as f64),
    "",
    "Every truncation keeps at least this many tokens",
)
.with_flag("min-tokens-to-keep")
.with_param("min_tokens_to_keep")
.control(Control::slider(
    "Min tokens to keep",
    "every truncation keeps at least this many tokens",
    20.0,
    1.0,
    Group::Samplers,
))];

impl Field {
    /// `value` checked against the range; the message names the field, the
    /// value and what is allowed ("top_p = 0 is out of range: it must be in (0, 1] (1 = off)").
    pub fn check(&self, name: &str, value: f64) -> Result<()> {
        if !self.range.contains(value) {
            let note = if self.note.is_empty() { String::new() } else { format!(" ({})", self.note) };
            let verb = if self.range.smallest_positive.is_some() { "be" } else { "be in" };
            crate::bail!("{name} = {value} is out of range: it must {verb} {}{note}", self.range.describe());
        }
        Ok(())
    }

    /// "HELP (NOTE), in RANGE": the CLI's help line.
    pub fn help_line(&self) -> String {
        let note = if self.note.is_empty() { String::new() } else { format!(" ({})", self.note) };
        format!("{}{note}, in {}", self.help, self.range.describe())
    }
}
