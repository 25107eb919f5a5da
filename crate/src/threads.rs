//! How the engine's own kernels share work between threads.
//!
//! A product is split into bands of output columns (rows of the weight
//! matrix): every output value is computed by one thread, by the same code
//! and in the same order as on one thread, so the results are bit-identical
//! whatever the thread count; the band edges never change a value.
//!
//! Natively (the `threads` feature, part of the CLI) the bands run on rayon's
//! pool in force: its global pool (`RAYON_NUM_THREADS`, all cores by default)
//! or one a caller `install`s. In a wasm build with shared memory (the
//! `atomics` target feature) they run on the page's pool of helper workers
//! (`wasm_pool`), as many as `wasm_pool::set_threads` allows. Otherwise they run
//! on the calling thread.

use std::cell::UnsafeCell;
use std::ops::Range;

#[cfg(all(target_arch = "wasm32", target_feature = "atomics"))]
pub mod wasm_pool;

/// The number of threads a split uses now.
pub fn count() -> usize {
    #[cfg(feature = "threads")]
    return rayon::current_num_threads();
    #[cfg(all(not(feature = "threads"), target_arch = "wasm32", target_feature = "atomics"))]
    return wasm_pool::threads();
    #[allow(unreachable_code)]
    1
}

/// Below this much work (weight bytes times input rows) a product stays on
/// the calling thread. Waking rayon's sleeping threads costs tens of
/// microseconds, as much as a decode step's product of a few hundred KB (at
/// a 64 KB threshold SmolLM2 decoded at 63 tok/s on 2 threads against 86 on
/// one, in the same `pkg-scripts/bench` run): natively a decode step splits
/// its LM head and a prompt's rows split every product. The wasm pool's
/// helpers spin between a step's products, so a hand-off costs far less and
/// a decode step splits every product of SmolLM2's layers (tried in
/// Chromium on 2 cores, 64 greedy tokens: 32 KB to 512 KB alike within the
/// noise, 1 MB and 2 MB lost most of the gain).
#[cfg(not(all(target_arch = "wasm32", target_feature = "atomics")))]
pub const MIN_SPLIT_WORK: usize = 2 * 1024 * 1024;
#[cfg(all(target_arch = "wasm32", target_feature = "atomics"))]
pub const MIN_SPLIT_WORK: usize = 128 * 1024;

/// Below this many output columns a band is not worth a thread's hand-off.
const MIN_BAND_COLUMNS: usize = 32;

/// Fill `out` (`rows` rows of `n` values, row-major) by bands of columns:
/// `band(columns, dst)` writes the `rows × columns.len()` values of those
/// columns, row-major, into `dst`. Splits only when `work` (weight bytes
/// times input rows) reaches `MIN_SPLIT_WORK`, so small products stay on the
/// calling thread.
pub fn split_columns(out: &mut [f32], rows: usize, n: usize, work: usize, band: impl Fn(Range<usize>, &mut [f32]) + Sync) {
    debug_assert_eq!(out.len(), rows * n);
    let bands = bands_for(n, work, MIN_SPLIT_WORK);
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

fn run_split(out: &mut [f32], rows: usize, n: usize, per: usize, band: &(impl Fn(Range<usize>, &mut [f32]) + Sync)) {
    let starts: Vec<usize> = (0..n).step_by(per).collect();
    if rows == 1 {
        // One row: each band's columns are a contiguous piece of `out`.
        let pieces = Pieces::new(out.chunks_mut(per).collect());
        return for_each_task(starts.len(), &|i| {
            let dst = pieces.take(i);
            band(starts[i]..starts[i] + dst.len(), dst)
        });
    }
    // Several rows: a band's columns are strided in `out`, so each band
    // writes its own block (rows × its columns) and the blocks are copied
    // into place after.
    let mut blocks = vec![0f32; rows * n];
    let mut rest = blocks.as_mut_slice();
    let mut parts = Vec::with_capacity(starts.len());
    for &c0 in &starts {
        let (block, tail) = rest.split_at_mut(rows * (per.min(n - c0)));
        parts.push(block);
        rest = tail;
    }
    let pieces = Pieces::new(parts);
    for_each_task(starts.len(), &|i| {
        let dst = pieces.take(i);
        band(starts[i]..starts[i] + dst.len() / rows, dst)
    });
    let mut block_start = 0;
    for &c0 in &starts {
        let width = per.min(n - c0);
        let block = &blocks[block_start..block_start + rows * width];
        for (r, src) in block.chunks_exact(width).enumerate() {
            out[r * n + c0..r * n + c0 + width].copy_from_slice(src);
        }
        block_start += rows * width;
    }
}

/// Disjoint pieces of one buffer, each handed to the one task of its index.
struct Pieces<'a>(Vec<UnsafeCell<Option<&'a mut [f32]>>>);

// SAFETY: piece `i` is only ever taken by task `i`, which `for_each_task`
// runs exactly once, so no two threads touch the same piece.
unsafe impl Sync for Pieces<'_> {}

impl<'a> Pieces<'a> {
    fn new(pieces: Vec<&'a mut [f32]>) -> Self {
        Pieces(pieces.into_iter().map(|p| UnsafeCell::new(Some(p))).collect())
    }

    /// Task `i`'s piece (once).
    #[allow(clippy::mut_from_ref)]
    fn take(&self, i: usize) -> &'a mut [f32] {
        // SAFETY: see the Sync impl: index i belongs to task i alone.
        unsafe { (*self.0[i].get()).take().expect("each piece is taken once") }
    }
}

/// Run `task(i)` once for every `i` in `0..tasks`, across the threads in force.
fn for_each_task(tasks: usize, task: &(dyn Fn(usize) + Sync)) {
    #[cfg(feature = "threads")]
    {
        use rayon::prelude::*;
        return (0..tasks).into_par_iter().with_max_len(1).for_each(task);
    }
    #[cfg(all(not(feature = "threads"), target_arch = "wasm32", target_feature = "atomics"))]
    return wasm_pool::run(tasks, task);
    #[allow(unreachable_code)]
    (0..tasks).for_each(task)
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
                pool.install(|| split_columns(&mut out, rows, n, usize::MAX, fill(rows)));
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
