//! The entropy of softmax(z / τ) at many temperatures: the curve the
//! entropy panel draws for every position.
//!
//! Exactly (`entropy_nats_at_temperature`, f64) that is one exponential per
//! token and temperature: 41 × 49,152 for SmolLM2, more than the model's own
//! step in wasm. The curve is a picture (the numbers the page prints come
//! from the stages), so past 256 tokens it is computed from a summary of the
//! logits that costs one pass over the tokens, after which each temperature
//! costs a few hundred operations whatever the vocabulary. Small
//! vocabularies (the course's models) keep the exact path, so every printed
//! digit of the lessons stays exact.
//!
//! # The method: moments of logit bins
//!
//! With `d = z - max ≤ 0`, `β = 1/τ` and `x = β d`, the entropy is
//! `H = ln T - W / T` with `T = Σ e^x` and `W = Σ x e^x`. Cut the axis of `d`
//! into bins of width `h`; a token in the bin with centre `c` has
//! `d = c + h u` with `|u| ≤ 1/2`, and with `s = β h`, `y = s u`:
//!
//! ```text
//! Σ_bin e^x   = e^{βc} Σ_bin e^y            = e^{βc} Σ_k s^k / k! · μ_k
//! Σ_bin x e^x = e^{βc} (βc Σ_bin e^y + Σ_bin y e^y),
//!                      Σ_bin y e^y          = Σ_k k s^k / k! · μ_k
//! ```
//!
//! where `μ_k = Σ_bin u^k` are the bin's moments, the series cut after
//! `k = ORDER` (and `k = ORDER + 1` for `y e^y`, the same terms shifted).
//! The moments do not depend on τ, so they are summed once.
//!
//! The series needs `s = βh` small, and a temperature only sees the tokens
//! with `x` above about -`CUTOFF` (below, `e^x` is negligible next to the top
//! token's `e^0 = 1`). So the bins come in levels: level `l` has `BINS` bins
//! of width `h_l = h_0 · 2^l` from `d = 0` down, with `h_0 = WIDTH / β_max`,
//! and a temperature reads the coarsest level with `β h_l ≤ WIDTH`, where
//! `β h_l > WIDTH / 2`, so its `BINS` bins reach `x < -BINS · WIDTH / 2 =
//! -CUTOFF`. A token is summed into the finest level that reaches it; each
//! coarser level takes the finer one's moments, moved to its own bin centres
//! (a binomial shift, exact algebra), plus its own new tokens.
//!
//! # The error bound
//!
//! Per token, `|y| ≤ WIDTH / 2` and the cut series of `e^y` is off by at
//! most `e^{|y|} |y|^{K+1} / (K+1)!` (K = `ORDER`), which relative to the
//! bin's `Σ e^y ≥ e^{-WIDTH/2}` per token is at most
//! `ρ = e^{WIDTH} (WIDTH/2)^{K+1} / (K+1)!`; the cut series of `y e^y` is off
//! by `|y|` times that. So `T` is within `ρ T` and `W` within
//! `ρ Σ e^x (|x| + WIDTH)` = `ρ T (m + WIDTH)`, where `m = -W / T` is the mean
//! `|x|`, and `H = ln T + m ≤ ln N` (N the tokens with a finite logit) with
//! `T ≥ 1` gives `m ≤ ln N`. Then
//! `|ΔH| ≤ |Δ ln T| + |ΔW| / T + m |ΔT| / T ≤ ρ (1 + WIDTH + 2 ln N)` to
//! first order. The tokens a level does not reach (`x < -CUTOFF`) change `T`
//! and `W` by at most `N e^{-CUTOFF} (1 + CUTOFF)` relative (e^x |x| falls
//! for x < -1). With `WIDTH = 1/2`, `ORDER = 5`, `CUTOFF = 40` and
//! N = 49,152: ρ = 5.6e-7 and `|ΔH| ≤ 1.3e-5` nats; the rounding of the f64
//! sums is far below. `error_bound` computes this for any N.
//!
//! Everything is plain f64 arithmetic and our own `exp` (no libm call but
//! one `ln` per temperature, no fused multiply-add), so native and wasm
//! compute the same curve.
//!
//! (Over 400 lines: one method, its bins, their series and the error bound
//! they are tested against; about half of it is those tests.)

use super::exp::exp;
use super::softmax::entropy_nats_at_temperature;
use crate::threads;

/// Vocabularies up to this size take the exact path.
pub const EXACT_UP_TO: usize = 256;

