//! ggml's tensor types and their dequantisation to f32.
//! (Over 400 lines: each type's dequantiser is a few lines beside its
//! layout, and their unit tests share the block builders below.)
//!
//! A quantised row is a run of blocks; each block holds a scale (and for
//! some types a minimum) in f16 plus packed integers:
//!
//! ```text
//! Q4_0  32 values, 18 B:  f16 d,            16 B nibbles          w = (q - 8)·d
//! Q4_1  32 values, 20 B:  f16 d, f16 m,     16 B nibbles          w = q·d + m
//! Q5_0  32 values, 22 B:  f16 d,  u32 high bits, 16 B nibbles     w = (q - 16)·d
//! Q5_1  32 values, 24 B:  f16 d, f16 m, u32 high bits, 16 B       w = q·d + m
//! Q8_0  32 values, 34 B:  f16 d, 32 × i8                          w = q·d
//! Q2_K 256 values, 84 B:  16 B of 4-bit (scale, min) × 16, 64 B 2-bit codes, f16 d, f16 dmin
//!                         w = d·scale_j·q - dmin·min_j   (j: which 16-value group)
//! Q3_K 256 values, 110 B: 32 B high bits, 64 B 2-bit codes, 12 B of 6-bit scales × 16, f16 d
//!                         w = d·(scale_j - 32)·(q - 4)    (j: which 16-value group)
//! Q4_K 256 values, 144 B: f16 d, f16 dmin, 12 B of 6-bit (scale, min) × 8, 128 B nibbles
//!                         w = d·scale_j·q - dmin·min_j   (j: which 32-value sub-block)
//! Q5_K 256 values, 176 B: f16 d, f16 dmin, 12 B as Q4_K's, 32 B fifth bits, 128 B nibbles
//!                         w = d·scale_j·q - dmin·min_j   (j: which 32-value sub-block)
//! Q6_K 256 values, 210 B: 128 B low nibbles, 64 B high 2-bit pairs, 16 × i8 scales, f16 d
//!                         w = d·scale_j·(q - 32)          (j: which 16-value sub-block)
//! IQ4_NL  32 values, 18 B: f16 d, 16 B nibbles              w = d·T[q]
//! IQ4_XS 256 values, 136 B: f16 d, u16 scales_h, 4 B scales_l, 128 B nibbles
//!                         w = d·(ls_j - 32)·T[q]           (j: which 32-value sub-block)
//! ```
//! In the 32-value types, byte j of the nibbles holds value j (low nibble)
//! and value j + 16 (high nibble); an IQ4_XS sub-block j is laid out so in
//! its 16 bytes from 8 + 16j. The IQ4 types' nibble picks one of 16 fixed
//! signed values `T` (`IQ4_VALUES`), spaced closer near 0, where weights are
//! dense; IQ4_XS's 6-bit sub-block scale `ls_j` has its low 4 bits in a
//! nibble of `scales_l` and its top 2 in `scales_h` (`iq4_xs_scale`).
//! Where each K-quant value's bits sit is told at its dequantiser below.

use half::f16;

