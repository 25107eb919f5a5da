//! How a token's bytes are shown on the page and in the CLI: whitespace as
//! visible symbols, anything unprintable or incomplete as `<0xNN>`.

/// Shows `bytes` readably: space `␣`, newline `↵`, tab `⇥`; other control
/// characters, and bytes that do not form a whole UTF-8 character, as
/// `<0xNN>` per byte.
pub fn display_bytes(bytes: &[u8]) -> String {
    let mut out = String::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(text) => {
                push_text(&mut out, text);
                break;
            }
            Err(err) => {
                let (valid, after) = rest.split_at(err.valid_up_to());
                push_text(&mut out, std::str::from_utf8(valid).unwrap_or_default());
                // A broken sequence (or an incomplete tail) shows its bytes one by one.
                let bad = err.error_len().unwrap_or(after.len());
                for &b in &after[..bad] {
                    push_byte(&mut out, b);
                }
                rest = &after[bad..];
            }
        }
    }
    out
}

fn push_text(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            ' ' => out.push('␣'),
            '\n' => out.push('↵'),
            '\t' => out.push('⇥'),
            c if c.is_control() => {
                let mut buf = [0u8; 4];
                for &b in c.encode_utf8(&mut buf).as_bytes() {
                    push_byte(out, b);
                }
            }
            c => out.push(c),
        }
    }
}

fn push_byte(out: &mut String, byte: u8) {
    out.push_str(&format!("<0x{byte:02X}>"));
}
