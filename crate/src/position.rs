//! One position of a generation as the rules see it: its raw logits (and
//! what no setting changes about them), the history before it, the sampler
//! state a step there starts from (the RNG's next number, mirostat's mu) and
//! DRY's breakers resolved to ids. `preview` runs the rules there with any
//! settings; `draw` is a step's own preview plus the draw. The session holds
//! one (its pending position), and the page's own `Previewer` is one (the
//! worker's position, handed over after each reply): one preview path.

use std::cell::RefCell;

use crate::error::{Error, Result};
use crate::report::{self, Describer, Distribution, PositionSummary};
use crate::rng::Rng;
use crate::rules::{self, SamplerState, StepInputs};
use crate::settings::GenerationSettings;

/// A position's text source: the vocabulary size and each token's text.
pub struct Vocabulary<'a> {
    pub size: usize,
    pub text: &'a dyn Fn(u32) -> String,
}

/// What a step drew at a position.
pub struct Drawn {
    pub distribution: Distribution,
    /// The final stage's probabilities over the whole vocabulary.
    pub final_probs: rules::Probs,
    pub inputs: StepInputs,
    pub id: u32,
    pub coin: f64,
}

pub struct Position {
    /// What no setting changes about the raw logits (f64, the rules'
    /// precision, never modified), measured once, the logits included; or,
    /// when the model gave NaN or infinite logits there, the message saying
    /// so, which every preview and draw returns instead.
    summary: Result<PositionSummary>,
    /// The raw logits when they are broken (no summary holds them then);
    /// empty otherwise, so a vocabulary's logits are held once.
    broken_logits: Vec<f64>,
    /// Every token before this position (prompt then generated).
    pub history: Vec<u32>,
    /// The index in the sequence of the token this position predicts.
    pub index: usize,
    /// The RNG's next number and mirostat's mu a step here starts from.
    pub state: SamplerState,
    /// DRY's breaker ids, for the breaker strings they were resolved from.
    breakers: RefCell<Option<(Vec<String>, Vec<u32>)>>,
}

/// Why a position without logits has no summary.
const NO_LOGITS: &str = "no prompt yet: start a generation first";

impl Default for Position {
    fn default() -> Self {
        Position {
            summary: Err(Error::new(NO_LOGITS)),
            broken_logits: Vec::new(),
            history: Vec::new(),
            index: 0,
            state: SamplerState::default(),
            breakers: RefCell::default(),
        }
    }
}

impl Position {
    /// New raw logits here; `checked` is the model's verdict on them (broken
    /// logits are kept, never summarised or drawn from). DRY's breaker ids stay.
    pub fn set_logits(&mut self, logits: Vec<f64>, checked: Result<()>) {
        // The old summary and its memo of stages go before the new one is
        // measured: over Gemma's 262,144 tokens they are megabytes, and a
        // wasm memory never gives back its peak.
        self.summary = Err(Error::new(NO_LOGITS));
        self.broken_logits = Vec::new();
        match checked.and_then(|()| rules::check_logits(&logits)) {
            Ok(()) => self.summary = Ok(PositionSummary::from_checked(logits)),
            Err(e) => {
                self.summary = Err(e);
                self.broken_logits = logits;
            }
        }
    }

    /// The logits' buffer, emptied, for the next position's logits; this
    /// position is left without any. Filled in place of a new vector, it
    /// keeps a step from holding two vocabulary-sized logit vectors at once
    /// (Gemma 3: 2 MB each, in a wasm memory that never shrinks). Logits
    /// something else still shares (a clone of the summary) are left to it,
    /// and an empty buffer is given instead.
    pub fn take_logits_buffer(&mut self) -> Vec<f64> {
        let old = std::mem::replace(&mut self.summary, Err(Error::new(NO_LOGITS)));
        let mut buffer = match old {
            Ok(summary) => summary.into_raw().into_logits().unwrap_or_default(),
            Err(_) => std::mem::take(&mut self.broken_logits),
        };
        buffer.clear();
        buffer
    }

    pub fn logits(&self) -> &[f64] {
        match &self.summary {
            Ok(summary) => &summary.raw.logits,
            Err(_) => &self.broken_logits,
        }
    }

