//! The decoding-rule flags shared by `dist` and `generate`. Each number's
//! flag is made from its field (`rules::RULE_FIELDS`): its name, help line,
//! range and default come from the engine's settings definition, so a new
//! field has its flag with no edit here; the ranges are checked by the
//! engine, not here. The flags that are not one number (lists, names, a
//! switch) are `OtherArgs`, each shown after the number it goes with.
//! (Over 400 lines: one job, the rule flags: made from the fields, the list flags parsed, `--config` laid under them, and their tests.)

use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches, value_parser};
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};
use crate::dialect::{Dialect, Imported};
use super::config::read_config;
use crate::rules::{Field, Order, PenaltyMode, RULE_FIELDS, RuleSettings, Slot, StageKind};
use crate::settings::GenerationSettings;
use crate::schema::SettingsTable;

/// The engine's defaults, which every flag below starts from.
fn defaults() -> RuleSettings {
    RuleSettings::default()
}

/// "WHAT, in RANGE", the range read off the settings table.
pub fn help(what: &str, key: &str) -> String {
    let table = SettingsTable::new();
    let range = table.number(key).map(|r| r.describe()).unwrap_or_default();
    format!("{what}, in {range}")
}

/// One of a setting's names, as the engine reads it (`hf`, `per_token`, ...).
pub fn choice<T: DeserializeOwned>(flag: &str, key: &str, name: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(name.to_string())).map_err(|_| {
        let table = SettingsTable::new();
        let options = table.choices.iter().find(|c| c.key == key).map(|c| c.options.join("' or '")).unwrap_or_default();
        Error::new(format!("{flag}: '{name}' is not a choice: use '{options}'"))
    })
}

/// The serde name of a choice's value (a flag's default).
pub fn name_of<T: serde::Serialize>(value: T) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// The rule flags: one per number of the rules, and `OtherArgs`.
#[derive(Debug, Clone)]
pub struct RuleArgs {
    /// The defaults, with every number flag's value in its place.
    numbers: RuleSettings,
    other: OtherArgs,
    /// The flags given on the command line (their ids): what overrides `--config`.
    explicit: Vec<String>,
}

/// The rule flags that are not one number each.
#[derive(Args, Debug, Clone)]
struct OtherArgs {
    /// Penalise once per occurrence (the course's demo) instead of once per token.
    #[arg(long)]
    per_occurrence: bool,
    /// Comma-separated `ID:BIAS` pairs added to logits, e.g. `2:1.5,0:-3`.
    #[arg(long, allow_hyphen_values = true)]
    bias: Option<String>,
    /// Comma-separated ids that get probability 0.
    #[arg(long, allow_hyphen_values = true)]
    ban: Option<String>,
    /// `hf` (temperature first), `llama` (temperature last) or `openai`: the chain preset.
    #[arg(long, default_value_t = name_of(defaults().order))]
    order: String,
    /// The chain: a preset (`hf`, `llama`, `openai`) or stage names in order, e.g.
    /// `penalties,top_k,temperature` (overrides --order).
    #[arg(long)]
    chain: Option<String>,
    /// A DRY sequence breaker (repeatable; the first one replaces the
    /// default list `\n`, `:`, `"`, `*`). Escapes: `\n`, `\t`, `\\`.
    #[arg(long = "dry-sequence-breaker", allow_hyphen_values = true)]
    dry_sequence_breakers: Vec<String>,
    /// Hugging Face's sequence bias: `IDS:BIAS` items split by commas, the ids
    /// of a sequence by spaces, e.g. `5 6:-2,7:1.5`.
    #[arg(long, allow_hyphen_values = true)]
    sequence_bias: Option<String>,
    /// What top-k and top-p do with tokens tied at their cut: `by_id` (the
    /// lower id stays) or `keep_tied` (every tied token stays, as Hugging Face).
    #[arg(long, default_value_t = name_of(defaults().ties))]
    ties: String,
    /// A decoding configuration in an engine's words: llama.cpp flags, a
    /// Hugging Face generation_config.json or an OpenAI-style request body
    /// (the engine's defaults fill what it does not say; the rule flags
    /// given here override it).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The format of --config: `llama_cpp`, `hf` or `openai` (detected when not given).
    #[arg(long, value_name = "FORMAT")]
    config_format: Option<String>,
}

