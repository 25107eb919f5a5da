//! The course's toy models behind the [`LanguageModel`](crate::lm::LanguageModel)
//! trait, so the session drives them like the transformer:
//! - [`BigramModel`]: the lesson-18 `abc` bigram (24 trained numbers);
//! - [`LogitsModel`]: the lesson-21 ten-class logit vector, the same at
//!   every position, editable from the page.
//!
//! Neither has attention, so neither has K/V rows or scores to count: their
//! work counters stay zero, and their "cache" is only the count of
//! positions seen (so the step-back button and context limits behave).

mod bigram;
mod logits;

pub use bigram::{read_shipped_bigram, BigramModel, BIGRAM_CONTEXT};
pub use logits::{LogitsModel, LESSON21_LOGITS, LOGITS_CONTEXT};
