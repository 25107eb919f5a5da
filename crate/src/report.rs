//! What one step tells the panels: the top tokens, every rule's kept set and
//! entropy, the choice, the cache and the work counters. Everything here is
//! plain data (serde), shared by the CLI's JSON and the page.

use serde::Serialize;

use crate::counters::Counters;
use crate::error::Result;
use crate::rules::{self, RawDistribution, RuleSettings, Stage, StageMemo, top_indices};
use crate::tokenizer::Tokenizer;

/// One vocabulary entry as the panels show it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TokenView {
    pub id: u32,
    /// The decoded piece.
    pub text: String,
    /// The piece with whitespace made visible (␣ ↵ ⇥) and partial UTF-8 as <0xNN>.
    pub display: String,
    pub logit: f64,
    /// Raw probability, softmax of the raw logits.
    pub prob: f64,
}

/// A stage's probability for one of the raw top tokens.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StageCell {
    pub id: u32,
    pub prob: f64,
    pub kept: bool,
}

/// A stage of the pipeline (or a rule alone), summarised over the whole
/// vocabulary and shown over the raw top tokens.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StageView {
    pub name: String,
    pub kept_count: usize,
    pub kept_mass: f64,
    pub entropy_bits: f64,
    pub entropy_nats: f64,
    pub top: Vec<StageCell>,
    /// Kept tokens that are not among the raw top tokens.
    pub kept_beyond_top: usize,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct CurvePoint {
    pub tau: f64,
    pub bits: f64,
}

/// The distribution over the next token, before and after every rule.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Distribution {
    /// Index in the sequence (prompt included) of the token being predicted.
    pub position: usize,
    pub raw_top: Vec<TokenView>,
    /// Each rule alone on the raw logits.
    pub rules: Vec<StageView>,
    /// The pipeline in the chosen order, "raw" first, "final" last.
    pub stages: Vec<StageView>,
    pub entropy_curve: Vec<CurvePoint>,
    /// What this step brought to the stateful and random stages: XTC's coin
    /// and mirostat's mu before the step (null when unused or unknown).
    pub step_inputs: rules::StepInputs,
    /// The stages (and rules alone) these settings turn on, by name
    /// (`rules::stages_on`): the panels draw these, and guess nothing.
    pub on: Vec<&'static str>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ChosenToken {
    pub id: u32,
    pub text: String,
    pub display: String,
    /// Probability under the final stage (what the draw used).
    pub prob: f64,
    /// 1 = the highest raw logit.
    pub rank: usize,
    /// The uniform number the inverse-CDF draw used.
    pub coin: f64,
    /// A control token such as `<|im_end|>` (shown as a token, dimmed).
    pub special: bool,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    Eos,
    MaxNew,
    StopString,
    ContextFull,
}

impl StopReason {
    pub const ALL: [StopReason; 4] = [StopReason::Eos, StopReason::MaxNew, StopReason::StopString, StopReason::ContextFull];

    /// The reason in words, for messages, the CLI and the page (through the
    /// settings table).
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::Eos => "the model emitted end-of-sequence",
            StopReason::MaxNew => "max new tokens reached",
            StopReason::StopString => "a stop string appeared",
            StopReason::ContextFull => "the context is full",
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PromptToken {
    pub id: u32,
    pub text: String,
    pub display: String,
    /// A control token of the chat template such as `<|im_start|>`.
    pub special: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct KvView {
    pub len: usize,
    pub capacity: usize,
    pub layers: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    /// Bytes of K and V held: `global_bytes + local_bytes`.
    pub bytes: usize,
    /// Held by the global layers (every layer of a model without sliding
    /// windows): each holds all `len` positions.
    pub global_bytes: usize,
    /// Held by the sliding-window layers (`ModelInfo::sliding_window`): each
    /// holds `local_positions`, at most its ring.
    pub local_bytes: usize,
    /// Positions each sliding-window layer holds (0 without them).
    pub local_positions: usize,
    pub bytes_per_number: usize,
    /// Tokens dropped from the front by the sliding window so far.
    pub dropped: usize,
}

/// Teacher-forced agreement of the cached and the recomputed logits at this step.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct CacheCheck {
    pub max_abs_diff: f64,
    pub argmax_agree: bool,
}

/// What one request changed. A step carries only what it added (the chosen
/// token and `text_delta`), so its size does not grow with the text; a change
/// of the whole transcript (a new prompt, a rewind) carries it in `full`, and
/// the reader rebuilds its copy from that.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StepReport {
    pub distribution: Distribution,
    pub chosen: Option<ChosenToken>,
    pub stop: Option<StopReason>,
    /// The text `chosen` appended to the transcript's `text`: the characters
    /// it completed (empty when it ends inside a character, whose bytes wait
    /// for the token that completes it; empty with `full`).
    pub text_delta: String,
    pub kv: KvView,
    pub counters: Counters,
    pub cache_check: Option<CacheCheck>,
    /// The whole transcript, when it changed wholesale; `None` after a step.
    pub full: Option<Transcript>,
    /// What the query read and each layer predicted in the pass that made
    /// `distribution` (`Session::set_inside`); `None` while off, and for
    /// models without layers.
    pub inside: Option<crate::inside::InsideReport>,
}

/// Every token so far and the text they make: what a reader keeps, replaced
/// by a report's `full` and extended by each step's `chosen` and `text_delta`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Transcript {
    pub prompt_tokens: Vec<PromptToken>,
    pub generated: Vec<ChosenToken>,
    /// Prompt and generated tokens decoded, up to the last whole character
    /// (`tokenizer::decode_complete`): bytes that do not yet make a character
    /// are held back, so each step's `text_delta` only ever appends.
    pub text: String,
}

