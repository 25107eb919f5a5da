//! Beam search: keep the B best prefixes by total log-probability, extend
//! each, keep the best B again; rank the finished ones by score/length^α.
//!
//! Scores use the model's log-probabilities after logit bias and bans (the
//! sampling rules — temperature, top-k, top-p — do not apply to a search).
//! Each beam's logits come from rewinding the shared KV cache to the prefix
//! and running that beam's tokens, so one cache serves every beam.

use serde::Serialize;

use crate::error::Result;
use crate::lm::LanguageModel;
use crate::rules;
use crate::settings::GenerationSettings;
use crate::tokenizer::Tokenizer;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Beam {
    pub tokens: Vec<u32>,
    pub text: String,
    /// Sum of ln q over the beam's tokens.
    pub logprob: f64,
    pub length: usize,
    /// logprob / length^alpha.
    pub score: f64,
    pub finished: bool,
}

/// One expansion in the search tree.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BeamNode {
    pub id: usize,
    /// None for the first tokens (children of the prompt).
    pub parent: Option<usize>,
    pub token: u32,
    pub display: String,
    /// ln q of this token given its parent's prefix.
    pub logprob: f64,
    /// Sum of ln q from the root to here.
    pub total_logprob: f64,
    pub step: usize,
    pub in_final_beam: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BeamReport {
    pub alpha: f64,
    /// Best first by score.
    pub beams: Vec<Beam>,
    pub nodes: Vec<BeamNode>,
}

#[derive(Clone)]
struct Hyp {
    tokens: Vec<u32>,
    logprob: f64,
    node: Option<usize>,
}

/// Log-probabilities of the next token given raw logits, after bias and bans.
fn log_probs(raw: &[f64], settings: &GenerationSettings) -> Vec<f64> {
    let z = rules::apply_bias_and_bans(raw, &settings.rules.logit_bias, &settings.rules.banned);
    let max = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let lse = max + z.iter().map(|v| crate::rules::exp(v - max)).sum::<f64>().ln();
    z.iter().map(|v| v - lse).collect()
}

pub fn length_normalised(logprob: f64, length: usize, alpha: f64) -> f64 {
    logprob / (length.max(1) as f64).powf(alpha)
}

/// How far a search has gone (the page shows it and can cancel in between).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct BeamProgress {
    /// Depths expanded so far.
    pub depth: usize,
    /// The most it will expand (`max_new`, less where the context is full).
    pub of: usize,
    pub done: bool,
}

/// A search in progress, advanced one depth at a time by `step`, so a caller
/// (the browser's worker) can report progress and stop between depths.
/// `window` is what the cache held (its last token already run, giving
/// `pending`); the caller restores the cache when the search ends.
pub struct BeamSearch {
    settings: GenerationSettings,
    pending: Vec<f64>,
    base: usize,
    depth: usize,
    of: usize,
    live: Vec<Hyp>,
    finished: Vec<Hyp>,
    nodes: Vec<BeamNode>,
}

impl BeamSearch {
    pub fn new(model: &dyn LanguageModel, window: &[u32], pending: &[f64], settings: &GenerationSettings) -> Self {
        let base = window.len();
        let room = model.info().context.saturating_sub(base);
        BeamSearch {
            settings: settings.clone(),
            pending: pending.to_vec(),
            base,
            depth: 0,
            of: settings.max_new.min(room),
            live: vec![Hyp { tokens: Vec::new(), logprob: 0.0, node: None }],
            finished: Vec::new(),
            nodes: Vec::new(),
        }
    }

    pub fn progress(&self) -> BeamProgress {
        BeamProgress { depth: self.depth, of: self.of, done: self.depth >= self.of || self.live.is_empty() }
    }

    /// Expands every live beam by one token and keeps the best `beams`.
    pub fn step(&mut self, model: &mut dyn LanguageModel, tok: &dyn Tokenizer) -> Result<BeamProgress> {
        if self.progress().done {
            return Ok(self.progress());
        }
        let (width, eos, step) = (self.settings.beams, model.info().eos_id, self.depth);
        let mut candidates: Vec<(f64, usize, u32, f64)> = Vec::new(); // (total, hyp, token, lp)
        for (h, hyp) in self.live.iter().enumerate() {
            let raw = if hyp.tokens.is_empty() {
                self.pending.clone()
            } else {
                model.truncate(self.base);
                let logits = model.forward_cached(&hyp.tokens)?;
                // The position in the window the search runs over.
                crate::lm::check_output(&logits, self.base + hyp.tokens.len())?;
                logits.iter().map(|&x| x as f64).collect()
            };
            let lp = log_probs(&raw, &self.settings);
            for i in crate::rules::top_indices(&lp, width) {
                if lp[i].is_finite() {
                    candidates.push((hyp.logprob + lp[i], h, i as u32, lp[i]));
                }
            }
        }
        candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut next = Vec::new();
        for (total, h, token, lp) in candidates.into_iter().take(width) {
            let parent = &self.live[h];
            let id = self.nodes.len();
            self.nodes.push(BeamNode {
                id,
                parent: parent.node,
                token,
                display: tok.display(token),
                logprob: lp,
                total_logprob: total,
                step,
                in_final_beam: false,
            });
            let mut tokens = parent.tokens.clone();
            tokens.push(token);
            let hyp = Hyp { tokens, logprob: total, node: Some(id) };
            if Some(token) == eos { self.finished.push(hyp) } else { next.push(hyp) }
        }
        self.live = next;
        self.depth += 1;
        Ok(self.progress())
    }

    /// The best `beams` hypotheses by score/length^α, finished ones included.
    pub fn report(self, tok: &dyn Tokenizer) -> BeamReport {
        let BeamSearch { settings, live, finished, mut nodes, .. } = self;
        let width = settings.beams;
        let mut all: Vec<(Hyp, bool)> =
            finished.into_iter().map(|h| (h, true)).chain(live.into_iter().map(|h| (h, false))).collect();
        let score = |h: &Hyp| length_normalised(h.logprob, h.tokens.len(), settings.alpha);
        all.sort_by(|a, b| score(&b.0).total_cmp(&score(&a.0)));
        all.truncate(width);
        for (hyp, _) in &all {
            let mut node = hyp.node;
            while let Some(n) = node {
                nodes[n].in_final_beam = true;
                node = nodes[n].parent;
            }
        }
        let beams = all
            .into_iter()
            .map(|(h, finished)| Beam {
                text: tok.decode(&h.tokens),
                score: score(&h),
                length: h.tokens.len(),
                logprob: h.logprob,
                tokens: h.tokens,
                finished,
            })
            .collect();
        BeamReport { alpha: settings.alpha, beams, nodes }
    }
}

/// Searches `settings.max_new` tokens deep with `settings.beams` beams, in one call.
pub fn search(
    model: &mut dyn LanguageModel,
    tok: &dyn Tokenizer,
    window: &[u32],
    pending: &[f64],
    settings: &GenerationSettings,
) -> Result<BeamReport> {
    let mut search = BeamSearch::new(model, window, pending, settings);
    while !search.step(model, tok)?.done {}
    Ok(search.report(tok))
}
