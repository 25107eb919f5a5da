//! The rules' numeric settings as one declarative list: each field's key,
//! range, what its special values mean and its help line. `check_fields`
//! validates from it, the settings schema (`crate::schema`) publishes it to
//! the page, and the CLI's help reads it (`cli::rule_args::rule_help`), so a range
//! is written once.

use super::settings::*;
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

    /// The range in words: "[0, 1]", "(0, 1]", "[0, 1)", "0 or [0.0001, 100]".
    pub fn describe(&self) -> String {
        let open = if self.min_excluded { "(" } else { "[" };
        let close = if self.max_excluded { ")" } else { "]" };
        match self.smallest_positive {
            Some(low) => format!("{} or [{low}, {}]", self.min, self.max),
            None => format!("{open}{}, {}{close}", self.min, self.max),
        }
    }
}

/// One numeric setting of the rules.
pub struct Field {
    /// The serde name (as in the URL's JSON, the reports, the page).
    pub key: &'static str,
    pub range: Range,
    /// What its special values mean, for messages and help: "0 = off".
    pub note: &'static str,
    /// The CLI's help line, before the range.
    pub help: &'static str,
    /// The value, for the check (`None`: a list, each entry checked on its own).
    pub get: Option<fn(&RuleSettings) -> f64>,
}

const fn field(key: &'static str, range: Range, note: &'static str, help: &'static str, get: fn(&RuleSettings) -> f64) -> Field {
    Field { key, range, note, help, get: Some(get) }
}

/// Every numeric setting of the rules, in the order they are checked.
pub const RULE_FIELDS: &[Field] = &[
    field(
        "temperature",
        Range { smallest_positive: Some(MIN_TEMPERATURE), ..Range::closed(0.0, MAX_TEMPERATURE) },
        "0 = greedy",
        "Temperature",
        |s| s.temperature,
    ),
    field("top_k", Range::integers(0.0, MAX_TOP_K as f64), "0 = off", "Keep the k most likely tokens", |s| s.top_k as f64),
    field(
        "top_p",
        Range { min_excluded: true, ..Range::closed(0.0, 1.0) },
        "1 = off",
        "Keep the smallest set reaching this mass",
        |s| s.top_p,
    ),
    field("min_p", Range::closed(0.0, 1.0), "0 = off", "Keep tokens with p >= min_p * p_max", |s| s.min_p),
    field(
        "repetition_penalty",
        Range::closed(1.0, MAX_REPETITION_PENALTY),
        "1 = off; below 1 would reward repetition",
        "Divide positive / multiply negative logits of recent tokens",
        |s| s.repetition_penalty,
    ),
    field(
        "penalty_window",
        Range::integers(0.0, MAX_PENALTY_WINDOW as f64),
        "0 = the whole history",
        "How many of the latest tokens the penalties look at",
        |s| s.penalty_window as f64,
    ),
    field(
        "presence_penalty",
        Range::closed(-MAX_PRESENCE_FREQUENCY, MAX_PRESENCE_FREQUENCY),
        "",
        "Subtract this once from each distinct recent token",
        |s| s.presence_penalty,
    ),
    field(
        "frequency_penalty",
        Range::closed(-MAX_PRESENCE_FREQUENCY, MAX_PRESENCE_FREQUENCY),
        "",
        "Subtract this per occurrence of a recent token",
        |s| s.frequency_penalty,
    ),
    Field { key: "logit_bias", range: Range::closed(-MAX_ABS_BIAS, MAX_ABS_BIAS), note: "", help: "Each logit bias", get: None },
    field("min_keep", Range::integers(0.0, MAX_TOP_K as f64), "", "Every truncation keeps at least this many tokens", |s| {
        s.min_keep as f64
    }),
    field(
        "typical_p",
        Range { min_excluded: true, ..Range::closed(0.0, 1.0) },
        "1 = off",
        "Locally typical sampling's mass",
        |s| s.typical_p,
    ),
    field(
        "epsilon_cutoff",
        Range { max_excluded: true, ..Range::closed(0.0, 1.0) },
        "0 = off",
        "Drop tokens below this probability",
        |s| s.epsilon_cutoff,
    ),
    field(
        "eta_cutoff",
        Range { max_excluded: true, ..Range::closed(0.0, 1.0) },
        "0 = off",
        "Eta sampling: drop below min(eta, sqrt(eta) exp(-H))",
        |s| s.eta_cutoff,
    ),
    field(
        "top_n_sigma",
        Range::closed(0.0, MAX_TOP_N_SIGMA),
        "0 = off",
        "Keep logits within n standard deviations of the top one",
        |s| s.top_n_sigma,
    ),
    field(
        "xtc_threshold",
        Range::closed(0.0, 1.0),
        "above 0.5 XTC does nothing",
        "XTC: the top choices are the tokens at least this likely",
        |s| s.xtc_threshold,
    ),
    field(
        "xtc_probability",
        Range::closed(0.0, 1.0),
        "0 = off",
        "XTC: the chance it removes the top choices at a step",
        |s| s.xtc_probability,
    ),
    field("dry_multiplier", Range::closed(0.0, MAX_DRY_MULTIPLIER), "0 = off", "DRY's strength", |s| s.dry_multiplier),
    field("dry_base", Range::closed(1.0, MAX_DRY_BASE), "", "DRY's base", |s| s.dry_base),
    field(
        "dry_allowed_length",
        Range::integers(0.0, MAX_DRY_ALLOWED_LENGTH as f64),
        "",
        "The longest repeat DRY leaves alone",
        |s| s.dry_allowed_length as f64,
    ),
    field(
        "dry_penalty_last_n",
        Range::integers(-1.0, MAX_PENALTY_WINDOW as f64),
        "-1 = the whole history, 0 = off",
        "How many latest tokens DRY looks at",
        |s| s.dry_penalty_last_n as f64,
    ),
    field("mirostat", Range::integers(0.0, 2.0), "0 = off, 1 or 2: the version", "Mirostat version", |s| f64::from(s.mirostat)),
    field("mirostat_tau", Range::closed(0.0, MAX_MIROSTAT_TAU), "", "Mirostat's target surprise tau in bits", |s| s.mirostat_tau),
    field("mirostat_eta", Range::closed(0.0, MAX_MIROSTAT_ETA), "", "Mirostat's learning rate eta", |s| s.mirostat_eta),
    field(
        "no_repeat_ngram_size",
        Range::integers(0.0, MAX_NGRAM as f64),
        "0 = off",
        "Ban tokens that would repeat an n-gram of this size",
        |s| s.no_repeat_ngram_size as f64,
    ),
    Field {
        key: "sequence_bias",
        range: Range::closed(-MAX_ABS_BIAS, MAX_ABS_BIAS),
        note: "",
        help: "Each sequence bias",
        get: None,
    },
];

