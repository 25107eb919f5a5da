//! The generation loop: a `Session` owns the model (with its KV cache), the
//! tokenizer, the token history and the RNG, and yields one `StepReport`
//! per token.
//!
//! ```text
//! start(prompt):  encode ─► prefill (one pass, causal mask) ─► pending raw logits
//! step():         rules on pending logits ─► draw(coin) ─► append ─► stop? ─► decode(1 token) ─► pending
//!                 (the report carries that token and the text it completed; start's and
//!                 rewind's carry the whole transcript)
//! preview():      rules on pending logits with new settings (no model call)
//! rewind(n):      keep n generated tokens: truncate the cache, re-run the last token, restore the RNG
//! ```
//!
//! Over 400 lines, one file: its core moves (start, step, rewind and the
//! cache refills they share) read and move the same state together
//! (history, cache length, pending logits, RNG), which is the invariant a
//! rewind must restore; the parts that stand alone are their own modules
//! (`beam_job`, `compare_job`, `inside_view`, `sampler_state`, `step_report`).

use crate::bail;
use crate::beam;
use crate::counters::{Counters, PathCost};
use crate::error::Result;
use crate::inside::Capture;
use crate::lm::{self, LanguageModel, ModelInfo};
use crate::position::Position;
use crate::report::{CacheCheck, ChosenToken, Distribution, StepReport, StopReason};
use crate::rng::Rng;
use crate::report;
use crate::rules;
use crate::tokenizer::Tokenizer;

mod beam_job;
mod compare_job;
mod inside_view;
mod sampler_state;
mod step_report;

// The settings used to live here; `session::GenerationSettings` still names them.
pub use crate::settings::{ContextPolicy, GenerationSettings};

/// A generated token and what it took to choose it.
#[derive(Debug, Clone, PartialEq)]
struct Generated {
    chosen: ChosenToken,
    /// The RNG before this token's draw: rewinding to here restores it.
    rng_before: Rng,
    /// Mirostat's mu before this token (restored with the RNG).
    mu_before: Option<f64>,
}

pub struct Session {
    model: Box<dyn LanguageModel>,
    tokenizer: Box<dyn Tokenizer>,
    /// Prompt tokens, as typed (the cache holds `history()[dropped..]`).
    prompt: Vec<u32>,
    generated: Vec<Generated>,
    rng: Rng,
    /// Mirostat's mu for the next token (None: 2 tau).
    mirostat_mu: Option<f64>,
    /// The next position: its raw logits (never modified: every rule
    /// copies), their summary, and the history and sampler state it is
    /// previewed and drawn with (`sync_position`), DRY's breakers as ids.
    position: Position,
    stopped: Option<StopReason>,
    /// What a full recompute would have cost for the steps run with the cache.
    naive_shadow: PathCost,
    cache_check: Option<CacheCheck>,
    /// Tokens at the front of the history that the sliding window dropped.
    dropped: usize,
    /// Bytes at the end of the history that do not yet make a whole
    /// character: the next token's text starts with them (`append_text`).
    held: Vec<u8>,
    /// A request changed the history and failed before its report went out,
    /// so the reader's transcript is behind: the next report carries it whole.
    full_owed: bool,
    /// Model work done by beam searches and comparisons, which the
    /// generation's counters leave out.
    beam_work: Counters,
    /// A beam search advanced one depth per `beam_next` (the browser's
    /// cancellable search); the cache is the search's until it ends.
    beam_job: Option<beam::BeamSearch>,
    /// Two configurations' continuations advanced one token per
    /// `compare_next`; the cache is the comparison's until it ends.
    compare_job: Option<compare_job::CompareJob>,
    /// Reports carry the inside view (`inside_view`): every pass that makes
    /// a pending position captures what it read.
    inside: bool,
    /// The pending position's capture (inside on, and a model with layers).
    pending_capture: Option<Capture>,
    /// Whether the inside view's reports run the logit lens (the costly
    /// part: the LM head once per layer); a caller coalescing a run's
    /// reports to what it can show turns it off between them.
    lens_on: bool,
    /// Model work done to capture a pending position again (`inside_now`),
    /// which the generation's counters leave out.
    inside_work: Counters,
}