use crate::bail;
use crate::error::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GgmlType {
    F32,
    F16,
    BF16,
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
    /// A type this reader can lay out (so the file parses) but not dequantise.
    Other { id: u32, name: &'static str, block: u64, bytes: u64 },
}

impl GgmlType {
    pub fn from_id(id: u32) -> Result<Self> {
        use GgmlType::*;
        let other = |name, block, bytes| Other { id, name, block, bytes };
        Ok(match id {
            0 => F32,
            1 => F16,
            2 => Q4_0,
            3 => Q4_1,
            6 => Q5_0,
            7 => Q5_1,
            8 => Q8_0,
            9 => other("Q8_1", 32, 36),
            10 => Q2K,
            11 => Q3K,
            12 => Q4K,
            13 => Q5K,
            14 => Q6K,
            15 => other("Q8_K", 256, 292),
            16 => other("IQ2_XXS", 256, 66),
            17 => other("IQ2_XS", 256, 74),
            18 => other("IQ3_XXS", 256, 98),
            19 => other("IQ1_S", 256, 50),
            20 => IQ4NL,
            21 => other("IQ3_S", 256, 110),
            22 => other("IQ2_S", 256, 82),
            23 => IQ4XS,
            24 => other("I8", 1, 1),
            25 => other("I16", 1, 2),
            26 => other("I32", 1, 4),
            27 => other("I64", 1, 8),
            28 => other("F64", 1, 8),
            29 => other("IQ1_M", 256, 56),
            30 => BF16,
            34 => other("TQ1_0", 256, 54),
            35 => other("TQ2_0", 256, 66),
            other_id => bail!("unknown tensor type {other_id} (not a ggml type this reader knows)"),
        })
    }

    #[inline]
    pub fn name(self) -> &'static str {
        use GgmlType::*;
        match self {
            F32 => "F32",
            F16 => "F16",
            BF16 => "BF16",
            Q4_0 => "Q4_0",
            Q4_1 => "Q4_1",
            Q5_0 => "Q5_0",
            Q5_1 => "Q5_1",
            Q8_0 => "Q8_0",
            Q2K => "Q2_K",
            Q3K => "Q3_K",
            Q4K => "Q4_K",
            Q5K => "Q5_K",
            Q6K => "Q6_K",
            IQ4NL => "IQ4_NL",
            IQ4XS => "IQ4_XS",
            Other { name, .. } => name,
        }
    }

    /// Values per block.
    #[inline]
    pub fn block_size(self) -> u64 {
        use GgmlType::*;
        match self {
            F32 | F16 | BF16 => 1,
            Q4_0 | Q4_1 | Q5_0 | Q5_1 | Q8_0 | IQ4NL => 32,
            Q2K | Q3K | Q4K | Q5K | Q6K | IQ4XS => 256,
            Other { block, .. } => block,
        }
    }

    /// Bytes per block.
    #[inline]
    pub fn block_bytes(self) -> u64 {
        use GgmlType::*;
        match self {
            F32 => 4,
            F16 | BF16 => 2,
            Q4_0 => 18,
            Q4_1 => 20,
            Q5_0 => 22,
            Q5_1 => 24,
            Q8_0 => 34,
            Q2K => 84,
            Q3K => 110,
            Q4K => 144,
            Q5K => 176,
            Q6K => 210,
            IQ4NL => 18,
            IQ4XS => 136,
            Other { bytes, .. } => bytes,
        }
    }

    pub fn can_dequantize(self) -> bool {
        !matches!(self, GgmlType::Other { .. })
    }

    /// Every type `dequantize` reads, in the order messages name them.
    pub const READABLE: [GgmlType; 15] = {
        use GgmlType::*;
        [F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2K, Q3K, Q4K, Q5K, Q6K, IQ4NL, IQ4XS]
    };

    /// `READABLE` for a message: "F32, F16, …, IQ4_NL and IQ4_XS".
    pub fn readable_list() -> String {
        let names: Vec<&str> = Self::READABLE.iter().map(|t| t.name()).collect();
        let (last, rest) = names.split_last().expect("READABLE is not empty");
        format!("{} and {last}", rest.join(", "))
    }

    /// Bytes of a tensor with these dimensions (innermost first); rows must be whole blocks.
    pub fn bytes_for(self, dims: &[u64]) -> Result<u64> {
        let block = self.block_size();
        if !dims[0].is_multiple_of(block) {
            bail!("its rows of {} values are not a multiple of its block size {block} ({})", dims[0], self.name());
        }
        let n = dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d));
        match n.and_then(|n| (n / block).checked_mul(self.block_bytes())) {
            Some(b) if b <= 1 << 48 => Ok(b),
            _ => bail!("its shape {dims:?} is too large"),
        }
    }
}

fn half_at(b: &[u8], i: usize) -> f32 {
    f16::from_bits(u16::from_le_bytes([b[i], b[i + 1]])).to_f32()
}

