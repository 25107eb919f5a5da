//! 16-bit floats → f32, exactly (every f16 and every bf16 is an f32; inf
//! and NaN stay inf and NaN): runs of cached keys and values (f16), and the
//! rows of F16 and BF16 weight matrices (`half_rows`).
//!
//! Paths, as the block kernels choose theirs: wasm simd128 (the browser
//! build: the integer widening of `f16_high_to_f32`, eight values a loop),
//! x86_64 with AVX2 + F16C behind the block kernels' run-time gate
//! (`vcvtph2ps`, eight a loop), and `half`'s scalar conversion otherwise
//! (and for the tails). A bf16 is the top half of its f32, so its widening
//! is a 16-bit shift on every path.

use half::{bf16, f16};

/// Which 16-bit float a run of bytes holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Half {
    F16,
    BF16,
}

/// `dst[i] = src[i]` widened. With `finite` (the caller knows `src` holds
/// no inf or NaN) the simd128 path skips its fix-up for them: four of its
/// nine operations per four values.
///
/// # Panics
/// If the lengths differ.
pub fn f16_to_f32(src: &[f16], dst: &mut [f32], finite: bool) {
    assert_eq!(src.len(), dst.len(), "f16 → f32 of unequal runs");
    // SAFETY: `src` holds dst.len() halves; the SIMD paths are little-endian
    // targets, where an f16's bytes are its little-endian bits.
    let done = unsafe { simd_f16(src.as_ptr() as *const u8, dst, finite) };
    scalar(&src[done..], &mut dst[done..]);
}

/// `dst[i]` = the little-endian 16-bit float at bytes `2i..2i + 2` of `src`
/// (any alignment: a view into a file), widened exactly, inf and NaN kept.
///
/// # Panics
/// If `src` is not twice as long as `dst`.
pub fn widen(kind: Half, src: &[u8], dst: &mut [f32]) {
    assert_eq!(src.len(), 2 * dst.len(), "16-bit → f32 of unequal runs");
    // SAFETY: `src` holds 2·dst.len() bytes.
    let done = unsafe {
        match kind {
            Half::F16 => simd_f16(src.as_ptr(), dst, false),
            Half::BF16 => simd_bf16(src.as_ptr(), dst),
        }
    };
    widen_scalar(kind, &src[2 * done..], &mut dst[done..]);
}

/// `widen` without SIMD: the reference the other paths are tested against.
///
/// # Panics
/// As `widen`.
pub fn widen_scalar(kind: Half, src: &[u8], dst: &mut [f32]) {
    assert_eq!(src.len(), 2 * dst.len(), "16-bit → f32 of unequal runs");
    for (i, d) in dst.iter_mut().enumerate() {
        *d = one(kind, src, i);
    }
}

fn scalar(src: &[f16], dst: &mut [f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = s.to_f32();
    }
}

/// Widens the f16 at `src` into a multiple of 8 leading values of `dst` on
/// the SIMD paths; returns how many (0 without one).
/// # Safety
/// 2·dst.len() bytes are readable at `src`.
#[allow(unused_variables)]
unsafe fn simd_f16(src: *const u8, dst: &mut [f32], finite: bool) -> usize {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    // SAFETY: the caller's contract.
    return unsafe { if finite { simd128::<false, false>(src, dst) } else { simd128::<false, true>(src, dst) } };
    #[cfg(target_arch = "x86_64")]
    if super::x86_available() {
        // SAFETY: the CPU has AVX2 and F16C; the caller's contract.
        return unsafe { x86::<false>(src, dst) };
    }
    #[allow(unreachable_code)]
    0
}

/// `simd_f16` for bf16.
/// # Safety
/// As `simd_f16`.
#[allow(unused_variables)]
unsafe fn simd_bf16(src: *const u8, dst: &mut [f32]) -> usize {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    // SAFETY: the caller's contract.
    return unsafe { simd128::<true, false>(src, dst) };
    #[cfg(target_arch = "x86_64")]
    if super::x86_available() {
        // SAFETY: the CPU has AVX2; the caller's contract.
        return unsafe { x86::<true>(src, dst) };
    }
    #[allow(unreachable_code)]
    0
}

/// Eight values a loop; `BF16` shifts, otherwise f16 with the fix-up for
/// inf and NaN where `EXACT`.
/// # Safety
/// 2·dst.len() bytes are readable at `src`.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
unsafe fn simd128<const BF16: bool, const EXACT: bool>(src: *const u8, dst: &mut [f32]) -> usize {
    use core::arch::wasm32::*;
    let n8 = dst.len() / 8 * 8;
    let mut i = 0;
    while i < n8 {
        // SAFETY: i + 8 <= len: 16 bytes readable at src + 2i, 8 f32 writable; v128 loads and stores are unaligned.
        unsafe {
            let (lo, hi) = eight_simd128::<BF16, EXACT>(v128_load(src.add(2 * i) as *const v128));
            let out = dst.as_mut_ptr().add(i) as *mut v128;
            v128_store(out, lo);
            v128_store(out.add(1), hi);
        }
        i += 8;
    }
    n8
}

