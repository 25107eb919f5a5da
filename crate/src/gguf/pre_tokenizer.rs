//! How a byte-level BPE file (`tokenizer.ggml.model = "gpt2"`) splits text
//! into words before merging, by its `tokenizer.ggml.pre` name.
//!
//! A name stands for a list of regular expressions, applied one after the
//! other: each splits every piece left by the one before into its matches
//! and the text between them. These are the expressions of the models'
//! original `tokenizer.json` files as llama.cpp spells them (the reference
//! the GGUF files are checked against: src/llama-vocab.cpp), grouped under
//! the names llama.cpp gives each set. Case-insensitive contractions are
//! spelled out (`'[sS]`) because llama.cpp does.

/// GPT-2's split: contractions, letters, numbers, other symbols, each with
/// an optional leading space; runs of spaces not before a word.
const GPT2: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)";

/// Llama 3's (tiktoken's cl100k): numbers in groups of up to three, a
/// letter run may take one leading non-letter, newlines kept together.
const LLAMA3: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Qwen2's: Llama 3's with every digit alone.
const QWEN2: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Qwen 3.5's: Qwen2's with combining marks kept inside words.
const QWEN35: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// GPT-4o's (o200k): a word is an optional run of capitals then lower-case
/// letters, with its contraction; numbers by three.
const GPT4O: &str = r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Mistral's Tekken: GPT-4o's without contractions, digits alone.
const TEKKEN: &str = r"[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";

const DEEPSEEK_CODER: &[&str] = &[r"[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", r"[一-龥ࠀ-一가-퟿]+", r"\p{N}"];

const DEEPSEEK3: &[&str] = &[
    r"\p{N}{1,3}",
    r"[一-龥぀-ゟ゠-ヿ]+",
    r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"##,
];

/// What llama.cpp does for a file without a known name ("default"): symbol
/// runs first, then GPT-2's split, then numbers cut into threes.
const DEFAULT: &[&str] = &[r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", r"[0-9][0-9][0-9]"];

const FALCON: &[&str] = &[r"[\p{P}\$\+<=>\^~\|`]+", GPT2, r"[0-9][0-9][0-9]"];

const SEED_CODER: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+";

const BAILINGMOE: &str = r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+";

const EXAONE_MOE: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+";

/// A pre-tokenizer and the defaults llama.cpp ties to its name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PreTokenizer {
    /// Applied in order, each to the pieces the one before left.
    pub regexes: &'static [&'static str],
    /// A word that is a token as a whole is taken as that token, without
    /// merging (Llama 3, Tekken).
    pub ignore_merges: bool,
    /// Whether a BOS token is added when the file does not say
    /// (`tokenizer.ggml.add_bos_token` overrides).
    pub add_bos: bool,
}

const fn pre(regexes: &'static [&'static str]) -> PreTokenizer {
    PreTokenizer { regexes, ignore_merges: false, add_bos: false }
}

/// Every name this build knows, for the message refusing another.
pub const KNOWN: &[&str] = &[
    "default", "gpt2", "gpt-2", "phi-2", "mpt", "olmo", "jais", "exaone4", "starcoder", "refact", "command-r", "smollm",
    "codeshell", "exaone", "minerva-7b", "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "lfm2",
    "dbrx", "smaug-bpe", "qwen2", "deepseek-r1-qwen", "megrez", "stablelm2", "hunyuan", "grok-2", "qwen35",
    "deepseek-coder", "deepseek-v3", "hunyuan-dense", "falcon", "gpt-4o", "llama4", "minimax-m2",
    "tekken", "chatglm-bpe", "glm4", "poro-chat", "bloom", "gpt3-finnish", "seed-coder", "bailingmoe", "bailingmoe2",
    "exaone-moe",
];

/// The pre-tokenizer llama.cpp runs for a `tokenizer.ggml.pre` name.
pub fn by_name(name: &str) -> Option<PreTokenizer> {
    Some(match name {
        "default" => pre(DEFAULT),
        // llama.cpp's "gpt2" type; the bare name "gpt2" is how this build's
        // own converter and older files spell it.
        "gpt2" | "gpt-2" | "phi-2" | "mpt" | "olmo" | "jais" | "exaone4" => pre(&[GPT2]),
        "starcoder" | "refact" | "command-r" | "smollm" | "codeshell" | "exaone" | "minerva-7b" => pre(&[r"\p{N}", GPT2]),
        "llama3" | "llama-v3" | "llama-bpe" | "falcon3" | "falcon-h1" | "pixtral" | "lfm2" => {
            PreTokenizer { regexes: &[LLAMA3], ignore_merges: true, add_bos: true }
        }
        "dbrx" | "smaug-bpe" | "chatglm-bpe" | "glm4" => pre(&[LLAMA3]),
        "qwen2" | "deepseek-r1-qwen" | "megrez" | "stablelm2" | "hunyuan" | "grok-2" => pre(&[QWEN2]),
        "qwen35" => pre(&[QWEN35]),
        "deepseek-coder" => pre(DEEPSEEK_CODER),
        "deepseek-v3" | "hunyuan-dense" => pre(DEEPSEEK3),
        "falcon" => pre(FALCON),
        "gpt-4o" | "llama4" | "minimax-m2" => pre(&[GPT4O]),
        "tekken" => PreTokenizer { regexes: &[TEKKEN], ignore_merges: true, add_bos: true },
        "poro-chat" | "bloom" | "gpt3-finnish" => pre(&[r" ?[^(\s|.,!?…。，、।۔،)]+"]),
        "seed-coder" => pre(&[SEED_CODER]),
        "bailingmoe" | "bailingmoe2" => pre(&[BAILINGMOE]),
        "exaone-moe" => pre(&[EXAONE_MOE]),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_name_resolves_and_nothing_else_does() {
        for name in KNOWN {
            assert!(by_name(name).is_some(), "{name}");
        }
        assert!(by_name("no-such-pre").is_none());
    }
}