/// `n` values of type `ty` from `bytes` (exactly `ty.bytes_for([n])` long).
pub fn dequantize(ty: GgmlType, bytes: &[u8], n: usize) -> Result<Vec<f32>> {
    if !ty.can_dequantize() {
        bail!("tensor type {} is not supported (this reader dequantises {})", ty.name(), GgmlType::readable_list());
    }
    let expected = ty.bytes_for(&[n as u64])?;
    if bytes.len() as u64 != expected {
        bail!("{} data for {n} values must be {expected} bytes, got {}", ty.name(), bytes.len());
    }
    let mut out = vec![0f32; n];
    let bs = ty.block_bytes() as usize;
    let vals = ty.block_size() as usize;
    let blocks = bytes.chunks_exact(bs).zip(out.chunks_exact_mut(vals));
    match ty {
        GgmlType::F32 => blocks.for_each(|(b, o)| o[0] = f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        GgmlType::F16 => blocks.for_each(|(b, o)| o[0] = half_at(b, 0)),
        GgmlType::BF16 => blocks.for_each(|(b, o)| o[0] = f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16)),
        GgmlType::Q4_0 => blocks.for_each(|(b, o)| q4_0(b, o)),
        GgmlType::Q4_1 => blocks.for_each(|(b, o)| q4_1(b, o)),
        GgmlType::Q5_0 => blocks.for_each(|(b, o)| q5_0(b, o)),
        GgmlType::Q5_1 => blocks.for_each(|(b, o)| q5_1(b, o)),
        GgmlType::Q8_0 => blocks.for_each(|(b, o)| q8_0(b, o)),
        GgmlType::Q2K => blocks.for_each(|(b, o)| q2_k(b, o)),
        GgmlType::Q3K => blocks.for_each(|(b, o)| q3_k(b, o)),
        GgmlType::Q4K => blocks.for_each(|(b, o)| q4_k(b, o)),
        GgmlType::Q5K => blocks.for_each(|(b, o)| q5_k(b, o)),
        GgmlType::Q6K => blocks.for_each(|(b, o)| q6_k(b, o)),
        GgmlType::IQ4NL => blocks.for_each(|(b, o)| iq4(&b[2..18], half_at(b, 0), o)),
        GgmlType::IQ4XS => blocks.for_each(|(b, o)| iq4_xs(b, o)),
        GgmlType::Other { .. } => unreachable!("refused above"),
    }
    Ok(out)
}

fn q4_0(b: &[u8], o: &mut [f32]) {
    let d = half_at(b, 0);
    for (j, &q) in b[2..18].iter().enumerate() {
        o[j] = ((q & 0xF) as i32 - 8) as f32 * d;
        o[j + 16] = ((q >> 4) as i32 - 8) as f32 * d;
    }
}

fn q4_1(b: &[u8], o: &mut [f32]) {
    let (d, m) = (half_at(b, 0), half_at(b, 2));
    for (j, &q) in b[4..20].iter().enumerate() {
        o[j] = (q & 0xF) as f32 * d + m;
        o[j + 16] = (q >> 4) as f32 * d + m;
    }
}

/// The fifth bit of value j is bit j of the 32-bit `high` word.
fn five_bit(qs: &[u8], high: u32, o: &mut [f32], f: impl Fn(u8) -> f32) {
    for (j, &q) in qs.iter().enumerate() {
        let h0 = ((high >> j) & 1) as u8;
        let h1 = ((high >> (j + 16)) & 1) as u8;
        o[j] = f((q & 0xF) | (h0 << 4));
        o[j + 16] = f((q >> 4) | (h1 << 4));
    }
}

fn q5_0(b: &[u8], o: &mut [f32]) {
    let d = half_at(b, 0);
    let high = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
    five_bit(&b[6..22], high, o, |q| (q as i32 - 16) as f32 * d);
}

fn q5_1(b: &[u8], o: &mut [f32]) {
    let (d, m) = (half_at(b, 0), half_at(b, 2));
    let high = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
    five_bit(&b[8..24], high, o, |q| q as f32 * d + m);
}

fn q8_0(b: &[u8], o: &mut [f32]) {
    let d = half_at(b, 0);
    for (j, &q) in b[2..34].iter().enumerate() {
        o[j] = (q as i8) as f32 * d;
    }
}

/// Sub-block j's 6-bit scale and min from Q4_K's 12 packed bytes: the
/// first four pairs sit in the low 6 bits of bytes 0..8; the last four are
/// split between the nibbles of bytes 8..12 and the top 2 bits of bytes 0..8.
fn scale_min_k4(j: usize, s: &[u8]) -> (u8, u8) {
    if j < 4 {
        (s[j] & 63, s[j + 4] & 63)
    } else {
        ((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4), (s[j + 4] >> 4) | ((s[j] >> 6) << 4))
    }
}

