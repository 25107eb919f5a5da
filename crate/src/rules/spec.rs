//! What a stage is, said once, by the stage's own file: its `SPEC`. In the
//! spirit of llama.cpp's sampler interface (a name, `apply`, what it keeps
//! between steps; the chain a list of samplers), a spec gives the stage's
//! name and label, the settings it reads, when it is on, how it applies, its
//! "alone" column, the step input it takes and the settings it owns (their
//! ranges, flags and controls). `registry::SPECS` lists them;
//! the pipeline, the "alone" columns, chain validation, the step inputs, the
//! settings table and the report's `on` list iterate over it.

use super::fields::Field;
use super::min_keep::{keep_at_least, keeps_enough};
use super::probs::Probs;
use super::ranking::{Candidate, collect_candidates};
use super::raw::RawDistribution;
use super::settings::RuleSettings;
use super::state::StepInputs;

/// One stage, as data.
pub struct StageSpec {
    /// The name in the reports, the URL and `--chain` (its `StageKind`'s serde name).
    pub name: &'static str,
    /// The page's words for it ("top-k", "DRY").
    pub label: &'static str,
    /// One line: what the stage does.
    pub what: &'static str,
    /// Which engines ship it, and where they differ from this one.
    pub engines: &'static str,
    /// The settings (serde names) the stage reads.
    pub reads: &'static [&'static str],
    /// The settings among `reads` whose move from the default can turn the
    /// stage on (the others only shape it: `xtc_threshold`, `dry_base`).
    pub switches: &'static [&'static str],
    /// The settings it owns: their ranges, words, flags and controls (a
    /// setting many stages read, `min_keep`, is in `fields::GENERAL_FIELDS`).
    pub fields: &'static [Field],
    /// When the stage changes anything: `RuleSettings` alone decides it.
    pub is_on: fn(&RuleSettings) -> bool,
    pub apply: Apply,
    /// The stage's column among the rules alone, if it has one.
    pub alone: Option<AloneCut>,
    /// What the stage takes from the step beyond the settings and history.
    pub takes: Takes,
    /// The panels draw it even when it is off (the course's rules table
    /// always showed it).
    pub shown_when_off: bool,
}

/// How a stage changes the distribution.
#[derive(Clone, Copy)]
pub enum Apply {
    /// Adds to the logits from the history and the settings, never from the
    /// distribution: the new logits and how many tokens it touched, `None`
    /// when it changes nothing here. A chain's leading run of them is
    /// memoised (`prefix`).
    Modifier(fn(&[f64], &[u32], &RuleSettings, &StepInputs) -> Option<(Vec<f64>, usize)>),
    /// Divides the logits by tau; the pipeline measures it from the tempered
    /// softmax (`temperature::Tempered`), so it is the pipeline's own.
    Temperature,
    /// Keeps a subset of the tokens: the mask of those kept.
    Cut(fn(&Cut) -> Vec<bool>),
}

/// What a truncation sees at its place in the chain.
pub struct Cut<'a> {
    /// The latest stage's probabilities (a slice of them builds the whole
    /// vector of a stage that holds few tokens: `support` and `Probs::get`
    /// read those without it).
    pub probs: &'a Probs,
    /// The logits as they flow (-inf where a token was dropped).
    pub logits: &'a [f64],
    /// The latest stage's possible tokens, ascending, when they are few
    /// (`Stage::support`): every other token has probability 0, so a cut
    /// may read just these.
    pub support: Option<&'a [u32]>,
    pub s: &'a RuleSettings,
    pub inputs: &'a StepInputs,
    /// The raw ranking, best first, and how many tokens the modifiers moved:
    /// the first `k + moved` of it hold the top k (a hint for top-k).
    pub raw_order: &'a [u32],
    pub moved: usize,
}

impl Cut<'_> {
    /// The possible tokens as (probability, id), ascending by id: read from
    /// `support` when the stage has one, else from the whole vocabulary.
    pub(crate) fn candidates(&self) -> Vec<Candidate> {
        match self.support {
            Some(ids) => ids.iter().map(|&i| (self.probs.get(i as usize), i)).filter(|c| c.0 > 0.0).collect(),
            None => collect_candidates(self.probs),
        }
    }

    /// `mask` grown to keep at least `min_keep` tokens.
    pub fn at_least(&self, mask: Vec<bool>) -> Vec<bool> {
        if keeps_enough(&mask, self.s.min_keep) {
            return mask;
        }
        keep_at_least(mask, self.probs, self.s.min_keep)
    }
}

/// A truncation's column among the rules alone: its mask on the raw
/// distribution at tau = 1, memoised by `key` (every value it depends on).
#[derive(Clone, Copy)]
pub struct AloneCut {
    /// Measured whatever the settings (the course's top-k, top-p and min-p
    /// columns); otherwise an off rule is the raw distribution, at no cost.
    pub always: bool,
    pub key: fn(&RuleSettings, &StepInputs) -> Vec<f64>,
    pub mask: fn(&RawDistribution, &RuleSettings, &StepInputs) -> Vec<bool>,
}

/// The step input a stage takes (`StepInputs::for_settings` fills it only
/// for a stage that is on and in the chain).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Takes {
    Nothing,
    /// XTC's coin from the seeded RNG.
    Coin,
    /// Mirostat's mu.
    Mu,
    /// DRY's sequence breakers as token ids.
    Breakers,
}