/// Where the help lists each of `OtherArgs`' flags: after the number flag
/// of this field (the others last).
const SHOWN_AFTER: &[(&str, &str)] = &[
    ("per_occurrence", "repetition_penalty"),
    ("bias", "frequency_penalty"),
    ("ban", "frequency_penalty"),
    ("order", "frequency_penalty"),
    ("chain", "frequency_penalty"),
    ("dry_sequence_breakers", "dry_penalty_last_n"),
    ("ties", "min_keep"),
];

/// A number's flag, from its field: `--top-k <TOP_K>`, its help line, its
/// default, parsed as the setting's type (a count refuses `1.5` and `-1`).
/// Negative numbers reach the parser, which names the flag.
fn number_flag(f: &Field, defaults: &RuleSettings) -> Option<Arg> {
    let arg = Arg::new(f.key)
        .long(f.flag_name())
        .value_name(f.key.to_uppercase())
        .help(f.help_line())
        .default_value(f.slot.show(defaults)?)
        .allow_negative_numbers(true)
        .action(ArgAction::Set);
    Some(match f.slot {
        Slot::Real(..) => arg.value_parser(value_parser!(f64)),
        Slot::Count(..) => arg.value_parser(value_parser!(usize)),
        Slot::Signed(..) => arg.value_parser(value_parser!(i64)),
        Slot::Small(..) => arg.value_parser(value_parser!(u8)),
        Slot::List => return None,
    })
}

/// `cmd` with every rule flag, in the fields' order.
fn with_rule_flags(mut cmd: Command) -> Command {
    // Taken from a command of their own, without the places they had there.
    let others: Vec<Arg> =
        OtherArgs::augment_args(Command::new("rules")).get_arguments().map(|a| a.clone().display_order(None)).collect();
    let place = |a: &Arg| SHOWN_AFTER.iter().find(|(id, _)| a.get_id() == id).map(|(_, key)| *key);
    let defaults = defaults();
    for f in RULE_FIELDS.iter() {
        if let Some(arg) = number_flag(f, &defaults) {
            cmd = cmd.arg(arg);
        }
        for a in others.iter().filter(|a| place(a) == Some(f.key)) {
            cmd = cmd.arg(a.clone());
        }
    }
    for a in others.iter().filter(|a| place(a).is_none()) {
        cmd = cmd.arg(a.clone());
    }
    cmd
}

impl Args for RuleArgs {
    fn augment_args(cmd: Command) -> Command {
        with_rule_flags(cmd)
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        with_rule_flags(cmd)
    }
}

impl FromArgMatches for RuleArgs {
    fn from_arg_matches(m: &ArgMatches) -> std::result::Result<Self, clap::Error> {
        let mut args = RuleArgs { numbers: defaults(), other: OtherArgs::from_arg_matches(m)?, explicit: Vec::new() };
        args.update_from_arg_matches(m)?;
        Ok(args)
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> std::result::Result<(), clap::Error> {
        self.other.update_from_arg_matches(m)?;
        self.explicit = m.ids().filter(|id| m.value_source(id.as_str()) == Some(ValueSource::CommandLine)).map(|id| id.to_string()).collect();
        let s = &mut self.numbers;
        for f in RULE_FIELDS.iter() {
            match f.slot {
                Slot::Real(_, set) => m.get_one(f.key).map(|v| set(s, *v)),
                Slot::Count(_, set) => m.get_one(f.key).map(|v| set(s, *v)),
                Slot::Signed(_, set) => m.get_one(f.key).map(|v| set(s, *v)),
                Slot::Small(_, set) => m.get_one(f.key).map(|v| set(s, *v)),
                Slot::List => None,
            };
        }
        Ok(())
    }
}

impl RuleArgs {
    /// The rule settings these flags describe (checked later against the vocabulary).
    pub fn to_settings(&self) -> Result<RuleSettings> {
        let o = &self.other;
        Ok(RuleSettings {
            penalty_mode: if o.per_occurrence { PenaltyMode::PerOccurrence } else { defaults().penalty_mode },
            logit_bias: match &o.bias {
                Some(list) => parse_bias(list)?,
                None => Vec::new(),
            },
            banned: match &o.ban {
                Some(list) => parse_ids("--ban", list)?,
                None => Vec::new(),
            },
            order: match o.chain.as_deref().and_then(preset_name) {
                Some(preset) => preset,
                None => choice("--order", "order", &o.order)?,
            },
            chain: match &o.chain {
                Some(list) if preset_name(list).is_none() => parse_chain(list)?,
                _ => Vec::new(),
            },
            dry_sequence_breakers: if o.dry_sequence_breakers.is_empty() {
                defaults().dry_sequence_breakers
            } else {
                o.dry_sequence_breakers.iter().map(|b| unescape(b)).collect()
            },
            sequence_bias: match &o.sequence_bias {
                Some(list) => parse_sequence_bias(list)?,
                None => Vec::new(),
            },
            ties: choice("--ties", "ties", &o.ties)?,
            ..self.numbers.clone()
        })
    }

