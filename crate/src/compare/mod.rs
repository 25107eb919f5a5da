//! Two decoding configurations side by side on one model and prompt: at
//! one position (`side_by_side`: their kept sets over the same raw logits,
//! the probability each gives the tokens, their entropies, the token each
//! draws with the same coin), and over N continuations each from the same
//! seeds (`stats`; the session runs them, `session::compare_job`).

mod side_by_side;
mod stats;

pub use side_by_side::{Side, SideBySide, SideRow, side_by_side};
pub use stats::{Continuation, RunStats, distinct_n, seq_rep};

use serde::Serialize;

/// The most continuations a comparison runs per configuration.
pub const MAX_RUNS: usize = 64;

/// One configuration's continuations and their measures.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct RunSet {
    pub stats: RunStats,
    pub continuations: Vec<Continuation>,
}

impl RunSet {
    pub fn new(continuations: Vec<Continuation>) -> RunSet {
        RunSet { stats: RunStats::of(&continuations), continuations }
    }
}

/// Both configurations' continuations.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct CompareReport {
    pub a: RunSet,
    pub b: RunSet,
    pub runs: usize,
    pub max_new: usize,
    /// Continuation i of either side was drawn with seed `first_seed + i`.
    pub first_seed: u64,
}

/// How far a comparison has run.
#[derive(Serialize, Clone, Copy, Debug, PartialEq)]
pub struct CompareProgress {
    /// Continuations finished, both sides together.
    pub done_runs: usize,
    pub total_runs: usize,
    /// Tokens generated so far, both sides together.
    pub tokens: usize,
    pub finished: bool,
}
