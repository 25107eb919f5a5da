//! The GGUF block formats that have a kernel, and the little-endian field
//! reads every path shares.
//!
//! ```text
//! Q4_0  32 values, 18 B:  f16 d,            16 B nibbles          w = (q - 8)·d
//! Q4_1  32 values, 20 B:  f16 d, f16 m,     16 B nibbles          w = q·d + m
//! Q5_0  32 values, 22 B:  f16 d,  u32 high bits, 16 B nibbles     w = (q - 16)·d
//! Q5_1  32 values, 24 B:  f16 d, f16 m, u32 high bits, 16 B       w = q·d + m
//! Q8_0  32 values, 34 B:  f16 d, 32 × i8                          w = q·d
//! ```
//! Byte j of the nibbles holds value j (low nibble) and value j + 16 (high
//! nibble); the fifth bit of value j is bit j of the u32.
//!
//! The K-quants hold 256 values in a super-block of eight 32-value
//! sub-blocks (Q4_K, Q5_K) or sixteen 16-value groups (Q2_K, Q3_K, Q6_K), so
//! each 32-value block of the activations meets one sub-block, or two groups:
//!
//! ```text
//! Q2_K 256 values, 84 B:  16 B of 4-bit (scale, min) × 16, 64 B 2-bit codes, f16 d, f16 dmin
//!                         w = d·sc_g·q − dmin·m_g     (g = value / 16; sc low nibble, m high)
//!                         value 128h + 32s + l (s = 0..4, l = 0..32): bits 2s..2s+2 of
//!                         byte 16 + 32h + l
//! Q3_K 256 values, 110 B: 32 B high bits (hmask), 64 B 2-bit codes, 12 B of 6-bit scales × 16, f16 d
//!                         w = d·(sc_g − 32)·q         (q = low − 4 where the high bit is clear: −4..=3)
//!                         value 128h + 32s + l: low bits as Q2_K's from byte 32 + 32h + l,
//!                         high bit 4h + s of byte l; scale g: low 4 bits from the nibble
//!                         (low for g < 8) of byte 96 + g % 8, top 2 from bits 2(g / 4)
//!                         of byte 104 + g % 4
//! Q4_K 256 values, 144 B: f16 d, f16 dmin, 12 B of 6-bit (scale, min) × 8, 128 B nibbles
//!                         w = d·sc_j·q − dmin·m_j      (j = value / 32)
//!                         byte 16 + 32c + l: value 64c + l (low nibble), 64c + 32 + l (high)
//! Q5_K 256 values, 176 B: f16 d, f16 dmin, 12 B as Q4_K's, 32 B fifth bits (qh), 128 B nibbles
//!                         w = d·sc_j·q − dmin·m_j      (q = 0..=31)
//!                         nibbles as Q4_K's from byte 48; value 32j + l's fifth bit is
//!                         bit j of qh[l]
//! Q6_K 256 values, 210 B: 128 B low nibbles (ql), 64 B 2-bit pairs (qh), 16 × i8 scales, f16 d
//!                         w = d·sc_g·(q − 32)          (g = value / 16)
//!                         value 128h + 32t + l (t = 0..4, l = 0..32): nibble of
//!                         ql[64h + 32(t % 2) + l] (low for t < 2, high after),
//!                         bits 2t..2t+2 of qh[32h + l] above it
//! ```
//! Q2_K, Q3_K and Q6_K share the walk: activation block b = 4h + t (or
//! 4h + s) reads 32 code bytes of half h, and its first and second 16
//! values have groups 2b and 2b + 1.
//!
//! The IQ4 formats' nibbles index a fixed table of 16 signed values
//! (`IQ4_VALUES`, −127..=113), so their codes are i8 like Q8_0's:
//!
//! ```text
//! IQ4_NL  32 values, 18 B: f16 d, 16 B nibbles                 w = d·T[q]
//! IQ4_XS 256 values, 136 B: f16 d, u16 scales_h, 4 B scales_l, 128 B nibbles
//!                         w = d·(ls_j − 32)·T[q]        (j = value / 32)
//!                         bytes 8 + 16j..: sub-block j, nibbled as a 32-value block
//! ```
//!
//! F16 and BF16 rows are not blocks of codes: each value is its own 2-byte
//! "block", widened to f32 and multiplied in f32 (`half_rows`), so their
//! products are f32 products, with no 8-bit rounding of the activations.

