//! The `StepReport` around a distribution: the session's tokens, text,
//! cache and work counters as the panels show them.

use super::Session;
use crate::error::Result;
use crate::report::{ChosenToken, Distribution, KvView, PromptToken, StepReport};

impl Session {
    /// The report around `distribution` (the pending one, or the one a token was just drawn from).
    pub(super) fn report(&self, distribution: Distribution, chosen: Option<ChosenToken>) -> Result<StepReport> {
        let info = self.model.info();
        let history = self.history();
        let prompt_tokens = self
            .prompt
            .iter()
            .map(|&id| PromptToken {
                id,
                text: self.tokenizer.id_to_piece(id),
                display: self.tokenizer.display(id),
                special: self.tokenizer.is_special(id),
            })
            .collect();
        let len = self.model.cache_len();
        Ok(StepReport {
            distribution,
            chosen,
            stop: self.stopped,
            generated: self.generated.iter().map(|g| g.chosen.clone()).collect(),
            prompt_tokens,
            text: self.tokenizer.decode(&history),
            kv: {
                let held = self.model.kv_held();
                KvView {
                    len,
                    capacity: info.context,
                    layers: info.layers,
                    kv_heads: info.kv_heads,
                    head_dim: info.head_dim,
                    bytes: held.global_bytes + held.local_bytes,
                    global_bytes: held.global_bytes,
                    local_bytes: held.local_bytes,
                    local_positions: held.local_positions,
                    bytes_per_number: info.bytes_per_number,
                    dropped: self.dropped,
                }
            },
            counters: self.counters(),
            cache_check: self.cache_check,
        })
    }
}
