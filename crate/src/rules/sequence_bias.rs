//! Hugging Face's `sequence_bias`: a bias on the token that would complete a
//! listed sequence. A one-token sequence is always biased; a longer one only
//! when the history ends with all but its last token. Biases add up.

use super::bias::apply_bias_and_bans;
use super::fields::{Field, Range, Slot};
use super::settings::MAX_ABS_BIAS;
use super::spec::{Apply, StageSpec, Takes};

/// `(token id, total bias)` for the next position, in the order listed.
pub fn sequence_biases(history: &[u32], sequences: &[(Vec<u32>, f64)]) -> Vec<(u32, f64)> {
    let mut out: Vec<(u32, f64)> = Vec::new();
    for (seq, bias) in sequences {
        let Some((&last, head)) = seq.split_last() else { continue };
        if history.ends_with(head) {
            match out.iter_mut().find(|(id, _)| *id == last) {
                Some((_, b)) => *b += bias,
                None => out.push((last, *bias)),
            }
        }
    }
    out
}

/// The settings the stage owns (sequence_bias).
const FIELDS: &[Field] = &[
    Field::new(
        "sequence_bias",
        Slot::List,
        Range::closed(-MAX_ABS_BIAS, MAX_ABS_BIAS),
        "",
        "Each sequence bias",
    ),
];

/// The stage: Hugging Face's sequence bias on the logits.
pub(crate) const SPEC: StageSpec = StageSpec {
    name: "sequence_bias",
    label: "sequence bias",
    what: "adds a bias to the token that would complete a listed token sequence (a one-token sequence always)",
    engines: "Hugging Face (sequence_bias, SequenceBiasLogitsProcessor)",
    reads: &["sequence_bias"],
    switches: &["sequence_bias"],
    fields: FIELDS,
    is_on: |s| !s.sequence_bias.is_empty(),
    apply: Apply::Modifier(|z, history, s, _| {
        let biases = sequence_biases(history, &s.sequence_bias);
        (!biases.is_empty()).then(|| (apply_bias_and_bans(z, &biases, &[]), biases.len()))
    }),
    alone: None,
    takes: Takes::Nothing,
    shown_when_off: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_matching_head_biases_the_last_token() {
        let seqs = vec![(vec![4], -1.0), (vec![1, 2], 3.0), (vec![9, 2], 5.0), (vec![2, 4], 0.5)];
        assert_eq!(sequence_biases(&[0, 1], &seqs), vec![(4, -1.0), (2, 3.0)]);
        assert_eq!(sequence_biases(&[2], &seqs), vec![(4, -0.5)]);
        assert_eq!(sequence_biases(&[], &seqs), vec![(4, -1.0)]);
    }
}