impl Session {
    pub fn new(model: Box<dyn LanguageModel>, tokenizer: Box<dyn Tokenizer>) -> Result<Self> {
        let (mv, tv) = (model.info().vocab_size, tokenizer.vocab_size());
        if tv > mv {
            bail!("the tokenizer has {tv} tokens but the model only {mv}");
        }
        Ok(Session {
            model,
            tokenizer,
            prompt: Vec::new(),
            generated: Vec::new(),
            rng: Rng::new(0),
            mirostat_mu: None,
            position: Position::default(),
            stopped: None,
            naive_shadow: PathCost::default(),
            cache_check: None,
            dropped: 0,
            held: Vec::new(),
            full_owed: false,
            beam_work: Counters::default(),
            beam_job: None,
            compare_job: None,
            inside: false,
            pending_capture: None,
            lens_on: true,
            inside_work: Counters::default(),
        })
    }

    pub fn info(&self) -> ModelInfo {
        let mut info = self.model.info();
        info.chat = self.tokenizer.chat_template().map(|t| t.name().to_string());
        info
    }

    pub fn tokenizer(&self) -> &dyn Tokenizer {
        self.tokenizer.as_ref()
    }

    /// The KV cache's precision, chosen before the first prompt (the CLI's
    /// `--kv-type`, the page's load option); the default is the model's
    /// (`KvPrecision::default_for`).
    pub fn set_kv_precision(&mut self, precision: crate::kv_cache::KvPrecision) -> Result<()> {
        if !self.prompt.is_empty() || self.model.cache_len() > 0 {
            bail!("the KV type is chosen when the model loads, before any prompt");
        }
        self.model.set_kv_precision(precision)
    }

    pub fn model_mut(&mut self) -> &mut dyn LanguageModel {
        self.model.as_mut()
    }

    /// Every token so far: prompt then generated.
    pub fn history(&self) -> Vec<u32> {
        self.prompt.iter().copied().chain(self.generated.iter().map(|g| g.chosen.id)).collect()
    }

    pub fn generated_ids(&self) -> Vec<u32> {
        self.generated.iter().map(|g| g.chosen.id).collect()
    }

    /// The raw logits for the next position.
    pub fn pending_logits(&self) -> &[f64] {
        self.position.logits()
    }

    /// The index in the sequence of the token the pending logits predict.
    pub fn pending_position(&self) -> usize {
        self.dropped + self.model.cache_len()
    }

    /// Tokenises the prompt, resets cache, counters and RNG, and prefills.
    /// With `settings.chat`, the prompt is the user's message, wrapped in the chat template.
    pub fn start(&mut self, prompt: &str, settings: &GenerationSettings) -> Result<StepReport> {
        let ids = self.encode_prompt(prompt, settings.chat)?;
        self.start_tokens(&ids, settings)
    }

    /// The prompt's tokens, wrapped in the chat template when `chat` is set,
    /// after the vocabulary's BOS token where it asks for one (none before
    /// an empty prompt, which stays an error).
    pub fn encode_prompt(&self, prompt: &str, chat: bool) -> Result<Vec<u32>> {
        let text = if !chat {
            self.tokenizer.encode(prompt)?
        } else {
            match self.tokenizer.chat_template() {
                Some(template) => self.tokenizer.encode(&template.wrap(prompt))?,
                None => bail!("this model has no chat template: turn chat mode off"),
            }
        };
        match self.tokenizer.bos_to_add() {
            Some(bos) if !text.is_empty() => Ok([bos].into_iter().chain(text).collect()),
            _ => Ok(text),
        }
    }

