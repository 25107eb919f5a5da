//! Training: the default model (a small decoder on Shakespeare) and the
//! course's toy models.

pub mod gpt;
pub mod baselines;
pub mod bigram;
pub mod corpus;