    /// `base` with the rules these flags give, or with `--config` read over
    /// it and the flags given on the command line over that; the import's
    /// report (what it filled in, its notes) when there was a config.
    pub fn to_generation(&self, base: GenerationSettings) -> Result<(GenerationSettings, Option<Imported>)> {
        let flags = self.to_settings()?;
        let Some(path) = &self.other.config else {
            return Ok((GenerationSettings { rules: flags, ..base }, None));
        };
        let dialect = self.other.config_format.as_deref().map(Dialect::from_name).transpose()?;
        let text = read_config(path)?;
        let imported = crate::dialect::import(&text, dialect, &base, u32::MAX as usize)
            .map_err(|e| Error::new(format!("--config {}: {}", path.display(), e.message)))?;
        let mut s = imported.settings.clone();
        let given = |id: &str| self.explicit.iter().any(|e| e == id);
        for f in RULE_FIELDS.iter() {
            if given(f.key) {
                match f.slot {
                    Slot::Real(get, set) => set(&mut s.rules, get(&flags)),
                    Slot::Count(get, set) => set(&mut s.rules, get(&flags)),
                    Slot::Signed(get, set) => set(&mut s.rules, get(&flags)),
                    Slot::Small(get, set) => set(&mut s.rules, get(&flags)),
                    Slot::List => {}
                }
            }
        }
        let r = &mut s.rules;
        if given("per_occurrence") {
            r.penalty_mode = flags.penalty_mode;
        }
        if given("bias") {
            r.logit_bias = flags.logit_bias.clone();
        }
        if given("ban") {
            r.banned = flags.banned.clone();
        }
        if given("order") || given("chain") {
            r.order = flags.order;
            r.chain = flags.chain.clone();
        }
        if given("dry_sequence_breakers") {
            r.dry_sequence_breakers = flags.dry_sequence_breakers.clone();
        }
        if given("sequence_bias") {
            r.sequence_bias = flags.sequence_bias.clone();
        }
        if given("ties") {
            r.ties = flags.ties;
        }
        Ok((s, Some(imported)))
    }
}

/// The preset a `--chain` value names, if it is one.
fn preset_name(list: &str) -> Option<Order> {
    Order::ALL.into_iter().find(|o| o.name() == list.trim())
}

/// `--chain a,b,c`: stage names in order.
fn parse_chain(list: &str) -> Result<Vec<StageKind>> {
    split_items("--chain", list)?
        .into_iter()
        .map(|name| {
            StageKind::from_name(name).ok_or_else(|| {
                let names: Vec<&str> = StageKind::ALL.iter().map(|k| k.name()).collect();
                let presets: Vec<&str> = Order::ALL.iter().map(|o| o.name()).collect();
                Error::new(format!(
                    "--chain: '{name}' is not a stage: use a preset ({}) or stage names from {}",
                    presets.join(", "),
                    names.join(", ")
                ))
            })
        })
        .collect()
}

/// `\n`, `\t` and `\\` in a breaker typed on a command line.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match (c, chars.clone().next()) {
            ('\\', Some('n')) => out.push('\n'),
            ('\\', Some('t')) => out.push('\t'),
            ('\\', Some('\\')) => out.push('\\'),
            _ => {
                out.push(c);
                continue;
            }
        }
        chars.next();
    }
    out
}