    /// Token `id`'s rank among these logits: 1 = the highest, ties by lower id.
    pub fn rank_of(&self, id: usize) -> usize {
        match &self.summary {
            Ok(summary) => summary.rank_of(id),
            Err(_) => rules::rank_of(&self.broken_logits, id),
        }
    }

    /// Whether logits have been set.
    pub fn is_set(&self) -> bool {
        !self.logits().is_empty()
    }

    /// The position's summary, or why there is none (broken logits).
    pub fn summary(&self) -> Result<&PositionSummary> {
        self.summary.as_ref().map_err(Clone::clone)
    }

    /// The inputs a step here takes under `s`: XTC's coin, mirostat's mu,
    /// DRY's breaker ids (resolved once per list of breakers).
    pub fn inputs(&self, s: &GenerationSettings, vocab: &Vocabulary) -> StepInputs {
        let breakers = &s.rules.dry_sequence_breakers;
        StepInputs::for_settings(&s.rules, &self.state, || {
            let mut cache = self.breakers.borrow_mut();
            if let Some((for_list, ids)) = cache.as_ref()
                && for_list == breakers
            {
                return ids.clone();
            }
            let ids = rules::breaker_token_ids(vocab.size, vocab.text, breakers);
            *cache = Some((breakers.clone(), ids.clone()));
            ids
        })
    }

    /// The rules here with `inputs`: the view and the final probabilities.
    pub fn describe(&self, s: &GenerationSettings, inputs: &StepInputs, names: Describer) -> Result<(Distribution, rules::Probs)> {
        report::describe_with(self.summary()?, &self.history, &s.rules, s.top_n, self.index, names, inputs)
    }

    /// The rules here with new settings; no model call. The rules check
    /// their own fields when they run: each field once.
    pub fn preview(&self, s: &GenerationSettings, vocab: &Vocabulary, names: Describer) -> Result<Distribution> {
        s.validate_beyond_rules()?;
        Ok(self.describe(s, &self.inputs(s, vocab), names)?.0)
    }

    /// A step's draw here: its preview, then the token the coin picks from
    /// the final distribution (the coin after XTC's when XTC is on, as the
    /// preview peeked it). `rng` advances; the position is unchanged.
    pub fn draw(&self, s: &GenerationSettings, rng: &mut Rng, vocab: &Vocabulary, names: Describer) -> Result<Drawn> {
        let inputs = self.inputs(s, vocab);
        let (distribution, final_probs) = self.describe(s, &inputs, names)?;
        if inputs.xtc_coin.is_some() {
            rng.next_f64();
        }
        let coin = rng.next_f64();
        let id = rules::sample_inverse_cdf_of(&final_probs, coin) as u32;
        Ok(Drawn { distribution, final_probs, inputs, id, coin })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::same_bits;

    #[test]
    fn a_position_keeps_its_logits_whether_they_are_sound_or_broken() {
        let mut p = Position::default();
        assert!(!p.is_set());
        assert!(p.summary().unwrap_err().to_string().contains("no prompt yet"));

        let sound = vec![1.0, 2.0, f64::NEG_INFINITY, 0.5];
        p.set_logits(sound.clone(), Ok(()));
        assert!(p.is_set());
        assert!(same_bits(p.logits(), &sound));
        assert!(same_bits(&p.summary().unwrap().raw.logits, &sound));

        // Logits no distribution comes from: kept as they came, the reason in place of a summary.
        let broken = vec![1.0, f64::NAN, 0.0];
        p.set_logits(broken.clone(), Ok(()));
        assert!(p.is_set());
        assert!(same_bits(p.logits(), &broken));
        assert!(p.summary().unwrap_err().to_string().contains("logit 1 is NaN"));

        // The model's own verdict wins over sound-looking numbers.
        p.set_logits(sound.clone(), Err(Error::new("the model's output is broken at position 3")));
        assert!(same_bits(p.logits(), &sound));
        assert!(p.summary().unwrap_err().to_string().contains("position 3"));

        // And sound logits after broken ones are summarised again.
        let next = vec![0.0, 3.0];
        p.set_logits(next.clone(), Ok(()));
        assert!(same_bits(p.logits(), &next));
        assert_eq!(p.summary().unwrap().raw.order(), [1, 0]);
    }
}