/// Entropy of softmax(raw / tau) for tau log-spaced from 0.05 to 20.
pub fn entropy_curve(raw: &RawDistribution) -> Vec<CurvePoint> {
    const POINTS: usize = 41;
    let (lo, hi) = (0.05f64.ln(), 20f64.ln());
    let taus: Vec<f64> = (0..POINTS).map(|i| (lo + (hi - lo) * i as f64 / (POINTS - 1) as f64).exp()).collect();
    let nats = rules::entropy_nats_at_temperatures(&raw.logits, &taus);
    taus.into_iter().zip(nats).map(|(tau, h)| CurvePoint { tau, bits: h / std::f64::consts::LN_2 }).collect()
}

/// A token's decoded text and its visible form, from a tokenizer or a table.
pub type Describer<'a> = &'a dyn Fn(u32) -> (String, String);

/// The describer of a tokenizer.
pub fn describer(tok: &dyn Tokenizer) -> impl Fn(u32) -> (String, String) + '_ {
    move |id| (tok.id_to_piece(id), tok.display(id))
}

fn stage_view(stage: &Stage, top: &[usize]) -> StageView {
    let cells: Vec<StageCell> =
        top.iter().map(|&i| StageCell { id: i as u32, prob: stage.probs.get(i), kept: stage.kept[i] }).collect();
    let kept_in_top = cells.iter().filter(|c| c.kept).count();
    StageView {
        name: stage.name.clone(),
        kept_count: stage.kept_count,
        kept_mass: stage.kept_mass,
        entropy_bits: stage.entropy_bits,
        entropy_nats: stage.entropy_nats,
        top: cells,
        kept_beyond_top: stage.kept_count - kept_in_top,
    }
}

/// What the panels need of a position that no setting changes, measured
/// once when its logits arrive: the raw distribution and the entropy curve.
#[derive(Clone, Debug)]
pub struct PositionSummary {
    pub raw: RawDistribution,
    pub curve: Vec<CurvePoint>,
    /// `top_indices(logits, TOP_KEPT)`: the panels' top rows for any top_n up to it.
    top: Vec<usize>,
    /// The stages the last preview made that the next may reuse.
    memo: StageMemo,
}

/// How many of the highest raw logits a summary ranks ahead of time.
const TOP_KEPT: usize = 64;

impl PositionSummary {
    /// The summary of logits `rules::check_logits` has just accepted (a
    /// position checks them first, to keep broken ones).
    pub(crate) fn from_checked(logits: Vec<f64>) -> Self {
        let raw = RawDistribution::from_checked(logits);
        let curve = entropy_curve(&raw);
        let top = top_indices(&raw.logits, TOP_KEPT);
        raw.ranked_first(top[0]);
        Self { raw, curve, top, memo: StageMemo::default() }
    }

    /// `rules::rank_of(logits, id)`: the row of the ranking made ahead when
    /// `id` is in it (a drawn token nearly always is), else a pass over the
    /// vocabulary.
    pub fn rank_of(&self, id: usize) -> usize {
        match self.top.iter().position(|&i| i == id) {
            Some(row) => row + 1,
            None => rules::rank_of(&self.raw.logits, id),
        }
    }

    /// The raw distribution alone, the rest (the memo's stages) dropped.
    pub fn into_raw(self) -> RawDistribution {
        self.raw
    }

    /// `top_indices(logits, n)`, from the ranking made ahead when it covers n.
    pub fn top(&self, n: usize) -> Vec<usize> {
        if n <= self.top.len() || self.top.len() == self.raw.logits.len() {
            self.top[..n.min(self.top.len())].to_vec()
        } else {
            top_indices(&self.raw.logits, n)
        }
    }
}

/// Runs every rule on the raw logits and summarises it for the panels.
/// Returns the view and the final stage's full probabilities (for the draw).
pub fn describe(
    summary: &PositionSummary,
    history: &[u32],
    settings: &RuleSettings,
    top_n: usize,
    position: usize,
    names: Describer,
) -> Result<(Distribution, rules::Probs)> {
    describe_with(summary, history, settings, top_n, position, names, &rules::StepInputs::default())
}

/// `describe` with a step's inputs (XTC's coin, mirostat's mu, DRY's breakers).
pub fn describe_with(
    summary: &PositionSummary,
    history: &[u32],
    settings: &RuleSettings,
    top_n: usize,
    position: usize,
    names: Describer,
    inputs: &rules::StepInputs,
) -> Result<(Distribution, rules::Probs)> {
    let (stages, alone) = rules::run_rules_with(&summary.raw, history, settings, &summary.memo, inputs)?;
    let raw = summary.raw.logits.as_slice();
    let top = summary.top(top_n);
    let raw_probs = &stages[0].probs;
    let raw_top = top
        .iter()
        .map(|&i| {
            let (text, display) = names(i as u32);
            TokenView { id: i as u32, text, display, logit: raw[i], prob: raw_probs[i] }
        })
        .collect();
    let final_probs = stages.last().expect("the pipeline has a final stage").probs.clone();
    let dist = Distribution {
        position,
        raw_top,
        rules: alone.iter().map(|s| stage_view(s, &top)).collect(),
        stages: stages.iter().map(|s| stage_view(s, &top)).collect(),
        entropy_curve: summary.curve.clone(),
        step_inputs: inputs.clone(),
        on: rules::stages_on(settings),
    };
    Ok((dist, final_probs))
}