fn q4_k(b: &[u8], o: &mut [f32]) {
    let (d, dmin) = (half_at(b, 0), half_at(b, 2));
    let scales = &b[4..16];
    let qs = &b[16..144];
    // Four chunks of 64 values; each chunk's 32 bytes give two sub-blocks:
    // the low nibbles (sub-block 2c) then the high nibbles (2c + 1).
    for c in 0..4 {
        let (s1, m1) = scale_min_k4(2 * c, scales);
        let (s2, m2) = scale_min_k4(2 * c + 1, scales);
        let (d1, min1) = (d * s1 as f32, dmin * m1 as f32);
        let (d2, min2) = (d * s2 as f32, dmin * m2 as f32);
        for l in 0..32 {
            let q = qs[32 * c + l];
            o[64 * c + l] = d1 * (q & 0xF) as f32 - min1;
            o[64 * c + 32 + l] = d2 * (q >> 4) as f32 - min2;
        }
    }
}

/// Q2_K: byte 16 + 32h + l holds, in bits 2s..2s + 2, the code of value
/// 128h + 32s + l; group j's scale is the low nibble of byte j, its min the high one.
fn q2_k(b: &[u8], o: &mut [f32]) {
    let (sc, qs) = (&b[0..16], &b[16..80]);
    let (d, dmin) = (half_at(b, 80), half_at(b, 82));
    for (v, out) in o.iter_mut().enumerate() {
        let (h, s, l) = (v / 128, v % 128 / 32, v % 32);
        let q = (qs[32 * h + l] >> (2 * s)) & 3;
        let g = sc[v / 16];
        *out = (d * (g & 0xF) as f32) * q as f32 - dmin * (g >> 4) as f32;
    }
}

