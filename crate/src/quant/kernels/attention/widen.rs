//! f16 → f32 for runs of cached keys or values, exactly (every f16 is an
//! f32; inf and NaN stay inf and NaN).
//!
//! Paths, as the block kernels choose theirs: wasm simd128 (the browser
//! build: the integer widening of `f16_high_to_f32`, eight values a loop),
//! x86_64 with AVX2 + F16C behind the block kernels' run-time gate
//! (`vcvtph2ps`, eight a loop), and `half`'s scalar conversion otherwise
//! (and for the tails).

use half::f16;

/// `dst[i] = src[i]` widened. With `finite` (the caller knows `src` holds
/// no inf or NaN) the simd128 path skips its fix-up for them: four of its
/// nine operations per four values.
///
/// # Panics
/// If the lengths differ.
pub fn f16_to_f32(src: &[f16], dst: &mut [f32], finite: bool) {
    assert_eq!(src.len(), dst.len(), "f16 → f32 of unequal runs");
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    return if finite { simd128::<false>(src, dst) } else { simd128::<true>(src, dst) };
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    let _ = finite; // the other paths are exact at no cost
    #[cfg(target_arch = "x86_64")]
    if super::super::x86_available() {
        // SAFETY: the CPU has AVX2 and F16C.
        return unsafe { f16c(src, dst) };
    }
    #[allow(unreachable_code)]
    scalar(src, dst)
}

pub(super) fn scalar(src: &[f16], dst: &mut [f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = s.to_f32();
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn simd128<const EXACT: bool>(src: &[f16], dst: &mut [f32]) {
    use core::arch::wasm32::*;
    let n8 = src.len() / 8 * 8;
    let mut i = 0;
    while i < n8 {
        // SAFETY: i + 8 <= len of both; v128 loads and stores are unaligned.
        unsafe {
            let h = v128_load(src.as_ptr().add(i) as *const v128);
            // Each half into the high 16 bits of a 32-bit lane.
            let lo = i32x4_shl(u32x4_extend_low_u16x8(h), 16);
            let hi = i32x4_shl(u32x4_extend_high_u16x8(h), 16);
            let out = dst.as_mut_ptr().add(i) as *mut v128;
            v128_store(out, super::super::wasm_simd::f16_high_to_f32::<EXACT>(lo));
            v128_store(out.add(1), super::super::wasm_simd::f16_high_to_f32::<EXACT>(hi));
        }
        i += 8;
    }
    scalar(&src[n8..], &mut dst[n8..]);
}

/// # Safety
/// The CPU has AVX2 and F16C.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
unsafe fn f16c(src: &[f16], dst: &mut [f32]) {
    use core::arch::x86_64::*;
    let n8 = src.len() / 8 * 8;
    let mut i = 0;
    while i < n8 {
        // SAFETY: i + 8 <= len of both; unaligned load and store.
        unsafe {
            let h = _mm_loadu_si128(src.as_ptr().add(i) as *const __m128i);
            _mm256_storeu_ps(dst.as_mut_ptr().add(i), _mm256_cvtph_ps(h));
        }
        i += 8;
    }
    scalar(&src[n8..], &mut dst[n8..]);
}
