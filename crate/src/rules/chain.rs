//! The chain in force: which stages the pipeline runs, whether it holds
//! every stage the settings turn on, and what each of its stages takes from
//! the step.
//!
//! One source of truth: `RuleSettings::chain`. An empty chain (the default)
//! means "the preset named by `order`" (`hf`, `llama`, `openai`), which is
//! how the course and the URLs written before the chain existed say the
//! order; a non-empty chain is the user's own list and `order` is then only
//! a label. `RuleSettings::stages` resolves the two into the list of stages.

use super::registry::{RULE_FIELDS, kinds_and_specs, rule_field};
use super::settings::{MAX_BREAKER_CHARS, MAX_BREAKERS, MAX_SEQUENCE_LEN};
use super::settings::RuleSettings;
use super::spec::Takes;
use super::state::{SamplerState, StepInputs};
use crate::error::Result;

impl RuleSettings {
    /// Checks every field against its range and every token id against the
    /// vocabulary (`check_fields`), then the chain; the message names the
    /// field, the value and what is allowed.
    pub fn validate(&self, vocab_size: usize) -> Result<()> {
        self.check_fields(vocab_size)?;
        self.validate_chain()
    }

    /// A chain names each stage at most once, and holds every stage that is
    /// on (or one turned on by the same settings: either typical stage).
    fn validate_chain(&self) -> Result<()> {
        let stages = self.stages();
        for (i, k) in stages.iter().enumerate() {
            if stages[..i].contains(k) {
                crate::bail!("chain: '{}' appears twice (each stage at most once)", k.name());
            }
        }
        let label = if self.chain.is_empty() { format!("the {} preset", self.order.name()) } else { "the chain".to_string() };
        let on: Vec<_> = kinds_and_specs().filter(|(_, spec)| (spec.is_on)(self)).collect();
        for (_, spec) in &on {
            let present = on.iter().any(|(kind, other)| other.switches == spec.switches && stages.contains(kind));
            if !present {
                crate::bail!(
                    "{} is on but {label} has no '{}' stage: add it to the chain (or choose a preset that has it)",
                    spec.reads[0],
                    spec.name
                );
            }
        }
        Ok(())
    }
}

impl RuleSettings {
    /// Checks every field against its range (`registry::RULE_FIELDS`) and
    /// every token id against the vocabulary; the message names the field,
    /// the value and what is allowed.
    fn check_fields(&self, vocab_size: usize) -> Result<()> {
        for f in RULE_FIELDS.iter() {
            if let Some(value) = f.slot.get(self) {
                f.check(f.key, value)?;
            }
        }
        let bias = rule_field("logit_bias").expect("logit_bias has a field");
        for &(id, b) in &self.logit_bias {
            check_token_id("logit_bias", id, vocab_size)?;
            bias.check(&format!("logit_bias for token {id}"), b)?;
        }
        for &id in &self.banned {
            check_token_id("banned", id, vocab_size)?;
        }
        if self.dry_sequence_breakers.len() > MAX_BREAKERS {
            crate::bail!("dry_sequence_breakers: {} breakers, at most {MAX_BREAKERS}", self.dry_sequence_breakers.len());
        }
        for b in &self.dry_sequence_breakers {
            if b.is_empty() || b.chars().count() > MAX_BREAKER_CHARS {
                crate::bail!("dry_sequence_breakers: {b:?} must have 1 to {MAX_BREAKER_CHARS} characters");
            }
        }
        let sequence = rule_field("sequence_bias").expect("sequence_bias has a field");
        for (ids, b) in &self.sequence_bias {
            if ids.is_empty() || ids.len() > MAX_SEQUENCE_LEN {
                crate::bail!("sequence_bias: a sequence must have 1 to {MAX_SEQUENCE_LEN} token ids (got {})", ids.len());
            }
            for &id in ids {
                check_token_id("sequence_bias", id, vocab_size)?;
            }
            sequence.check(&format!("sequence_bias for {ids:?}"), *b)?;
        }
        Ok(())
    }
}

fn check_token_id(field: &str, id: u32, vocab_size: usize) -> Result<()> {
    if id as usize >= vocab_size {
        crate::bail!(
            "{field}: token id {id} is outside the vocabulary (ids 0..{})",
            vocab_size.saturating_sub(1)
        );
    }
    Ok(())
}

impl StepInputs {
    /// The inputs a step under `s` takes from `state`, each only for a stage
    /// of the chain that is on: XTC's coin, mirostat's mu (or its start,
    /// 2 tau), and the breaker ids (`breakers`, called only then) for DRY.
    pub fn for_settings(s: &RuleSettings, state: &SamplerState, breakers: impl FnOnce() -> Vec<u32>) -> StepInputs {
        let stages = s.stages();
        let live = |takes: Takes| kinds_and_specs().any(|(kind, spec)| spec.takes == takes && (spec.is_on)(s) && stages.contains(&kind));
        StepInputs {
            xtc_coin: live(Takes::Coin).then_some(state.next_coin),
            mirostat_mu: live(Takes::Mu).then(|| state.mirostat_mu.unwrap_or_else(|| super::mirostat::initial_mu(s.mirostat_tau))),
            dry_breakers: if live(Takes::Breakers) { breakers() } else { Vec::new() },
        }
    }
}
