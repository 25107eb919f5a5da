//! What the stateful and random stages need from the session at a step:
//! XTC's coin (drawn from the seeded RNG before the draw's own coin, so the
//! same seed gives the same text and a preview shows the step's own cut),
//! mirostat's mu (kept per generated token, so rewinding restores it) and
//! DRY's sequence breakers as token ids (resolved from the tokenizer's
//! pieces, as llama.cpp resolves them from its vocabulary, by the pending
//! `Position`).

use super::{GenerationSettings, Session};
use crate::error::Result;
use crate::position::Vocabulary;
use crate::report::{self, Distribution};
use crate::rules::{self, SamplerState, StepInputs};

impl Session {
    /// The pending position's rules under `settings` (its preview).
    pub(super) fn describe(&self, settings: &GenerationSettings) -> Result<(Distribution, crate::rules::Probs)> {
        let text = |id| self.tokenizer.id_to_piece(id);
        let inputs = self.position.inputs(settings, &self.vocabulary(&text));
        self.position.describe(settings, &inputs, &report::describer(self.tokenizer.as_ref()))
    }

    /// The tokenizer as the position resolves DRY's breakers from it.
    pub(super) fn vocabulary<'a>(&self, text: &'a dyn Fn(u32) -> String) -> Vocabulary<'a> {
        Vocabulary { size: self.tokenizer.vocab_size(), text }
    }

    /// Hands the pending position the history, index and sampler state it
    /// is previewed and drawn with: after every change of them (a start, a
    /// step, a rewind), before its report.
    pub(super) fn sync_position(&mut self) {
        self.position.history = self.history();
        self.position.index = self.pending_position();
        self.position.state = self.sampler_state();
    }

    /// The RNG's next number and mirostat's mu, whatever the settings: what
    /// the page's own Previewer needs to cut as the next step will.
    pub fn sampler_state(&self) -> SamplerState {
        SamplerState { next_coin: self.rng.clone().next_f64(), mirostat_mu: self.mirostat_mu }
    }

    /// Moves mu by the drawn token's surprise under the final distribution
    /// (the mirostat stage's when it is last, as in llama.cpp's chain).
    pub(super) fn advance_mirostat(&mut self, settings: &GenerationSettings, inputs: &StepInputs, p_chosen: f64) {
        if let Some(mu) = inputs.mirostat_mu {
            let s = &settings.rules;
            self.mirostat_mu = Some(rules::next_mu(mu, s.mirostat_tau, s.mirostat_eta, p_chosen));
        }
    }
}
