//! The Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K and Q5_K kernels of a build with
//! relaxed-simd.
//!
//! `i32x4.relaxed_dot_i8x16_i7x16_add_s` multiplies 16 signed bytes by 16
//! bytes whose top bit is clear and adds each four products into an i32
//! lane: one instruction for what simd128 does with two `i32x4.dot_i16x8_s`
//! on codes widened to i16. Its result is only relaxed where the second
//! operand's top bit is set (signed or unsigned, as the machine has it) or
//! where the sum of two neighbouring products leaves i16 (saturated or
//! wrapped). Neither happens here: the nibble codes are 0..=31 and the
//! activations −127..=127, so a pair is at most 2·127·31 < 2^13, and the
//! lanes hold exactly the integers the simd128 kernels sum. A block's value
//! is then computed from them as on every other path (`group`), so this
//! build's numbers are the simd128 build's bit for bit.
//!
//! The activations meet these codes in `Layout::Natural`, bytes in value
//! order, as the nibbles come: a block's 16 bytes hold values 0..16 in their
//! low halves and 16..32 in their high halves; a Q4_K or Q5_K sub-block's
//! 32 bytes hold its values in order, in the low or the high halves.
//!
//! Q8_0's codes are any i8, so neither operand is 0..=127 as it stands. Its
//! activations come in `Layout::Split`, their positive and negative parts
//! (both 0..=127), and a block is `w·q⁺ − w·q⁻`: two products per 16 bytes,
//! each pair at most 2·128·127 < 2^15, and no code needs a special case.
//! On a machine with AVX-VNNI each product is one `vpdpbusd`, where the
//! simd128 kernel sign-extends the codes into four i16 vectors first.
//!
//! On x86 without it, the nibble formats take the 16-bit form of the same
//! product, `i16x8.relaxed_dot_i8x16_i7x16_s` (one `pmaddubsw`), and widen
//! once per block (`dot_pairs`), and Q8_0 takes simd128's kernel: the same
//! integers again, so the same bits (`unfused_x86` says which, and why).

use core::arch::wasm32::*;
use core::sync::atomic::{AtomicU8, Ordering};

use super::{Kernel, Layout, q5_bytes};
use crate::quant::kernels::format::BlockFormat;

/// What `unfused_x86` found: not yet asked, unfused x86, anything else.
static LOWERING: AtomicU8 = AtomicU8::new(0);
const ASKED_UNFUSED: u8 = 1;
const ASKED_OTHER: u8 = 2;

/// Whether this machine computes the byte dot product as V8 does on x86
/// without AVX-VNNI: its `pmaddubsw` reads the second operand's bytes as
/// unsigned and saturates each pair's sum to i16. With every byte of that
/// operand 0xFF (top bit set, where the result is relaxed) against −128:
/// that lowering gives 2·(−32768) = −65536 per lane, `vpdpbusd` gives
/// 4·255·(−128) = −130560, a signed multiply (Arm) 4·128 = 512. Asked once
/// (threads that race to ask get the same answer).
///
/// There the i32 form is three instructions, and the kernels take the
/// 16-bit form (`dot_pairs`) and, for Q8_0, simd128's kernel (`super::Q8`).
/// Timed against each other in headless Chromium on an AMD EPYC with AVX2
/// only (a throwaway wasm-bindgen-test alternating the kernels, the least of
/// 35 rounds of 3 products), single input row / tiles of 64 rows, ms:
///
/// | product | simd128 | i32 form | 16-bit form |
/// |---|---|---|---|
/// | Q4_1, 36,864 × 576 / 1,536 × 576 | 2.07 / 3.47 | 2.14 / 3.59 | 1.79 / 2.89 |
/// | Q5_0, 36,864 × 640 / 1,536 × 640 | 3.11 / 8.23 | 2.84 / 5.62 | 2.63 / 5.36 |
/// | Q4_K, 36,864 × 768 / 1,536 × 768 | – | 2.92 / 6.03 | 2.42 / 4.61 |
/// | Q8_0, 49,152 × 576 / 1,536 × 576 | 2.77 / 3.98 | 3.28 / 4.80 | 2.68 / 4.41 |
///
/// Elsewhere (AVX-VNNI's one `vpdpbusd`, which gave the Intel Xeon of
/// BENCHMARKS.md its relaxed-simd gain, or Arm) the i32 form stays.
pub(super) fn unfused_x86() -> bool {
    match LOWERING.load(Ordering::Relaxed) {
        ASKED_UNFUSED => return true,
        ASKED_OTHER => return false,
        _ => {}
    }
    // Kept opaque so that the compiler cannot fold the product.
    let a = core::hint::black_box(i8x16_splat(-128));
    let b = core::hint::black_box(u8x16_splat(0xFF));
    let lanes = i32x4_relaxed_dot_i8x16_i7x16_add(a, b, i32x4_splat(0));
    let unfused = i32x4_extract_lane::<0>(lanes) == -65536;
    LOWERING.store(if unfused { ASKED_UNFUSED } else { ASKED_OTHER }, Ordering::Relaxed);
    unfused
}

