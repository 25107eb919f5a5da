//! What the stateful and random stages need from the session at a step:
//! XTC's coin (drawn from the seeded RNG before the draw's own coin, so the
//! same seed gives the same text and a preview shows the step's own cut),
//! mirostat's mu (kept per generated token, so rewinding restores it) and
//! DRY's sequence breakers as token ids (resolved from the tokenizer's
//! pieces, as llama.cpp resolves them from its vocabulary).

use super::{GenerationSettings, Session};
use crate::error::Result;
use crate::report::{self, Distribution};
use crate::rules::{self, SamplerState, StepInputs};

impl Session {
    pub(super) fn describe(&self, settings: &GenerationSettings) -> Result<(Distribution, Vec<f64>)> {
        self.describe_at(settings, &self.step_inputs(settings))
    }

    pub(super) fn describe_at(&self, settings: &GenerationSettings, inputs: &rules::StepInputs) -> Result<(Distribution, Vec<f64>)> {
        report::describe_with(
            self.summary()?,
            &self.history(),
            &settings.rules,
            settings.top_n,
            self.pending_position(),
            &report::describer(self.tokenizer.as_ref()),
            inputs,
        )
    }

    /// The inputs of the next step (a preview's and the step's own).
    pub(super) fn step_inputs(&self, settings: &GenerationSettings) -> StepInputs {
        let s = &settings.rules;
        StepInputs::for_settings(s, &self.sampler_state(), || self.breaker_ids(&s.dry_sequence_breakers))
    }

    /// The RNG's next number and mirostat's mu, whatever the settings: what
    /// the page's own Previewer needs to cut as the next step will.
    pub fn sampler_state(&self) -> SamplerState {
        SamplerState { next_coin: self.rng.clone().next_f64(), mirostat_mu: self.mirostat_mu }
    }

    /// The draw's coin, after XTC's when XTC is on (as the preview peeked it).
    pub(super) fn draw_coin(&mut self, inputs: &StepInputs) -> f64 {
        if inputs.xtc_coin.is_some() {
            self.rng.next_f64();
        }
        self.rng.next_f64()
    }

    /// Moves mu by the drawn token's surprise under the final distribution
    /// (the mirostat stage's when it is last, as in llama.cpp's chain).
    pub(super) fn advance_mirostat(&mut self, settings: &GenerationSettings, inputs: &StepInputs, p_chosen: f64) {
        if let Some(mu) = inputs.mirostat_mu {
            let s = &settings.rules;
            self.mirostat_mu = Some(rules::next_mu(mu, s.mirostat_tau, s.mirostat_eta, p_chosen));
        }
    }

    /// The ids of the tokens whose piece holds one of `breakers` (sorted),
    /// resolved once per list of breakers.
    fn breaker_ids(&self, breakers: &[String]) -> Vec<u32> {
        let mut cache = self.dry_breakers.borrow_mut();
        if let Some((for_list, ids)) = cache.as_ref()
            && for_list.as_slice() == breakers
        {
            return ids.clone();
        }
        let ids = rules::breaker_token_ids(self.tokenizer.vocab_size(), |id| self.tokenizer.id_to_piece(id), breakers);
        *cache = Some((breakers.to_vec(), ids.clone()));
        ids
    }
}
