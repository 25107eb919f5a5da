//! Two configurations' continuations of one prompt, a token at a time:
//! `compare_start`, `compare_next` per token, `compare_finish` or
//! `compare_cancel`. The browser's worker yields between tokens, so the page
//! stays answered and the next request can cancel. Continuation i of A and
//! of B are drawn with the same seed; they alternate (A0, B0, A1, ...), so a
//! comparison cut short is still even. The runs use the model's cache;
//! ending a comparison in any way rebuilds the session's pending position,
//! and the comparison's model work is left out of the generation's counters.

use super::{Session, window_start};
use crate::bail;
use crate::compare::{CompareProgress, CompareReport, Continuation, MAX_RUNS, RunSet};
use crate::counters::Counters;
use crate::error::Result;
use crate::lm;
use crate::position::{Position, Vocabulary};
use crate::report::{self, StopReason};
use crate::rng::Rng;
use crate::rules::{self, SamplerState};
use crate::settings::GenerationSettings;

pub(super) struct CompareJob {
    prompt: Vec<u32>,
    settings: [GenerationSettings; 2],
    runs: usize,
    first_seed: u64,
    /// Finished continuations, A's then B's.
    done: [Vec<Continuation>; 2],
    current: Option<Run>,
    tokens: usize,
    /// The model's counters when the comparison began.
    counters_before: Counters,
}

/// The continuation being drawn.
struct Run {
    side: usize,
    position: Position,
    rng: Rng,
    mu: Option<f64>,
    tokens: Vec<u32>,
    logprobs: Vec<f64>,
}

impl CompareJob {
    fn progress(&self) -> CompareProgress {
        let done_runs = self.done[0].len() + self.done[1].len();
        CompareProgress { done_runs, total_runs: 2 * self.runs, tokens: self.tokens, finished: done_runs == 2 * self.runs }
    }
}

/// ln p(id) under softmax(logits).
fn log_prob(logits: &[f64], id: usize) -> f64 {
    let top = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = logits.iter().map(|&z| (z - top).exp()).sum();
    logits[id] - top - sum.ln()
}

impl Session {
    /// Starts comparing `a` and `b`: `runs` continuations of `prompt` each,
    /// of at most `max_new` tokens, continuation i with seed `a.seed + i`
    /// on both sides. Advanced by `compare_next`, ended by `compare_finish`
    /// or `compare_cancel`; any other call that uses the model cancels it.
    pub fn compare_start(&mut self, prompt: &str, a: &GenerationSettings, b: &GenerationSettings, runs: usize, max_new: usize) -> Result<CompareProgress> {
        if !(1..=MAX_RUNS).contains(&runs) {
            bail!("runs must be between 1 and {MAX_RUNS}, got {runs}");
        }
        let info = self.model.info();
        let mut settings = [a.clone(), b.clone()];
        for (s, name) in settings.iter_mut().zip(["A", "B"]) {
            s.max_new = max_new;
            s.validate(info.vocab_size).map_err(|e| crate::error::Error::new(format!("configuration {name}: {}", e.message)))?;
        }
        if a.seed.checked_add(runs as u64 - 1).is_none_or(|last| last > crate::settings::MAX_SEED) {
            bail!("seed {} + {runs} runs passes the largest seed", a.seed);
        }
        // The prompt as a generation would read it (A's chat switch).
        let ids = self.encode_prompt(prompt, a.chat)?;
        if ids.is_empty() {
            bail!("the prompt is empty: type at least one character");
        }
        if ids.len() >= info.context {
            bail!("the prompt has {} tokens but the context holds {}: shorten it", ids.len(), info.context);
        }
        self.beam_cancel()?;
        self.compare_cancel()?;
        let job = CompareJob {
            prompt: ids,
            first_seed: a.seed,
            settings,
            runs,
            done: [Vec::new(), Vec::new()],
            current: None,
            tokens: 0,
            counters_before: self.model.counters(),
        };
        let progress = job.progress();
        self.compare_job = Some(job);
        Ok(progress)
    }

    /// One token of the comparison (or the prompt of its next continuation).
    pub fn compare_next(&mut self) -> Result<CompareProgress> {
        let Some(mut job) = self.compare_job.take() else { bail!("no comparison in progress (it ended or was cancelled)") };
        let result = self.advance(&mut job);
        let progress = job.progress();
        self.compare_job = Some(job);
        result.map(|()| progress)
    }