/// The codes (bytes, values 0..16 and 16..32) times the activation block at `x`.
/// # Safety
/// 32 bytes are readable at `x`.
#[inline(always)]
pub(super) unsafe fn dot_bytes(w: [v128; 2], x: *const v128) -> v128 {
    // SAFETY: two loads of 16 bytes within the 32 at `x`.
    unsafe {
        let lo = i32x4_relaxed_dot_i8x16_i7x16_add(v128_load(x), w[0], i32x4_splat(0));
        i32x4_relaxed_dot_i8x16_i7x16_add(v128_load(x.add(1)), w[1], lo)
    }
}

/// The same integers as `dot_bytes`, by the 16-bit form of the dot product
/// (one `pmaddubsw` on x86 without VNNI) and one widening per block: each
/// i16 lane is two products, at most 2·127·31 < 2^13, and the two halves'
/// sum < 2^14, exact.
/// # Safety
/// 32 bytes are readable at `x`.
#[inline(always)]
pub(super) unsafe fn dot_pairs(w: [v128; 2], x: *const v128) -> v128 {
    // SAFETY: two loads of 16 bytes within the 32 at `x`.
    unsafe {
        let lo = i16x8_relaxed_dot_i8x16_i7x16(v128_load(x), w[0]);
        let hi = i16x8_relaxed_dot_i8x16_i7x16(v128_load(x.add(1)), w[1]);
        i32x4_extadd_pairwise_i16x8(i16x8_add(lo, hi))
    }
}

/// A nibble format's codes times the activation block at `x`: by
/// `dot_pairs` where `PAIRS`, else by `dot_bytes`.
/// # Safety
/// 32 bytes are readable at `x`.
#[inline(always)]
pub(super) unsafe fn dot_nibbles<const PAIRS: bool>(w: [v128; 2], x: *const v128) -> v128 {
    // SAFETY: the caller's contract.
    unsafe { if PAIRS { dot_pairs(w, x) } else { dot_bytes(w, x) } }
}

/// Q4_0 and Q4_1 (as `super::Q4`), their codes as bytes; `PAIRS`: `dot_pairs`.
pub(super) struct Q4Bytes<const AT: usize, const OFFSET: i32, const PAIRS: bool>;
/// Q5_0 and Q5_1 (as `super::Q5`), their codes as bytes; `PAIRS`: `dot_pairs`.
pub(super) struct Q5Bytes<const HIGH: usize, const AT: usize, const OFFSET: i32, const PAIRS: bool>;
/// Q8_0 against the activations' positive and negative parts.
pub(super) struct Q8Split;

