//! The fused attention over the KV cache's pages (`kernels::attention`) as
//! an operation of burn's CPU backends, like `ops`'s: the queries come from
//! the backend's storage and the output goes back into it; the pages are
//! the cache's own memory, read where they lie.
//!
//! burn-ndarray is deprecated upstream and kept as the card's option: the
//! code the macro generates for it names the deprecated type.
#![allow(deprecated)]

use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, Flex, backend_extension};
use burn::backend::flex::FlexTensor;
use burn::tensor::TensorData;

use super::kernels::attention::{Queries, paged_attention};
use crate::kv_cache::LayerView;

#[backend_extension(Flex, NdArray: cfg(feature = "ndarray"))]
pub trait AttentionOps: Backend {
    /// Causal attention of a chunk's queries over the cache's keys and
    /// values 0..start + T (the chunk's own already written), grouped-query
    /// heads sharing their KV head; with a window, each query over its last
    /// `window` keys only.
    ///
    /// # Shapes
    /// - q: `[1, heads, T, head_dim]` f32 → `[1, T, heads · head_dim]` f32
    fn paged_attention(q: FloatTensor<Self>, kv: LayerView<'_>, start: usize, window: Option<usize>) -> FloatTensor<Self>;
}

/// The kernel on plain slices: (out, T, heads · head_dim).
fn attention_slices(q: &[f32], dims: &[usize], kv: LayerView, start: usize, window: Option<usize>) -> (Vec<f32>, [usize; 3]) {
    assert!(dims.len() == 4 && dims[0] == 1, "paged_attention takes [1, heads, T, head_dim], not {dims:?}");
    let (heads, t, hd) = (dims[1], dims[2], dims[3]);
    assert_eq!(hd, kv.head_dim, "queries of {hd} values against keys of {}", kv.head_dim);
    let mut out = vec![0f32; q.len()];
    paged_attention(Queries { q, heads, t, start, window }, kv, &mut out);
    (out, [1, t, heads * hd])
}

impl AttentionOps for Flex {
    fn paged_attention(q: FlexTensor, kv: LayerView<'_>, start: usize, window: Option<usize>) -> FlexTensor {
        use burn::backend::TensorMetadata;
        let dims = q.shape();
        let (out, shape) = attention_slices(&super::ops::flex_f32(&q), &dims, kv, start, window);
        FlexTensor::from_data(TensorData::new(out, shape))
    }
}

#[cfg(feature = "ndarray")]
mod ndarray_impl {
    use burn::backend::NdArray;
    use burn::backend::TensorMetadata;
    use burn::backend::ndarray::NdArrayTensor;
    use burn::tensor::TensorData;

    use super::{AttentionOps, LayerView, attention_slices};
    use crate::quant::ops::ndarray_impl::f32s;

    impl AttentionOps for NdArray {
        fn paged_attention(q: NdArrayTensor, kv: LayerView<'_>, start: usize, window: Option<usize>) -> NdArrayTensor {
            let dims = q.shape();
            let (out, shape) = attention_slices(&f32s(&q), &dims, kv, start, window);
            NdArrayTensor::from_data(TensorData::new(out, shape))
        }
    }
}

#[cfg(test)]
mod tests {
    use burn::tensor::{Distribution, Tensor};

    use super::*;
    use crate::backend::BackendKind;
    use crate::kv_cache::{KvCache, KvPrecision};

    /// On each backend the operation gives the slice kernel's numbers, bit
    /// for bit (the backends only hand it the queries and take its output),
    /// for a prefill chunk across a page boundary with grouped heads.
    #[test]
    fn every_backend_runs_the_kernel() {
        let kinds = [BackendKind::Flex, #[cfg(feature = "ndarray")] BackendKind::Ndarray];
        for kind in kinds {
            let device = kind.device().unwrap();
            for precision in [KvPrecision::F16, KvPrecision::F32] {
                let mut cache = KvCache::new(1, 2, 8, 300, precision);
                let kv = || Tensor::<4>::random([1, 2, 150, 8], Distribution::Normal(0.0, 1.0), &device);
                cache.write(0, kv(), kv());
                let q = Tensor::<4>::random([1, 4, 5, 8], Distribution::Normal(0.0, 1.0), &device);
                let q_values = q.clone().into_data().try_into_vec::<f32>().unwrap();
                let y = <burn::backend::Dispatch as AttentionOps>::paged_attention(q.into_dispatch(), cache.view(0), 145, Some(100));
                let y = Tensor::<3>::from_dispatch(y);
                assert_eq!(y.dims(), [1, 5, 32]);
                let mut want = vec![0f32; 4 * 5 * 8];
                paged_attention(Queries { q: &q_values, heads: 4, t: 5, start: 145, window: Some(100) }, cache.view(0), &mut want);
                assert_eq!(y.into_data().try_into_vec::<f32>().unwrap(), want, "{kind:?}, {precision:?}");
            }
        }
    }
}