/// The largest `β h` a temperature's bins may have.
const WIDTH: f64 = 0.5;
/// The last power of `β h` kept in the series of `e^y`.
const ORDER: usize = 5;
/// Moments kept per bin: `u^0 ..= u^(ORDER + 1)`.
const MOMENTS: usize = ORDER + 2;
/// How far below the top token (in `x`) a curve point sees.
const CUTOFF: f64 = 40.0;
/// Bins per level, `2 · CUTOFF / WIDTH`: they reach `x < -CUTOFF` at every
/// temperature.
const BINS: usize = (2.0 * CUTOFF / WIDTH) as usize;
/// More levels than this (a β range over 2^40) take the exact path.
const MAX_LEVELS: usize = 41;

/// 1 / k! for k = 0 ..= ORDER + 1.
const INV_FACTORIAL: [f64; MOMENTS] = [1.0, 1.0, 0.5, 1.0 / 6.0, 1.0 / 24.0, 1.0 / 120.0, 1.0 / 720.0];

/// Entropy in nats of softmax(logits / τ) for each τ (each > 0).
///
/// The tokens are summed into the bins by `threads::map_chunks` (Gemma 3's
/// 262,144 took about 2 ms a step in wasm on one thread), each chunk's
/// moments on their own, then added in chunk order: the same curve at any
/// thread count, and for a vocabulary of one chunk the plain sums.
pub fn entropy_nats_at_temperatures(logits: &[f64], taus: &[f64]) -> Vec<f64> {
    curve(logits, taus, |bins| {
        let parts = threads::map_chunks(logits.len(), threads::VOCAB_CHUNK, |range| {
            let mut moments = vec![0.0; bins.moments.len()];
            bins.add_tokens(&mut moments, logits, range.start as u32..range.end as u32);
            moments
        });
        let mut parts = parts.into_iter();
        bins.moments = parts.next().expect("at least one chunk");
        for part in parts {
            for (a, b) in bins.moments.iter_mut().zip(part) {
                *a += b;
            }
        }
    })
}

/// `entropy_nats_at_temperatures`, summing the tokens in `order` (every id
/// once) in one pass. Any permutation gives the same curve up to the
/// rounding of the sums; tokens ranked by logit are summed a little faster
/// (a bin's tokens are then one run), but ranking them costs more than it
/// saves, so the page's curve takes them by id and a position is ranked
/// only when a truncation asks for it.
#[cfg(test)]
fn entropy_in_order(logits: &[f64], order: impl IntoIterator<Item = u32>, taus: &[f64]) -> Vec<f64> {
    curve(logits, taus, |bins| {
        let mut moments = std::mem::take(&mut bins.moments);
        bins.add_tokens(&mut moments, logits, order);
        bins.moments = moments;
    })
}

/// The curve from bins that `sum_tokens` fills with every token's moments,
/// or exactly where the bins do not apply.
fn curve(logits: &[f64], taus: &[f64], sum_tokens: impl FnOnce(&mut LogitBins)) -> Vec<f64> {
    let exact = || taus.iter().map(|&t| entropy_nats_at_temperature(logits, t)).collect();
    let mut max = f64::NEG_INFINITY;
    for &z in logits {
        max = if z > max { z } else { max };
    }
    let (mut beta_lo, mut beta_hi) = (f64::INFINITY, 0.0f64);
    for &tau in taus {
        let beta = 1.0 / tau;
        beta_lo = if beta < beta_lo { beta } else { beta_lo };
        beta_hi = if beta > beta_hi { beta } else { beta_hi };
    }
    let usable = beta_lo > 0.0 && beta_hi.is_finite() && taus.iter().all(|t| *t > 0.0);
    if logits.len() <= EXACT_UP_TO || !max.is_finite() || !usable {
        return exact();
    }
    let Some(mut bins) = LogitBins::new(max, beta_lo, beta_hi) else {
        return exact();
    };
    sum_tokens(&mut bins);
    bins.merge_levels();
    taus.iter().map(|&tau| bins.entropy(1.0 / tau)).collect()
}

/// The moments of every level's bins (see the module's comment).
struct LogitBins {
    /// The highest logit, from which every token's distance is measured.
    max: f64,
    /// `h_0`, the finest bins' width.
    width: f64,
    /// `moments[(level * BINS + bin) * MOMENTS + k] = Σ u^k` over the bin.
    moments: Vec<f64>,
    levels: usize,
    /// Where each level's bins end (a token at a distance of at least
    /// `reach[l]` below the top is in a coarser level) and 1 / h_l.
    reach: Vec<f64>,
    inv: Vec<f64>,
}

