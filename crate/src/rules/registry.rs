//! The stages, one line each: the list the pipeline, the "alone" columns,
//! chain validation, the step inputs, the settings table and the report's
//! `on` list iterate over. A stage is its own file's `SPEC` (see `spec`);
//! adding one is its file, its line here and its `StageKind`.

use super::kind::StageKind;
use super::settings::RuleSettings;
use super::spec::{Apply, StageSpec};
use super::{
    bias, dry, epsilon_eta, min_p, mirostat, no_repeat_ngram, penalties, sequence_bias, temperature, top_k, top_n_sigma, top_p,
    typical, xtc,
};

/// Every stage, in a chain-building order (`StageKind::ALL`'s).
pub(crate) static SPECS: [&StageSpec; 16] = [
    &sequence_bias::SPEC,
    &penalties::SPEC,
    &no_repeat_ngram::SPEC,
    &bias::SPEC,
    &dry::SPEC,
    &temperature::SPEC,
    &top_k::SPEC,
    &top_p::SPEC,
    &min_p::SPEC,
    &typical::SPEC,
    &typical::SPEC_LLAMA,
    &epsilon_eta::SPEC_EPSILON,
    &epsilon_eta::SPEC_ETA,
    &top_n_sigma::SPEC,
    &xtc::SPEC,
    &mirostat::SPEC,
];

/// What the page and the README say about a stage (the settings table's `stages`).
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct StageInfo {
    pub name: String,
    pub label: &'static str,
    /// One line: what the stage does.
    pub what: &'static str,
    /// Which engines ship it, and where they differ from this one.
    pub engines: &'static str,
    /// The settings (serde names) the stage reads.
    pub settings: &'static [&'static str],
    /// The settings whose move from the default can turn it on.
    pub switches: &'static [&'static str],
    /// The panels draw it even when it is off.
    pub shown_when_off: bool,
}

impl StageKind {
    /// The stage's spec.
    pub(crate) fn spec(self) -> &'static StageSpec {
        SPECS.iter().copied().find(|s| s.kind == self).expect("every StageKind has a spec in SPECS")
    }

    /// The stage's name in the reports (its serde name).
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The stage named `name`, if any.
    pub fn from_name(name: &str) -> Option<StageKind> {
        SPECS.iter().find(|s| s.name == name).map(|s| s.kind)
    }

    /// Stages that only add to (or scale) logits and read the history, never
    /// the distribution: a chain's leading run of them is memoised (`prefix`).
    pub fn is_logit_modifier(self) -> bool {
        matches!(self.spec().apply, Apply::Modifier(_))
    }

    /// Whether the settings turn this stage on.
    pub fn is_on(self, s: &RuleSettings) -> bool {
        (self.spec().is_on)(s)
    }

    pub fn info(self) -> StageInfo {
        let spec = self.spec();
        StageInfo {
            name: spec.name.to_string(),
            label: spec.label,
            what: spec.what,
            engines: spec.engines,
            settings: spec.reads,
            switches: spec.switches,
            shown_when_off: spec.shown_when_off,
        }
    }
}

/// The names of the stages the settings turn on (whether or not the chain
/// holds them: `validate` refuses one it lacks), in `SPECS`' order: what the
/// report's `on` says, so the page draws what the engine runs.
pub fn stages_on(s: &RuleSettings) -> Vec<&'static str> {
    SPECS.iter().filter(|spec| (spec.is_on)(s)).map(|spec| spec.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specs_are_the_kinds_in_order_named_as_serde_names_them() {
        assert_eq!(SPECS.map(|s| s.kind), StageKind::ALL);
        for spec in SPECS {
            assert_eq!(serde_json::to_value(spec.kind).unwrap(), serde_json::json!(spec.name));
            assert!(spec.switches.iter().all(|k| spec.reads.contains(k)), "{}: a switch it does not read", spec.name);
        }
    }

    #[test]
    fn the_defaults_turn_every_stage_off() {
        assert!(stages_on(&RuleSettings::default()).is_empty());
    }
}
