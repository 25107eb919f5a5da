//! How the engine's own kernels share work between threads.
//!
//! A product is split into bands of output columns (rows of the weight
//! matrix): every output value is computed by one thread, by the same code
//! and in the same order as on one thread, so the results are bit-identical
//! whatever the thread count; the band edges never change a value.
//!
//! A step's passes over the vocabulary (the softmax, the entropy curve, the
//! top rows) go by `map_chunks`: chunks fixed by the vocabulary's size
//! alone, whose partial sums the caller adds in chunk order, so those too
//! are the same bits at any thread count.
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
    if rows == 1 {
        // One row: each band's columns are a contiguous piece of `out`.
        map_chunks_mut(out, per, band);
        return;
    }
    let starts: Vec<usize> = (0..n).step_by(per).collect();
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
struct Pieces<'a, V>(Vec<UnsafeCell<Option<&'a mut [V]>>>);

// SAFETY: piece `i` is only ever taken by task `i`, which `for_each_task`
// runs exactly once, so no two threads touch the same piece.
unsafe impl<V: Send> Sync for Pieces<'_, V> {}

impl<'a, V> Pieces<'a, V> {
    fn new(pieces: Vec<&'a mut [V]>) -> Self {
        Pieces(pieces.into_iter().map(|p| UnsafeCell::new(Some(p))).collect())
    }

    /// Task `i`'s piece (once).
    #[allow(clippy::mut_from_ref)]
    fn take(&self, i: usize) -> &'a mut [V] {
        // SAFETY: see the Sync impl: index i belongs to task i alone.
        unsafe { (*self.0[i].get()).take().expect("each piece is taken once") }
    }
}

/// Values per chunk of a pass over a vocabulary (`map_chunks`): fixed, so
/// that each chunk's partial sums, added in chunk order, are the same at
/// any thread count. A vocabulary up to this size (SmolLM2's 49,152) is
/// one chunk, one loop on the calling thread; Gemma 3's 262,144 is four.
pub const VOCAB_CHUNK: usize = 65_536;

/// `f(range)` for the ranges `0..chunk`, `chunk..2·chunk`, … covering
/// `0..n`, across the threads in force; the results in range order. The
/// ranges depend on `n` and `chunk` alone, never on the thread count.
pub fn map_chunks<T: Send>(n: usize, chunk: usize, f: impl Fn(Range<usize>) -> T + Sync) -> Vec<T> {
    let chunk = chunk.max(1);
    let tasks = n.div_ceil(chunk);
    if tasks <= 1 {
        return vec![f(0..n)];
    }
    let slots = Slots::new(tasks);
    for_each_task(tasks, &|i| slots.put(i, f(i * chunk..((i + 1) * chunk).min(n))));
    slots.into_results()
}

/// `map_chunks` over the chunks of `out`: `f(range, piece)` gets
/// `out[range]` to write.
pub fn map_chunks_mut<V: Send, T: Send>(out: &mut [V], chunk: usize, f: impl Fn(Range<usize>, &mut [V]) -> T + Sync) -> Vec<T> {
    let (chunk, n) = (chunk.max(1), out.len());
    if n <= chunk {
        return vec![f(0..n, out)];
    }
    let pieces = Pieces::new(out.chunks_mut(chunk).collect());
    map_chunks(n, chunk, |range| f(range.clone(), pieces.take(range.start / chunk)))
}

/// One result per task, each written by its own task.
struct Slots<T>(Vec<UnsafeCell<Option<T>>>);

// SAFETY: slot `i` is only written by task `i`, which runs exactly once,
// and read after every task has finished.
unsafe impl<T: Send> Sync for Slots<T> {}

impl<T> Slots<T> {
    fn new(n: usize) -> Self {
        Slots((0..n).map(|_| UnsafeCell::new(None)).collect())
    }

    fn put(&self, i: usize, value: T) {
        // SAFETY: see the Sync impl: slot i belongs to task i alone.
        unsafe { *self.0[i].get() = Some(value) };
    }

    fn into_results(self) -> Vec<T> {
        self.0.into_iter().map(|c| c.into_inner().expect("every task ran")).collect()
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
            for (rows, n) in [(1, 1000), (1, 33), (5, 1000), (3, 97), (64, 130)] {
                let mut out = vec![f32::NAN; rows * n];
                crate::test_util::on_threads(threads, || split_columns(&mut out, rows, n, usize::MAX, fill(rows)));
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
    fn chunks_cover_the_range_in_order_at_any_thread_count() {
        for threads in [1, 2, 4] {
            crate::test_util::on_threads(threads, || {
                assert_eq!(map_chunks(10, 4, |r| r), vec![0..4, 4..8, 8..10]);
                assert_eq!(map_chunks(3, 4, |r| r), vec![0..3]);
                assert_eq!(map_chunks(0, 4, |r| r), vec![0..0]);
                let mut out = vec![0u32; 1001];
                let lens = map_chunks_mut(&mut out, 100, |r, piece| {
                    for (v, i) in piece.iter_mut().zip(r.clone()) {
                        *v = i as u32;
                    }
                    piece.len()
                });
                assert_eq!(lens.len(), 11);
                assert!(lens[..10].iter().all(|&l| l == 100) && lens[10] == 1);
                assert!(out.iter().enumerate().all(|(i, &v)| v == i as u32), "{threads} threads: every value from its own index");
            });
        }
    }

    #[test]
    fn small_products_stay_on_one_band() {
        crate::test_util::on_threads(4, || {
            assert_eq!(bands_for(1000, 10, 100), 1, "under min_work");
            assert_eq!(bands_for(40, 1000, 100), 1, "too few columns for two bands");
            assert_eq!(bands_for(1000, 1000, 100), 4);
        });
    }
}
