//! Each rule alone on the raw logits (the rules panel's left half): what a
//! rule does by itself, to compare with what it does inside the pipeline.

use super::epsilon_eta::{epsilon_mask, eta_mask};
use super::memo::StageMemo;
use super::min_keep::keep_at_least;
use super::min_p::min_p_mask;
use super::mirostat::{initial_mu, mirostat_v1_mask, mirostat_v2_mask};
use super::raw::RawDistribution;
use super::settings::RuleSettings;
use super::softmax::{Softmax, argmax};
use super::stage::Stage;
use super::state::StepInputs;
use super::temperature::{Tempered, scale_by_temperature};
use super::top_n_sigma::top_n_sigma_mask;
use super::typical::{typical_p_llama_mask, typical_p_mask};
use super::xtc::xtc_mask;

/// "greedy", "temperature" (at `s.temperature`), then at tau = 1 with `s`'s
/// values: "top_k", "top_p", "min_p", "typical_p", "typical_p_llama",
/// "epsilon_cutoff", "eta_cutoff", "top_n_sigma", "xtc" (as if its coin came
/// up when `inputs` has none), "mirostat" (at `inputs`' mu). A rule that is
/// off keeps every token, at no cost. Each keeps at least `min_keep`. The
/// columns no temperature changes come from `memo` when it holds them for
/// the same values.
pub(crate) fn rules_alone(
    raw: &RawDistribution,
    tempered: &Option<Tempered>,
    s: &RuleSettings,
    inputs: &StepInputs,
    memo: &StageMemo,
) -> Vec<Stage> {
    let keep = s.min_keep;
    let k = s.top_k.max(if s.top_k > 0 { keep } else { 0 });
    let at_least = |mask: Vec<bool>| keep_at_least(mask, &raw.probs, keep);
    let cut = |name: &'static str, on: bool, key: Vec<u64>, mask_of: &dyn Fn() -> Vec<bool>| {
        if !on {
            return raw.stage.renamed(name);
        }
        memo.alone(name, key, || raw.truncated(name, &mask_of()))
    };
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).chain([keep as u64]).collect::<Vec<u64>>();
    let mu = inputs.mirostat_mu.unwrap_or_else(|| initial_mu(s.mirostat_tau));
    let vocab = raw.logits.len();
    vec![
        memo.greedy(|| greedy(raw)),
        temperature(raw, tempered, s.temperature),
        memo.top_k(k, || raw.truncated("top_k", &raw.top_k_mask(k))),
        memo.top_p(s.top_p, keep, || raw.truncated("top_p", &at_least(raw.top_p_mask(s.top_p)))),
        memo.min_p(s.min_p, keep, || raw.truncated("min_p", &at_least(min_p_mask(&raw.probs, s.min_p)))),
        cut("typical_p", s.typical_p < 1.0, bits(&[s.typical_p]), &|| typical_p_mask(&raw.probs, s.typical_p, keep)),
        cut("typical_p_llama", s.typical_p < 1.0, bits(&[s.typical_p]), &|| {
            typical_p_llama_mask(&raw.probs, s.typical_p, keep)
        }),
        cut("epsilon_cutoff", s.epsilon_cutoff > 0.0, bits(&[s.epsilon_cutoff]), &|| {
            epsilon_mask(&raw.probs, s.epsilon_cutoff, keep)
        }),
        cut("eta_cutoff", s.eta_cutoff > 0.0, bits(&[s.eta_cutoff]), &|| eta_mask(&raw.probs, s.eta_cutoff, keep)),
        cut("top_n_sigma", s.top_n_sigma > 0.0, bits(&[s.top_n_sigma]), &|| {
            at_least(top_n_sigma_mask(&raw.logits, s.top_n_sigma))
        }),
        cut(
            "xtc",
            s.xtc_probability > 0.0 && s.xtc_threshold <= 0.5,
            bits(&[s.xtc_threshold, s.xtc_probability, inputs.xtc_coin.unwrap_or(-1.0)]),
            &|| xtc_mask(&raw.probs, s.xtc_threshold, s.xtc_probability, inputs.xtc_coin, keep),
        ),
        cut("mirostat", s.mirostat != 0, bits(&[f64::from(s.mirostat), mu]), &|| {
            at_least(if s.mirostat == 1 { mirostat_v1_mask(&raw.probs, mu, vocab) } else { mirostat_v2_mask(&raw.probs, mu) })
        }),
    ]
}

/// The "greedy" column: all the mass on the raw argmax.
fn greedy(raw: &RawDistribution) -> Stage {
    let mut one_hot = vec![0.0; raw.probs.len()];
    one_hot[argmax(&raw.logits)] = 1.0;
    Stage::with_entropy("greedy", one_hot, 0.0, &raw.probs)
}

/// The "temperature" column: softmax(raw / tau).
fn temperature(raw: &RawDistribution, tempered: &Option<Tempered>, tau: f64) -> Stage {
    match tempered {
        Some(t) => {
            let softmax = Softmax { probs: t.softmax.probs.clone(), log_norm: t.softmax.log_norm };
            Stage::from_softmax("temperature", softmax, &t.logits, &raw.probs).0
        }
        None if tau == 1.0 => raw.stage.renamed("temperature"),
        None => Stage::from_logits("temperature", &scale_by_temperature(&raw.logits, tau), &raw.probs),
    }
}
