//! Comparing the engine's logits with llama.cpp's recorded top-10, shared by
//! the tests that read `tests/fixtures/families-llamacpp.json` and
//! `tests/fixtures/gemma3-llamacpp.json` (both written by
//! `pkg-scripts/make-family-fixtures`).
//!
//! A fixture's top-10 is `[[id, logit], ...]`, sorted by logit descending.
//! Closeness is measured as in `smollm2_gguf.rs`: the largest difference on
//! llama.cpp's ten ids, raw and after removing each side's mean over them
//! (the error in log p_i/p_j, which is what every probability depends on).

#![allow(dead_code)] // each test binary uses its own part

use nexttoken::lm::LanguageModel;
use serde_json::Value;

/// How far apart two sets of logits are, or how far they may be.
#[derive(Default, Clone, Copy, Debug, PartialEq)]
pub struct Gap {
    /// max |ours − llama.cpp|
    pub abs: f64,
    /// The same after subtracting each side's mean over llama.cpp's top-10 ids.
    pub centred: f64,
}

impl Gap {
    pub fn max(self, o: Gap) -> Gap {
        Gap { abs: self.abs.max(o.abs), centred: self.centred.max(o.centred) }
    }

    /// `{"abs": .., "centred": ..}` from a fixture.
    pub fn from_json(v: &Value) -> Gap {
        Gap { abs: v["abs"].as_f64().expect("abs"), centred: v["centred"].as_f64().expect("centred") }
    }
}

pub fn read_json(path: &str) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path} is committed: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub fn ids_of(v: &Value) -> Vec<u32> {
    v.as_array().expect("an id list").iter().map(|x| u32::try_from(x.as_u64().expect("an id")).expect("a u32 id")).collect()
}

pub fn top_of(v: &Value) -> Vec<(usize, f64)> {
    v.as_array()
        .expect("a top-10 list")
        .iter()
        .map(|p| (p[0].as_u64().expect("an id") as usize, p[1].as_f64().expect("a logit")))
        .collect()
}

/// llama.cpp's margin between its first and second token.
pub fn margin(reference: &[(usize, f64)]) -> f64 {
    reference[0].1 - reference[1].1
}

pub fn argmax(row: &[f32]) -> usize {
    // the lowest id on a tie, as the fixture's greedy runs (np.argmax)
    let mut best = 0;
    for (i, &v) in row.iter().enumerate() {
        if v > row[best] {
            best = i;
        }
    }
    best
}

/// Our logits at one position against llama.cpp's top-10 there, within
/// `tol`. The top-1 must agree wherever llama.cpp's top-2 margin exceeds
/// the centred tolerance. With `strict` the top-10 sets must share 9 tokens
/// (at each prompt's last position); elsewhere (greedy steps, every
/// position of a pass) a near-tie at rank 10 may swap, so there every
/// llama.cpp top-10 token clearly above our 10th logit must be in our top-10.
pub fn compare(what: &str, ours: &[f32], reference: &[(usize, f64)], tol: Gap, strict: bool) -> Gap {
    assert!(reference.len() == 10, "{what}: the fixture has {} logits, not 10", reference.len());
    let our_top: Vec<usize> = nexttoken::rules::top_indices(&ours.iter().map(|&v| v as f64).collect::<Vec<_>>(), 10);
    if margin(reference) > tol.centred {
        assert_eq!(our_top[0], reference[0].0, "{what}: top-1 differs (ours {our_top:?}, llama.cpp {reference:?})");
    }
    let overlap = reference.iter().filter(|(id, _)| our_top.contains(id)).count();
    if strict {
        assert!(overlap >= 9, "{what}: top-10 overlap {overlap}/10 (ours {our_top:?}, llama.cpp {reference:?})");
    } else {
        let our_tenth = ours[our_top[9]] as f64;
        for &(id, _) in reference {
            let clearly_in = ours[id] as f64 > our_tenth + tol.centred;
            assert!(!clearly_in || our_top.contains(&id), "{what}: token {id} is missing from our top-10 {our_top:?}");
        }
    }
    let n = reference.len() as f64;
    let our_mean = reference.iter().map(|&(id, _)| ours[id] as f64).sum::<f64>() / n;
    let ref_mean = reference.iter().map(|&(_, l)| l).sum::<f64>() / n;
    let mut gap = Gap::default();
    for &(id, logit) in reference {
        let d = ours[id] as f64 - logit;
        gap = gap.max(Gap { abs: d.abs(), centred: (d - (our_mean - ref_mean)).abs() });
    }
    assert!(
        gap.abs <= tol.abs && gap.centred <= tol.centred,
        "{what}: logits differ from llama.cpp's by {gap:?} (tolerance {tol:?}); ours {:?}, llama.cpp {reference:?}",
        reference.iter().map(|&(id, _)| ours[id]).collect::<Vec<_>>()
    );
    gap
}

