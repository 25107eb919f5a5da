//! Products with F16 and BF16 matrices kept at 16 bits: a few weight rows
//! at a time are widened to f32 (`widen`, exactly) into a buffer that stays
//! in L1, and multiplied by every input row there in f32 (`dense::xwt`):
//!
//! ```text
//! for each chunk of C weight rows:  widen → buf [C][k] f32
//!                                   out[r][chunk] = x[r] · bufᵀ   (every input row r)
//! ```
//! So the product is the f32 product of the widened weights, within f32
//! summation-order rounding (no 8-bit rounding of the activations, as the
//! quantised formats have), and the weights are read from memory once per
//! product however many input rows there are. Each output is one `xwt` dot
//! product whose order depends only on its weight row's place in the chunk,
//! so an input row gets the same numbers alone as in a prompt.

use super::widen::{self, Half};
use super::{BlockFormat, KernelPath, Product, dense};

/// f32 values the widened chunk aims at (16 KB: half of the smallest L1
/// data cache of the machines this runs on, beside the input rows).
const CHUNK_VALUES: usize = 4096;

/// `dense::xwt` (whose simd128 path takes four weight rows at a time) works
/// on whole groups of this many rows where the chunk allows.
const GROUP: usize = 4;

pub(super) fn matmul(path: KernelPath, p: &Product, out: &mut [f32]) {
    let Product { format, weights, n, k, x, rows_x } = *p;
    let kind = match format {
        BlockFormat::F16 => Half::F16,
        BlockFormat::BF16 => Half::BF16,
        _ => unreachable!("{} rows are not 16-bit floats", format.name()),
    };
    let chunk = (CHUNK_VALUES / k / GROUP * GROUP).max(GROUP).min(n);
    let row_bytes = format.row_bytes(k);
    let mut buf = vec![0f32; chunk * k];
    let mut part = vec![0f32; rows_x * chunk];
    for (c, rows) in weights.chunks(chunk * row_bytes).enumerate() {
        let m = rows.len() / row_bytes;
        let (w, y) = (&mut buf[..m * k], &mut part[..rows_x * m]);
        match path {
            KernelPath::Fastest => {
                widen::widen(kind, rows, w);
                dense::xwt_band(w, m, k, x, rows_x, y); // already within a band of matmul_on's
            }
            KernelPath::Scalar => {
                widen::widen_scalar(kind, rows, w);
                dense::xwt_portable(w, m, k, x, rows_x, y);
            }
        }
        for r in 0..rows_x {
            out[r * n + c * chunk..][..m].copy_from_slice(&y[r * m..][..m]);
        }
    }
}
