//! DRY, "don't repeat yourself" (p-e-w's sampler, in llama.cpp as `dry`): a
//! token that would extend a repeat of the recent text is pushed down, the
//! more the longer the repeat.
//!
//! Over the last `penalty_last_n` tokens of the history (-1: all of it), for
//! each earlier position `j` let `n_j` be how many tokens ending at `j` equal
//! the tokens ending the history (the repeat the history is in, if the token
//! after `j` came next). A sequence breaker (a token whose text holds one of
//! the breaker strings: the session resolves them to ids) ends every repeat:
//! `n_j` is at most the number of tokens after the latest breaker. The token
//! after `j` then gets `multiplier * base^(n - allowed_length)` subtracted
//! from its logit, `n` the largest such `n_j >= allowed_length` (the exponent
//! capped where an f32 would overflow, as llama.cpp does). A breaker token
//! itself is never penalised.
//!
//! llama.cpp also matches breaker strings that span several tokens; here a
//! breaker is one token (the single-token case, by far the common one).

use super::bias::apply_bias_and_bans;
use super::fields::{Control, Field, Group, Range, slot};
use super::settings::{MAX_DRY_ALLOWED_LENGTH, MAX_DRY_BASE, MAX_DRY_MULTIPLIER, MAX_PENALTY_WINDOW};
use super::settings::RuleSettings;
use super::spec::{Apply, StageSpec, Takes};

/// Settings of one DRY evaluation.
#[derive(Clone, Copy, Debug)]
pub struct Dry {
    pub multiplier: f64,
    pub base: f64,
    pub allowed_length: usize,
    /// -1 = the whole history, 0 = off.
    pub penalty_last_n: i64,
}

/// llama.cpp's cap: ln of the largest f32.
const FLOAT_MAX_LOG: f64 = 88.722_839_1;

impl Dry {
    pub fn is_on(&self) -> bool {
        self.multiplier != 0.0 && self.base >= 1.0 && self.penalty_last_n != 0
    }

    /// `(token id, penalty)` for the next position; `breakers` sorted.
    pub fn penalties(&self, history: &[u32], breakers: &[u32]) -> Vec<(u32, f64)> {
        if !self.is_on() {
            return Vec::new();
        }
        let last_n = if self.penalty_last_n < 0 { history.len() } else { (self.penalty_last_n as usize).min(history.len()) };
        let w = &history[history.len() - last_n..];
        let len = w.len();
        if len <= self.allowed_length {
            return Vec::new();
        }
        let is_breaker = |id: u32| breakers.binary_search(&id).is_ok();
        // Tokens after the latest breaker.
        let rep_limit = (0..len).find(|&i| is_breaker(w[len - 1 - i])).unwrap_or(len);
        if rep_limit < self.allowed_length {
            return Vec::new();
        }
        // z[k] = how far w reversed agrees with itself shifted by k: the
        // repeat ending at position len - 1 - k.
        let z = reversed_z(w);
        let mut longest: Vec<(u32, usize)> = Vec::new();
        for k in 1..len {
            let n = z[k].min(rep_limit);
            if n < self.allowed_length {
                continue;
            }
            let next = w[len - k];
            match longest.iter_mut().find(|(id, _)| *id == next) {
                Some((_, m)) => *m = (*m).max(n),
                None => longest.push((next, n)),
            }
        }
        let max_exponent = if self.base > 1.000_001 { (FLOAT_MAX_LOG / self.base.ln()) as usize } else { usize::MAX };
        longest
            .into_iter()
            .filter(|&(id, _)| !is_breaker(id))
            .map(|(id, n)| {
                let exponent = (n - self.allowed_length).min(max_exponent);
                (id, self.multiplier * self.base.powi(exponent as i32))
            })
            .collect()
    }
}

/// The ids of the tokens whose text holds one of `breakers`, sorted: how a
/// breaker string becomes the token ids `Dry::penalties` takes (`text(id)`
/// is a token's decoded piece; the session's tokenizer or the page's list).
pub fn breaker_token_ids<S: AsRef<str>>(vocab_size: usize, text: impl Fn(u32) -> S, breakers: &[String]) -> Vec<u32> {
    if breakers.is_empty() {
        return Vec::new();
    }
    (0..vocab_size as u32).filter(|&id| breakers.iter().any(|b| text(id).as_ref().contains(b.as_str()))).collect()
}

/// The Z-array of `w` read backwards: `z[k]` is the length of the longest
/// common prefix of `rev(w)` and `rev(w)[k..]` (`z[0] = 0`). Linear time.
fn reversed_z(w: &[u32]) -> Vec<usize> {
    let n = w.len();
    let at = |i: usize| w[n - 1 - i];
    let mut z = vec![0; n];
    let (mut left, mut right) = (0, 0);
    for k in 1..n {
        let mut m = if k < right { (right - k).min(z[k - left]) } else { 0 };
        while k + m < n && at(m) == at(k + m) {
            m += 1;
        }
        z[k] = m;
        if k + m > right {
            left = k;
            right = k + m;
        }
    }
    z
}

