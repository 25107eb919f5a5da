//! A stage's probabilities over the vocabulary.
//!
//! A truncation keeps a few dozen tokens out of up to 262,144 (Gemma 3), so
//! such a stage holds only those: their ids and probabilities, every other
//! token's being 0. A slider move then neither fills nor reads a
//! vocabulary's worth of zeros per cut, and the page's and the worker's
//! memories hold a few KB for such a stage instead of 2 MB (the rules panel
//! keeps a dozen stages of every position). The whole vector is built only
//! when something asks for a slice (`Deref`), once, and the clones share it.

use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde::Serialize;

/// Shared probabilities: cloning one is a reference count, not a copy.
#[derive(Clone)]
pub struct Probs(Arc<Inner>);

enum Inner {
    Whole(Vec<f64>),
    Few {
        len: usize,
        /// The possible tokens, ascending.
        ids: Vec<u32>,
        /// Their probabilities, all > 0.
        values: Vec<f64>,
        /// The whole vector, once something asked for it.
        whole: OnceLock<Vec<f64>>,
    },
}

impl Probs {
    /// Every token's probability.
    pub fn whole(probs: Vec<f64>) -> Self {
        Self(Arc::new(Inner::Whole(probs)))
    }

    /// `len` tokens of which only `ids` (ascending) are possible, with
    /// `values` (> 0) as their probabilities.
    pub fn few(len: usize, ids: Vec<u32>, values: Vec<f64>) -> Self {
        debug_assert!(ids.len() == values.len() && ids.windows(2).all(|w| w[0] < w[1]));
        debug_assert!(ids.last().is_none_or(|&i| (i as usize) < len) && values.iter().all(|&p| p > 0.0));
        Self(Arc::new(Inner::Few { len, ids, values, whole: OnceLock::new() }))
    }

    /// How many tokens (the vocabulary's size, whatever is kept).
    pub fn len(&self) -> usize {
        match &*self.0 {
            Inner::Whole(v) => v.len(),
            Inner::Few { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Token `i`'s probability, without building the whole vector.
    pub fn get(&self, i: usize) -> f64 {
        match &*self.0 {
            Inner::Whole(v) => v[i],
            Inner::Few { len, ids, values, .. } => {
                assert!(i < *len, "token {i} of a vocabulary of {len}");
                ids.binary_search(&(i as u32)).map_or(0.0, |at| values[at])
            }
        }
    }

    /// The possible tokens and their probabilities, when only a few are
    /// held: ids ascending, probabilities > 0.
    pub fn few_held(&self) -> Option<(&[u32], &[f64])> {
        match &*self.0 {
            Inner::Whole(_) => None,
            Inner::Few { ids, values, .. } => Some((ids, values)),
        }
    }

    /// Whether `a` and `b` are the same numbers by construction (one
    /// shared vector), without comparing them.
    pub fn same(a: &Probs, b: &Probs) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// The whole vector (built once for a stage that holds few tokens).
    pub fn as_slice(&self) -> &[f64] {
        match &*self.0 {
            Inner::Whole(v) => v,
            Inner::Few { len, ids, values, whole } => whole.get_or_init(|| {
                let mut v = vec![0.0; *len];
                for (&i, &p) in ids.iter().zip(values) {
                    v[i as usize] = p;
                }
                v
            }),
        }
    }
}

impl Deref for Probs {
    type Target = [f64];
    fn deref(&self) -> &[f64] {
        self.as_slice()
    }
}

impl PartialEq for Probs {
    fn eq(&self, other: &Self) -> bool {
        match (self.few_held(), other.few_held()) {
            _ if Probs::same(self, other) => true,
            (Some(a), Some(b)) => self.len() == other.len() && a == b,
            _ => self.as_slice() == other.as_slice(),
        }
    }
}

impl std::fmt::Debug for Probs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.few_held() {
            Some((ids, values)) => write!(f, "{} of {} tokens: ids {ids:?}, probabilities {values:?}", ids.len(), self.len()),
            None => self.as_slice().fmt(f),
        }
    }
}

/// Serialised as the plain vector of every token's probability.
impl Serialize for Probs {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_tokens_read_as_the_whole_vector_they_stand_for() {
        let few = Probs::few(6, vec![1, 4], vec![0.25, 0.75]);
        let whole = Probs::whole(vec![0.0, 0.25, 0.0, 0.0, 0.75, 0.0]);
        assert_eq!(few.len(), 6);
        assert_eq!((0..6).map(|i| few.get(i)).collect::<Vec<_>>(), whole.to_vec());
        assert_eq!(&few[..], &whole[..]);
        assert_eq!(few, whole);
        assert_ne!(few, Probs::few(6, vec![1, 4], vec![0.75, 0.25]));
        assert_ne!(few, Probs::few(7, vec![1, 4], vec![0.25, 0.75]));
        assert_eq!(few.few_held(), Some((&[1u32, 4][..], &[0.25, 0.75][..])));
        assert!(whole.few_held().is_none());
        let shared = few.clone();
        assert!(Probs::same(&few, &shared) && !Probs::same(&few, &whole));
        assert_eq!(serde_json::to_string(&few).unwrap(), serde_json::to_string(&whole).unwrap());
    }
}
