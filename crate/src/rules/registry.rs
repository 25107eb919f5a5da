//! The stages' specs, in the stage list's order (`kind::with_stages`): what
//! the pipeline, the "alone" columns, chain validation, the step inputs, the
//! settings table and the report's `on` list iterate over, and the rules'
//! fields, gathered from the specs. A stage is its own file's `SPEC` (see
//! `spec`) and one line of the stage list.

use std::sync::LazyLock;

use super::fields::{Field, GENERAL_FIELDS};
use super::kind::{StageKind, with_stages};
use super::settings::RuleSettings;
use super::spec::{Apply, StageSpec};

/// `SPECS` from the stage list.
macro_rules! stage_specs {
    ($( $module:ident: $( $kind:ident = $spec:ident ),+ ; )+) => {
        /// Every stage's spec, at its `StageKind`'s place in `StageKind::ALL`.
        pub(crate) static SPECS: [&StageSpec; StageKind::ALL.len()] = [$( $( &super::$module::$spec, )+ )+];
    };
}
with_stages!(stage_specs);

/// Every setting of the rules with a range: each stage's fields, then the
/// general ones, in the order the page lists their controls and the CLI its
/// flags (by `Group`; within one, in the stages' order); the lists (biases),
/// with no control, last.
pub static RULE_FIELDS: LazyLock<Vec<&'static Field>> = LazyLock::new(|| {
    let mut all: Vec<&'static Field> = SPECS.iter().flat_map(|s| s.fields).chain(GENERAL_FIELDS).collect();
    all.sort_by_key(|f| f.group().map_or(usize::MAX, |g| g as usize));
    all
});

/// The field named `key`, if the rules have one.
pub fn rule_field(key: &str) -> Option<&'static Field> {
    RULE_FIELDS.iter().copied().find(|f| f.key == key)
}

/// Every stage with its kind, in `StageKind::ALL`'s order.
pub(crate) fn kinds_and_specs() -> impl Iterator<Item = (StageKind, &'static StageSpec)> {
    StageKind::ALL.into_iter().zip(SPECS)
}

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
        // Both are made from the stage list, in its order.
        SPECS[self as usize]
    }

    /// The stage's name in the reports (its serde name).
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The stage named `name`, if any.
    pub fn from_name(name: &str) -> Option<StageKind> {
        kinds_and_specs().find(|(_, s)| s.name == name).map(|(kind, _)| kind)
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
    fn the_specs_are_named_as_serde_names_their_kinds() {
        for (kind, spec) in kinds_and_specs() {
            assert_eq!(kind.spec().name, spec.name);
            assert_eq!(serde_json::to_value(kind).unwrap(), serde_json::json!(spec.name));
            assert!(spec.switches.iter().all(|k| spec.reads.contains(k)), "{}: a switch it does not read", spec.name);
        }
    }

    /// Every field is declared once, and every setting a stage reads is a field of
    /// the rules or one of the settings without a range.
    #[test]
    fn every_field_is_declared_once_and_every_read_setting_is_known() {
        let keys: Vec<&str> = RULE_FIELDS.iter().map(|f| f.key).collect();
        for (i, k) in keys.iter().enumerate() {
            assert!(!keys[..i].contains(k), "{k} is declared twice");
        }
        let unranged = ["banned", "penalty_mode", "ties", "dry_sequence_breakers"];
        for spec in SPECS {
            for key in spec.reads {
                assert!(keys.contains(key) || unranged.contains(key), "{} reads {key}, which no field declares", spec.name);
            }
        }
    }

    #[test]
    fn the_defaults_turn_every_stage_off() {
        assert!(stages_on(&RuleSettings::default()).is_empty());
    }
}
