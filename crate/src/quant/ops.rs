//! The block-matrix products as operations of burn's CPU backends
//! (`#[backend_extension]`): the model calls them like any other tensor
//! operation, the backend hands the kernels its own storage (for Flex, the
//! file's bytes, without a copy).
//!
//! burn-ndarray is deprecated upstream and kept as the card's option: the
//! code the macro generates for it names the deprecated type.
#![allow(deprecated)]

use burn::backend::tensor::{FloatTensor, IntTensor};
use burn::backend::{Backend, Flex, backend_extension};
use burn::backend::flex::FlexTensor;
use burn::tensor::TensorData;

use super::kernels::{self, BlockFormat};
use crate::gguf::quant::dequantize;

#[backend_extension(Flex, NdArray: cfg(feature = "ndarray"))]
pub trait BlockOps: Backend {
    /// `x · Wᵀ` for the `[n, k]` matrix W stored as `n` rows of blocks.
    ///
    /// # Shapes
    /// - x: `[m, k]` f32; blocks: `[n · row_bytes(k)]` u8 → `[m, n]` f32
    fn block_matmul(x: FloatTensor<Self>, blocks: IntTensor<Self>, format: BlockFormat, n: usize, k: usize) -> FloatTensor<Self>;

    /// Rows `ids` of the same matrix, dequantised (the token embedding
    /// lookup when the LM head is tied to it).
    ///
    /// # Shapes
    /// - blocks: `[n · row_bytes(k)]` u8; ids: `[t]` → `[t, k]` f32
    fn block_rows(blocks: IntTensor<Self>, ids: IntTensor<Self>, format: BlockFormat, n: usize, k: usize) -> FloatTensor<Self>;
}

/// f32 products for a few input rows (a decode step): `kernels::dense`.
#[backend_extension(Flex, NdArray: cfg(feature = "ndarray"))]
pub trait DenseOps: Backend {
    /// `x · W` for W `[k, n]`, or with `transposed` `x · Wᵀ` for W `[n, k]`.
    ///
    /// # Shapes
    /// - x: `[m, k]` f32; w: `[k, n]` (or `[n, k]`) f32 → `[m, n]` f32
    fn dense_matmul(x: FloatTensor<Self>, w: FloatTensor<Self>, transposed: bool) -> FloatTensor<Self>;
}

/// Row-wise f32 operations fused into one each (`quant::rows`).
#[backend_extension(Flex, NdArray: cfg(feature = "ndarray"))]
pub trait RowOps: Backend {
    /// RMS norm over the last dimension, times `gamma`.
    ///
    /// # Shapes
    /// - x: `[.., d]`; gamma: `[d]` → `[.., d]`
    fn rms_norm(x: FloatTensor<Self>, gamma: FloatTensor<Self>, eps: f64) -> FloatTensor<Self>;

    /// Rotary positions (interleaved pairs or rotate-half).
    ///
    /// # Shapes
    /// - x: `[b, h, t, hd]`; cos, sin: `[t, hd/2]` → `[b, h, t, hd]`
    fn rope(x: FloatTensor<Self>, cos: FloatTensor<Self>, sin: FloatTensor<Self>, interleaved: bool) -> FloatTensor<Self>;

    /// A gated feed-forward's `act(gate) · up`: SiLU, or GELU's tanh form.
    ///
    /// # Shapes
    /// - gate, up: the same shape → that shape
    fn gated(gate: FloatTensor<Self>, up: FloatTensor<Self>, gelu_tanh: bool) -> FloatTensor<Self>;
}

fn rms_norm_slices(x: &[f32], gamma: &[f32], eps: f64) -> Vec<f32> {
    let mut out = vec![0f32; x.len()];
    super::rows::rms_norm(x, gamma, eps, &mut out);
    out
}

fn rope_slices(x: &[f32], dims: &[usize], cos: &[f32], sin: &[f32], interleaved: bool) -> Vec<f32> {
    assert_eq!(dims.len(), 4, "rope takes [b, h, t, hd]");
    let mut out = vec![0f32; x.len()];
    super::rows::rope(x, dims[2], dims[3], cos, sin, interleaved, &mut out);
    out
}

fn gated_slices(gate: &[f32], up: &[f32], gelu_tanh: bool) -> Vec<f32> {
    let mut out = vec![0f32; gate.len()];
    super::rows::gated(gate, up, gelu_tanh, &mut out);
    out
}

