//! Softmax, entropy and argmax: the measurements every stage reports.

use super::exp::{exp, exp_nonpositive};
use super::vocab_sum::{sum_by_chunks, sum_of_ids};
use crate::threads;

/// The largest value, NaNs ignored; `-inf` for an empty slice. (A plain
/// comparison: `f64::max` is a libm call in wasm, slower in this hot loop.)
#[inline]
pub(crate) fn max_value(values: &[f64]) -> f64 {
    let mut max = f64::NEG_INFINITY;
    for &v in values {
        if v > max {
            max = v;
        }
    }
    max
}

/// Numerically stable softmax over a logits slice.
///
/// - `-inf` logits get probability exactly 0 (banned or truncated tokens).
/// - If every logit is `-inf` nothing is possible: the result is all zeros.
///   The pipeline turns that case into a clear error before it reaches here.
/// - If some logits are `+inf`, they share the mass equally (the limit of the
///   finite case); the pipeline refuses `+inf` input, so this is a guard only.
/// - NaN inputs are refused by the pipeline; here a NaN makes no promise.
pub fn softmax(logits: &[f64]) -> Vec<f64> {
    softmax_parts(logits).probs
}

/// A softmax and its normaliser: for every finite logit `z_i`,
/// `ln p_i = z_i - log_norm`. With it an entropy needs one multiply-add per
/// token instead of a logarithm per token (the rules panel computes a dozen
/// entropies over up to 49,152 tokens on every slider move).
pub struct Softmax {
    pub probs: Vec<f64>,
    /// `max + ln Σ exp(z - max)`; not finite when the logits are all `-inf`
    /// or hold a `+inf` (then only `probs` is meaningful).
    pub log_norm: f64,
}

/// The softmax of `softmax`, with its normaliser.
///
/// Its passes over the vocabulary go by `threads::map_chunks` (Gemma 3's
/// 262,144 tokens took about 3 ms a step in wasm on one thread). The sum of
/// the exponentials is each chunk's sum in order, then those in chunk order:
/// the same bits at any thread count, and for a vocabulary of one chunk the
/// plain sum in token order.
pub fn softmax_parts(logits: &[f64]) -> Softmax {
    // The max and the finite logits' count in one pass (it vectorises).
    let parts = threads::map_chunks(logits.len(), threads::VOCAB_CHUNK, |range| {
        let (mut max, mut finite) = (f64::NEG_INFINITY, 0usize);
        for &z in &logits[range] {
            max = if z > max { z } else { max };
            finite += (z > f64::NEG_INFINITY) as usize;
        }
        (max, finite)
    });
    let max = parts.iter().fold(f64::NEG_INFINITY, |m, &(v, _)| if v > m { v } else { m });
    let finite: usize = parts.iter().map(|&(_, f)| f).sum();
    if max == f64::NEG_INFINITY {
        return Softmax { probs: vec![0.0; logits.len()], log_norm: f64::NEG_INFINITY };
    }
    if max == f64::INFINITY {
        let ties = logits.iter().filter(|&&z| z == f64::INFINITY).count() as f64;
        let probs = logits
            .iter()
            .map(|&z| if z == f64::INFINITY { 1.0 / ties } else { 0.0 })
            .collect();
        return Softmax { probs, log_norm: f64::INFINITY };
    }
    // Subtracting the max keeps every exponent <= 0: no overflow at tau = 1e-100.
    // Normalised in place: one allocation per softmax.
    let mut probs = vec![0.0; logits.len()];
    // Mostly -inf (greedy's one-hot logits, a heavy truncation): only the
    // finite ones need an exponential. The others are exactly 0 either way
    // and adding 0 changes no sum, so the result is bit for bit the same.
    let sparse = finite * 8 < logits.len();
    let sums = threads::map_chunks_mut(&mut probs, threads::VOCAB_CHUNK, |range, out| {
        let zs = &logits[range];
        // z − max ≤ 0 (or NaN, which the pipeline refuses first).
        if sparse {
            for (p, &z) in out.iter_mut().zip(zs).filter(|(_, z)| **z > f64::NEG_INFINITY) {
                *p = exp_nonpositive(z - max);
            }
        } else {
            for (p, &z) in out.iter_mut().zip(zs) {
                *p = exp_nonpositive(z - max);
            }
        }
        out.iter().sum::<f64>()
    });
    let total: f64 = sums.iter().sum();
    threads::map_chunks_mut(&mut probs, threads::VOCAB_CHUNK, |_, out| {
        for p in out {
            *p /= total;
        }
    });
    Softmax { probs, log_norm: max + total.ln() }
}