impl LogitBins {
    /// Empty bins for logits up to `max`, read at β from `beta_lo` to `beta_hi`.
    fn new(max: f64, beta_lo: f64, beta_hi: f64) -> Option<Self> {
        let width = WIDTH / beta_hi;
        // Levels until the coarsest one's bins are narrow enough for β_lo
        // and no narrower than half that: 2^(levels-1) ≤ β_hi / β_lo.
        let mut levels = 1;
        while levels < MAX_LEVELS && beta_lo * width * pow2(levels) <= WIDTH {
            levels += 1;
        }
        if levels == MAX_LEVELS || !width.is_normal() {
            return None;
        }
        let moments = vec![0.0; levels * BINS * MOMENTS];
        let reach = (0..levels).map(|l| BINS as f64 * width * pow2(l)).collect();
        let inv = (0..levels).map(|l| 1.0 / (width * pow2(l))).collect();
        Some(Self { max, width, moments, levels, reach, inv })
    }

    /// Adds the tokens in `order` to `moments` (laid out as `self.moments`),
    /// each in the finest level that reaches it.
    fn add_tokens(&self, moments: &mut [f64], logits: &[f64], order: impl IntoIterator<Item = u32>) {
        let (levels, reach, inv) = (self.levels, &self.reach, &self.inv);
        // Summed in registers over a run of tokens in the same bin (with
        // `order` descending, every bin's tokens are one run; in id order,
        // neighbours in a bin still make short runs).
        let mut run = [0.0f64; MOMENTS];
        let mut run_at = usize::MAX;
        let mut level = 0;
        for id in order {
            let a = self.max - logits[id as usize]; // ≥ 0; +inf for a banned token
            if level > 0 && a < reach[level - 1] {
                level = 0; // out of order: start the search again
            }
            while level < levels && a >= reach[level] {
                level += 1;
            }
            if level == levels {
                level -= 1; // below every level's reach: no temperature sees it
                continue;
            }
            let t = a * inv[level];
            let bin = (t as usize).min(BINS - 1);
            let at = level * BINS + bin;
            if at != run_at {
                if run_at != usize::MAX {
                    add(&mut moments[run_at * MOMENTS..(run_at + 1) * MOMENTS], &run);
                }
                run = [0.0; MOMENTS];
                run_at = at;
            }
            // u = (d - c) / h with c = -(bin + 1/2) h.
            let u = (bin as f64 + 0.5) - t;
            let mut power = 1.0;
            for m in run.iter_mut() {
                *m += power;
                power *= u;
            }
        }
        if run_at != usize::MAX {
            add(&mut moments[run_at * MOMENTS..(run_at + 1) * MOMENTS], &run);
        }
    }

    /// Each level's bins into the next one's first half: a bin of width h
    /// centred at c, as u' = (u ± 1/2) / 2 about the parent's centre c ∓ h/2
    /// (even bins are the upper halves of their parents, hence +).
    fn merge_levels(&mut self) {
        let moments = &mut self.moments;
        for level in 0..self.levels - 1 {
            for bin in 0..BINS {
                let from = (level * BINS + bin) * MOMENTS;
                if moments[from] == 0.0 {
                    continue;
                }
                let child: [f64; MOMENTS] = moments[from..from + MOMENTS].try_into().unwrap();
                let offset = if bin % 2 == 0 { 0.5 } else { -0.5 };
                let to = ((level + 1) * BINS + bin / 2) * MOMENTS;
                add(&mut moments[to..to + MOMENTS], &shifted(&child, offset));
            }
        }
    }

    /// H at inverse temperature `beta` (between the β range it was built for).
    fn entropy(&self, beta: f64) -> f64 {
        let mut level = 0;
        while level + 1 < self.levels && beta * self.width * pow2(level + 1) <= WIDTH {
            level += 1;
        }
        let s = beta * self.width * pow2(level);
        // s^k / k!, and k s^k / k! for the series of y e^y.
        let mut series = [0.0; MOMENTS];
        let mut power = 1.0;
        for (k, c) in series.iter_mut().enumerate() {
            *c = power * INV_FACTORIAL[k];
            power *= s;
        }
        // e^{βc} for bin centres c = -(bin + 1/2) h: e^{-s/2} times e^{-s} per bin.
        let step = exp(-s);
        let mut scale = exp(-0.5 * s);
        let (mut total, mut weighted) = (0.0, 0.0);
        let bins = &self.moments[level * BINS * MOMENTS..(level + 1) * BINS * MOMENTS];
        for (bin, mu) in bins.chunks_exact(MOMENTS).enumerate() {
            if mu[0] != 0.0 {
                let (mut sum_e, mut sum_ye) = (0.0, 0.0);
                for k in 0..MOMENTS {
                    let term = series[k] * mu[k];
                    if k <= ORDER {
                        sum_e += term;
                    }
                    sum_ye += k as f64 * term;
                }
                let centre = -(bin as f64 + 0.5) * s; // β c
                total += scale * sum_e;
                weighted += scale * (centre * sum_e + sum_ye);
            }
            scale *= step;
        }
        let h = total.ln() - weighted / total;
        if h > 0.0 { h } else { 0.0 }
    }
}