    pub fn start_tokens(&mut self, ids: &[u32], settings: &GenerationSettings) -> Result<StepReport> {
        let info = self.model.info();
        settings.validate(info.vocab_size)?;
        if ids.is_empty() {
            bail!("the prompt is empty: type at least one character");
        }
        if ids.len() > info.context && settings.context_policy == ContextPolicy::Error {
            bail!(
                "the prompt has {} tokens but the context holds {}: shorten it or choose the sliding window",
                ids.len(),
                info.context
            );
        }
        // A search in progress is dropped: the cache is rebuilt from scratch.
        self.beam_job = None;
        self.compare_job = None;
        self.full_owed = true;
        self.model.truncate(0);
        self.model.reset_counters();
        self.prompt = ids.to_vec();
        self.generated.clear();
        self.rng = Rng::new(settings.seed);
        self.mirostat_mu = None;
        self.stopped = None;
        self.naive_shadow = PathCost::default();
        self.beam_work = Counters::default();
        self.inside_work = Counters::default();
        let refilled = self.refill(settings.use_cache);
        self.sync_position();
        refilled?;
        let distribution = self.describe(settings)?.0;
        let inside = self.inside_report(None)?;
        self.full_report(distribution, None, inside)
    }

    /// The rules on the pending logits with new settings; no model call.
    pub fn preview(&self, settings: &GenerationSettings) -> Result<Distribution> {
        self.require_started()?;
        let text = |id| self.tokenizer.id_to_piece(id);
        self.position.preview(settings, &self.vocabulary(&text), &report::describer(self.tokenizer.as_ref()))
    }

    /// Two configurations side by side at the pending position; no model call.
    pub fn side_by_side(&self, a: &GenerationSettings, b: &GenerationSettings) -> Result<crate::compare::SideBySide> {
        self.require_started()?;
        let text = |id| self.tokenizer.id_to_piece(id);
        crate::compare::side_by_side(&self.position, a, b, &self.vocabulary(&text), &report::describer(self.tokenizer.as_ref()))
    }

    /// Scores a text (the user's message when `chat`): every token's
    /// probability and rank given the ones before it, in one teacher-forced
    /// pass. The generation's cache, counters and history are left alone.
    pub fn score(&mut self, text: &str, chat: bool) -> Result<crate::score::ScoreReport> {
        self.end_jobs()?;
        let ids = self.encode_prompt(text, chat)?;
        // In the template, only the user's own tokens count towards the
        // statistics: the system message and markers are the template's.
        let bos = usize::from(self.tokenizer.bos_to_add().is_some() && !ids.is_empty());
        let mut own = bos..ids.len();
        if let (true, Some(template)) = (chat, self.tokenizer.chat_template()) {
            let (before, after) = template.around();
            let (pre, post) = (self.tokenizer.encode(&before)?, self.tokenizer.encode(&after)?);
            let text = &ids[bos..];
            if text.starts_with(&pre) && text.ends_with(&post) && pre.len() + post.len() <= text.len() {
                own = bos + pre.len()..ids.len() - post.len();
            }
        }
        crate::score::score_tokens(self.model.as_mut(), self.tokenizer.as_ref(), &ids, own)
    }

    /// Draws one token from the pending distribution and feeds it.
    pub fn step(&mut self, settings: &GenerationSettings) -> Result<StepReport> {
        self.require_started()?;
        self.end_jobs()?;
        let info = self.model.info();
        // The rules check their own fields in `describe`, before any model work.
        settings.validate_beyond_rules()?;
        if let Some(reason) = self.stopped {
            bail!("generation has stopped ({}); rewind, or reset with a new prompt", reason.describe());
        }
        let (rng_before, mu_before) = (self.rng.clone(), self.mirostat_mu);
        let drawn = {
            let text = |id| self.tokenizer.id_to_piece(id);
            let names = report::describer(self.tokenizer.as_ref());
            let vocabulary = crate::position::Vocabulary { size: self.tokenizer.vocab_size(), text: &text };
            self.position.draw(settings, &mut self.rng, &vocabulary, &names)?
        };
        let id = drawn.id as usize;
        // Before anything but the RNG moved: a failure leaves the step undone.
        let inside = self.inside_report(Some(drawn.id)).inspect_err(|_| self.rng = rng_before.clone())?;
        let chosen = ChosenToken {
            id: drawn.id,
            text: self.tokenizer.id_to_piece(drawn.id),
            display: self.tokenizer.display(drawn.id),
            prob: drawn.final_probs.get(id),
            rank: self.position.rank_of(id),
            coin: drawn.coin,
            special: self.tokenizer.is_special(drawn.id),
        };
        self.advance_mirostat(settings, &drawn.inputs, drawn.final_probs.get(id));
        self.generated.push(Generated { chosen: chosen.clone(), rng_before, mu_before });
        let text_delta = self.append_text(drawn.id);
        self.stopped = self.stop_reason(settings, info.eos_id, info.context);
        let fed = if self.stopped.is_none() { self.feed(drawn.id, settings) } else { Ok(()) };
        self.sync_position();
        // The reader never hears of this token if the step fails here.
        self.full_owed |= fed.is_err();
        fed?;
        self.step_report(drawn.distribution, chosen, text_delta, inside)
    }

