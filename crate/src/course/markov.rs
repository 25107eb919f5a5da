//! Sampling the bigram at τ = 1 is a Markov chain with transition matrix
//! P̂ (row x = P(·|x)): its eigenvalues (the −1 is the period-2 pole), its
//! stationary distribution π (π P̂ = π) and its entropy rate Σ π_x H(P̂_x),
//! against the corpus's own chain.

use serde_json::{json, Value};

use crate::error::Result;
use crate::models::read_shipped_bigram;
use super::LOGITS_B;
use crate::rules::{entropy_bits, softmax};
use crate::train::bigram::build_lesson18_corpus;

pub type Matrix3 = [[f64; 3]; 3];

/// A complex eigenvalue (im = 0 for a real one).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Eigenvalue {
    pub re: f64,
    pub im: f64,
}

/// The three eigenvalues of a real 3×3 matrix, from its characteristic
/// polynomial λ³ − tr λ² + m λ − det (m: the sum of the principal 2×2
/// minors): one real root by bisection and Newton, the other two from the
/// deflated quadratic. Sorted by real part.
pub fn eigenvalues(a: &Matrix3) -> [Eigenvalue; 3] {
    let tr = a[0][0] + a[1][1] + a[2][2];
    let m = a[0][0] * a[1][1] - a[0][1] * a[1][0] + a[0][0] * a[2][2] - a[0][2] * a[2][0] + a[1][1] * a[2][2]
        - a[1][2] * a[2][1];
    let det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
        + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
    let p = |x: f64| ((x - tr) * x + m) * x - det;
    let dp = |x: f64| (3.0 * x - 2.0 * tr) * x + m;
    // Every root lies within 1 + max |coefficient| (Cauchy's bound).
    let bound = 1.0 + tr.abs().max(m.abs()).max(det.abs());
    let (mut lo, mut hi) = (-bound, bound);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if (p(mid) > 0.0) == (p(hi) > 0.0) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let mut r = 0.5 * (lo + hi);
    for _ in 0..3 {
        let d = dp(r);
        if d != 0.0 {
            r -= p(r) / d;
        }
    }
    // p(λ) = (λ − r)(λ² + bλ + c)
    let b = r - tr;
    let c = m + r * b;
    let disc = b * b - 4.0 * c;
    let mut out = if disc >= 0.0 {
        let s = disc.sqrt();
        // The numerically stable pair of roots.
        let q = -0.5 * (b + b.signum() * s);
        let (x1, x2) = if q == 0.0 { (0.0, 0.0) } else { (q, c / q) };
        [Eigenvalue { re: r, im: 0.0 }, Eigenvalue { re: x1, im: 0.0 }, Eigenvalue { re: x2, im: 0.0 }]
    } else {
        let s = (-disc).sqrt() / 2.0;
        [Eigenvalue { re: r, im: 0.0 }, Eigenvalue { re: -b / 2.0, im: s }, Eigenvalue { re: -b / 2.0, im: -s }]
    };
    out.sort_by(|x, y| x.re.total_cmp(&y.re));
    out
}

/// The stationary distribution of a row-stochastic 3×3 matrix: π (P − I) = 0
/// with Σ π = 1, solved by Gaussian elimination with partial pivoting.
pub fn stationary(p: &Matrix3) -> [f64; 3] {
    // Unknowns π_0..π_2; equations: columns 0 and 1 of (P − I)ᵀ π = 0, and Σ π = 1.
    let mut m = [[0.0f64; 4]; 3];
    for (row, eq) in m.iter_mut().take(2).enumerate() {
        for (x, cell) in eq.iter_mut().take(3).enumerate() {
            *cell = p[x][row] - if x == row { 1.0 } else { 0.0 };
        }
    }
    m[2] = [1.0, 1.0, 1.0, 1.0];
    for col in 0..3 {
        let pivot = (col..3).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs())).unwrap_or(col);
        m.swap(col, pivot);
        for r in 0..3 {
            if r != col && m[col][col] != 0.0 {
                let f = m[r][col] / m[col][col];
                for k in col..4 {
                    m[r][k] -= f * m[col][k];
                }
            }
        }
    }
    [m[0][3] / m[0][0], m[1][3] / m[1][1], m[2][3] / m[2][2]]
}

/// Σ_x π_x H(P_x) in bits per token.
pub fn entropy_rate_bits(p: &Matrix3, pi: &[f64; 3]) -> f64 {
    p.iter().zip(pi).map(|(row, w)| w * entropy_bits(row)).sum()
}

/// The corpus's own chain: transition frequencies of the period-4 pattern
/// (one period, read cyclically, which the whole corpus repeats).
pub fn corpus_chain() -> Matrix3 {
    let corpus = build_lesson18_corpus();
    let period = &corpus[..4];
    let mut counts = [[0.0f64; 3]; 3];
    for i in 0..4 {
        counts[period[i] as usize][period[(i + 1) % 4] as usize] += 1.0;
    }
    for row in counts.iter_mut() {
        let total: f64 = row.iter().sum();
        row.iter_mut().for_each(|c| *c /= total);
    }
    counts
}

/// The lesson's P̂: rows a and c as it prints them (0, 1, 0), row b the
/// softmax of its printed logits at b.
pub fn lesson_chain() -> Matrix3 {
    let b = softmax(&LOGITS_B);
    [[0.0, 1.0, 0.0], [b[0], b[1], b[2]], [0.0, 1.0, 0.0]]
}

fn chain_json(p: &Matrix3) -> Value {
    let lam = eigenvalues(p);
    let pi = stationary(p);
    json!({
        "matrix": p,
        "eigenvalues": lam.iter().map(|e| json!({ "re": e.re, "im": e.im })).collect::<Vec<_>>(),
        "stationary": pi,
        "entropy_rate_bits": entropy_rate_bits(p, &pi),
        "row_entropies_bits": p.iter().map(|r| entropy_bits(r)).collect::<Vec<_>>(),
    })
}

/// The lesson's chain (its spectrum, π and entropy rate), the same for the
/// engine's shipped model (trained here, so its digits differ a little), and
/// the corpus's rate.
pub fn sampled_chain() -> Result<Value> {
    let corpus = corpus_chain();
    Ok(json!({
        "lesson": chain_json(&lesson_chain()),
        "shipped": chain_json(&read_shipped_bigram()?.probs()),
        "corpus_entropy_rate_bits": entropy_rate_bits(&corpus, &stationary(&corpus)),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exact_period_two_chain() {
        let p = [[0.0, 1.0, 0.0], [0.5, 0.0, 0.5], [0.0, 1.0, 0.0]];
        let lam = eigenvalues(&p);
        for (e, want) in lam.iter().zip([-1.0, 0.0, 1.0]) {
            assert!((e.re - want).abs() < 1e-12 && e.im == 0.0, "{lam:?}");
        }
        let pi = stationary(&p);
        for (x, want) in pi.iter().zip([0.25, 0.5, 0.25]) {
            assert!((x - want).abs() < 1e-15);
        }
        assert!((entropy_rate_bits(&p, &pi) - 0.5).abs() < 1e-15);
    }

    #[test]
    fn a_rotation_has_complex_eigenvalues() {
        // The cyclic permutation: the cube roots of unity.
        let p = [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]];
        let lam = eigenvalues(&p);
        assert!((lam[2].re - 1.0).abs() < 1e-12);
        assert!((lam[0].re + 0.5).abs() < 1e-12 && (lam[0].im.abs() - 3f64.sqrt() / 2.0).abs() < 1e-12);
    }
}