/// 2^e, exactly (e < 1024).
fn pow2(e: usize) -> f64 {
    f64::from_bits((1023 + e as u64) << 52)
}

fn add(into: &mut [f64], from: &[f64; MOMENTS]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a += b;
    }
}

/// The moments of `u + offset`, halved: `Σ ((u + offset) / 2)^k` from `Σ u^k`.
fn shifted(mu: &[f64; MOMENTS], offset: f64) -> [f64; MOMENTS] {
    let mut out = [0.0; MOMENTS];
    // Binomial coefficients row by row, C(k, j).
    let mut row = [0.0f64; MOMENTS];
    for k in 0..MOMENTS {
        row[k] = 1.0;
        for j in (1..k).rev() {
            row[j] += row[j - 1];
        }
        row[0] = 1.0;
        let mut sum = 0.0;
        let mut power = 1.0; // offset^(k - j), j from k down
        for j in (0..=k).rev() {
            sum += row[j] * power * mu[j];
            power *= offset;
        }
        out[k] = sum / pow2(k);
    }
    out
}

/// The bound on |fast - exact| argued in the module's comment, for `n`
/// possible tokens.
#[cfg(test)]
fn error_bound(n: usize) -> f64 {
    let half = WIDTH / 2.0;
    let rho = WIDTH.exp() * half.powi(ORDER as i32 + 1) * INV_FACTORIAL[ORDER + 1];
    let unseen = n as f64 * (-CUTOFF).exp() * (1.0 + CUTOFF);
    (rho + unseen) * (1.0 + WIDTH + 2.0 * (n as f64).ln()) + 1e-12
}

#[cfg(test)]
mod tests {
    use super::super::ranking::rank_descending;
    use super::super::softmax::softmax;
    use super::*;
    use crate::rng::Rng;

    /// The page's 41 temperatures, 0.05 to 20.
    fn page_taus() -> Vec<f64> {
        (0..41).map(|i| (0.05f64.ln() + (20f64.ln() - 0.05f64.ln()) * i as f64 / 40.0).exp()).collect()
    }

    /// The fast curve against the exact one, within `error_bound`; returns the largest error.
    fn check(name: &str, logits: &[f64], taus: &[f64]) -> f64 {
        let fast = entropy_nats_at_temperatures(logits, taus);
        let possible = logits.iter().filter(|z| **z > f64::NEG_INFINITY).count();
        let bound = error_bound(possible);
        let mut worst = 0f64;
        for (tau, h) in taus.iter().zip(&fast) {
            let exact = entropy_nats_at_temperature(logits, *tau);
            let err = (h - exact).abs();
            assert!(err <= bound, "{name}, τ = {tau}: {h} vs exact {exact} (error {err:e}, bound {bound:e})");
            worst = worst.max(err);
        }
        worst
    }

    #[test]
    fn the_bound_is_small() {
        assert!(error_bound(49_152) < 2e-5, "{}", error_bound(49_152));
        assert!(error_bound(262_144) < 2e-5);
    }

    /// Logits spread like a language model's, f32 like the model's output,
    /// with a few far above the bulk and some banned.
    fn lm_like(rng: &mut Rng, n: usize, spread: f64) -> Vec<f64> {
        let mut z: Vec<f64> = (0..n).map(|_| ((rng.next_normal() * spread) as f32) as f64).collect();
        for i in 0..20 {
            z[(rng.next_u64() % n as u64) as usize] = 4.0 * spread + i as f64 * 0.3;
        }
        for _ in 0..50 {
            z[(rng.next_u64() % n as u64) as usize] = f64::NEG_INFINITY;
        }
        z
    }

