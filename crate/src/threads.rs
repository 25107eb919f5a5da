//! How the engine's own kernels share work between threads.
//!
//! A product is split into bands of output columns (rows of the weight
//! matrix): every output value is computed by one thread, by the same code
//! and in the same order as on one thread, so the results are bit-identical
//! whatever the thread count; the band edges never change a value.
//!
//! With the `threads` feature (the native CLI) the bands run on rayon's pool
//! in force: its global pool (`RAYON_NUM_THREADS`, all cores by default) or
//! one a caller `install`s. Without it (the browser build) they run on the
//! calling thread.

use std::ops::Range;

/// The number of threads a split uses now.
pub fn count() -> usize {
    #[cfg(feature = "threads")]
    return rayon::current_num_threads();
    #[cfg(not(feature = "threads"))]
    1
}

/// Below this many output columns a band is not worth a thread's hand-off.
const MIN_BAND_COLUMNS: usize = 32;

/// Fill `out` (`rows` rows of `n` values, row-major) by bands of columns:
/// `band(columns, dst)` writes the `rows × columns.len()` values of those
/// columns, row-major, into `dst`. Splits only when `work` (a measure of the
/// whole product's cost, e.g. weights read) reaches `min_work`, so small
/// products stay on the calling thread.
pub fn split_columns(out: &mut [f32], rows: usize, n: usize, work: usize, min_work: usize, band: impl Fn(Range<usize>, &mut [f32]) + Sync) {
    debug_assert_eq!(out.len(), rows * n);
    let bands = bands_for(n, work, min_work);
    if bands <= 1 {
        return band(0..n, out);
    }
    run_split(out, rows, n, n.div_ceil(bands).next_multiple_of(BAND_ALIGN), &band);
}

/// Bands start at multiples of this many columns: kernels that take weight
/// rows in groups (four at a time, say) then group every row as on one
/// thread, and take the same path for each.
const BAND_ALIGN: usize = 16;

/// How many bands a product of `n` columns is split into now.
fn bands_for(n: usize, work: usize, min_work: usize) -> usize {
    let threads = count();
    if threads <= 1 || work < min_work {
        return 1;
    }
    threads.min(n / MIN_BAND_COLUMNS).max(1)
}

#[cfg(feature = "threads")]
fn run_split(out: &mut [f32], rows: usize, n: usize, per: usize, band: &(impl Fn(Range<usize>, &mut [f32]) + Sync)) {
    use rayon::prelude::*;
    if rows == 1 {
        // One row: each band's columns are a contiguous piece of `out`.
        out.par_chunks_mut(per).enumerate().for_each(|(i, dst)| band(i * per..i * per + dst.len(), dst));
        return;
    }
    // Several rows: a band's columns are strided in `out`, so each band
    // writes its own block and the blocks are copied into place after.
    let starts: Vec<usize> = (0..n).step_by(per).collect();
    let blocks: Vec<Vec<f32>> = starts
        .par_iter()
        .map(|&c0| {
            let cols = c0..(c0 + per).min(n);
            let mut block = vec![0f32; rows * cols.len()];
            band(cols, &mut block);
            block
        })
        .collect();
    for (&c0, block) in starts.iter().zip(&blocks) {
        let width = block.len() / rows;
        for (r, src) in block.chunks_exact(width).enumerate() {
            out[r * n + c0..r * n + c0 + width].copy_from_slice(src);
        }
    }
}

#[cfg(not(feature = "threads"))]
fn run_split(out: &mut [f32], _rows: usize, n: usize, _per: usize, band: &(impl Fn(Range<usize>, &mut [f32]) + Sync)) {
    band(0..n, out)
}

#[cfg(all(test, feature = "threads"))]
mod tests {
    use super::*;

    /// Each value from its row and column alone, as a kernel computes it.
    fn fill(rows: usize) -> impl Fn(Range<usize>, &mut [f32]) + Sync {
        move |cols: Range<usize>, dst: &mut [f32]| {
            let w = cols.len();
            for r in 0..rows {
                for (j, c) in cols.clone().enumerate() {
                    dst[r * w + j] = (r * 1000 + c) as f32;
                }
            }
        }
    }

    #[test]
    fn every_value_lands_in_its_place_at_any_thread_count() {
        for threads in [1, 2, 3, 4] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            for (rows, n) in [(1, 1000), (1, 33), (5, 1000), (3, 97), (64, 130)] {
                let mut out = vec![f32::NAN; rows * n];
                pool.install(|| split_columns(&mut out, rows, n, usize::MAX, 0, fill(rows)));
                assert!(out.iter().all(|v| !v.is_nan()), "{threads} threads, {rows}×{n}: every value written");
                for r in 0..rows {
                    for c in 0..n {
                        assert_eq!(out[r * n + c], (r * 1000 + c) as f32, "{threads} threads, {rows}×{n}: [{r}][{c}]");
                    }
                }
            }
        }
    }

    #[test]
    fn small_products_stay_on_one_band() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        pool.install(|| {
            assert_eq!(bands_for(1000, 10, 100), 1, "under min_work");
            assert_eq!(bands_for(40, 1000, 100), 1, "too few columns for two bands");
            assert_eq!(bands_for(1000, 1000, 100), 4);
        });
    }
}
