//! The chain in force: which stages the pipeline runs, whether it holds
//! every stage the settings turn on, and what each of its stages takes from
//! the step.
//!
//! One source of truth: `RuleSettings::chain`. An empty chain (the default)
//! means "the preset named by `order`" (`hf`, `llama`, `openai`), which is
//! how the course and the URLs written before the chain existed say the
//! order; a non-empty chain is the user's own list and `order` is then only
//! a label. `RuleSettings::stages` resolves the two into the list of stages.

use super::registry::SPECS;
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
        let on: Vec<_> = SPECS.iter().filter(|spec| (spec.is_on)(self)).collect();
        for spec in &on {
            let present = on.iter().any(|other| other.switches == spec.switches && stages.contains(&other.kind));
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

impl StepInputs {
    /// The inputs a step under `s` takes from `state`, each only for a stage
    /// of the chain that is on: XTC's coin, mirostat's mu (or its start,
    /// 2 tau), and the breaker ids (`breakers`, called only then) for DRY.
    pub fn for_settings(s: &RuleSettings, state: &SamplerState, breakers: impl FnOnce() -> Vec<u32>) -> StepInputs {
        let stages = s.stages();
        let live = |takes: Takes| SPECS.iter().any(|spec| spec.takes == takes && (spec.is_on)(s) && stages.contains(&spec.kind));
        StepInputs {
            xtc_coin: live(Takes::Coin).then_some(state.next_coin),
            mirostat_mu: live(Takes::Mu).then(|| state.mirostat_mu.unwrap_or_else(|| super::mirostat::initial_mu(s.mirostat_tau))),
            dry_breakers: if live(Takes::Breakers) { breakers() } else { Vec::new() },
        }
    }
}