    fn advance(&mut self, job: &mut CompareJob) -> Result<()> {
        if job.progress().finished {
            return Ok(());
        }
        let Some(mut run) = job.current.take() else {
            let k = job.done[0].len() + job.done[1].len();
            let (side, index) = (k % 2, k / 2);
            let seed = job.first_seed + index as u64;
            self.model.truncate(0);
            let mut position = Position::default();
            let logits = self.model.forward_cached(&job.prompt)?;
            position.set_logits(logits.iter().map(|&x| x as f64).collect(), lm::check_output(&logits, job.prompt.len()));
            position.history = job.prompt.clone();
            position.index = job.prompt.len();
            let rng = Rng::new(seed);
            position.state = SamplerState { next_coin: rng.clone().next_f64(), mirostat_mu: None };
            job.current = Some(Run { side, position, rng, mu: None, tokens: Vec::new(), logprobs: Vec::new() });
            return Ok(());
        };
        let s = &job.settings[run.side];
        let drawn = {
            let text = |id| self.tokenizer.id_to_piece(id);
            let names = report::describer(self.tokenizer.as_ref());
            let vocabulary = Vocabulary { size: self.tokenizer.vocab_size(), text: &text };
            run.position.draw(s, &mut run.rng, &vocabulary, &names)?
        };
        let id = drawn.id;
        run.logprobs.push(log_prob(run.position.logits(), id as usize));
        run.tokens.push(id);
        job.tokens += 1;
        if let Some(mu) = drawn.inputs.mirostat_mu {
            run.mu = Some(rules::next_mu(mu, s.rules.mirostat_tau, s.rules.mirostat_eta, drawn.final_probs.get(id as usize)));
        }
        let info = self.model.info();
        let text = self.tokenizer.decode(&run.tokens);
        let stop = if Some(id) == info.eos_id || self.tokenizer.ends_generation(id) {
            Some(StopReason::Eos)
        } else if s.stop.iter().any(|x| text.contains(x.as_str())) {
            Some(StopReason::StopString)
        } else if run.tokens.len() >= s.max_new {
            Some(StopReason::MaxNew)
        } else if self.model.cache_len() + 1 > info.context {
            Some(StopReason::ContextFull)
        } else {
            None
        };
        if let Some(stop) = stop {
            job.done[run.side].push(Continuation::new(text, run.tokens, stop, run.logprobs));
            return Ok(());
        }
        let logits = self.model.forward_cached(&[id])?;
        let index = job.prompt.len() + run.tokens.len();
        run.position.set_logits(logits.iter().map(|&x| x as f64).collect(), lm::check_output(&logits, index));
        run.position.history.push(id);
        run.position.index = index;
        run.position.state = SamplerState { next_coin: run.rng.clone().next_f64(), mirostat_mu: run.mu };
        job.current = Some(run);
        Ok(())
    }

    /// Ends the comparison with both sides' continuations so far and puts
    /// the session's state back.
    pub fn compare_finish(&mut self) -> Result<CompareReport> {
        let Some(job) = self.compare_job.take() else { bail!("no comparison in progress (it ended or was cancelled)") };
        let before = job.counters_before;
        let [a, b] = job.done;
        let report = CompareReport { a: RunSet::new(a), b: RunSet::new(b), runs: job.runs, max_new: job.settings[0].max_new, first_seed: job.first_seed };
        self.restore_after_compare(before)?;
        Ok(report)
    }

    /// Drops a comparison in progress, if any, and puts the session's state back.
    pub fn compare_cancel(&mut self) -> Result<()> {
        if let Some(job) = self.compare_job.take() {
            self.restore_after_compare(job.counters_before)?;
        }
        Ok(())
    }

    /// The cache holds the comparison's last run: the session's window is
    /// prefilled again, and all of it counted as side work.
    fn restore_after_compare(&mut self, before: Counters) -> Result<()> {
        let restored = if self.position.is_set() {
            let (shadow, check) = (self.naive_shadow, self.cache_check.clone());
            let start = window_start(self.prompt.len(), self.history().len(), self.model.info().context);
            let r = self.refill_from(start, check.is_none());
            self.naive_shadow = shadow;
            self.cache_check = check;
            self.sync_position();
            r
        } else {
            self.model.truncate(0);
            Ok(())
        };
        let after = self.model.counters();
        self.beam_work.cached.add(after.cached.minus(before.cached));
        self.beam_work.naive.add(after.naive.minus(before.naive));
        restored
    }
}
