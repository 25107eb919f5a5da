//! Each rule alone on the raw logits (the rules panel's left half): what a
//! rule does by itself, to compare with what it does inside the pipeline.

use super::memo::StageMemo;
use super::raw::RawDistribution;
use super::registry::SPECS;
use super::settings::RuleSettings;
use super::spec::Apply;
use super::stage::Stage;
use super::state::StepInputs;
use super::temperature::Tempered;

/// "greedy", then every stage with a column alone, in `SPECS`' order:
/// "temperature" (at `s.temperature`), then at tau = 1 with `s`'s values
/// "top_k", "top_p", "min_p", "typical_p", "typical_p_llama",
/// "epsilon_cutoff", "eta_cutoff", "top_n_sigma", "xtc" (as if its coin came
/// up when `inputs` has none), "mirostat" (at `inputs`' mu). A rule that is
/// off keeps every token, at no cost (top-k, top-p and min-p are measured
/// whatever their values, and off they keep every possible token). Each
/// keeps at least `min_keep`. The columns come from `memo` when it holds
/// them for the same values.
pub(crate) fn rules_alone(
    raw: &RawDistribution,
    tempered: &Option<Tempered>,
    s: &RuleSettings,
    inputs: &StepInputs,
    memo: &StageMemo,
) -> Vec<Stage> {
    let mut columns = vec![memo.greedy(|| greedy(raw))];
    for spec in SPECS {
        match (spec.apply, spec.alone) {
            // softmax(raw / 0) is the greedy column's one-hot, bit for bit.
            (Apply::Temperature, _) if s.temperature == 0.0 => columns.push(columns[0].renamed("temperature")),
            (Apply::Temperature, _) => columns.push(temperature(raw, tempered)),
            // Off, the three measured whatever their values (top-k 0, top-p 1,
            // min-p 0) keep every possible token: their mask is the raw
            // stage's own set, and so is the column, bit for bit, with no
            // vocabulary-sized mask to build and compare.
            (_, Some(cut)) if cut.always && !(spec.is_on)(s) && raw.stage.kept_count >= s.min_keep.max(1) => {
                columns.push(raw.stage.renamed(spec.name))
            }
            (_, Some(cut)) if cut.always || (spec.is_on)(s) => {
                let key = (cut.key)(s, inputs).iter().map(|x| x.to_bits()).chain([s.min_keep as u64]).collect();
                columns.push(memo.alone(spec.name, key, || raw.truncated(spec.name, &(cut.mask)(raw, s, inputs))));
            }
            (_, Some(_)) => columns.push(raw.stage.renamed(spec.name)),
            _ => {}
        }
    }
    columns
}

/// The "greedy" column: all the mass on the raw argmax.
fn greedy(raw: &RawDistribution) -> Stage {
    Stage::one_hot("greedy", raw.probs.len(), raw.argmax(), &raw.probs)
}

/// The "temperature" column: softmax(raw / tau), for tau other than 0
/// (`tempered` is None at tau = 1: the raw distribution itself).
fn temperature(raw: &RawDistribution, tempered: &Option<Tempered>) -> Stage {
    match tempered {
        Some(t) => Stage::from_shared_softmax("temperature", &t.probs, t.log_norm, &t.logits, &raw.probs),
        None => raw.stage.renamed("temperature"),
    }
}
