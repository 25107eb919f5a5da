//! The `StepReport` around a distribution: what the request changed in the
//! transcript (a step's token and the text it completed, or the whole
//! transcript), the cache and the work counters as the panels show them.

use super::Session;
use crate::error::Result;
use crate::inside::InsideReport;
use crate::report::{ChosenToken, Distribution, KvView, PromptToken, StepReport, Transcript};
use crate::tokenizer::{decode_complete, split_complete_utf8};

impl Session {
    /// Every token so far and their text (whole characters): what a step
    /// report's `full` carries, and what the CLI and tests read at any time.
    pub fn transcript(&self) -> Transcript {
        self.transcript_and_held().0
    }

    /// The transcript, and the bytes at the end of the history that do not
    /// yet make a whole character.
    fn transcript_and_held(&self) -> (Transcript, Vec<u8>) {
        let complete = decode_complete(self.tokenizer.as_ref(), &self.history());
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
        let transcript = Transcript {
            prompt_tokens,
            generated: self.generated.iter().map(|g| g.chosen.clone()).collect(),
            text: complete.text,
        };
        (transcript, complete.pending)
    }

    /// The whole history decoded (a character left unfinished at the end
    /// becomes U+FFFD), as `Tokenizer::decode`.
    pub fn text(&self) -> String {
        self.tokenizer.decode(&self.history())
    }

    /// The text the newest token completes: its bytes after the ones held
    /// back, cut before a character still unfinished (held for the next
    /// token). Whole-character text is a prefix of any longer history's, so
    /// these pieces joined are `decode_complete` of the history.
    pub(super) fn append_text(&mut self, id: u32) -> String {
        self.held.extend(self.tokenizer.token_bytes(id));
        let complete = split_complete_utf8(&self.held);
        self.held = complete.pending;
        complete.text
    }

    /// The report after a step: the token and the text it completed, or the
    /// whole transcript when the reader missed a change (a request that
    /// failed after changing the history).
    pub(super) fn step_report(
        &mut self,
        distribution: Distribution,
        chosen: ChosenToken,
        text_delta: String,
        inside: Option<InsideReport>,
    ) -> Result<StepReport> {
        if self.full_owed {
            return self.full_report(distribution, Some(chosen), inside);
        }
        self.report(distribution, Some(chosen), text_delta, None, inside)
    }

    /// The report after the transcript changed wholesale (a prompt, a rewind):
    /// all of it, with the held-back bytes measured again.
    pub(super) fn full_report(
        &mut self,
        distribution: Distribution,
        chosen: Option<ChosenToken>,
        inside: Option<InsideReport>,
    ) -> Result<StepReport> {
        let (full, held) = self.transcript_and_held();
        self.held = held;
        self.full_owed = false;
        self.report(distribution, chosen, String::new(), Some(full), inside)
    }

    /// The report around `distribution` (the pending one, or the one a token was just drawn from).
    fn report(
        &self,
        distribution: Distribution,
        chosen: Option<ChosenToken>,
        text_delta: String,
        full: Option<Transcript>,
        inside: Option<InsideReport>,
    ) -> Result<StepReport> {
        let info = self.model.info();
        let len = self.model.cache_len();
        Ok(StepReport {
            distribution,
            chosen,
            stop: self.stopped,
            text_delta,
            full,
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
            inside,
        })
    }
}