/// A distribution already measured, near which another is wanted.
pub struct Nearby<'a> {
    pub logits: &'a [f64],
    pub probs: &'a [f64],
    pub log_norm: f64,
}

/// `softmax_parts(logits)`, computed from a `base` whose logits differ from
/// these in only a few places (a penalty or a bias touches the recent or the
/// chosen tokens; the rest of a 49,152-token vocabulary is unchanged). An
/// unchanged token's probability is the base's times one common factor, so
/// only the changed tokens need an exponential. Agrees with `softmax_parts`
/// to a few ulp; falls back to it when many logits changed, when the base's
/// normaliser is not finite, or when the normaliser falls and a token the
/// base rounded to 0 might come back.
pub fn softmax_near(logits: &[f64], base: &Nearby) -> Softmax {
    let n = logits.len();
    if base.logits.len() != n || !base.log_norm.is_finite() {
        return softmax_parts(logits);
    }
    // Its passes over the vocabulary by `threads::map_chunks`, the unchanged
    // mass summed chunk by chunk, in chunk order, as `softmax_parts` sums.
    // More changed tokens than this take the full softmax.
    let most = n.div_ceil(8);
    let found = threads::map_chunks(n, threads::VOCAB_CHUNK, |range| {
        let mut changed = Vec::new();
        for i in range {
            if logits[i].to_bits() != base.logits[i].to_bits() {
                if changed.len() >= most {
                    return None;
                }
                changed.push(i);
            }
        }
        Some(changed)
    });
    let Some(changed) = found.into_iter().collect::<Option<Vec<_>>>().map(|c| c.concat()) else {
        return softmax_parts(logits);
    };
    if changed.len() > most || changed.iter().any(|&i| logits[i] == f64::INFINITY || logits[i].is_nan()) {
        return softmax_parts(logits);
    }
    // Both sums in units of the base's normaliser: unchanged tokens keep p_i,
    // changed ones bring exp(z_i - log_norm) (finite: |bias| <= 100).
    let mut is_changed = vec![false; n];
    for &i in &changed {
        is_changed[i] = true;
    }
    let parts = threads::map_chunks(n, threads::VOCAB_CHUNK, |range| {
        let (mut mass, mut any_zero) = (0.0, false);
        for (&p, &c) in base.probs[range.clone()].iter().zip(&is_changed[range]) {
            if !c {
                mass += p;
                any_zero |= p == 0.0;
            }
        }
        (mass, any_zero)
    });
    let unchanged_mass = parts.iter().fold(0.0, |sum, p| sum + p.0);
    let any_zero = parts.iter().any(|p| p.1);
    let changed_exps: Vec<f64> = changed.iter().map(|&i| exp(logits[i] - base.log_norm)).collect();
    let ratio = unchanged_mass + changed_exps.iter().sum::<f64>();
    if !(ratio > 0.0 && ratio.is_finite()) || (ratio < 1.0 && any_zero) {
        return softmax_parts(logits);
    }
    let mut probs = vec![0.0; n];
    threads::map_chunks_mut(&mut probs, threads::VOCAB_CHUNK, |range, out| {
        for (p, &b) in out.iter_mut().zip(&base.probs[range]) {
            *p = b / ratio;
        }
    });
    for (&i, &e) in changed.iter().zip(&changed_exps) {
        probs[i] = e / ratio;
    }
    Softmax { probs, log_norm: base.log_norm + ratio.ln() }
}

/// Shannon entropy in nats of `probs`, given that `ln p_i = logits_i -
/// log_norm` wherever `p_i > 0` (a `Softmax`'s, or a renormalised subset's
/// with `log_norm + ln(kept mass)`). Equals `entropy_nats(probs)` up to
/// rounding; falls back to it when `log_norm` is not finite. Summed as
/// `vocab_sum` says, on the threads in force.
pub fn entropy_nats_from_logits(probs: &[f64], logits: &[f64], log_norm: f64) -> f64 {
    if !log_norm.is_finite() {
        return entropy_nats(probs);
    }
    let h = sum_by_chunks(probs.len(), |range| {
        let mut h = 0.0;
        for (&p, &z) in probs[range.clone()].iter().zip(&logits[range]) {
            if p > 0.0 {
                h += entropy_term(p, z, log_norm);
            }
        }
        h
    });
    if h > 0.0 { h } else { 0.0 }
}

