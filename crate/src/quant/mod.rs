//! Weights kept in their GGUF blocks, and the matrix products on them as
//! operations of burn's CPU backends.
//!
//! ```text
//! GGUF file bytes ─► one U8 tensor (shared, not copied) ─► BlockMatrix views (one per weight)
//! x [m, k] f32 ─► ops::BlockOps::block_matmul (Flex, NdArray) ─► kernels::matmul ─► [m, n] f32
//! token ids    ─► ops::BlockOps::block_rows ─► the rows, dequantised ─► embeddings
//! ```
//! Only the formats `kernels` has a product for are kept as blocks (F16
//! and BF16 rows among them, at 16 bits); any other type is dequantised to
//! f32 at load.

pub mod attention_op;
pub mod kernels;
pub mod matrix;
pub mod ops;
pub mod rows;

pub use kernels::BlockFormat;
pub use matrix::BlockMatrix;

use crate::gguf::quant::GgmlType;

/// The kernel format for a GGUF tensor type, if there is a kernel for it.
pub fn block_format(ty: GgmlType) -> Option<BlockFormat> {
    BlockFormat::ALL.into_iter().find(|&f| ggml_type(f) == ty)
}

/// The GGUF type a kernel format reads (the dequantiser's name for it): the
/// one map between the two, whose table (`GgmlType`) gives each format's
/// block layout and name.
#[inline]
pub fn ggml_type(format: BlockFormat) -> GgmlType {
    match format {
        BlockFormat::Q4_0 => GgmlType::Q4_0,
        BlockFormat::Q4_1 => GgmlType::Q4_1,
        BlockFormat::Q5_0 => GgmlType::Q5_0,
        BlockFormat::Q5_1 => GgmlType::Q5_1,
        BlockFormat::Q8_0 => GgmlType::Q8_0,
        BlockFormat::Q2K => GgmlType::Q2K,
        BlockFormat::Q3K => GgmlType::Q3K,
        BlockFormat::Q4K => GgmlType::Q4K,
        BlockFormat::Q5K => GgmlType::Q5K,
        BlockFormat::Q6K => GgmlType::Q6K,
        BlockFormat::IQ4NL => GgmlType::IQ4NL,
        BlockFormat::IQ4XS => GgmlType::IQ4XS,
        BlockFormat::F16 => GgmlType::F16,
        BlockFormat::BF16 => GgmlType::BF16,
    }
}