/// `--sequence-bias 5 6:-2,7:1.5`.
fn parse_sequence_bias(list: &str) -> Result<Vec<(Vec<u32>, f64)>> {
    split_items("--sequence-bias", list)?
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let bad = || Error::new(format!("--sequence-bias: item {} '{item}' is not IDS:BIAS (e.g. 5 6:-2)", i + 1));
            let (ids, b) = item.rsplit_once(':').ok_or_else(bad)?;
            let ids: Vec<u32> = ids.split_whitespace().map(|t| t.parse().map_err(|_| bad())).collect::<Result<_>>()?;
            Ok((ids, b.trim().parse().map_err(|_| bad())?))
        })
        .collect()
}

/// Splits a comma-separated list, refusing empty items with their position.
/// Says on stderr when `--top-k` is past the vocabulary: it is taken (a
/// setting written for a larger model still runs) and keeps every token.
pub fn note_top_k_past_vocabulary(top_k: usize, vocab_size: usize) {
    if top_k > vocab_size {
        eprintln!("note: --top-k {top_k} is more than the vocabulary's {vocab_size} tokens: it keeps every token");
    }
}

pub fn split_items<'a>(flag: &str, list: &'a str) -> Result<Vec<&'a str>> {
    let items: Vec<&str> = list.split(',').map(str::trim).collect();
    if let Some(i) = items.iter().position(|s| s.is_empty()) {
        crate::bail!(
            "{flag}: item {} is empty in '{list}' (expected a comma-separated list)",
            i + 1
        );
    }
    Ok(items)
}

pub fn parse_ids(flag: &str, list: &str) -> Result<Vec<u32>> {
    split_items(flag, list)?
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            s.parse::<u32>().map_err(|_| {
                Error::new(format!(
                    "{flag}: item {} '{s}' is not a token id (0, 1, 2, ...)",
                    i + 1
                ))
            })
        })
        .collect()
}

fn parse_bias(list: &str) -> Result<Vec<(u32, f64)>> {
    split_items("--bias", list)?
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let bad = || {
                Error::new(format!(
                    "--bias: item {} '{item}' is not ID:BIAS (e.g. 2:1.5)",
                    i + 1
                ))
            };
            let (id, b) = item.split_once(':').ok_or_else(bad)?;
            Ok((
                id.trim().parse().map_err(|_| bad())?,
                b.trim().parse().map_err(|_| bad())?,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> RuleSettings {
        let cmd = RuleArgs::augment_args(Command::new("t"));
        let m = cmd.try_get_matches_from(std::iter::once("t").chain(args.iter().copied())).expect("the flags parse");
        RuleArgs::from_arg_matches(&m).unwrap().to_settings().unwrap()
    }

    /// With no flags, the engine's defaults; each number's flag (named as its
    /// field says) sets that field and nothing else.
    #[test]
    fn every_number_of_the_rules_has_a_flag_that_sets_it_alone() {
        let defaults = RuleSettings::default();
        assert_eq!(parse(&[]), defaults);
        let mut flags = 0;
        for f in RULE_FIELDS.iter().filter(|f| !matches!(f.slot, Slot::List)) {
            let r = f.range;
            let value = if r.max_excluded { (r.min + r.max) / 2.0 } else { r.max };
            let value = if r.integer { value.floor() } else { value };
            let s = parse(&[&format!("--{}", f.flag_name()), &value.to_string()]);
            assert_eq!(f.slot.get(&s), Some(value), "--{}", f.flag_name());
            let mut back = s.clone();
            match f.slot {
                Slot::Real(get, set) => set(&mut back, get(&defaults)),
                Slot::Count(get, set) => set(&mut back, get(&defaults)),
                Slot::Signed(get, set) => set(&mut back, get(&defaults)),
                Slot::Small(get, set) => set(&mut back, get(&defaults)),
                Slot::List => unreachable!(),
            }
            assert_eq!(back, defaults, "--{} changed another setting", f.flag_name());
            flags += 1;
        }
        assert!(flags >= 20, "{flags} number flags");
    }
}