    /// Keeps the first `n` generated tokens and makes the distribution at
    /// position `prompt + n` pending again, with the RNG as it was then.
    pub fn rewind(&mut self, n: usize, settings: &GenerationSettings) -> Result<StepReport> {
        self.require_started()?;
        self.end_jobs()?;
        settings.validate(self.model.info().vocab_size)?;
        if n > self.generated.len() {
            bail!("cannot rewind to token {n}: only {} have been generated", self.generated.len());
        }
        if n < self.generated.len() {
            self.rng = self.generated[n].rng_before.clone();
            self.mirostat_mu = self.generated[n].mu_before;
        }
        self.generated.truncate(n);
        self.full_owed = true;
        self.stopped = None;
        let restored = self.restore_pending(settings.use_cache);
        self.sync_position();
        restored?;
        let distribution = self.describe(settings)?.0;
        let inside = self.inside_report(None)?;
        self.full_report(distribution, None, inside)
    }

    /// Ends a beam search or comparison in progress: a call that uses the
    /// model needs the cache back.
    fn end_jobs(&mut self) -> Result<()> {
        self.beam_cancel()?;
        self.compare_cancel()
    }

    /// Beam search from the current state; the session's own state is unchanged.
    fn require_started(&self) -> Result<()> {
        if !self.position.is_set() {
            bail!("no prompt yet: start a generation first");
        }
        Ok(())
    }

    /// Feeds one generated token, sliding the window first if it is full.
    fn feed(&mut self, id: u32, settings: &GenerationSettings) -> Result<()> {
        if self.model.cache_len() + 1 > self.model.info().context {
            // Only reached with the sliding policy (stop_reason catches the other).
            return self.refill(settings.use_cache);
        }
        self.run_new_tokens(&[id], settings.use_cache)
    }

    /// Empties the cache and prefills the window of the history that fits:
    /// all of it, or with the sliding policy its newest three quarters of
    /// the context.
    fn refill(&mut self, use_cache: bool) -> Result<()> {
        let len = self.prompt.len() + self.generated.len();
        let context = self.model.info().context;
        self.refill_from(if len > context { len - sliding_keep(context) } else { 0 }, use_cache)
    }

    /// Empties the cache and prefills the history from `start` on.
    fn refill_from(&mut self, start: usize, use_cache: bool) -> Result<()> {
        let history = self.history();
        self.dropped = start;
        self.model.truncate(0);
        self.run_new_tokens(&history[start..], use_cache)
    }

    /// Makes the logits after the last history token pending again: the cache
    /// keeps every position but the last, and re-running the last token gives
    /// its logits back (recomputed in full when the cache is off). Rewound
    /// across a slide of the window, the window is the one the generation had
    /// at that length (`window_start`), so the same tokens follow again.
    fn restore_pending(&mut self, use_cache: bool) -> Result<()> {
        let history = self.history();
        let start = window_start(self.prompt.len(), history.len(), self.model.info().context);
        if start != self.dropped || history.len() <= start + 1 {
            return self.refill_from(start, use_cache);
        }
        self.model.truncate(history.len() - 1 - self.dropped);
        // A full recompute would have nothing to redo here: keep its count as it was.
        let shadow = self.naive_shadow;
        let result = self.run_new_tokens(&history[history.len() - 1..], use_cache);
        self.naive_shadow = shadow;
        result
    }

