//! llama.cpp's command-line sampling flags (`common/arg.cpp`), read and
//! written. A command line as people paste it: a program name first or not,
//! one flag per line with `\` continuations, quotes, `--flag=value`. Flags
//! that set no decoding rule (the model, the context size, threads) are
//! named in a note and left alone; a flag llama.cpp does not have is refused.

use serde_json::json;

use super::engines::{Engine, LLAMA_SEQUENCE};
use super::llama_flag_names::{Flag, SAMPLER_NAMES, flag_of, nearest_flag, sampler_named};
use super::reading::{Reading, show};
use super::{Dialect, Imported};
use crate::error::{Error, Result};
use crate::rules::StageKind;
use crate::settings::{GenerationSettings, MAX_NEW};

/// llama.cpp's seed meaning "a random seed each run" (`LLAMA_DEFAULT_SEED`).
const RANDOM_SEED: i64 = 0xFFFF_FFFF;

/// A word of the command line and the line it starts on.
#[derive(Debug, Clone, PartialEq)]
struct Word {
    text: String,
    line: usize,
}

/// Splits a pasted command line into words as a POSIX shell would: quotes,
/// backslash escapes and line continuations, `#` comments.
fn words(text: &str) -> Result<Vec<Word>> {
    let mut out = Vec::new();
    let (mut line, mut chars) = (1, text.chars().peekable());
    let mut current: Option<Word> = None;
    while let Some(c) = chars.next() {
        match c {
            '\n' | ' ' | '\t' | '\r' => {
                out.extend(current.take());
                if c == '\n' {
                    line += 1;
                }
            }
            '#' if current.is_none() => {
                while chars.peek().is_some_and(|&c| c != '\n') {
                    chars.next();
                }
            }
            '\\' => match chars.next() {
                Some('\n') => line += 1,
                Some(e) => current.get_or_insert(Word { text: String::new(), line }).text.push(e),
                None => {}
            },
            '\'' | '"' => {
                let start = line;
                let w = current.get_or_insert(Word { text: String::new(), line });
                loop {
                    match chars.next() {
                        Some(q) if q == c => break,
                        Some('\\') if c == '"' && chars.peek().is_some_and(|n| matches!(n, '"' | '\\' | '$' | '`')) => {
                            w.text.push(chars.next().expect("peeked"));
                        }
                        Some(ch) => {
                            line += usize::from(ch == '\n');
                            w.text.push(ch);
                        }
                        None => crate::bail!("line {start}: a {c} quote is never closed"),
                    }
                }
            }
            c => current.get_or_insert(Word { text: String::new(), line }).text.push(c),
        }
    }
    out.extend(current);
    Ok(out)
}

/// The `(flag, value)` pairs of flags that each take a value (an export's).
pub(super) fn flag_pairs(text: &str) -> Vec<(String, String)> {
    let words = words(text).unwrap_or_default();
    words.chunks(2).filter_map(|p| match p {
        [f, v] => Some((f.text.clone(), v.text.clone())),
        _ => None,
    }).collect()
}

/// Whether the text starts with a program's name (`llama-cli`, `./main`).
pub(super) fn starts_with_program(text: &str) -> bool {
    let first = text.split_whitespace().next().unwrap_or("");
    let name = first.rsplit('/').next().unwrap_or(first);
    name.starts_with("llama") || name == "main" || name == "server"
}

fn number(line: usize, flag: &str, v: &str) -> Result<f64> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| Error::new(format!("line {line}: {flag} '{v}' is not a number")))
}

fn whole(line: usize, flag: &str, v: &str) -> Result<i64> {
    v.trim().parse::<i64>().map_err(|_| Error::new(format!("line {line}: {flag} '{v}' is not a whole number")))
}