impl<const AT: usize, const OFFSET: i32, const PAIRS: bool> Kernel for Q4Bytes<AT, OFFSET, PAIRS> {
    const FORMAT: BlockFormat = if OFFSET == 8 { BlockFormat::Q4_0 } else { BlockFormat::Q4_1 };
    const LAYOUT: Layout = Layout::Natural;
    type Codes = [v128; 2];
    #[inline(always)]
    unsafe fn load(blk: *const u8) -> [v128; 2] {
        // SAFETY: a block holds 16 nibble bytes from AT on; v128_load is unaligned.
        let v = unsafe { v128_load(blk.add(AT) as *const v128) };
        [v128_and(v, u8x16_splat(0x0F)), u8x16_shr(v, 4)]
    }
    #[inline(always)]
    unsafe fn dot(w: [v128; 2], x: *const v128) -> v128 {
        // SAFETY: the caller's contract.
        unsafe { dot_nibbles::<PAIRS>(w, x) }
    }
}

impl<const HIGH: usize, const AT: usize, const OFFSET: i32, const PAIRS: bool> Kernel for Q5Bytes<HIGH, AT, OFFSET, PAIRS> {
    const FORMAT: BlockFormat = if OFFSET == 16 { BlockFormat::Q5_0 } else { BlockFormat::Q5_1 };
    const LAYOUT: Layout = Layout::Natural;
    type Codes = [v128; 2];
    #[inline(always)]
    unsafe fn load(blk: *const u8) -> [v128; 2] {
        // SAFETY: the caller's contract.
        unsafe { q5_bytes::<HIGH, AT>(blk) }
    }
    #[inline(always)]
    unsafe fn dot(w: [v128; 2], x: *const v128) -> v128 {
        // SAFETY: the caller's contract.
        unsafe { dot_nibbles::<PAIRS>(w, x) }
    }
}

impl Kernel for Q8Split {
    const FORMAT: BlockFormat = BlockFormat::Q8_0;
    const LAYOUT: Layout = Layout::Split;
    type Codes = [v128; 2];
    #[inline(always)]
    unsafe fn load(blk: *const u8) -> [v128; 2] {
        // SAFETY: a Q8_0 block holds 32 code bytes from 2 on.
        unsafe { [v128_load(blk.add(2) as *const v128), v128_load(blk.add(18) as *const v128)] }
    }
    #[inline(always)]
    unsafe fn dot(w: [v128; 2], x: *const v128) -> v128 {
        // SAFETY: the block's 64 bytes at `x`: positive parts, then negative.
        unsafe {
            let zero = i32x4_splat(0);
            let pos = i32x4_relaxed_dot_i8x16_i7x16_add(w[0], v128_load(x), zero);
            let pos = i32x4_relaxed_dot_i8x16_i7x16_add(w[1], v128_load(x.add(1)), pos);
            let neg = i32x4_relaxed_dot_i8x16_i7x16_add(w[0], v128_load(x.add(2)), zero);
            let neg = i32x4_relaxed_dot_i8x16_i7x16_add(w[1], v128_load(x.add(3)), neg);
            i32x4_sub(pos, neg)
        }
    }
}

/// Q4_K and Q5_K sub-blocks meet the activations as bytes.
pub(super) const SCALE_MIN_LAYOUT: Layout = Layout::Natural;

/// Sub-block `j`'s codes (0..=31) as bytes in value order, from the 32 code
/// bytes `v` it shares with its neighbour (the low nibbles are sub-block
/// 2i's, the high ones 2i + 1's) and, for Q5_K, the super-block's 32
/// fifth-bit bytes `high` (bit j of each is sub-block j's).
#[inline(always)]
pub(super) fn scale_min_codes<const FIVE: bool>(v: [v128; 2], high: &[v128; 2], j: usize) -> [v128; 2] {
    let mask = u8x16_splat(0x0F);
    let w = if j % 2 == 0 {
        [v128_and(v[0], mask), v128_and(v[1], mask)]
    } else {
        [u8x16_shr(v[0], 4), u8x16_shr(v[1], 4)]
    };
    if !FIVE {
        return w;
    }
    let one = u8x16_splat(1);
    let fifth = |h: v128| i8x16_shl(v128_and(u8x16_shr(h, j as u32), one), 4);
    [v128_or(w[0], fifth(high[0])), v128_or(w[1], fifth(high[1]))]
}

/// A Q4_K or Q5_K sub-block's codes times the activation block at `x`.
pub(super) use dot_nibbles as scale_min_dot;