    #[test]
    fn the_fast_curve_is_within_its_bound_on_model_like_logits() {
        let mut rng = Rng::new(11);
        let taus = page_taus();
        for spread in [0.5, 1.0, 2.5, 4.0] {
            let worst = check("language-model-like", &lm_like(&mut rng, 49_152, spread), &taus);
            // What the series leaves out is far below the bound in practice.
            assert!(worst < 1e-6, "spread {spread}: {worst:e}");
        }
        // The course's old vector: normal · 3 + 2 with one token at 25.
        let mut z: Vec<f64> = (0..49_152).map(|_| rng.next_normal() * 3.0 + 2.0).collect();
        z[17] = 25.0;
        z[99] = f64::NEG_INFINITY;
        check("peaked", &z, &taus);
    }

    #[test]
    fn the_fast_curve_is_within_its_bound_on_adversarial_logits() {
        let mut rng = Rng::new(12);
        let taus = page_taus();
        let wide: Vec<f64> = (0..61).map(|i| 10f64.powf(-3.0 + 6.0 * i as f64 / 60.0)).collect();
        let n = 49_152;
        let cases: Vec<(&str, Vec<f64>)> = vec![
            ("huge spread", (0..n).map(|_| -rng.next_f64() * 1e6).collect()),
            ("spread over many scales", (0..n).map(|_| -(rng.next_f64() * 16.0).exp()).collect()),
            ("many ties", (0..n).map(|_| (rng.next_u64() % 7) as f64 * 0.75).collect()),
            ("all equal", vec![3.25; n]),
            ("flat", (0..n).map(|_| rng.next_f64() * 0.01).collect()),
            ("one far ahead", (0..n).map(|i| if i == 5 { 1e3 } else { rng.next_normal() }).collect()),
            (
                "two clusters",
                (0..n).map(|i| if i % 2 == 0 { rng.next_f64() } else { -30.0 - rng.next_f64() }).collect(),
            ),
            ("on bin edges", (0..n).map(|i| -((i % 400) as f64) / 40.0).collect()),
            (
                "mostly banned",
                (0..n).map(|i| if i % 97 == 0 { rng.next_normal() * 2.0 } else { f64::NEG_INFINITY }).collect(),
            ),
            ("just past the exact path", (0..EXACT_UP_TO + 1).map(|_| rng.next_normal() * 3.0).collect()),
        ];
        for (name, z) in &cases {
            check(name, z, &taus);
            check(name, z, &wide);
        }
        check("τ = 1 alone", &cases[0].1, &[1.0]);
    }

    /// A vocabulary of several chunks, summed across threads: the same
    /// curve on 1, 2 and 4 threads, within the bound of the exact one.
    #[cfg(feature = "threads")]
    #[test]
    fn a_vocabulary_of_several_chunks_gives_the_same_curve_at_any_thread_count() {
        let mut rng = Rng::new(19);
        let z = lm_like(&mut rng, 2 * threads::VOCAB_CHUNK + 999, 2.5);
        let taus = page_taus();
        let curves: Vec<Vec<u64>> = [1, 2, 4]
            .iter()
            .map(|&t| {
                crate::test_util::on_threads(t, || entropy_nats_at_temperatures(&z, &taus)).iter().map(|h| h.to_bits()).collect()
            })
            .collect();
        assert!(curves.iter().all(|c| *c == curves[0]));
        check("several chunks", &z, &taus);
    }

    #[test]
    fn the_order_only_changes_the_rounding() {
        let mut rng = Rng::new(13);
        let z = lm_like(&mut rng, 10_000, 2.5);
        let taus = page_taus();
        let sorted = rank_descending(&softmax(&z));
        let a = entropy_in_order(&z, sorted, &taus);
        let b = entropy_nats_at_temperatures(&z, &taus);
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-12, "{x} vs {y}");
        }
    }

    #[test]
    fn small_vocabularies_and_odd_temperatures_are_exact() {
        let logits = [1.0, 2.0, 0.5, -1.0];
        let h = entropy_in_order(&logits, [1, 0, 2, 3], &[0.5, 1.0, 2.0]);
        for (tau, v) in [0.5, 1.0, 2.0].iter().zip(h) {
            assert_eq!(v, entropy_nats_at_temperature(&logits, *tau));
        }
        let z: Vec<f64> = (0..1000).map(|i| (i % 13) as f64).collect();
        let order = rank_descending(&softmax(&z));
        let taus = [1.0, f64::INFINITY];
        let h = entropy_in_order(&z, order, &taus);
        for (tau, v) in taus.iter().zip(h) {
            assert_eq!(v.to_bits(), entropy_nats_at_temperature(&z, *tau).to_bits());
        }
    }
}