/// `ID+BIAS`, `ID-BIAS`, `ID-inf` (llama.cpp's `--logit-bias`).
pub(super) fn logit_bias(line: usize, v: &str) -> Result<Option<(u32, f64)>> {
    let bad = || Error::new(format!("line {line}: --logit-bias '{v}' is not TOKEN_ID+BIAS or TOKEN_ID-BIAS (e.g. 15043+1 or 15043-inf)"));
    let at = v.find(['+', '-']).ok_or_else(bad)?;
    let (id, rest) = v.split_at(at);
    if id.is_empty() {
        return Err(bad());
    }
    let Ok(id) = id.trim().parse::<u32>() else {
        return Ok(None);
    };
    let amount: f64 = rest.trim().parse().map_err(|_| bad())?;
    Ok(Some((id, amount)))
}

pub(super) fn import(text: &str, base: &GenerationSettings) -> Result<Imported> {
    let mut r = Reading::new(Engine::LlamaCpp, base);
    let mut words = words(text)?.into_iter().peekable();
    if let Some(first) = words.peek()
        && !first.text.starts_with('-')
    {
        if !starts_with_program(&first.text) {
            crate::bail!("line {}: '{}' is not a flag: llama.cpp's flags start with - or --", first.line, first.text);
        }
        words.next();
    }
    let mut state = FlagState::default();
    while let Some(w) = words.next() {
        let line = w.line;
        let (name, inline) = match w.text.split_once('=') {
            Some((n, v)) if w.text.starts_with('-') => (n.to_string(), Some(v.to_string())),
            _ => (w.text.clone(), None),
        };
        if !name.starts_with('-') {
            crate::bail!("line {line}: '{name}' is not a flag, and no flag before it takes a value");
        }
        let Some(flag) = flag_of(&name) else {
            let hint = nearest_flag(&name).map(|n| format!(" (did you mean {n}?)")).unwrap_or_default();
            crate::bail!("line {line}: {name} is not a llama.cpp flag{hint}");
        };
        let value = if !flag.takes_value() {
            String::new()
        } else if let Some(v) = inline {
            v
        } else {
            match words.next() {
                Some(v) => v.text,
                None => crate::bail!("line {line}: {name} needs a value"),
            }
        };
        state.apply(&mut r, flag, &name, value, line)?;
    }
    state.finish(&mut r)?;
    r.finish(Dialect::LlamaCpp, "llama.cpp flags".to_string())
}

/// What the flags gathered beyond single settings: the sampler sequence,
/// the lists they build up one flag at a time.
#[derive(Default)]
pub(super) struct FlagState {
    sequence: Option<(usize, Vec<StageKind>)>,
    breakers: Option<Vec<String>>,
    biases: Vec<(u32, f64)>,
    banned: Vec<u32>,
    stops: Vec<String>,
    penalties_off: bool,
}

