//! A weight matrix kept as its GGUF blocks: what the model holds in place
//! of an f32 `[n, k]` weight.

use burn::backend::Dispatch;
use burn::module::Module;
use burn::tensor::{DType, Device, Int, Tensor, TensorData};

use super::kernels::BlockFormat;
use super::ops::BlockOps;

/// `n` rows of `k` values, each row `format.row_bytes(k)` bytes of blocks.
#[derive(Module, Debug)]
pub struct BlockMatrix {
    /// The rows' bytes as one u8 tensor: on Flex a view into the model
    /// file's bytes, shared by every matrix of the file.
    pub blocks: Tensor<1, Int>,
    #[module(skip)]
    pub format: BlockFormat,
    pub n: usize,
    pub k: usize,
}

/// A whole file's bytes as one u8 tensor, without a copy on Flex, for
/// `BlockMatrix::view` to cut the matrices out of.
pub fn file_tensor(bytes: burn::tensor::Bytes, device: &Device) -> Tensor<1, Int> {
    let len = bytes.len();
    Tensor::from_data(TensorData::from_bytes(bytes, [len], DType::U8), (device, DType::U8))
}

impl BlockMatrix {
    /// The matrix at `start..start + n · row_bytes(k)` of `file` (a view).
    pub fn view(file: &Tensor<1, Int>, start: usize, format: BlockFormat, n: usize, k: usize) -> Self {
        let len = n * format.row_bytes(k);
        BlockMatrix { blocks: file.clone().slice(start..start + len), format, n, k }
    }

    /// A matrix from its bytes (tests, and files read piecewise).
    pub fn from_bytes(bytes: Vec<u8>, format: BlockFormat, n: usize, k: usize, device: &Device) -> Self {
        assert_eq!(bytes.len(), n * format.row_bytes(k), "{n} rows of {k} {} values", format.name());
        let blocks = file_tensor(burn::tensor::Bytes::from_elems(bytes), device);
        BlockMatrix { blocks, format, n, k }
    }

    /// Bytes the matrix holds.
    pub fn bytes(&self) -> usize {
        self.n * self.format.row_bytes(self.k)
    }

    /// `x · Wᵀ` over the last dimension.
    ///
    /// # Shapes
    /// - x: `[b, t, k]` → `[b, t, n]`
    pub fn forward(&self, x: Tensor<3>) -> Tensor<3> {
        let [b, t, k] = x.dims();
        debug_assert_eq!(k, self.k);
        let x = x.reshape([b * t, k]);
        let y = <Dispatch as BlockOps>::block_matmul(x.into_dispatch(), self.blocks.clone().into_dispatch(), self.format, self.n, self.k);
        Tensor::<2>::from_dispatch(y).reshape([b, t, self.n])
    }

