//! What a step of generation brings to the rules beyond the settings and the
//! history: XTC's coin, mirostat's state and DRY's breaker ids. The session
//! supplies them (`Session::step_inputs`); a preview without a session uses
//! the defaults.

use serde::{Deserialize, Serialize};

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
