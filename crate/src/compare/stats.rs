//! What a set of continuations of one prompt says about a decoding
//! configuration, each measure from its paper:
//! - distinct-n (Li et al., 2016, "A Diversity-Promoting Objective Function
//!   for Neural Conversation Models"): distinct n-grams over all n-grams,
//!   across the continuations (an n-gram never spans two of them);
//! - the mean log-probability of the chosen tokens under the model's own,
//!   untempered distribution (nats per token);
//! - the repetition rate, seq-rep-4 (Welleck et al., 2020, "Neural Text
//!   Generation with Unlikelihood Training"): per continuation, 1 - distinct
//!   4-grams / 4-grams, averaged over the continuations long enough to hold one;
//! - the share of continuations that stopped before `max_new` (the model's
//!   end of text, or a stop string).

use std::collections::HashSet;

use serde::Serialize;

use crate::report::StopReason;

/// One continuation: its tokens, text, why it stopped and how likely the
/// untempered model found each of its tokens.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Continuation {
    pub text: String,
    pub tokens: Vec<u32>,
    pub stop: StopReason,
    /// ln p of each chosen token under softmax(raw logits).
    #[serde(skip)]
    pub logprobs: Vec<f64>,
    pub mean_logprob: f64,
}

impl Continuation {
    pub fn new(text: String, tokens: Vec<u32>, stop: StopReason, logprobs: Vec<f64>) -> Continuation {
        let mean_logprob = mean(&logprobs);
        Continuation { text, tokens, stop, logprobs, mean_logprob }
    }
}

/// The measures over a configuration's continuations.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct RunStats {
    pub runs: usize,
    pub tokens: usize,
    pub distinct_1: f64,
    pub distinct_2: f64,
    pub mean_logprob: f64,
    pub repetition_rate: f64,
    pub stopped_early: f64,
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 }
}

/// Distinct n-grams over all n-grams across `runs` (0 when there is none).
pub fn distinct_n(runs: &[&[u32]], n: usize) -> f64 {
    let (mut seen, mut total) = (HashSet::new(), 0usize);
    for r in runs {
        for gram in r.windows(n) {
            seen.insert(gram);
            total += 1;
        }
    }
    if total == 0 { 0.0 } else { seen.len() as f64 / total as f64 }
}

/// seq-rep-n of one sequence: 1 - distinct n-grams / n-grams (None when
/// shorter than n).
pub fn seq_rep(tokens: &[u32], n: usize) -> Option<f64> {
    let grams: Vec<&[u32]> = tokens.windows(n).collect();
    if grams.is_empty() {
        return None;
    }
    let distinct: HashSet<&[u32]> = grams.iter().copied().collect();
    Some(1.0 - distinct.len() as f64 / grams.len() as f64)
}

impl RunStats {
    pub fn of(continuations: &[Continuation]) -> RunStats {
        let runs: Vec<&[u32]> = continuations.iter().map(|c| c.tokens.as_slice()).collect();
        let all_logprobs: Vec<f64> = continuations.iter().flat_map(|c| c.logprobs.iter().copied()).collect();
        let reps: Vec<f64> = runs.iter().filter_map(|r| seq_rep(r, 4)).collect();
        let early = continuations.iter().filter(|c| matches!(c.stop, StopReason::Eos | StopReason::StopString)).count();
        RunStats {
            runs: continuations.len(),
            tokens: all_logprobs.len(),
            distinct_1: distinct_n(&runs, 1),
            distinct_2: distinct_n(&runs, 2),
            mean_logprob: mean(&all_logprobs),
            repetition_rate: mean(&reps),
            stopped_early: if continuations.is_empty() { 0.0 } else { early as f64 / continuations.len() as f64 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_n_counts_across_runs_without_spanning_them() {
        let a = [1, 2, 1, 2];
        let b = [2, 1];
        // unigrams: 6 in all, {1, 2} distinct; bigrams: (1,2) (2,1) (1,2) | (2,1): 4, 2 distinct.
        assert_eq!(distinct_n(&[&a, &b], 1), 2.0 / 6.0);
        assert_eq!(distinct_n(&[&a, &b], 2), 2.0 / 4.0);
        assert_eq!(distinct_n(&[&[7]], 2), 0.0);
    }

    #[test]
    fn seq_rep_4_is_welleck_et_als() {
        // 4-grams of 1 2 3 4 1 2 3 4: 1234 2341 3412 4123 1234 -> 4 distinct of 5.
        assert!((seq_rep(&[1, 2, 3, 4, 1, 2, 3, 4], 4).unwrap() - 0.2).abs() < 1e-12);
        assert_eq!(seq_rep(&[1, 2, 3], 4), None);
        assert_eq!(seq_rep(&[5, 5, 5, 5, 5], 4), Some(0.5));
    }

    #[test]
    fn stats_average_over_tokens_and_runs() {
        let c = |t: Vec<u32>, stop, lp: Vec<f64>| Continuation::new(String::new(), t, stop, lp);
        let s = RunStats::of(&[c(vec![1, 2], StopReason::Eos, vec![-1.0, -2.0]), c(vec![3], StopReason::MaxNew, vec![-3.0])]);
        assert_eq!((s.runs, s.tokens), (2, 3));
        assert_eq!(s.mean_logprob, -2.0);
        assert_eq!(s.stopped_early, 0.5);
        assert_eq!(s.distinct_1, 1.0);
    }
}