impl FlagState {
    /// Reads one flag (named `name` in the text) with its value.
    pub(super) fn apply(&mut self, r: &mut Reading, flag: Flag, name: &str, value: String, line: usize) -> Result<()> {
        let (name, value) = (name.to_string(), value);
        match flag {
            Flag::Number(key) => r.set(line, &name, key, json!(number(line, &name, &value)?))?,
            Flag::Temperature => {
                let t = number(line, &name, &value)?;
                if t < 0.0 {
                    r.note(line, "temperature", format!("{name} {value}: llama.cpp reads a temperature at or below 0 as greedy; here 0"));
                }
                r.set(line, &name, "temperature", json!(t.max(0.0)))?;
            }
            Flag::TopK => {
                let k = whole(line, &name, &value)?;
                if k < 0 {
                    r.note(line, "top_k", format!("{name} {value}: llama.cpp reads a top-k at or below 0 as off; here 0"));
                }
                r.set(line, &name, "top_k", json!(k.max(0)))?;
            }
            Flag::TopP | Flag::Typical => {
                let key = if matches!(flag, Flag::TopP) { "top_p" } else { "typical_p" };
                let p = number(line, &name, &value)?;
                if p > 1.0 {
                    r.note(line, key, format!("{name} {value}: llama.cpp reads any value at or above 1 as off; here 1"));
                }
                r.set(line, &name, key, json!(p.min(1.0)))?;
            }
            Flag::MinP => {
                let p = number(line, &name, &value)?;
                if p < 0.0 {
                    r.note(line, "min_p", format!("{name} {value}: llama.cpp reads a min-p at or below 0 as off; here 0"));
                }
                r.set(line, &name, "min_p", json!(p.max(0.0)))?;
            }
            Flag::TopNSigma => {
                let n = number(line, &name, &value)?;
                r.set(line, &name, "top_n_sigma", json!(n.max(0.0)))?;
            }
            Flag::RepeatLastN => match whole(line, &name, &value)? {
                -1 => {
                    r.note(line, "penalty_window", format!("{name} -1: llama.cpp's context size; here the whole history (0)"));
                    r.set(line, &name, "penalty_window", json!(0))?;
                }
                0 => {
                    r.set(line, &name, "penalty_window", json!(64))?;
                    r.note(line, "penalty_window", format!("{name} 0 turns llama.cpp's penalties off"));
                    self.penalties_off = true;
                }
                n => r.set(line, &name, "penalty_window", json!(n))?,
            },
            Flag::Samplers => {
                let kinds = value
                    .split([';', ','])
                    .filter(|s| !s.trim().is_empty())
                    .map(|s| sampler_named(s).ok_or_else(|| unknown_sampler(line, &name, s)))
                    .collect::<Result<Vec<_>>>()?;
                self.sequence = Some((line, kinds));
            }
            Flag::SamplingSeq => {
                let kinds = value
                    .chars()
                    .filter(|c| !c.is_whitespace())
                    .map(|c| {
                        SAMPLER_NAMES.iter().find(|(_, l, _)| *l == c).map(|(_, _, k)| *k).ok_or_else(|| {
                            let letters: String = SAMPLER_NAMES.iter().map(|(_, l, _)| *l).collect();
                            Error::new(format!("line {line}: {name}: '{c}' is not one of llama.cpp's sampler letters ({letters})"))
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                self.sequence = Some((line, kinds));
            }
            Flag::LogitBias => match logit_bias(line, &value)? {
                Some((id, b)) if b == f64::NEG_INFINITY => self.banned.push(id),
                Some((id, b)) if b.is_finite() => {
                    let field = crate::rules::rule_field("logit_bias").expect("logit_bias has a field");
                    field.check(&format!("line {line}: {name} {value}: the bias"), b)?;
                    self.biases.push((id, b))
                }
                Some(_) => crate::bail!("line {line}: {name} '{value}': +inf is not a bias here (ban the others instead)"),
                None => r.note(line, "logit_bias", format!("{name} {value}: a token given as text: give its id")),
            },
            Flag::DryBreaker => {
                let list = self.breakers.get_or_insert_with(Vec::new);
                if value != "none" {
                    list.push(value.replace("\\n", "\n").replace("\\t", "\t"));
                }
            }
            Flag::Seed => {
                let s = whole(line, &name, &value)?;
                if s == -1 || s == RANDOM_SEED {
                    r.note(line, "seed", format!("{name} {value}: llama.cpp draws a new seed each run; here the seed stays {}", show(r.get("seed"))));
                } else {
                    r.set(line, &name, "seed", json!(s))?;
                }
            }
            Flag::NPredict => {
                let n = whole(line, &name, &value)?;
                if n < 0 {
                    r.note(line, "max_new", format!("{name} {value}: llama.cpp generates until the end of text; here at most {} tokens a run", show(r.get("max_new"))));
                } else if n as usize > MAX_NEW {
                    r.note(line, "max_new", format!("{name} {value}: a run here makes at most {MAX_NEW} tokens"));
                    r.set(line, &name, "max_new", json!(MAX_NEW))?;
                } else {
                    r.set(line, &name, "max_new", json!(n))?;
                }
            }
            Flag::ReversePrompt => {
                if !value.is_empty() {
                    self.stops.push(value);
                }
            }
            Flag::Unexpressed(why, _) => r.note(line, name.trim_start_matches('-'), format!("{name}: {why}: ignored")),
            Flag::Other(_) => r.note(line, name.trim_start_matches('-'), format!("{name}: not a decoding setting: ignored")),
        }
        Ok(())
    }

    /// Puts the lists in place and settles the chain.
    pub(super) fn finish(self, r: &mut Reading) -> Result<()> {
        if let Some(b) = self.breakers {
            r.put("dry_sequence_breakers", json!(b));
        }
        if !self.biases.is_empty() {
            r.put("logit_bias", json!(self.biases));
        }
        if !self.banned.is_empty() {
            r.put("banned", json!(self.banned));
        }
        if !self.stops.is_empty() {
            r.put("stop", json!(self.stops));
        }
        settle_chain(r, self.sequence, self.penalties_off)
    }
}

fn unknown_sampler(line: usize, flag: &str, name: &str) -> Error {
    let names: Vec<&str> = SAMPLER_NAMES.iter().map(|(n, _, _)| *n).collect();
    Error::new(format!("line {line}: {flag}: '{}' is not one of llama.cpp's samplers ({})", name.trim(), names.join(";")))
}

/// The chain llama.cpp would run: its logit bias first, then the sampler
/// sequence; mirostat replaces the sequence by temperature and itself. A
/// setting whose sampler the sequence leaves out is not applied by
/// llama.cpp, so it is turned off here (with a note when the text set it).
fn settle_chain(r: &mut Reading, sequence: Option<(usize, Vec<StageKind>)>, penalties_off: bool) -> Result<()> {
    if penalties_off {
        for (key, off) in [("repetition_penalty", json!(1.0)), ("presence_penalty", json!(0.0)), ("frequency_penalty", json!(0.0))] {
            if r.said(key) {
                r.turn_off(key, off, "--repeat-last-n 0 turns it off in llama.cpp");
            } else {
                r.put(key, off);
            }
        }
        r.put("penalty_window", json!(64));
    }
    let settings = r.settings()?;
    let s = &settings.rules;
    let mirostat = s.mirostat != 0;
    let (line, seq) = match sequence {
        Some((line, seq)) => (line, seq),
        None => (0, LLAMA_SEQUENCE.to_vec()),
    };
    let kept: Vec<StageKind> = if mirostat { vec![StageKind::Temperature] } else { seq.clone() };
    let why = if mirostat {
        "mirostat replaces llama.cpp's sampler sequence, so it is not applied".to_string()
    } else {
        format!("line {line}'s sampler sequence leaves its sampler out, so llama.cpp does not apply it")
    };
    for kind in LLAMA_SEQUENCE {
        if kept.contains(&kind) || !kind.is_on(s) {
            continue;
        }
        for key in kind.spec().switches {
            let off = serde_json::to_value(crate::rules::RuleSettings::default()).expect("settings serialise")[*key].clone();
            if r.said(key) {
                r.turn_off(key, off, &why);
            } else {
                r.put(key, off);
            }
        }
    }
    let settings = r.settings()?;
    let s = &settings.rules;
    let bias_on = StageKind::BiasBans.is_on(s);
    let chain: Vec<StageKind> = if mirostat {
        vec![StageKind::BiasBans, StageKind::Temperature, StageKind::Mirostat]
    } else if seq == LLAMA_SEQUENCE && !(bias_on && StageKind::Penalties.is_on(s)) {
        Vec::new()
    } else {
        std::iter::once(StageKind::BiasBans).chain(seq).collect()
    };
    r.put("chain", json!(chain));
    r.put("order", json!("llama"));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_as_a_shell_does() {
        let w = words("llama-cli -m m.gguf \\\n  --temp 0.6 # a comment\n --samplers \"top_k;temperature\" -r 'User:'").unwrap();
        let texts: Vec<&str> = w.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(texts, ["llama-cli", "-m", "m.gguf", "--temp", "0.6", "--samplers", "top_k;temperature", "-r", "User:"]);
        assert_eq!(w[3].line, 2);
        assert_eq!(w[5].line, 3);
        assert!(words("--temp '0.7").unwrap_err().message.contains("line 1"));
    }

    #[test]
    fn a_typo_names_the_nearest_flag() {
        let e = import("--temp 0.7\n--tmep 0.7", &GenerationSettings::default()).unwrap_err();
        assert!(e.message.contains("line 2") && e.message.contains("--temp"), "{}", e.message);
    }
}