/// A possible token's share of an entropy, `-p ln p` with `ln p = z - log_norm`.
#[inline]
pub(crate) fn entropy_term(p: f64, z: f64, log_norm: f64) -> f64 {
    -p * (z - log_norm)
}

/// `entropy_nats_from_logits` of a distribution given as its possible
/// tokens (id, probability), ids ascending: the same terms added the same
/// way (`vocab_sum::sum_of_ids`), so the same bits.
pub fn entropy_nats_of(kept: &[(u32, f64)], logits: &[f64], log_norm: f64) -> f64 {
    let possible = kept.iter().filter(|c| c.1 > 0.0);
    let h: f64 = if log_norm.is_finite() {
        sum_of_ids(possible.map(|&(i, p)| (i, entropy_term(p, logits[i as usize], log_norm))))
    } else {
        possible.map(|&(_, p)| -p * p.ln()).sum()
    };
    if h > 0.0 { h } else { 0.0 }
}

/// Entropy in nats of softmax(logits / tau), tau > 0, in one pass with no
/// allocation: with `u_i = (z_i - max) / tau` and `T = Σ exp(u_i)`,
/// `H = ln T - Σ exp(u_i) u_i / T`. For the entropy-vs-temperature curve.
pub fn entropy_nats_at_temperature(logits: &[f64], tau: f64) -> f64 {
    let max = max_value(logits);
    if !max.is_finite() {
        return entropy_nats(&softmax(&super::scale_by_temperature(logits, tau)));
    }
    let (mut total, mut weighted) = (0.0, 0.0);
    for &z in logits {
        if z == f64::NEG_INFINITY {
            continue;
        }
        let u = (z - max) / tau;
        let e = exp_nonpositive(u);
        total += e;
        weighted += e * u;
    }
    let h = total.ln() - weighted / total;
    if h > 0.0 { h } else { 0.0 }
}

/// Shannon entropy in nats, with the convention 0 · ln 0 = 0.
pub fn entropy_nats(p: &[f64]) -> f64 {
    let h: f64 = p
        .iter()
        .filter(|&&pi| pi > 0.0)
        .map(|&pi| -pi * pi.ln())
        .sum();
    // A one-hot gives -0.0 (or a last-bit negative): report a clean 0.
    // (`f64::max` may keep -0.0, hence the comparison.)
    if h > 0.0 { h } else { 0.0 }
}

/// Shannon entropy in bits.
pub fn entropy_bits(p: &[f64]) -> f64 {
    entropy_nats(p) / std::f64::consts::LN_2
}

