//! A pasted JSON object (or Python keyword arguments, as `generate()` takes
//! them) as a list of `(key, value, line)`, so that every message can name
//! the line a key is on.

use serde_json::Value;

use crate::error::{Error, Result};

/// One key of the object, its value and the 1-based line it is on.
pub(super) type Entry = (String, Value, usize);

/// The entries of a JSON object, in the text's order.
pub(super) fn object_entries(text: &str) -> Result<Vec<Entry>> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        Error::new(format!("line {}: this is not valid JSON ({}, column {})", e.line(), strip_position(&e.to_string()), e.column()))
    })?;
    let Value::Object(map) = value else {
        crate::bail!("line 1: expected a JSON object {{ ... }} of settings");
    };
    let mut entries: Vec<Entry> = map.into_iter().map(|(k, v)| {
        let line = line_of_key(text, &k);
        (k, v, line)
    }).collect();
    entries.sort_by_key(|e| e.2);
    Ok(entries)
}

fn strip_position(message: &str) -> String {
    message.split(" at line ").next().unwrap_or(message).to_string()
}

/// The line of the first `"key":` in the text (1 when not found).
fn line_of_key(text: &str, key: &str) -> usize {
    let quoted = serde_json::to_string(key).expect("a key serialises");
    let mut from = 0;
    while let Some(i) = text[from..].find(&quoted) {
        let at = from + i;
        let after = text[at + quoted.len()..].trim_start();
        if after.starts_with(':') {
            return 1 + text[..at].matches('\n').count();
        }
        from = at + quoted.len();
    }
    1
}

/// Whether the text looks like Python keyword arguments (`temperature=0.7, do_sample=True`).
pub(super) fn looks_like_kwargs(text: &str) -> bool {
    let t = text.trim_start();
    let name: String = t.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    !name.is_empty() && t[name.len()..].trim_start().starts_with('=')
}

/// Python keyword arguments as entries: `name=value` items split by commas
/// or new lines, values Python literals (True, False, None, numbers,
/// strings, lists and tuples).
pub(super) fn kwargs_entries(text: &str) -> Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for (item, line) in split_top_level(text)? {
        let Some((name, value)) = item.split_once('=') else {
            crate::bail!("line {line}: '{}' is not name=value", item.trim());
        };
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            crate::bail!("line {line}: '{name}' is not a keyword name");
        }
        let json = python_to_json(value.trim());
        let value: Value = serde_json::from_str(&json)
            .map_err(|_| Error::new(format!("line {line}: {name}={}: not a Python value this reads (a number, True/False/None, a string or a list)", value.trim())))?;
        entries.push((name.to_string(), value, line));
    }
    Ok(entries)
}

/// Splits at commas and new lines outside brackets and quotes.
fn split_top_level(text: &str) -> Result<Vec<(String, usize)>> {
    let (mut out, mut cur, mut depth, mut quote, mut line, mut start_line) = (Vec::new(), String::new(), 0i32, None, 1, 1);
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                cur.push(c);
            }
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                cur.push(c);
            }
            (None, '[' | '(' | '{') => {
                depth += 1;
                cur.push(c);
            }
            (None, ']' | ')' | '}') => {
                depth -= 1;
                cur.push(c);
            }
            (None, ',' | '\n') if depth == 0 => {
                if !cur.trim().is_empty() {
                    out.push((std::mem::take(&mut cur), start_line));
                }
                cur.clear();
            }
            (None, c) => {
                if cur.trim().is_empty() && !c.is_whitespace() {
                    start_line = line;
                }
                cur.push(c);
            }
        }
        if c == '\n' {
            line += 1;
        }
    }
    if quote.is_some() || depth != 0 {
        crate::bail!("line {start_line}: a quote or bracket is never closed");
    }
    if !cur.trim().is_empty() {
        out.push((cur, start_line));
    }
    Ok(out)
}

/// A Python literal written as JSON (True/False/None, single quotes, tuples).
fn python_to_json(v: &str) -> String {
    let mut out = String::new();
    let mut chars = v.chars().peekable();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        out.push_str(match word.as_str() {
            "True" => "true",
            "False" => "false",
            "None" => "null",
            w => w,
        });
        word.clear();
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                flush(&mut word, &mut out);
                let mut s = String::new();
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                    s.push(d);
                }
                out.push_str(&serde_json::to_string(&s).expect("a string serialises"));
            }
            '(' => {
                flush(&mut word, &mut out);
                out.push('[');
            }
            ')' => {
                flush(&mut word, &mut out);
                out.push(']');
            }
            c if c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-' || c == '+' => word.push(c),
            c => {
                flush(&mut word, &mut out);
                out.push(c);
            }
        }
    }
    flush(&mut word, &mut out);
    // A one-element tuple's trailing comma: `(5,)`.
    out.replace(",]", "]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_carry_their_lines() {
        let e = object_entries("{\n  \"a\": 1,\n  \"b\": [1, 2]\n}").unwrap();
        assert_eq!(e[0], ("a".to_string(), serde_json::json!(1), 2));
        assert_eq!(e[1].2, 3);
        let bad = object_entries("{\n  \"a\": 1,\n  \"b\": \n}").unwrap_err();
        assert!(bad.message.starts_with("line 4"), "{}", bad.message);
    }

    #[test]
    fn python_keywords_read_as_json() {
        let e = kwargs_entries("do_sample=True, temperature=0.7,\ntop_k=None, sequence_bias=[((5,), -1.5)], stop_strings=['a', \"b\"]").unwrap();
        assert_eq!(e[0].1, serde_json::json!(true));
        assert_eq!(e[2].1, serde_json::Value::Null);
        assert_eq!(e[2].2, 2);
        assert_eq!(e[3].1, serde_json::json!([[[5], -1.5]]));
        assert_eq!(e[4].1, serde_json::json!(["a", "b"]));
    }
}