/// The field named `key`, if the rules have one.
pub fn rule_field(key: &str) -> Option<&'static Field> {
    RULE_FIELDS.iter().find(|f| f.key == key)
}

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

impl RuleSettings {
    /// Checks every field against its range (`fields::RULE_FIELDS`) and every
    /// token id against the vocabulary; the message names the field, the
    /// value and what is allowed. `validate` (in `chain`, which reads the
    /// stages) runs it, then checks the chain.
    pub(crate) fn check_fields(&self, vocab_size: usize) -> Result<()> {
        for f in RULE_FIELDS {
            if let Some(get) = f.get {
                f.check(f.key, get(self))?;
            }
        }
        let bias = rule_field("logit_bias").expect("logit_bias has a field");
        for &(id, b) in &self.logit_bias {
            check_token_id("logit_bias", id, vocab_size)?;
            bias.check(&format!("logit_bias for token {id}"), b)?;
        }
        for &id in &self.banned {
            check_token_id("banned", id, vocab_size)?;
        }
        if self.dry_sequence_breakers.len() > MAX_BREAKERS {
            crate::bail!("dry_sequence_breakers: {} breakers, at most {MAX_BREAKERS}", self.dry_sequence_breakers.len());
        }
        for b in &self.dry_sequence_breakers {
            if b.is_empty() || b.chars().count() > MAX_BREAKER_CHARS {
                crate::bail!("dry_sequence_breakers: {b:?} must have 1 to {MAX_BREAKER_CHARS} characters");
            }
        }
        let sequence = rule_field("sequence_bias").expect("sequence_bias has a field");
        for (ids, b) in &self.sequence_bias {
            if ids.is_empty() || ids.len() > MAX_SEQUENCE_LEN {
                crate::bail!("sequence_bias: a sequence must have 1 to {MAX_SEQUENCE_LEN} token ids (got {})", ids.len());
            }
            for &id in ids {
                check_token_id("sequence_bias", id, vocab_size)?;
            }
            sequence.check(&format!("sequence_bias for {ids:?}"), *b)?;
        }
        Ok(())
    }

}

fn check_token_id(field: &str, id: u32, vocab_size: usize) -> Result<()> {
    if id as usize >= vocab_size {
        crate::bail!(
            "{field}: token id {id} is outside the vocabulary (ids 0..{})",
            vocab_size.saturating_sub(1)
        );
    }
    Ok(())
}

