//! What a step of generation brings to the rules beyond the settings and the
//! history: XTC's coin, mirostat's state and DRY's breaker ids. The session
//! supplies them from its `SamplerState` (`StepInputs::for_settings`, the one
//! place that decides which stage takes what); the page's own Previewer gets
//! the same state from the worker, so its previews cut as the step will.

use serde::{Deserialize, Serialize};

use super::chain::StageKind;
use super::dry::Dry;
use super::settings::RuleSettings;

/// What a generation carries between steps for the stateful and random
/// stages, whatever the settings: the seeded RNG's next number (XTC's coin
/// if XTC is on) and mirostat's mu (`None` before the first mirostat step).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
#[serde(default)]
pub struct SamplerState {
    pub next_coin: f64,
    pub mirostat_mu: Option<f64>,
}

/// The per-step inputs of the stateful and random stages.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default)]
pub struct StepInputs {
    /// XTC's coin for this step (uniform in [0, 1) from the seeded RNG);
    /// `None`: XTC shows its cut as if the coin came up.
    pub xtc_coin: Option<f64>,
    /// Mirostat's mu before this step; `None`: the initial `2 * tau`.
    pub mirostat_mu: Option<f64>,
    /// Token ids whose text holds a DRY sequence breaker (sorted); the
    /// session resolves them from `dry_sequence_breakers` and the tokenizer.
    #[serde(skip)]
    pub dry_breakers: Vec<u32>,
}

impl StepInputs {
    /// The inputs a step under `s` takes from `state`: the coin while XTC is
    /// live, mu (or its start, 2 tau) while mirostat is, and the breaker ids
    /// (`breakers`, called only then) while DRY is.
    pub fn for_settings(s: &RuleSettings, state: &SamplerState, breakers: impl FnOnce() -> Vec<u32>) -> StepInputs {
        let stages = s.stages();
        let xtc_live = s.xtc_probability > 0.0 && s.xtc_threshold <= 0.5 && stages.contains(&StageKind::Xtc);
        let mirostat_live = s.mirostat != 0 && stages.contains(&StageKind::Mirostat);
        let dry_live = Dry { multiplier: s.dry_multiplier, base: s.dry_base, allowed_length: 0, penalty_last_n: s.dry_penalty_last_n }
            .is_on()
            && stages.contains(&StageKind::Dry);
        StepInputs {
            xtc_coin: xtc_live.then_some(state.next_coin),
            mirostat_mu: mirostat_live.then(|| state.mirostat_mu.unwrap_or_else(|| super::mirostat::initial_mu(s.mirostat_tau))),
            dry_breakers: if dry_live { breakers() } else { Vec::new() },
        }
    }
}