/// The eight 16-bit floats of `h` widened: the first four, the last four.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
pub(super) fn eight_simd128<const BF16: bool, const EXACT: bool>(h: core::arch::wasm32::v128) -> (core::arch::wasm32::v128, core::arch::wasm32::v128) {
    use core::arch::wasm32::*;
    // Each half into the high 16 bits of a 32-bit lane: a bf16's f32 bits.
    let lo = i32x4_shl(u32x4_extend_low_u16x8(h), 16);
    let hi = i32x4_shl(u32x4_extend_high_u16x8(h), 16);
    if BF16 {
        (lo, hi)
    } else {
        (super::wasm_simd::f16_high_to_f32::<EXACT>(lo), super::wasm_simd::f16_high_to_f32::<EXACT>(hi))
    }
}

/// Eight values a loop: `vcvtph2ps` for f16, a zero-extend and shift for bf16.
/// # Safety
/// The CPU has AVX2 and F16C; 2·dst.len() bytes are readable at `src`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
unsafe fn x86<const BF16: bool>(src: *const u8, dst: &mut [f32]) -> usize {
    use core::arch::x86_64::*;
    let n8 = dst.len() / 8 * 8;
    let mut i = 0;
    while i < n8 {
        // SAFETY: i + 8 <= len: 16 bytes readable at src + 2i, 8 f32 writable; unaligned load and store.
        unsafe { _mm256_storeu_ps(dst.as_mut_ptr().add(i), eight_x86::<BF16>(src.add(2 * i))) };
        i += 8;
    }
    n8
}

/// The eight 16-bit floats at `src` widened.
/// # Safety
/// The CPU has AVX2 and F16C; 16 bytes are readable at `src`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
#[inline]
pub(super) unsafe fn eight_x86<const BF16: bool>(src: *const u8) -> core::arch::x86_64::__m256 {
    use core::arch::x86_64::*;
    // SAFETY: the caller's contract; an unaligned load.
    let h = unsafe { _mm_loadu_si128(src as *const __m128i) };
    if BF16 { _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)) } else { _mm256_cvtph_ps(h) }
}

/// One 16-bit float at bytes `2i..2i + 2` of `src`, widened.
#[inline(always)]
pub(super) fn one(kind: Half, src: &[u8], i: usize) -> f32 {
    let bits = [src[2 * i], src[2 * i + 1]];
    match kind {
        Half::F16 => f16::from_le_bytes(bits).to_f32(),
        Half::BF16 => bf16::from_le_bytes(bits).to_f32(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SIMD widening is the scalar one, bit for bit, on every f16 (NaN
    /// payloads as NaN), and so is its `finite` form on every finite one;
    /// from bytes, for f16 and bf16 alike, at an odd address too.
    #[test]
    fn widening_is_exact_for_every_half() {
        let all: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
        let finite: Vec<f16> = all.iter().copied().filter(|h| h.is_finite()).collect();
        let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        for (halves, known_finite) in [(&all, false), (&finite, true)] {
            let mut fast = vec![0f32; halves.len()];
            let mut slow = vec![0f32; halves.len()];
            f16_to_f32(halves, &mut fast, known_finite);
            scalar(halves, &mut slow);
            for (h, (&a, &b)) in halves.iter().zip(fast.iter().zip(&slow)) {
                assert!(same(a, b), "f16 {:#06x}: {a} vs {b}", h.to_bits());
            }
        }
        let mut bytes = vec![0u8];
        bytes.extend((0..=u16::MAX).flat_map(|b| b.to_le_bytes()));
        let src = &bytes[1..];
        for kind in [Half::F16, Half::BF16] {
            let (mut fast, mut slow) = (vec![0f32; 1 << 16], vec![0f32; 1 << 16]);
            widen(kind, src, &mut fast);
            widen_scalar(kind, src, &mut slow);
            for (bits, (&a, &b)) in fast.iter().zip(&slow).enumerate() {
                assert!(same(a, b), "{kind:?} {bits:#06x}: {a} vs {b}");
                let want = if kind == Half::F16 { f16::from_bits(bits as u16).to_f32() } else { f32::from_bits((bits as u32) << 16) };
                assert!(same(b, want), "{kind:?} {bits:#06x}: {b} vs {want}");
            }
        }
    }
}
