//! Sums over the vocabulary, taken one way by every path that takes them.
//!
//! A stage's entropy and kept mass are sums over the whole vocabulary, or
//! over the few tokens a stage keeps; both paths must give the same bits
//! (a preview that reads a stage's few tokens shows the numbers a full pass
//! would). The whole-vocabulary sum runs on the threads in force, chunk by
//! chunk (`threads::map_chunks`), so the few-token sum adds its terms the
//! same way: each chunk of `threads::VOCAB_CHUNK` tokens in token order from
//! +0.0, then the chunks' sums in chunk order from +0.0. A vocabulary of one
//! chunk (every course model's, SmolLM2's) is the plain sum in token order.
//!
//! Why a chunk with no term may be skipped: its sum is +0.0, and adding +0.0
//! to a sum that starts at +0.0 never changes it (nor does adding -0.0).

use std::ops::Range;

use crate::threads::{self, VOCAB_CHUNK};

/// The sum over `0..n` of the chunk sums `chunk_sum(range)`, each of which
/// must add its terms in token order from +0.0.
pub(crate) fn sum_by_chunks(n: usize, chunk_sum: impl Fn(Range<usize>) -> f64 + Sync) -> f64 {
    total_of_chunks(threads::map_chunks(n, VOCAB_CHUNK, chunk_sum))
}

/// The chunks' sums added in chunk order, from +0.0: for a pass that takes
/// several sums per chunk at once (`threads::map_chunks` of a tuple).
pub(crate) fn total_of_chunks(sums: impl IntoIterator<Item = f64>) -> f64 {
    sums.into_iter().fold(0.0, |total, s| total + s)
}

/// `sum_by_chunks` of a few terms, given as (token id, term) in ascending
/// id order: the same additions, so the same bits.
pub(crate) fn sum_of_ids(terms: impl IntoIterator<Item = (u32, f64)>) -> f64 {
    let (mut total, mut chunk_total, mut chunk) = (0.0, 0.0, None);
    for (id, term) in terms {
        let c = id as usize / VOCAB_CHUNK;
        if chunk != Some(c) {
            if chunk.is_some() {
                total += chunk_total;
            }
            chunk = Some(c);
            chunk_total = 0.0;
        }
        chunk_total += term;
    }
    if chunk.is_some() {
        total += chunk_total;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use crate::test_util::on_threads;

    /// Terms as the stages' sums meet them: mostly absent, some tiny, some
    /// large, some -0.0.
    fn terms(rng: &mut Rng, n: usize) -> Vec<Option<f64>> {
        (0..n)
            .map(|_| match rng.next_u64() % 8 {
                0 => Some(rng.next_f64() * 1e-300),
                1 => Some(-0.0),
                2 => Some(rng.next_f64()),
                3 => Some(rng.next_f64() * 1e6),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_few_token_sum_is_the_whole_vocabulary_sum_bit_for_bit_at_any_thread_count() {
        let mut rng = Rng::new(3);
        for &n in &[1, 700, VOCAB_CHUNK, VOCAB_CHUNK + 1, 3 * VOCAB_CHUNK + 977] {
            for density in [1u64, 50, 5000] {
                let t: Vec<Option<f64>> =
                    terms(&mut rng, n).into_iter().map(|x| x.filter(|_| rng.next_u64() % 10_000 < density * 2)).collect();
                let few = sum_of_ids(t.iter().enumerate().filter_map(|(i, x)| x.map(|v| (i as u32, v))));
                for threads in [1, 2, 4] {
                    let whole = on_threads(threads, || {
                        sum_by_chunks(n, |range| t[range].iter().fold(0.0, |s, x| s + x.unwrap_or(0.0)))
                    });
                    assert_eq!(whole.to_bits(), few.to_bits(), "n {n}, density {density}, {threads} threads");
                }
            }
        }
    }

    #[test]
    fn one_chunk_is_the_plain_sum_in_token_order() {
        let mut rng = Rng::new(4);
        let t: Vec<f64> = (0..5000).map(|_| rng.next_f64() * 10f64.powi((rng.next_u64() % 20) as i32 - 10)).collect();
        let plain = t.iter().fold(0.0, |s, x| s + x);
        assert_eq!(sum_by_chunks(t.len(), |r| t[r].iter().fold(0.0, |s, x| s + x)).to_bits(), plain.to_bits());
        assert_eq!(sum_of_ids(t.iter().enumerate().map(|(i, &x)| (i as u32, x))).to_bits(), plain.to_bits());
    }

    #[test]
    fn several_chunks_are_summed_apart_then_added() {
        // A 1 first, then a chunk of 2^-60 terms: in token order each small
        // term is under half an ulp of the 1 and is lost; by chunks they
        // first add up among themselves (exactly, to 2^-44), then to the 1.
        let n = 2 * VOCAB_CHUNK;
        let term = |i: usize| if i == 0 { 1.0 } else if i >= VOCAB_CHUNK { 2f64.powi(-60) } else { 0.0 };
        let in_token_order = (0..n).fold(0.0, |s, i| s + term(i));
        assert_eq!(in_token_order, 1.0);
        let by_chunks = sum_by_chunks(n, |r| r.fold(0.0, |s, i| s + term(i)));
        assert_eq!(by_chunks, 1.0 + 2f64.powi(-44));
        assert_eq!(sum_of_ids((0..n).filter(|&i| term(i) != 0.0).map(|i| (i as u32, term(i)))), by_chunks);
    }
}
