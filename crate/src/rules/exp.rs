//! The exponential the rules use, our own.
//!
//! Two reasons not to call `f64::exp`. Speed: in wasm it is the libm routine
//! of `compiler_builtins`, a call of about 14 ns, and a slider move at 49,152
//! tokens takes three full softmaxes plus their entropies (the profile in
//! BENCHMARKS.md showed it as the largest single cost). Sameness: natively
//! `f64::exp` is the platform's libm, in the browser it is another one, and
//! the two may differ in the last bit; a distribution drawn from with the same
//! seed must be the same number everywhere. This one is plain IEEE arithmetic
//! (no fused multiply-add, which Rust never introduces on its own), so every
//! target computes the same bits.
//!
//! Method (Cody-Waite reduction, as in fdlibm): x = k ln 2 + r with integer k
//! and |r| <= ln 2 / 2, e^r by its Taylor series to r^13 (the first omitted
//! term is below 5e-18 relative), times 2^k built from the exponent bits.
//! Accuracy: within 2 ulp of the true value over the whole range (the test
//! below compares with `f64::exp` on a million points).

/// ln 2 split so that `k * LN2_HI` is exact for |k| < 2^20 (fdlibm's constants).
const LN2_HI: f64 = 6.931_471_803_691_238_164_90e-1;
const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;
const INV_LN2: f64 = std::f64::consts::LOG2_E;
/// Above this e^x overflows; below `UNDERFLOW` it rounds to 0.
const OVERFLOW: f64 = 709.782_712_893_384;
const UNDERFLOW: f64 = -745.133_219_101_941_2;

/// 1/n! for n = 13 down to 0, for Horner's rule.
const INV_FACTORIALS: [f64; 14] = [
    1.0 / 6_227_020_800.0,
    1.0 / 479_001_600.0,
    1.0 / 39_916_800.0,
    1.0 / 3_628_800.0,
    1.0 / 362_880.0,
    1.0 / 40_320.0,
    1.0 / 5_040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    1.0 / 2.0,
    1.0,
    1.0,
];

/// `1023 + 2^52`: added to an integer-valued k in [-1023, 1024], it leaves
/// k + 1023 in the low bits of the sum's mantissa.
const EXPONENT_MAGIC: f64 = 1023.0 + 4_503_599_627_370_496.0;

/// e^x: exact at 0, 0 below about -745.13, +inf above about 709.78, NaN for NaN.
///
/// Written without branches (the special cases are selected at the end and
/// the integer work is done on the float's bits), so a loop over a slice
/// vectorises: with wasm's simd128 two values go through at once.
#[inline]
pub fn exp(x: f64) -> f64 {
    // Clamped into the range the arithmetic below handles (NaN to 0).
    let xc = if x < UNDERFLOW {
        UNDERFLOW
    } else if x > OVERFLOW {
        OVERFLOW
    } else if !x.is_nan() {
        x
    } else {
        0.0
    };
    let y = exp_in_range(xc);
    if x < UNDERFLOW {
        0.0
    } else if x > OVERFLOW {
        f64::INFINITY
    } else if !x.is_nan() {
        y
    } else {
        x
    }
}

/// `exp(x)` to the bit, for x at most 0 (or NaN): a softmax's `z − max`.
///
/// Without the overflow and NaN cases, whose selects a vectorised loop pays
/// for every value, a pass over Gemma 3's 262,144 logits took 1.8 ms
/// against 2.3 in wasm (Node 20, simd128, the loop of `softmax_parts`). Every operation on the way to the
/// result is `exp`'s, so the bits are too; above 0 it still agrees with
/// `exp` up to about 709.78 (where `exp` overflows), which no caller reaches.
#[inline]
pub fn exp_nonpositive(x: f64) -> f64 {
    let xc = if x < UNDERFLOW { UNDERFLOW } else { x };
    let y = exp_in_range(xc);
    if x < UNDERFLOW { 0.0 } else { y }
}

/// e^xc for xc in [UNDERFLOW, OVERFLOW]: the arithmetic `exp` and
/// `exp_nonpositive` share, inlined into each so their loops vectorise.
#[inline(always)]
fn exp_in_range(xc: f64) -> f64 {
    let k = (xc * INV_LN2 + 0.5).floor(); // an integer in [-1075, 1024]
    let r = (xc - k * LN2_HI) - k * LN2_LO;
    let mut p = INV_FACTORIALS[0];
    for &c in &INV_FACTORIALS[1..] {
        p = p * r + c;
    }
    // p · 2^k in two exact steps, 2^k1 then 2^k2 (both normal), so a
    // subnormal result is rounded once, at the last multiplication.
    let k1 = (k * 0.5).floor();
    p * power_of_two(k1) * power_of_two(k - k1)
}

/// 2^k for an integer-valued k in [-1022, 1023], built from the exponent bits.
#[inline]
fn power_of_two(k: f64) -> f64 {
    f64::from_bits((k + EXPONENT_MAGIC).to_bits() << 52)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Distance in units in the last place between two finite positive floats.
    fn ulps(a: f64, b: f64) -> u64 {
        a.to_bits().abs_diff(b.to_bits())
    }

    #[test]
    fn within_two_ulp_of_the_platform_exp_over_the_whole_range() {
        let mut rng = Rng::new(7);
        let mut worst = 0;
        for i in 0..1_000_000 {
            // Mostly where the softmax lives (x <= 0, near 0), and everywhere else too.
            let x = match i % 4 {
                0 => -rng.next_f64() * 40.0,
                1 => -rng.next_f64() * 745.0,
                2 => rng.next_f64() * 709.0,
                _ => (rng.next_f64() - 0.5) * 2.0,
            };
            let (ours, reference) = (exp(x), x.exp());
            if reference >= f64::MIN_POSITIVE {
                worst = worst.max(ulps(ours, reference));
            } else {
                // Subnormal results carry fewer bits: compare absolutely.
                assert!((ours - reference).abs() <= 2.0 * f64::from_bits(1), "x = {x}");
            }
        }
        assert!(worst <= 2, "worst error {worst} ulp");
    }

    #[test]
    fn the_nonpositive_exp_gives_the_same_bits() {
        let mut rng = Rng::new(9);
        for i in 0..1_000_000 {
            let x = match i % 3 {
                0 => -rng.next_f64() * 40.0,
                1 => -rng.next_f64() * 760.0,
                _ => rng.next_f64() * 709.0,
            };
            assert_eq!(exp_nonpositive(x).to_bits(), exp(x).to_bits(), "x = {x}");
        }
        for x in [0.0, -0.0, f64::NEG_INFINITY, -745.2, UNDERFLOW, -708.5, -1e-300, 709.7] {
            assert_eq!(exp_nonpositive(x).to_bits(), exp(x).to_bits(), "x = {x}");
        }
        assert!(exp_nonpositive(f64::NAN).is_nan());
    }

    #[test]
    fn special_values() {
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-0.0), 1.0);
        assert_eq!(exp(f64::NEG_INFINITY), 0.0);
        assert_eq!(exp(-746.0), 0.0);
        assert_eq!(exp(f64::INFINITY), f64::INFINITY);
        assert_eq!(exp(710.0), f64::INFINITY);
        assert!(exp(f64::NAN).is_nan());
        assert!(exp(-745.0) > 0.0, "the smallest subnormal range is reached");
        assert!((exp(1.0) - std::f64::consts::E).abs() <= f64::EPSILON * 3.0);
        assert!((exp(709.7) / 709.7f64.exp() - 1.0).abs() < 1e-15);
    }
}
