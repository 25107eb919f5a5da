//! What a step of generation brings to the rules beyond the settings and the
//! history: XTC's coin, mirostat's state and DRY's breaker ids. The session
//! supplies them from its `SamplerState` (`StepInputs::for_settings`, in
//! `chain`: each stage's spec says what it takes); the page's own Previewer
//! gets the same state from the worker, so its previews cut as the step will.

use serde::{Deserialize, Serialize};

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