/// Q3_K's sixteen 6-bit scales (before the −32) from their 12 packed bytes:
/// the low 4 bits of scale j are the low (j < 8) or high (j ≥ 8) nibble of
/// byte j % 8, its top 2 bits are bits 2(j / 4).. of byte 8 + j % 4.
fn scales_k3(s: &[u8]) -> [u8; 16] {
    core::array::from_fn(|j| {
        let low = if j < 8 { s[j] & 0xF } else { s[j - 8] >> 4 };
        low | (((s[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)
    })
}

/// Q3_K: value 128h + 32s + l takes bits 2s..2s + 2 of byte 32 + 32h + l as
/// its low code and bit 4h + s of byte l as its high bit; a clear high bit
/// means −4 (so the code is −4..=3).
fn q3_k(b: &[u8], o: &mut [f32]) {
    let (hmask, qs) = (&b[0..32], &b[32..96]);
    let sc = scales_k3(&b[96..108]);
    let d = half_at(b, 108);
    for (v, out) in o.iter_mut().enumerate() {
        let (h, s, l) = (v / 128, v % 128 / 32, v % 32);
        let low = ((qs[32 * h + l] >> (2 * s)) & 3) as i32;
        let high = (hmask[l] >> (4 * h + s)) & 1;
        let q = if high == 1 { low } else { low - 4 };
        *out = (d * (sc[v / 16] as i32 - 32) as f32) * q as f32;
    }
}

/// Q5_K: Q4_K's scales and nibbles, and the fifth bit of value 32j + l
/// (sub-block j) is bit j of byte 16 + l.
fn q5_k(b: &[u8], o: &mut [f32]) {
    let (d, dmin) = (half_at(b, 0), half_at(b, 2));
    let (qh, qs) = (&b[16..48], &b[48..176]);
    for (v, out) in o.iter_mut().enumerate() {
        let (j, l) = (v / 32, v % 32);
        let (sc, m) = scale_min_k4(j, &b[4..16]);
        let nib = (qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 0xF;
        let q = nib | (((qh[l] >> j) & 1) << 4);
        *out = (d * sc as f32) * q as f32 - dmin * m as f32;
    }
}

fn q6_k(b: &[u8], o: &mut [f32]) {
    let (ql, qh, sc) = (&b[0..128], &b[128..192], &b[192..208]);
    let d = half_at(b, 208);
    // Two halves of 128 values; in each, value l + 32·k (k = 0..4) takes a
    // nibble of ql and two bits of qh, and the scale of its 16-value group.
    for h in 0..2 {
        let (ql, qh, sc, o) = (&ql[64 * h..], &qh[32 * h..], &sc[8 * h..], &mut o[128 * h..]);
        for l in 0..32 {
            let g = l / 16;
            let q = [
                (ql[l] & 0xF) | ((qh[l] & 3) << 4),
                (ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4),
                (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4),
                (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4),
            ];
            for (k, &qk) in q.iter().enumerate() {
                o[l + 32 * k] = d * (sc[g + 2 * k] as i8) as f32 * (qk as i32 - 32) as f32;
            }
        }
    }
}

/// The 16 values an IQ4 nibble stands for (ggml's `kvalues_iq4nl`): i8,
/// so a product with 8-bit activations stays an integer dot product.
pub const IQ4_VALUES: [i8; 16] = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113];

/// 32 values from 16 bytes of IQ4 nibbles, each `d · T[q]`.
fn iq4(qs: &[u8], d: f32, o: &mut [f32]) {
    for (j, &q) in qs.iter().enumerate() {
        o[j] = d * IQ4_VALUES[(q & 0xF) as usize] as f32;
        o[j + 16] = d * IQ4_VALUES[(q >> 4) as usize] as f32;
    }
}

/// Sub-block `j`'s scale `ls_j − 32` (−32..=31) in an IQ4_XS block: the
/// low 4 bits are nibble `j % 2` of `scales_l[j / 2]` (block byte 4 + j/2),
/// the top 2 are bits 2j..2j+2 of the u16 `scales_h` (block bytes 2..4).
pub fn iq4_xs_scale(blk: &[u8], j: usize) -> i32 {
    let low = (blk[4 + j / 2] >> (4 * (j % 2))) & 0xF;
    let high = (u16::from_le_bytes([blk[2], blk[3]]) >> (2 * j)) & 3;
    (low | (high as u8) << 4) as i32 - 32
}

fn iq4_xs(b: &[u8], o: &mut [f32]) {
    let d = half_at(b, 0);
    for j in 0..8 {
        iq4(&b[8 + 16 * j..][..16], d * iq4_xs_scale(b, j) as f32, &mut o[32 * j..][..32]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f16_bytes(v: f32) -> [u8; 2] {
        f16::from_f32(v).to_bits().to_le_bytes()
    }

    #[test]
    fn q4_1_follows_its_definition() {
        // d = 0.5, m = -1: value j = (nibble) · 0.5 - 1, low nibbles first.
        let mut b = Vec::new();
        b.extend(f16_bytes(0.5));
        b.extend(f16_bytes(-1.0));
        b.extend((0..16u8).map(|j| j | ((15 - j) << 4)));
        let v = dequantize(GgmlType::Q4_1, &b, 32).unwrap();
        assert_eq!(v[0], -1.0);
        assert_eq!(v[3], 0.5);
        assert_eq!(v[16], 6.5);
        assert_eq!(v[31], -1.0);
    }

    #[test]
    fn q8_0_and_q4_0_are_signed() {
        let mut b = Vec::from(f16_bytes(0.25));
        b.extend((0..32).map(|j: i32| (j - 16) as i8 as u8));
        let v = dequantize(GgmlType::Q8_0, &b, 32).unwrap();
        assert_eq!((v[0], v[16], v[31]), (-4.0, 0.0, 3.75));
        let mut b = Vec::from(f16_bytes(2.0));
        b.extend([0x80u8; 16]); // low nibble 0 → -8, high nibble 8 → 0
        let v = dequantize(GgmlType::Q4_0, &b, 32).unwrap();
        assert_eq!((v[0], v[16]), (-16.0, 0.0));
    }

    #[test]
    fn q5_takes_its_fifth_bit_from_the_high_word() {
        let mut b = Vec::from(f16_bytes(1.0));
        b.extend((1u32 | (1 << 16)).to_le_bytes()); // high bit of values 0 and 16
        b.extend([0u8; 16]);
        let v = dequantize(GgmlType::Q5_0, &b, 32).unwrap();
        assert_eq!((v[0], v[1], v[16], v[17]), (0.0, -16.0, 0.0, -16.0));
    }

    #[test]
    fn k_quants_follow_their_definitions() {
        // Q2_K: every group scale 1, min 2 (byte 0x21); byte l's bits 2s..2s + 2 = s,
        // so value 128h + 32s + l is 1·s − 0.5·2.
        let mut b = vec![0x21u8; 16];
        b.extend([0b11_10_01_00u8; 64]);
        b.extend(f16_bytes(1.0));
        b.extend(f16_bytes(0.5));
        let v = dequantize(GgmlType::Q2K, &b, 256).unwrap();
        assert_eq!((v[0], v[31], v[32], v[64], v[96], v[128 + 96 + 31]), (-1.0, -1.0, 0.0, 1.0, 2.0, 2.0));
        // Q3_K: all bits clear is the most negative code and scale: (0 − 4)·(0 − 32) = 128;
        // the high bit of value 32·5 + 7 (bit 5 of byte 7) lifts it to 0.
        let mut b = vec![0u8; 108];
        b[7] = 1 << 5;
        b.extend(f16_bytes(0.5));
        let v = dequantize(GgmlType::Q3K, &b, 256).unwrap();
        assert_eq!((v[0], v[255], v[32 * 5 + 7], v[32 * 5 + 8]), (64.0, 64.0, 0.0, 64.0));
        // Q5_K: scales 1 for sub-blocks 0..4 (bytes 4..8), 0 after; the fifth
        // bit of value 32·3 + 5 alone: 16, the rest 0.
        let mut b = Vec::from(f16_bytes(1.0));
        b.extend(f16_bytes(0.0));
        b.extend([1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
        b.extend((0..32).map(|l| if l == 5 { 1u8 << 3 } else { 0 }));
        b.extend([0u8; 128]);
        let v = dequantize(GgmlType::Q5K, &b, 256).unwrap();
        assert_eq!(v[32 * 3 + 5], 16.0);
        assert_eq!(v.iter().filter(|&&x| x != 0.0).count(), 1);
    }

    #[test]
    fn readable_names_every_type_dequantize_takes() {
        for id in 0..64 {
            if let Ok(t) = GgmlType::from_id(id) {
                assert_eq!(t.can_dequantize(), GgmlType::READABLE.contains(&t), "{}", t.name());
            }
        }
        assert!(GgmlType::readable_list().ends_with("IQ4_NL and IQ4_XS"));
    }

    #[test]
    fn iq4_nibbles_pick_from_the_table() {
        // d = 0.5: value j = T[j] / 2 (low nibbles), value j + 16 = T[15 - j] / 2.
        let mut b = Vec::from(f16_bytes(0.5));
        b.extend((0..16u8).map(|j| j | ((15 - j) << 4)));
        let v = dequantize(GgmlType::IQ4NL, &b, 32).unwrap();
        assert_eq!((v[0], v[8], v[15], v[16], v[31]), (-63.5, 0.5, 56.5, 56.5, -63.5));
        // IQ4_XS sub-block 5 (the rest zero): ls = 0b10_0111 = 39 → scale 7;
        // low nibble in the high half of scales_l[2], top bits 10-11 of scales_h.
        let mut b = vec![0u8; 136];
        b[0..2].copy_from_slice(&f16_bytes(0.25));
        b[2..4].copy_from_slice(&(0b10u16 << 10).to_le_bytes());
        b[6] = 0x7 << 4;
        b[8 + 16 * 5] = 0x3F; // value 160: T[15] = 113, value 176: T[3] = -65
        let v = dequantize(GgmlType::IQ4XS, &b, 256).unwrap();
        assert_eq!((v[160], v[176], v[161]), (0.25 * 7.0 * 113.0, 0.25 * 7.0 * -65.0, 0.25 * 7.0 * -127.0));
        // The other sub-blocks' scales are 0 - 32: value 0 = d · (-32) · T[0].
        assert_eq!(v[0], 0.25 * -32.0 * -127.0);
    }

    #[test]
    fn refuses_unsupported_types_and_wrong_lengths() {
        let iq2 = GgmlType::from_id(16).unwrap();
        let e = dequantize(iq2, &[0; 66], 256).unwrap_err();
        assert!(e.message.contains("IQ2_XXS is not supported"), "{e}");
        assert!(e.message.contains(&GgmlType::readable_list()), "{e}");
        assert!(dequantize(GgmlType::Q4_1, &[0; 19], 32).unwrap_err().message.contains("must be 20 bytes"));
        assert!(GgmlType::from_id(31).is_err());
    }
}