    /// Rows `ids`, dequantised.
    ///
    /// # Shapes
    /// - ids: `[b, t]` → `[b, t, k]`
    pub fn rows(&self, ids: Tensor<2, Int>) -> Tensor<3> {
        let [b, t] = ids.dims();
        let ids = ids.reshape([b * t]);
        let y = <Dispatch as BlockOps>::block_rows(self.blocks.clone().into_dispatch(), ids.into_dispatch(), self.format, self.n, self.k);
        Tensor::<2>::from_dispatch(y).reshape([b, t, self.k])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::BackendKind;
    use crate::gguf::quant::dequantize;
    use crate::rng::Rng;

    /// Random blocks of `format`: scales in [2^-8, 2^-2], every integer
    /// pattern equally likely (so Q8_0's -128 and Q4's 15 both occur);
    /// F16 and BF16 values of a real model's size.
    fn random_blocks(format: BlockFormat, n: usize, k: usize, rng: &mut Rng) -> Vec<u8> {
        use crate::quant::kernels::test_support::{Style, random_weights};
        if format.is_float() {
            return random_weights(rng, format, n, k, Style::Typical);
        }
        let mut out = Vec::with_capacity(n * format.row_bytes(k));
        let scale = |rng: &mut Rng| half::f16::from_f64(2f64.powf(-8.0 + 6.0 * rng.next_f64())).to_le_bytes();
        if format.is_k() {
            // Random bytes, then d (and dmin) set to scales of the same range:
            // d over 32, since 6-bit scales of up to 63 times 2^-2 would dwarf the rest.
            let (d_at, dmin_at) = crate::quant::kernels::test_support::f16_fields(format);
            for _ in 0..n * k / format.block_values() {
                let start = out.len();
                out.extend((0..format.block_bytes()).map(|_| rng.next_u64() as u8));
                let d = half::f16::from_le_bytes(scale(rng)).to_f64() / 32.0;
                out[start + d_at..][..2].copy_from_slice(&half::f16::from_f64(d).to_le_bytes());
                if let Some(at) = dmin_at {
                    out[start + at..][..2].copy_from_slice(&half::f16::from_f64(0.05 * rng.next_f64()).to_le_bytes());
                }
            }
            return out;
        }
        for _ in 0..n * k / format.block_values() {
            let header = match format {
                BlockFormat::Q4_0 | BlockFormat::Q5_0 | BlockFormat::Q8_0 | BlockFormat::IQ4NL => 2,
                BlockFormat::Q4_1 | BlockFormat::Q5_1 => 4,
                _ => unreachable!("handled above"),
            };
            out.extend_from_slice(&scale(rng));
            if header == 4 {
                let m = half::f16::from_f64(rng.next_f64() - 0.5).to_le_bytes();
                out.extend_from_slice(&m);
            }
            for _ in header..format.block_bytes() {
                out.push(rng.next_u64() as u8);
            }
        }
        out
    }

    /// The matrix's product on a backend against the plain f32 product of
    /// its dequantised rows. The kernels round each 32-value block of x to
    /// 8 bits (error at most half a step, amax/254, per value), so output r
    /// may differ by Σ_j |W[r][j]| · step_j / 2, plus f32 rounding.
    fn check(format: BlockFormat, backend: BackendKind) {
        let (n, k, m) = (24, if format.is_k() { 512 } else { 96 }, 3);
        let mut rng = Rng::new(7);
        let device = backend.device().unwrap();
        let bytes = random_blocks(format, n, k, &mut rng);
        let w = dequantize(super::super::ggml_type(format), &bytes, n * k).unwrap();
        let x: Vec<f32> = (0..m * k).map(|_| rng.next_normal() as f32).collect();
        let matrix = BlockMatrix::from_bytes(bytes, format, n, k, &device);
        let xt = Tensor::<3>::from_data(TensorData::new(x.clone(), [1, m, k]), &device);
        let y = matrix.forward(xt).into_data().try_to_vec::<f32>().unwrap();
        for i in 0..m {
            let row = &x[i * k..(i + 1) * k];
            let steps: Vec<f32> = row.chunks(32).map(|b| b.iter().fold(0f32, |a, v| a.max(v.abs())) / 127.0).collect();
            for r in 0..n {
                let wr = &w[r * k..(r + 1) * k];
                let exact: f64 = wr.iter().zip(row).map(|(a, b)| *a as f64 * *b as f64).sum();
                let bound: f64 = wr.iter().enumerate().map(|(j, a)| a.abs() as f64 * steps[j / 32] as f64 / 2.0).sum::<f64>()
                    + 1e-5 * wr.iter().zip(row).map(|(a, b)| (a * b).abs() as f64).sum::<f64>();
                let got = y[i * n + r] as f64;
                assert!((got - exact).abs() <= bound, "{} on {backend:?}: y[{i}][{r}] = {got}, exact {exact}, bound {bound}", format.name());
            }
        }
        // The lookup dequantises rows exactly.
        let ids = Tensor::<2, Int>::from_data(TensorData::new(vec![5i64, 0, 23], [1, 3]), &device);
        let rows = matrix.rows(ids).into_data().try_to_vec::<f32>().unwrap();
        for (i, id) in [5usize, 0, 23].into_iter().enumerate() {
            assert_eq!(&rows[i * k..(i + 1) * k], &w[id * k..(id + 1) * k]);
        }
    }

    #[test]
    fn block_products_match_the_dequantised_matrix_on_every_backend() {
        for backend in BackendKind::available() {
            for format in BlockFormat::ALL {
                check(format, backend);
            }
        }
    }

    #[test]
    fn a_view_reads_its_own_rows_of_a_shared_file() {
        let device = crate::backend::BackendKind::Flex.device().unwrap();
        let mut rng = Rng::new(3);
        let a = random_blocks(BlockFormat::Q8_0, 2, 32, &mut rng);
        let b = random_blocks(BlockFormat::Q4_1, 3, 64, &mut rng);
        let file = file_tensor(burn::tensor::Bytes::from_bytes_vec([a.clone(), b.clone()].concat()), &device);
        let view = BlockMatrix::view(&file, a.len(), BlockFormat::Q4_1, 3, 64);
        let ids = Tensor::<2, Int>::from_data(TensorData::new(vec![0i64, 1, 2], [1, 3]), &device);
        let rows = view.rows(ids).into_data().try_to_vec::<f32>().unwrap();
        assert_eq!(rows, dequantize(crate::gguf::quant::GgmlType::Q4_1, &b, 192).unwrap());
    }
}