use half::f16;

use crate::quant::ggml_type;

/// Values in every block of the quantised formats (and in every
/// sub-block of their super-blocks): the activations' block.
pub const BLOCK: usize = 32;

/// Which block format a weight matrix is stored in (only the ones with a kernel).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockFormat {
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q8_0,
    Q2K,
    Q3K,
    Q4K,
    Q5K,
    Q6K,
    IQ4NL,
    IQ4XS,
    F16,
    BF16,
}

/// Values in a K-quant super-block.
pub const SUPER: usize = 256;

impl BlockFormat {
    pub const ALL: [BlockFormat; 14] = [
        Self::Q4_0,
        Self::Q4_1,
        Self::Q5_0,
        Self::Q5_1,
        Self::Q8_0,
        Self::Q2K,
        Self::Q3K,
        Self::Q4K,
        Self::Q5K,
        Self::Q6K,
        Self::IQ4NL,
        Self::IQ4XS,
        Self::F16,
        Self::BF16,
    ];

    /// Values per block (a super-block for the K-quants and IQ4_XS, one
    /// value for the 16-bit floats): the GGUF type's, whose table is the one
    /// source of the block layouts.
    #[inline]
    pub fn block_values(self) -> usize {
        ggml_type(self).block_size() as usize
    }

    /// Whether blocks are 256-value super-blocks of 32-value sub-blocks.
    pub fn is_k(self) -> bool {
        matches!(self, Self::Q2K | Self::Q3K | Self::Q4K | Self::Q5K | Self::Q6K | Self::IQ4XS)
    }

    /// Whether rows are 16-bit floats, multiplied in f32 (`half_rows`)
    /// rather than against 8-bit activations.
    pub fn is_float(self) -> bool {
        matches!(self, Self::F16 | Self::BF16)
    }

    /// Bytes per block (the GGUF type's).
    #[inline]
    pub fn block_bytes(self) -> usize {
        ggml_type(self).block_bytes() as usize
    }

    /// Bytes of one row of `k` values; `k` must be a multiple of `block_values()`.
    pub fn row_bytes(self, k: usize) -> usize {
        let v = self.block_values();
        assert!(k.is_multiple_of(v), "{} rows hold whole blocks of {v} values, not {k}", self.name());
        k / v * self.block_bytes()
    }

    /// The GGUF type's name ("Q4_K").
    pub fn name(self) -> &'static str {
        ggml_type(self).name()
    }

    /// Whether a block stores a minimum `m` after `d` (w = q·d + m).
    pub(super) fn has_min(self) -> bool {
        matches!(self, Self::Q4_1 | Self::Q5_1)
    }

    /// The constant the unsigned code is shifted by (w = (q - offset)·d):
    /// kernels multiply the unsigned codes and subtract `offset · Σ q_x` once
    /// per block, which is exact in integers.
    pub(super) fn offset(self) -> i32 {
        match self {
            Self::Q4_0 => 8,
            Self::Q5_0 => 16,
            _ => 0,
        }
    }

    /// Where the packed (low) codes start inside a block.
    pub(super) fn codes_at(self) -> usize {
        match self {
            Self::Q4_0 | Self::Q8_0 | Self::IQ4NL => 2,
            Self::Q4_1 => 4,
            Self::Q5_0 => 6,
            Self::Q5_1 | Self::IQ4XS => 8,
            Self::Q2K | Self::Q4K => 16,
            Self::Q3K => 32,
            Self::Q5K => 48,
            Self::Q6K | Self::F16 | Self::BF16 => 0,
        }
    }

    /// Where the u32 of fifth bits starts (Q5 formats only).
    pub(super) fn high_bits_at(self) -> usize {
        match self {
            Self::Q5_0 => 2,
            _ => 4,
        }
    }
}