/// Index of the largest value; ties break toward the first index, as in the
/// course ("argmax breaks the tie toward the first index"). NaNs are never
/// chosen. An empty slice gives 0 (the pipeline refuses empty logits).
pub fn argmax(logits: &[f64]) -> usize {
    let mut best = 0;
    let mut best_value = f64::NEG_INFINITY;
    let mut found = false;
    for (i, &z) in logits.iter().enumerate() {
        if z.is_nan() {
            continue;
        }
        if !found || z > best_value {
            best = i;
            best_value = z;
            found = true;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_of_equal_logits_is_uniform() {
        let p = softmax(&[2.0, 2.0, 2.0, 2.0]);
        for pi in p {
            assert!((pi - 0.25).abs() < 1e-15);
        }
    }

    #[test]
    fn softmax_gives_zero_to_minus_infinity_and_handles_all_banned() {
        let p = softmax(&[0.0, f64::NEG_INFINITY, 0.0]);
        assert_eq!(p[1], 0.0);
        assert!((p[0] - 0.5).abs() < 1e-15);
        assert_eq!(softmax(&[f64::NEG_INFINITY; 3]), vec![0.0; 3]);
    }

    #[test]
    fn softmax_survives_huge_logits() {
        let p = softmax(&[1e300, 0.0]);
        assert_eq!(p, vec![1.0, 0.0]);
    }

    #[test]
    fn entropy_of_uniform_is_log_n() {
        let p = vec![0.125; 8];
        assert!((entropy_bits(&p) - 3.0).abs() < 1e-12);
        assert!((entropy_nats(&p) - 8f64.ln()).abs() < 1e-12);
        assert_eq!(entropy_bits(&[0.0, 1.0, 0.0]), 0.0);
        assert!(
            entropy_nats(&[1.0]).is_sign_positive(),
            "a one-hot must report +0, not -0"
        );
    }

    #[test]
    fn entropy_from_the_normaliser_equals_the_definition() {
        let z = [3.0, 2.5, 2.0, 1.5, 1.0, 0.5, 0.0, -0.5, -1.0, f64::NEG_INFINITY];
        let Softmax { probs, log_norm } = softmax_parts(&z);
        let direct = entropy_nats(&probs);
        assert!((entropy_nats_from_logits(&probs, &z, log_norm) - direct).abs() < 1e-14);
        for tau in [0.05, 0.7, 1.0, 3.0, 20.0] {
            let scaled = super::super::scale_by_temperature(&z, tau);
            let direct = entropy_nats(&softmax(&scaled));
            let streamed = entropy_nats_at_temperature(&z, tau);
            assert!((streamed - direct).abs() < 1e-12 * direct.max(1e-300) + 1e-15, "tau {tau}: {streamed} vs {direct}");
        }
        // A one-hot reports a clean zero both ways.
        let one_hot = [0.0, -2000.0];
        let parts = softmax_parts(&one_hot);
        assert_eq!(entropy_nats_from_logits(&parts.probs, &one_hot, parts.log_norm), 0.0);
        assert_eq!(entropy_nats_at_temperature(&one_hot, 1.0), 0.0);
    }

    #[test]
    fn a_nearby_softmax_agrees_with_the_direct_one() {
        let mut rng = crate::rng::Rng::new(5);
        let base_z: Vec<f64> = (0..500).map(|_| rng.next_normal() * 3.0).collect();
        let base = softmax_parts(&base_z);
        let near = Nearby { logits: &base_z, probs: &base.probs, log_norm: base.log_norm };
        for case in 0..4 {
            let mut z = base_z.clone();
            match case {
                0 => z[7] /= 1.3,                              // a penalty
                1 => { z[3] += 8.0; z[400] = f64::NEG_INFINITY } // a bias and a ban
                2 => { let top = argmax(&z); z[top] -= 50.0 }  // the top token pushed down
                _ => {}                                        // nothing changed
            }
            let (got, want) = (softmax_near(&z, &near), softmax_parts(&z));
            for (g, w) in got.probs.iter().zip(&want.probs) {
                assert!((g - w).abs() <= 1e-14 * w, "case {case}: {g} vs {w}");
                assert_eq!(*g > 0.0, *w > 0.0);
            }
            assert!((got.log_norm - want.log_norm).abs() < 1e-13 * want.log_norm.abs().max(1.0));
        }
    }

    #[test]
    fn argmax_breaks_ties_toward_first_index() {
        assert_eq!(argmax(&[1.0, 3.0, 3.0, 2.0]), 1);
        assert_eq!(argmax(&[f64::NEG_INFINITY, f64::NEG_INFINITY]), 0);
        assert_eq!(argmax(&[f64::NAN, -5.0]), 1);
    }

    /// A vocabulary of several chunks (`threads::VOCAB_CHUNK`), as Gemma 3's:
    /// the same bits on 1, 2 and 4 threads, and the definition's values
    /// (each e^(z − max) over their plain sum) to within rounding.
    #[cfg(feature = "threads")]
    #[test]
    fn a_vocabulary_of_several_chunks_gives_the_same_bits_at_any_thread_count() {
        use crate::rng::Rng;
        let mut rng = Rng::new(17);
        let n = 2 * crate::threads::VOCAB_CHUNK + 12_345;
        let mut z: Vec<f64> = (0..n).map(|_| rng.next_normal() * 3.0).collect();
        z[7] = f64::NEG_INFINITY;
        z[n - 3] = 14.0;
        let runs: Vec<Softmax> = [1, 2, 4]
            .iter()
            .map(|&t| crate::test_util::on_threads(t, || softmax_parts(&z)))
            .collect();
        for run in &runs[1..] {
            assert_eq!(run.log_norm.to_bits(), runs[0].log_norm.to_bits());
            assert!(run.probs.iter().zip(&runs[0].probs).all(|(a, b)| a.to_bits() == b.to_bits()));
        }
        let total: f64 = z.iter().map(|&v| (v - 14.0).exp()).sum();
        for (i, (&p, &v)) in runs[0].probs.iter().zip(&z).enumerate() {
            let expected = (v - 14.0).exp() / total;
            assert!((p - expected).abs() <= 1e-13 * expected, "token {i}: {p} against {expected}");
        }
        assert_eq!(runs[0].probs[7], 0.0);
        assert!((runs[0].log_norm - (14.0 + total.ln())).abs() < 1e-12);
    }
}
