//! The session's side of the inside view: switching it on and off, and the
//! `InsideReport` of the pending position, following the drawn token or the
//! raw top-1.

use super::Session;
use crate::error::Result;
use crate::inside::{self, Followed, InsideReport, LENS_TOP};
use crate::rules;

impl Session {
    /// From now on every pass that makes a pending position captures what it
    /// read, and every report carries `inside` (or, off, nothing is captured
    /// and `inside` is `None`). The pending position has no capture until
    /// the next pass or `inside_now`.
    pub fn set_inside(&mut self, on: bool) {
        self.inside = on;
        if !on {
            self.pending_capture = None;
        }
    }

    pub fn inside_on(&self) -> bool {
        self.inside
    }

    /// Whether the inside view's reports include the logit lens (on by
    /// default). Off, a report carries the attention only and an empty lens:
    /// for a run whose reader shows a few reports a second, the lens of the
    /// others would be computed for nothing (`inside_now` always runs it).
    pub fn set_lens(&mut self, on: bool) {
        self.lens_on = on;
    }

    /// The inside of the pending position (what a preview shows), following
    /// the raw top-1. If the pass that made it captured nothing (the view
    /// was off then), the last cached token is run again with the capture
    /// on: the same pass, so the same logits, and the history, the RNG and
    /// the counters stay as they were. `None` for models without layers.
    pub fn inside_now(&mut self) -> Result<Option<InsideReport>> {
        self.require_started()?;
        self.end_jobs()?;
        if !self.inside {
            crate::bail!("the inside view is off: switch it on first");
        }
        if self.pending_capture.is_none() {
            let n = self.model.cache_len();
            if n == 0 {
                return Ok(None);
            }
            let last = self.history()[self.dropped + n - 1];
            let before = self.model.counters().cached;
            self.model.truncate(n - 1);
            let (_, captured) = self.model.forward_cached_inside(&[last])?;
            self.inside_work.cached.add(self.model.counters().cached.minus(before));
            self.pending_capture = captured;
        }
        let lens_on = std::mem::replace(&mut self.lens_on, true);
        let report = self.inside_report(None);
        self.lens_on = lens_on;
        report
    }

    /// The report of the pending position's capture, following `chosen` (a
    /// token just drawn from it) or else the raw top-1; `None` without one.
    pub(super) fn inside_report(&mut self, chosen: Option<u32>) -> Result<Option<InsideReport>> {
        let Some(capture) = self.pending_capture.as_ref() else { return Ok(None) };
        let raw = self.position.logits();
        let raw_top = rules::argmax(raw) as u32;
        let token = chosen.unwrap_or(raw_top);
        let tracked = [token, raw_top];
        let mut lens = Vec::with_capacity(capture.residuals.len());
        if self.lens_on {
            self.model.lens(&capture.residuals, &mut |_, row| {
                lens.push(inside::summarize(row, LENS_TOP, &tracked));
                Ok(())
            })?;
        }
        let followed = Followed { token, token_is_chosen: chosen.is_some(), raw_prob: raw_probability(raw, token as usize), raw_top };
        let display = |id: u32| self.tokenizer.display(id);
        Ok(Some(InsideReport::new(capture, self.dropped, lens, followed, &display)))
    }
}

/// softmax(raw)[id], in f64.
fn raw_probability(raw: &[f64], id: usize) -> f64 {
    let max = raw.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = raw.iter().map(|&z| rules::exp(z - max)).sum();
    rules::exp(raw[id] - max) / sum
}
