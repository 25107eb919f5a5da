//! Scoring a text: how likely the model found each of its tokens, given
//! the ones before (teacher forcing, one pass), in the manner of GLTR
//! (Gehrmann, Strobelt and Rush, 2019): each token's probability, its rank
//! among the model's predictions, and its surprisal −log₂ p.
//!
//! ```text
//! tokens   t0   t1   t2  ...  tN
//! logits   z0   z1   z2  ...          z_i predicts t_{i+1}
//! scored        p(t1|t0)  p(t2|t0 t1) ...   (t0 has no prediction)
//! ```

use serde::Serialize;

use crate::bail;
use crate::error::Result;
use crate::lm::LanguageModel;
use crate::rules::{rank_of, top_indices};
use crate::rules::softmax;
use crate::tokenizer::Tokenizer;

/// The longest text scored in one pass: attention over T tokens costs T²
/// scores per head, 38 MB per layer at 1,024 tokens with 9 heads.
pub const MAX_SCORE_TOKENS: usize = 1024;
/// How many of the model's own predictions each token lists.
pub const ALTERNATIVES: usize = 3;
/// How many of the most surprising tokens the report names.
pub const MOST_SURPRISING: usize = 10;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Alternative {
    pub id: u32,
    pub display: String,
    pub prob: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ScoredToken {
    pub id: u32,
    pub text: String,
    pub display: String,
    pub special: bool,
    /// Put there by the chat template (system message, markers): shown,
    /// but left out of the statistics, which are about the user's text.
    pub template: bool,
    /// p(token | the tokens before it); None for the first token.
    pub prob: Option<f64>,
    /// 1 = the model's most likely token at this position (ties: lower id first).
    pub rank: Option<usize>,
    pub surprisal_bits: Option<f64>,
    /// The model's most likely tokens at this position.
    pub top: Vec<Alternative>,
}

/// GLTR's colour bands: how many tokens fell in each band of rank.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct RankBuckets {
    pub top1: usize,
    pub top10: usize,
    pub top100: usize,
    pub rest: usize,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ScoreReport {
    pub tokens: Vec<ScoredToken>,
    /// Tokens the statistics cover: those of the text (not the template's) with a prediction.
    pub scored: usize,
    pub mean_surprisal_bits: f64,
    /// 2^(mean surprisal in bits): the model's perplexity on this text.
    pub perplexity: f64,
    /// Indices into `tokens`, highest surprisal first.
    pub most_surprising: Vec<usize>,
    pub rank_buckets: RankBuckets,
}

/// What one row of logits says about the token that follows it.
struct Prediction {
    prob: f64,
    rank: usize,
    top: Vec<(usize, f64)>,
}

fn predict(row: &[f32], next: usize) -> Prediction {
    let z: Vec<f64> = row.iter().map(|&v| v as f64).collect();
    let p = softmax(&z);
    let top = top_indices(&z, ALTERNATIVES).into_iter().map(|i| (i, p[i])).collect();
    Prediction { prob: p[next], rank: rank_of(&z, next), top }
}

/// Scores `ids` under `model` (its cache and counters are left alone); the
/// statistics cover the tokens in `own` (the text's, not a template's).
pub fn score_tokens(model: &mut dyn LanguageModel, tok: &dyn Tokenizer, ids: &[u32], own: std::ops::Range<usize>) -> Result<ScoreReport> {
    let info = model.info();
    let limit = MAX_SCORE_TOKENS.min(info.context);
    if ids.len() < 2 {
        bail!("the text is {} token long: scoring needs at least two tokens (each is scored given the ones before)", ids.len());
    }
    if ids.len() > limit {
        bail!("the text is {} tokens long; this model scores at most {limit} tokens at once: shorten it", ids.len());
    }
    let mut predictions: Vec<Prediction> = Vec::with_capacity(ids.len() - 1);
    model.for_each_position(ids, &mut |i, row| {
        // Row i predicts token i + 1.
        crate::lm::check_output(row, i + 1)?;
        if let Some(&next) = ids.get(i + 1) {
            predictions.push(predict(row, next as usize));
        }
        Ok(())
    })?;
    if predictions.len() != ids.len() - 1 {
        bail!("the model returned {} positions for {} tokens", predictions.len() + 1, ids.len());
    }

    let mut buckets = RankBuckets::default();
    let mut tokens = Vec::with_capacity(ids.len());
    for (i, &id) in ids.iter().enumerate() {
        let pred = i.checked_sub(1).map(|j| &predictions[j]);
        let template = !own.contains(&i);
        if let (Some(p), false) = (pred, template) {
            match p.rank {
                1 => buckets.top1 += 1,
                2..=10 => buckets.top10 += 1,
                11..=100 => buckets.top100 += 1,
                _ => buckets.rest += 1,
            }
        }
        tokens.push(ScoredToken {
            id,
            text: tok.id_to_piece(id),
            display: tok.display(id),
            special: tok.is_special(id),
            template,
            prob: pred.map(|p| p.prob),
            rank: pred.map(|p| p.rank),
            surprisal_bits: pred.map(|p| -p.prob.log2()),
            top: pred
                .map(|p| p.top.iter().map(|&(j, prob)| Alternative { id: j as u32, display: tok.display(j as u32), prob }).collect())
                .unwrap_or_default(),
        });
    }
    let counted = |t: &ScoredToken| !t.template && t.surprisal_bits.is_some();
    let scored = tokens.iter().filter(|t| counted(t)).count();
    if scored == 0 {
        bail!("the text has no token with a prediction to score: type at least one more token");
    }
    let mean_surprisal_bits = tokens.iter().filter(|t| counted(t)).filter_map(|t| t.surprisal_bits).sum::<f64>() / scored as f64;
    let mut order: Vec<usize> = (0..tokens.len()).filter(|&i| counted(&tokens[i])).collect();
    let s = |i: usize| tokens[i].surprisal_bits.unwrap_or(0.0);
    order.sort_by(|&a, &b| s(b).total_cmp(&s(a)).then(a.cmp(&b)));
    order.truncate(MOST_SURPRISING);
    Ok(ScoreReport {
        tokens,
        scored,
        mean_surprisal_bits,
        perplexity: mean_surprisal_bits.exp2(),
        most_surprising: order,
        rank_buckets: buckets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prediction_is_the_softmax_probability_and_rank() {
        // softmax([1, 3, 2]) = [0.0900, 0.6652, 0.2447]
        let p = predict(&[1.0, 3.0, 2.0], 2);
        assert!((p.prob - 0.244_728_471_054_797_6).abs() < 1e-12, "{}", p.prob);
        assert_eq!(p.rank, 2);
        assert_eq!(p.top.iter().map(|t| t.0).collect::<Vec<_>>(), vec![1, 2, 0]);
        // A tie goes to the lower id, as everywhere else in the engine.
        assert_eq!(predict(&[2.0, 2.0], 1).rank, 2);
    }
}
