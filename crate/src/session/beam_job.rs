//! The session's beam search by depths: `beam_start`, `beam_next` per
//! depth, `beam_finish` or `beam_cancel`. The browser's worker yields between
//! depths, so the page stays answered and the next request can cancel.
//! While a search runs the KV cache is its own; ending it in any way puts the
//! session's pending position back.

use super::Session;
use crate::bail;
use crate::beam::{self, BeamReport};
use crate::error::Result;
use crate::settings::GenerationSettings;

impl Session {
    /// The whole search in one call (the CLI; the page goes by depths).
    pub fn beam(&mut self, settings: &GenerationSettings) -> Result<BeamReport> {
        self.beam_start(settings)?;
        loop {
            match self.beam_next() {
                Ok(p) if p.done => return self.beam_finish(),
                Ok(_) => {}
                Err(e) => {
                    self.beam_cancel()?;
                    return Err(e);
                }
            }
        }
    }

    /// Starts a beam search from the current state, to be advanced by
    /// `beam_next` and ended by `beam_finish` or `beam_cancel`. Any other
    /// call that uses the model (step, start, rewind, score) cancels it first.
    pub fn beam_start(&mut self, settings: &GenerationSettings) -> Result<beam::BeamProgress> {
        self.require_started()?;
        settings.validate(self.model.info().vocab_size)?;
        self.beam_cancel()?;
        self.compare_cancel()?;
        // A search from broken logits would drop every candidate silently.
        self.position.summary()?;
        let history = self.history();
        let job = beam::BeamSearch::new(self.model.as_ref(), &history[self.dropped..], self.position.logits(), settings);
        let progress = job.progress();
        self.beam_job = Some(job);
        Ok(progress)
    }

    /// Expands the search by one token depth.
    pub fn beam_next(&mut self) -> Result<beam::BeamProgress> {
        let Some(job) = self.beam_job.as_mut() else { bail!("no beam search in progress (it ended or was cancelled)") };
        let before = self.model.counters();
        let result = job.step(self.model.as_mut(), self.tokenizer.as_ref());
        let after = self.model.counters();
        self.beam_work.cached.add(after.cached.minus(before.cached));
        self.beam_work.naive.add(after.naive.minus(before.naive));
        result
    }

    /// Ends the search with its best beams and puts the session's state back.
    pub fn beam_finish(&mut self) -> Result<BeamReport> {
        let Some(job) = self.beam_job.take() else { bail!("no beam search in progress (it ended or was cancelled)") };
        let report = job.report(self.tokenizer.as_ref());
        self.restore_after_beam()?;
        Ok(report)
    }

    /// Drops a search in progress, if any, and puts the session's state back.
    pub fn beam_cancel(&mut self) -> Result<()> {
        if self.beam_job.take().is_some() {
            self.restore_after_beam()?;
        }
        Ok(())
    }

    /// Whatever the search did to the cache, the pending position is rebuilt.
    fn restore_after_beam(&mut self) -> Result<()> {
        let before = self.model.counters();
        // The pending logits come back from the path they came from (a
        // cache check is only made when they were recomputed).
        self.restore_pending(self.cache_check.is_none())?;
        let after = self.model.counters();
        self.beam_work.cached.add(after.cached.minus(before.cached));
        self.beam_work.naive.add(after.naive.minus(before.naive));
        Ok(())
    }
}