/// `dense_matmul` on plain slices: (out, m, n).
fn dense_slices(x: &[f32], x_dims: [usize; 2], w: &[f32], w_dims: [usize; 2], transposed: bool) -> (Vec<f32>, usize, usize) {
    let [m, k] = x_dims;
    let (wk, n) = if transposed { (w_dims[1], w_dims[0]) } else { (w_dims[0], w_dims[1]) };
    assert_eq!(k, wk, "dense_matmul of [{m}, {k}] by a weight of {w_dims:?} (transposed: {transposed})");
    let mut out = vec![0f32; m * n];
    if transposed {
        kernels::dense::xwt(w, n, k, x, m, &mut out);
    } else {
        kernels::dense::xw(w, k, n, x, m, &mut out);
    }
    (out, m, n)
}

fn dims2(shape: burn::tensor::Shape) -> [usize; 2] {
    assert_eq!(shape.num_dims(), 2, "dense_matmul takes 2-D tensors");
    [shape[0], shape[1]]
}

/// The product on plain slices; the shapes were checked when the matrix was built.
fn matmul_slices(format: BlockFormat, blocks: &[u8], n: usize, k: usize, x: &[f32]) -> (Vec<f32>, usize) {
    assert_eq!(blocks.len(), n * format.row_bytes(k), "block matrix of {n} × {k} {} has the wrong length", format.name());
    assert_eq!(x.len() % k, 0, "input rows are not {k} wide");
    let m = x.len() / k;
    let mut out = vec![0f32; m * n];
    kernels::matmul(format, blocks, n, k, x, m, &mut out);
    (out, m)
}

fn rows_slices(format: BlockFormat, blocks: &[u8], n: usize, k: usize, ids: impl ExactSizeIterator<Item = usize>) -> Vec<f32> {
    let row = format.row_bytes(k);
    assert_eq!(blocks.len(), n * row, "block matrix of {n} × {k} {} has the wrong length", format.name());
    let mut out = Vec::with_capacity(ids.len() * k);
    for id in ids {
        assert!(id < n, "row {id} of a {n}-row matrix");
        let values = dequantize(super::ggml_type(format), &blocks[id * row..(id + 1) * row], k).expect("a checked row dequantises");
        out.extend_from_slice(&values);
    }
    out
}

pub(crate) fn flex_f32(x: &FlexTensor) -> std::borrow::Cow<'_, [f32]> {
    match x.as_slice::<f32>() {
        Some(s) => s.into(),
        None => x.to_contiguous().as_slice::<f32>().expect("a contiguous f32 tensor").to_vec().into(),
    }
}

fn flex_ids(ids: &FlexTensor) -> Vec<usize> {
    let ids = ids.to_contiguous();
    if let Some(v) = ids.as_slice::<i32>() {
        v.iter().map(|&i| i as usize).collect()
    } else if let Some(v) = ids.as_slice::<i64>() {
        v.iter().map(|&i| i as usize).collect()
    } else {
        panic!("token ids of dtype {:?}", ids.dtype())
    }
}

impl DenseOps for Flex {
    fn dense_matmul(x: FlexTensor, w: FlexTensor, transposed: bool) -> FlexTensor {
        use burn::backend::TensorMetadata;
        let (xd, wd) = (dims2(x.shape()), dims2(w.shape()));
        let (out, m, n) = dense_slices(&flex_f32(&x), xd, &flex_f32(&w), wd, transposed);
        FlexTensor::from_data(TensorData::new(out, [m, n]))
    }
}

impl RowOps for Flex {
    fn rms_norm(x: FlexTensor, gamma: FlexTensor, eps: f64) -> FlexTensor {
        use burn::backend::TensorMetadata;
        let shape = x.shape();
        let out = rms_norm_slices(&flex_f32(&x), &flex_f32(&gamma), eps);
        FlexTensor::from_data(TensorData::new(out, shape))
    }

    fn rope(x: FlexTensor, cos: FlexTensor, sin: FlexTensor, interleaved: bool) -> FlexTensor {
        use burn::backend::TensorMetadata;
        let shape = x.shape();
        let out = rope_slices(&flex_f32(&x), &shape, &flex_f32(&cos), &flex_f32(&sin), interleaved);
        FlexTensor::from_data(TensorData::new(out, shape))
    }

    fn gated(gate: FlexTensor, up: FlexTensor, gelu_tanh: bool) -> FlexTensor {
        use burn::backend::TensorMetadata;
        let shape = gate.shape();
        assert_eq!(shape, up.shape(), "gated: gate and up differ in shape");
        FlexTensor::from_data(TensorData::new(gated_slices(&flex_f32(&gate), &flex_f32(&up), gelu_tanh), shape))
    }
}

impl BlockOps for Flex {
    fn block_matmul(x: FlexTensor, blocks: FlexTensor, format: BlockFormat, n: usize, k: usize) -> FlexTensor {
        let x = flex_f32(&x);
        let blocks = blocks.as_slice::<u8>().expect("block storage is a contiguous u8 view");
        let (out, m) = matmul_slices(format, blocks, n, k, &x);
        FlexTensor::from_data(TensorData::new(out, [m, n]))
    }