    /// Runs tokens after the cached ones and makes the next position's
    /// logits pending. The cache always advances (it holds the positions the
    /// KV panel shows, and switching the cache back on continues from it).
    /// With `use_cache` off the pending logits are the full recompute's over
    /// the window, as the switch says, and the cached ones are only what it
    /// is compared with; with it on, the naive path's cost is kept as what it
    /// would have been.
    fn run_new_tokens(&mut self, ids: &[u32], use_cache: bool) -> Result<()> {
        self.pending_capture = None;
        let cached = if self.inside {
            let (cached, captured) = self.model.forward_cached_inside(ids)?;
            self.pending_capture = captured;
            cached
        } else {
            self.model.forward_cached(ids)?
        };
        let seen = self.model.cache_len();
        let logits = if use_cache {
            self.naive_shadow.add(PathCost::naive_step(seen));
            self.cache_check = None;
            cached
        } else {
            let history = self.history();
            let recomputed = self.model.forward_naive_last(&history[history.len() - seen..])?;
            self.cache_check = Some(compare_paths(&recomputed, &cached));
            recomputed
        };
        // Broken logits are kept (the cache and the history stay consistent,
        // and rewinding past them works) but never summarised or drawn from.
        let checked = lm::check_output(&logits, self.pending_position());
        let mut widened = self.position.take_logits_buffer();
        widened.extend(logits.iter().map(|&x| x as f64));
        self.position.set_logits(widened, checked);
        Ok(())
    }

    fn stop_reason(&self, settings: &GenerationSettings, eos: Option<u32>, context: usize) -> Option<StopReason> {
        let last = self.generated.last()?.chosen.id;
        if Some(last) == eos || self.tokenizer.ends_generation(last) {
            return Some(StopReason::Eos);
        }
        if !settings.stop.is_empty() {
            let text = self.tokenizer.decode(&self.generated_ids());
            if settings.stop.iter().any(|s| text.contains(s.as_str())) {
                return Some(StopReason::StopString);
            }
        }
        if self.generated.len() >= settings.max_new {
            return Some(StopReason::MaxNew);
        }
        if settings.context_policy == ContextPolicy::Error && self.model.cache_len() + 1 > context {
            return Some(StopReason::ContextFull);
        }
        None
    }

    /// Work of this generation: the model's own count, less the beam
    /// searches' and the inside view's, plus what recomputing would have
    /// cost for cached steps.
    pub fn counters(&self) -> Counters {
        let model = self.model.counters();
        let mut naive = model.naive.minus(self.beam_work.naive);
        naive.add(self.naive_shadow);
        Counters { cached: model.cached.minus(self.beam_work.cached).minus(self.inside_work.cached), naive }
    }
}

/// Positions kept when the sliding window drops the oldest tokens.
fn sliding_keep(context: usize) -> usize {
    (context * 3 / 4).max(1)
}

/// Where the sliding window starts once the history holds `len` tokens after
/// a `prompt`-token prompt: the slides of `refill` replayed (the prompt's
/// own, then one each time a fed token would overflow the context).
fn window_start(prompt: usize, len: usize, context: usize) -> usize {
    let keep = sliding_keep(context);
    let mut start = if prompt > context { prompt - keep } else { 0 };
    for l in prompt + 1..=len {
        if l - start > context {
            start = l - keep;
        }
    }
    start
}

/// How far the cached logits are from the recomputed ones.
fn compare_paths(recomputed: &[f32], cached: &[f32]) -> CacheCheck {
    // NaN is kept (f64::max would skip it): a broken path is not "equal".
    let max_abs_diff = recomputed
        .iter()
        .zip(cached)
        .map(|(a, b)| (a - b).abs() as f64)
        .fold(0.0, |m: f64, d| if d.is_nan() || m.is_nan() { f64::NAN } else { m.max(d) });
    let to64 = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
    CacheCheck { max_abs_diff, argmax_agree: rules::argmax(&to64(recomputed)) == rules::argmax(&to64(cached)) }
}