/// The settings the stage owns (dry_multiplier, dry_base, dry_allowed_length, dry_penalty_last_n).
const FIELDS: &[Field] = &[
    Field::new(
        "dry_multiplier",
        slot!(dry_multiplier: f64),
        Range::closed(0.0, MAX_DRY_MULTIPLIER),
        "0 = off",
        "DRY's strength",
    )
    .control(Control::slider("DRY multiplier", "“don't repeat yourself”: penalty on a token that extends a repeat; 0 = off", 3.0, 0.05, Group::Repeats)),
    Field::new(
        "dry_base",
        slot!(dry_base: f64),
        Range::closed(1.0, MAX_DRY_BASE),
        "",
        "DRY's base",
    )
    .control(Control::slider("DRY base", "the penalty is multiplier × base^(repeat length − allowed length)", 4.0, 0.05, Group::Repeats)),
    Field::new(
        "dry_allowed_length",
        slot!(dry_allowed_length: usize),
        Range::integers(0.0, MAX_DRY_ALLOWED_LENGTH as f64),
        "",
        "The longest repeat DRY leaves alone",
    )
    .control(Control::slider("DRY allowed length", "repeats up to this long are not penalised", 10.0, 1.0, Group::Repeats)),
    Field::new(
        "dry_penalty_last_n",
        slot!(dry_penalty_last_n: i64),
        Range::integers(-1.0, MAX_PENALTY_WINDOW as f64),
        "-1 = the whole history, 0 = off",
        "How many latest tokens DRY looks at",
    )
    .control(Control::slider("DRY window", "latest tokens DRY looks at; −1 = all, 0 = off", 256.0, 1.0, Group::Repeats)),
];

/// The stage: DRY's penalties on the logits.
pub(crate) const SPEC: StageSpec = StageSpec {
    name: "dry",
    label: "DRY",
    what: "\"don't repeat yourself\": subtracts multiplier * base^(n - allowed_length) from a token that would extend a repeat of n >= allowed_length tokens; sequence breakers end the repeat",
    engines: "llama.cpp (dry_*; penalty_last_n -1 = the whole history); single-token breakers only (a breaker string that spans tokens is not matched)",
    reads: &["dry_multiplier", "dry_base", "dry_allowed_length", "dry_penalty_last_n", "dry_sequence_breakers"],
    switches: &["dry_multiplier"],
    fields: FIELDS,
    is_on: |s| Dry::of(s).is_on(),
    apply: Apply::Modifier(|z, history, s, inputs| {
        let penalties = Dry::of(s).penalties(history, &inputs.dry_breakers);
        (!penalties.is_empty()).then(|| {
            let minus: Vec<(u32, f64)> = penalties.iter().map(|&(id, p)| (id, -p)).collect();
            (apply_bias_and_bans(z, &minus, &[]), minus.len())
        })
    }),
    alone: None,
    takes: Takes::Breakers,
    shown_when_off: false,
};

impl Dry {
    /// The DRY settings of `s`.
    pub(crate) fn of(s: &RuleSettings) -> Dry {
        Dry { multiplier: s.dry_multiplier, base: s.dry_base, allowed_length: s.dry_allowed_length, penalty_last_n: s.dry_penalty_last_n }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dry(allowed_length: usize) -> Dry {
        Dry { multiplier: 1.0, base: 2.0, allowed_length, penalty_last_n: -1 }
    }

    /// llama.cpp's own example: "a b c c b c y a b c". The history ends with
    /// "a b c", which also ends at position 2, then came "c": a repeat of 3.
    /// "b c" ends at 5 (then "y"): 2. "c" ends at 3 (then "b"): 1.
    #[test]
    fn worked_example() {
        let (a, b, c, y) = (0, 1, 2, 3);
        let h = [a, b, c, c, b, c, y, a, b, c];
        let mut got = dry(1).penalties(&h, &[]);
        got.sort_by_key(|p| p.0);
        // c: 2^(3-1) = 4; y: 2^(2-1) = 2; b: 2^(1-1) = 1.
        assert_eq!(got, vec![(b, 1.0), (c, 4.0), (y, 2.0)]);
        let mut got = dry(2).penalties(&h, &[]);
        got.sort_by_key(|p| p.0);
        assert_eq!(got, vec![(c, 2.0), (y, 1.0)]);
        // A breaker right after "y" limits every repeat to the 3 tokens after it
        // ... and "y" itself is never penalised.
        let mut got = dry(1).penalties(&h, &[y]);
        got.sort_by_key(|p| p.0);
        assert_eq!(got, vec![(b, 1.0), (c, 4.0)]);
        // A window of 4 tokens: "y a b c" holds no repeat.
        assert!(Dry { penalty_last_n: 4, ..dry(1) }.penalties(&h, &[]).is_empty());
    }

    #[test]
    fn the_z_array_is_the_naive_one() {
        let mut rng = crate::rng::Rng::new(5);
        for _ in 0..200 {
            let n = 1 + (rng.next_u64() % 40) as usize;
            let w: Vec<u32> = (0..n).map(|_| (rng.next_u64() % 3) as u32).collect();
            let r: Vec<u32> = w.iter().rev().copied().collect();
            let z = reversed_z(&w);
            for k in 1..n {
                let naive = (0..n - k).take_while(|&m| r[m] == r[k + m]).count();
                assert_eq!(z[k], naive, "{w:?} k {k}");
            }
        }
    }
}