    fn block_rows(blocks: FlexTensor, ids: FlexTensor, format: BlockFormat, n: usize, k: usize) -> FlexTensor {
        let ids = flex_ids(&ids);
        let t = ids.len();
        let blocks = blocks.as_slice::<u8>().expect("block storage is a contiguous u8 view");
        FlexTensor::from_data(TensorData::new(rows_slices(format, blocks, n, k, ids.into_iter()), [t, k]))
    }
}

#[cfg(feature = "ndarray")]
pub(crate) mod ndarray_impl {
    use burn::backend::NdArray;
    use burn::backend::ndarray::NdArrayTensor;
    use burn::backend::TensorMetadata;
    use burn::tensor::TensorData;

    use super::{BlockFormat, BlockOps, DenseOps, RowOps, dense_slices, dims2, gated_slices, matmul_slices, rope_slices, rms_norm_slices, rows_slices};

    use std::borrow::Cow;

    fn bytes(t: &NdArrayTensor) -> Cow<'_, [u8]> {
        match t {
            NdArrayTensor::U8(s) => match s.view().to_slice() {
                Some(b) => Cow::Borrowed(b),
                None => Cow::Owned(s.view().iter().copied().collect()),
            },
            other => panic!("block storage of dtype {:?}", other.dtype()),
        }
    }

    /// An f32 tensor's values in row-major order (borrowed when it is laid out so).
    pub(crate) fn f32s(t: &NdArrayTensor) -> Cow<'_, [f32]> {
        match t {
            NdArrayTensor::F32(s) => match s.view().to_slice() {
                Some(v) => Cow::Borrowed(v),
                None => Cow::Owned(s.view().iter().copied().collect()),
            },
            other => panic!("an f32 operation on {:?}", other.dtype()),
        }
    }

    impl RowOps for NdArray {
        fn rms_norm(x: NdArrayTensor, gamma: NdArrayTensor, eps: f64) -> NdArrayTensor {
            let shape = x.shape();
            NdArrayTensor::from_data(TensorData::new(rms_norm_slices(&f32s(&x), &f32s(&gamma), eps), shape))
        }

        fn rope(x: NdArrayTensor, cos: NdArrayTensor, sin: NdArrayTensor, interleaved: bool) -> NdArrayTensor {
            let shape = x.shape();
            NdArrayTensor::from_data(TensorData::new(rope_slices(&f32s(&x), &shape, &f32s(&cos), &f32s(&sin), interleaved), shape))
        }

        fn gated(gate: NdArrayTensor, up: NdArrayTensor, gelu_tanh: bool) -> NdArrayTensor {
            let shape = gate.shape();
            assert_eq!(shape, up.shape(), "gated: gate and up differ in shape");
            NdArrayTensor::from_data(TensorData::new(gated_slices(&f32s(&gate), &f32s(&up), gelu_tanh), shape))
        }
    }

    impl DenseOps for NdArray {
        fn dense_matmul(x: NdArrayTensor, w: NdArrayTensor, transposed: bool) -> NdArrayTensor {
            let (xd, wd) = (dims2(x.shape()), dims2(w.shape()));
            let (out, m, n) = dense_slices(&f32s(&x), xd, &f32s(&w), wd, transposed);
            NdArrayTensor::from_data(TensorData::new(out, [m, n]))
        }
    }

    impl BlockOps for NdArray {
        fn block_matmul(x: NdArrayTensor, blocks: NdArrayTensor, format: BlockFormat, n: usize, k: usize) -> NdArrayTensor {
            let x: Vec<f32> = match &x {
                NdArrayTensor::F32(s) => s.view().iter().copied().collect(),
                other => panic!("block_matmul on {:?} input", other.dtype()),
            };
            let (out, m) = matmul_slices(format, &bytes(&blocks), n, k, &x);
            NdArrayTensor::from_data(TensorData::new(out, [m, n]))
        }

        fn block_rows(blocks: NdArrayTensor, ids: NdArrayTensor, format: BlockFormat, n: usize, k: usize) -> NdArrayTensor {
            let ids: Vec<usize> = match &ids {
                NdArrayTensor::I64(s) => s.view().iter().map(|&i| i as usize).collect(),
                NdArrayTensor::I32(s) => s.view().iter().map(|&i| i as usize).collect(),
                other => panic!("token ids of dtype {:?}", other.dtype()),
            };
            let t = ids.len();
            NdArrayTensor::from_data(TensorData::new(rows_slices(format, &bytes(&blocks), n, k, ids.into_iter()), [t, k]))
        }
    }
}
