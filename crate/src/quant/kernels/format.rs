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

use half::f16;

/// Values in every block (all formats with a kernel use 32-value blocks).
pub const BLOCK: usize = 32;

/// Which block format a weight matrix is stored in (only the ones with a kernel).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockFormat {
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q8_0,
}

impl BlockFormat {
    pub const ALL: [BlockFormat; 5] = [Self::Q4_0, Self::Q4_1, Self::Q5_0, Self::Q5_1, Self::Q8_0];

    /// Values per block.
    pub fn block_values(self) -> usize {
        BLOCK
    }

    /// Bytes per block.
    pub fn block_bytes(self) -> usize {
        match self {
            Self::Q4_0 => 18,
            Self::Q4_1 => 20,
            Self::Q5_0 => 22,
            Self::Q5_1 => 24,
            Self::Q8_0 => 34,
        }
    }

    /// Bytes of one row of `k` values; `k` must be a multiple of `block_values()`.
    pub fn row_bytes(self, k: usize) -> usize {
        assert!(k.is_multiple_of(BLOCK), "{} rows hold whole blocks of {BLOCK} values, not {k}", self.name());
        k / BLOCK * self.block_bytes()
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Q4_0 => "Q4_0",
            Self::Q4_1 => "Q4_1",
            Self::Q5_0 => "Q5_0",
            Self::Q5_1 => "Q5_1",
            Self::Q8_0 => "Q8_0",
        }
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

    /// Where the packed codes start inside a block.
    pub(super) fn codes_at(self) -> usize {
        match self {
            Self::Q4_0 | Self::Q8_0 => 2,
            Self::Q4_1 => 4,
            Self::Q5_0 => 6,
            Self::Q5_1 => 8,
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
