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

use core::arch::wasm32::*;

use super::{Kernel, Layout, Q4, Q5, Q8, q5_bytes};
use crate::quant::kernels::format::BlockFormat;

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

impl<const AT: usize, const OFFSET: i32> Kernel for Q4<AT, OFFSET> {
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
        unsafe { dot_bytes(w, x) }
    }
}

impl<const HIGH: usize, const AT: usize, const OFFSET: i32> Kernel for Q5<HIGH, AT, OFFSET> {
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
        unsafe { dot_bytes(w, x) }
    }
}

impl Kernel for Q8 {
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
pub(super) use dot_bytes as scale_min_dot;