/// What a greedy run checked.
#[derive(Debug, Default)]
pub struct GreedyCheck {
    pub gap: Gap,
    /// Steps whose token was compared (all, or up to the first near-tie).
    pub equal_steps: usize,
    /// The first step where llama.cpp's top-2 margin was within the
    /// tolerance: from there the two runs may take different branches.
    pub near_tie_at: Option<usize>,
}

/// Our own greedy run from `first` (the logits after the prompt, whose
/// tokens `lm` holds in its cache) against llama.cpp's: the same tokens up to
/// the first near-tie, and at each step up to there the same logits.
pub fn check_greedy(what: &str, lm: &mut dyn LanguageModel, first: Vec<f32>, greedy: &[u32], tops: &[Value], tol: Gap) -> GreedyCheck {
    assert_eq!(greedy.len(), tops.len());
    let mut out = GreedyCheck::default();
    let mut row = first;
    for (step, (&chosen, top)) in greedy.iter().zip(tops).enumerate() {
        let reference = top_of(top);
        assert_eq!(reference[0].0, chosen as usize, "{what}: the fixture's greedy step {step} is its own top-1");
        out.gap = out.gap.max(compare(&format!("{what}, greedy step {step}"), &row, &reference, tol, false));
        if margin(&reference) <= tol.centred {
            out.near_tie_at = Some(step);
            break;
        }
        let ours = argmax(&row) as u32;
        assert_eq!(ours, chosen, "{what}: greedy step {step} picks {ours}, llama.cpp {chosen} (margin {})", margin(&reference));
        out.equal_steps += 1;
        if step + 1 < greedy.len() {
            row = lm.forward_cached(&[ours]).expect("a decode step");
        }
    }
    out
}

/// The real models the tests check, by short name: (file under www/models,
/// the variable that points elsewhere, the variable that makes it required,
/// the script that fetches it).
const REAL_MODELS: [(&str, &str, &str, &str, &str); 2] = [
    ("smollm2", "smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", "NEXTTOKEN_SMOLLM2", "NEXTTOKEN_REQUIRE_SMOLLM2", "pkg-scripts/fetch-smollm2"),
    ("gemma3", "gemma3/gemma-3-270m-q4_k_m.gguf", "NEXTTOKEN_GEMMA3", "NEXTTOKEN_REQUIRE_GEMMA3", "pkg-scripts/fetch-gemma3"),
];

/// A real model file's bytes ("smollm2" or "gemma3"), or None with a
/// SKIPPED message when it is absent; absent while its REQUIRE variable is
/// 1 (as the README's test command sets it), it fails.
pub fn real_model(name: &str) -> Option<Vec<u8>> {
    let &(_, file, path_var, require_var, fetch) = REAL_MODELS.iter().find(|m| m.0 == name).expect("a known real model");
    let path = match std::env::var_os(path_var) {
        Some(p) => std::path::PathBuf::from(p),
        None => std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../www/models")).join(file),
    };
    match std::fs::read(&path) {
        Ok(bytes) => Some(bytes),
        Err(e) if std::env::var(require_var).is_ok_and(|v| v == "1") => {
            panic!("{} is required ({require_var}=1) but cannot be read: {e}", path.display())
        }
        Err(_) => {
            eprintln!("SKIPPED: {} is absent; run {fetch} to check it", path.display());
            None
        }
    }
}
