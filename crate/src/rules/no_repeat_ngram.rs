//! Hugging Face's `no_repeat_ngram_size`: a token that would complete an
//! n-gram already present in the history gets probability 0.

use super::bias::apply_bias_and_bans;
use super::fields::{Control, Field, Group, Range, slot};
use super::settings::MAX_NGRAM;
use super::spec::{Apply, StageSpec, Takes};

use std::collections::BTreeSet;

/// The ids banned at the next position: every `t` such that the last `n - 1`
/// tokens of `history` followed by `t` occur in `history` (for `n = 1`: every
/// token of the history). `n = 0`, or a history shorter than `n - 1`, bans none.
pub fn banned_by_ngrams(history: &[u32], n: usize) -> BTreeSet<u32> {
    let mut banned = BTreeSet::new();
    if n == 0 || history.len() + 1 < n {
        return banned;
    }
    let prefix = &history[history.len() + 1 - n..];
    for window in history.windows(n) {
        if window[..n - 1] == *prefix {
            banned.insert(window[n - 1]);
        }
    }
    banned
}

/// The settings the stage owns (no_repeat_ngram_size).
const FIELDS: &[Field] = &[
    Field::new(
        "no_repeat_ngram_size",
        slot!(no_repeat_ngram_size: usize),
        Range::integers(0.0, MAX_NGRAM as f64),
        "0 = off",
        "Ban tokens that would repeat an n-gram of this size",
    )
    .control(Control::slider("No-repeat n-gram size", "ban any token that would repeat an n-gram of this size; 0 = off", 8.0, 1.0, Group::Repeats)),
];

/// The stage: bans what would repeat an n-gram.
pub(crate) const SPEC: StageSpec = StageSpec {
    name: "no_repeat_ngram",
    label: "no-repeat n-gram",
    what: "bans every token that would repeat an n-gram already in the history",
    engines: "Hugging Face (no_repeat_ngram_size)",
    reads: &["no_repeat_ngram_size"],
    switches: &["no_repeat_ngram_size"],
    fields: FIELDS,
    is_on: |s| s.no_repeat_ngram_size > 0,
    apply: Apply::Modifier(|z, history, s, _| {
        let banned: Vec<u32> = banned_by_ngrams(history, s.no_repeat_ngram_size).into_iter().collect();
        (!banned.is_empty()).then(|| (apply_bias_and_bans(z, &[], &banned), banned.len()))
    }),
    alone: None,
    takes: Takes::Nothing,
    shown_when_off: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bans_what_would_repeat_a_bigram() {
        // "a b c a" with n = 2: after "a" came "b", so "b" is banned.
        assert_eq!(banned_by_ngrams(&[0, 1, 2, 0], 2), BTreeSet::from([1]));
        // n = 3: the last two, (2, 0), never occurred before... only at the end.
        assert_eq!(banned_by_ngrams(&[0, 1, 2, 0], 3), BTreeSet::new());
        assert_eq!(banned_by_ngrams(&[0, 1, 0, 1, 0], 3), BTreeSet::from([1]));
        assert_eq!(banned_by_ngrams(&[3, 3, 5], 1), BTreeSet::from([3, 5]));
        assert_eq!(banned_by_ngrams(&[3], 3), BTreeSet::new());
    }
}
