//! Hugging Face's `no_repeat_ngram_size`: a token that would complete an
//! n-gram already present in the history gets probability 0.

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