/// The f16 at byte `i` of `b`, widened exactly.
pub(super) fn f16_at(b: &[u8], i: usize) -> f32 {
    f16::from_bits(u16::from_le_bytes([b[i], b[i + 1]])).to_f32()
}

pub(super) fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// Q4_K's eight 6-bit (scale, min) pairs from its 12 packed bytes (block
/// bytes 4..16): pairs 0..4 are the low 6 bits of bytes 0..4 (scales) and
/// 4..8 (mins); pairs 4..8 take their low 4 bits from the nibbles of bytes
/// 8..12 and their top 2 bits from the top bits of bytes 0..8.
/// Inlined: in wasm a call per super-block took 1.3 ms of Gemma 3's step.
#[inline(always)]
pub(super) fn q4k_scales_mins(s: &[u8]) -> ([u8; 8], [u8; 8]) {
    let (mut sc, mut m) = ([0u8; 8], [0u8; 8]);
    for j in 0..4 {
        sc[j] = s[j] & 63;
        m[j] = s[j + 4] & 63;
        sc[j + 4] = (s[j + 8] & 0xF) | ((s[j] >> 6) << 4);
        m[j + 4] = (s[j + 8] >> 4) | ((s[j + 4] >> 6) << 4);
    }
    (sc, m)
}

/// The IQ4 table; IQ4_XS's sub-block scales (`ls_j − 32`).
pub(super) use crate::gguf::quant::{IQ4_VALUES, iq4_xs_scale};

/// An IQ4 block's 32 codes (table values) in value order from its 16 nibble bytes.
pub(super) fn iq4_codes(nib: &[u8]) -> [i8; BLOCK] {
    let mut c = [0i8; BLOCK];
    for j in 0..16 {
        c[j] = IQ4_VALUES[(nib[j] & 0xF) as usize];
        c[j + 16] = IQ4_VALUES[(nib[j] >> 4) as usize];
    }
    c
}

/// Q6_K's code of value `128h + 32t + l` in the block: 6 bits, 0..=63.
pub(super) fn q6k_code(blk: &[u8], h: usize, t: usize, l: usize) -> u8 {
    let ql = blk[64 * h + 32 * (t % 2) + l];
    let nib = if t < 2 { ql & 0xF } else { ql >> 4 };
    let high = (blk[128 + 32 * h + l] >> (2 * t)) & 3;
    nib | (high << 4)
}

/// Q2_K's code of value `128h + 32s + l`: 0..=3.
pub(super) fn q2k_code(blk: &[u8], h: usize, s: usize, l: usize) -> u8 {
    (blk[16 + 32 * h + l] >> (2 * s)) & 3
}

/// Q3_K's code of value `128h + 32s + l`: the two low bits, less 4 where
/// its high bit is clear, so −4..=3.
pub(super) fn q3k_code(blk: &[u8], h: usize, s: usize, l: usize) -> i8 {
    let low = ((blk[32 + 32 * h + l] >> (2 * s)) & 3) as i8;
    let high = (blk[l] >> (4 * h + s)) & 1;
    low - 4 * (1 - high as i8)
}

/// Q3_K's sixteen scales, −32..=31, from their 12 packed bytes (block bytes 96..108).
pub(super) fn q3k_scales(s: &[u8]) -> [i8; 16] {
    core::array::from_fn(|g| {
        let low = if g < 8 { s[g] & 0xF } else { s[g - 8] >> 4 };
        (low | (((s[8 + g % 4] >> (2 * (g / 4))) & 3) << 4)) as i8 - 32
    })
}

/// Q5_K's code of value `32j + l`: 0..=31.
pub(super) fn q5k_code(blk: &[u8], j: usize, l: usize) -> u8 {
    let nib = (blk[48 + 32 * (j / 2) + l] >> (4 * (j % 2))) & 0xF;
    nib | (((blk[16 + l] >> j) & 1) << 4)
}
