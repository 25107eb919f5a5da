//! Fused causal attention over the KV cache's pages, read where they lie
//! (f16 widened on the fly, f32 as they are): for each query row, the
//! scores over the keys it may see, their softmax in f32 and the weighted
//! sum of the values, without materialising K or V as tensors.
//!
//! ```text
//! for each KV head g, for each tile of P query positions:
//!   rows  = the group's query heads × the tile's positions (R = group·P), pre-scaled by 1/√hd
//!   for each page:  widen K rows → scores[R][n] = rows · Kᵀ        (dense::xwt)
//!   mask the tile's own later keys (−inf); per row: e^(s − max), Σ   (exp)
//!   for each page:  widen V rows → acc[R][hd] += e · V              (dense::xw)
//!   out = acc / Σ
//! ```
//! Grouped-query heads share their KV head's pages: a key row is widened
//! once per tile and used by every row of it (9 of SmolLM2's query heads
//! read 3 KV heads), and nothing is copied per head. Decode is the tile of
//! one position; a prefill chunk goes P positions at a time, causal from
//! `start` (the chunk's first position).
//!
//! The products are `dense`'s (their simd128 and AVX2 paths); the widening
//! is `super::widen`'s, the exponentials `crate::f32_exp`'s. The sums run in other orders
//! than a plain reference's, so they differ by f32 rounding only (tests).

#[cfg(test)]
mod tests;

use half::f16;

use super::dense;
use super::widen::f16_to_f32;
use crate::kv_cache::{KvElem, LayerView, PAGE, Page, PagesRef};

/// Rows (query heads × positions) a tile aims at: each widened page is
/// used this many times (a prefill chunk of SmolLM2 goes 16 positions at a
/// time), and the scores of a tile at its 2,048 positions stay under 400 KB.
/// (At 16 rows, 5 positions a tile, the pages were widened 26 times a
/// 128-token chunk: a 960-token prefill ran at 259 tokens/s natively; at
/// 48, 262-264, against 274-287 for burn's matrix products before.)
const TILE_ROWS: usize = 48;

/// The queries of one chunk and where the chunk sits.
#[derive(Debug, Clone, Copy)]
pub struct Queries<'a> {
    /// `[heads][t][head_dim]` f32.
    pub q: &'a [f32],
    pub heads: usize,
    pub t: usize,
    /// Absolute position of the first query: query i sees keys 0..=start + i.
    pub start: usize,
    /// A sliding window: query i sees only the last `window` of those keys
    /// (start + i + 1 − window ..= start + i); none: all of them.
    pub window: Option<usize>,
}

/// `out[i][h] = softmax(q[h][i] · Kᵀ / √hd over keys 0..=start+i) · V`, with
/// K and V the pages of `kv` (which must hold positions 0..start + t); with
/// a window, over its last `window` keys only (pages wholly before every
/// row's window are not read).
///
/// # Shapes
/// - q: `[heads][t][head_dim]`; out: `[t][heads][head_dim]` (overwritten)
///
/// # Panics
/// If a length does not match, or `heads` is not a multiple of the KV heads.
pub fn paged_attention(q: Queries, kv: LayerView, out: &mut [f32]) {
    let (kvh, hd) = (kv.kv_heads, kv.head_dim);
    assert!(kvh > 0 && q.heads % kvh == 0, "{} query heads over {kvh} KV heads", q.heads);
    assert_eq!(q.q.len(), q.heads * q.t * hd, "queries of [{}, {}, {hd}]", q.heads, q.t);
    assert_eq!(out.len(), q.q.len(), "output of [{}, {}, {hd}]", q.t, q.heads);
    match kv.pages {
        PagesRef::F16(pages) => run(pages, q, kvh, hd, out),
        PagesRef::F32(pages) => run(pages, q, kvh, hd, out),
    }
}

/// What the kernel reads a page's rows as: f32 runs.
trait Widen: KvElem {
    /// `finite`: the page never held inf or NaN (`Page::finite`).
    fn widen<'a>(src: &'a [Self], buf: &'a mut Vec<f32>, finite: bool) -> &'a [f32];
}

impl Widen for f32 {
    fn widen<'a>(src: &'a [f32], _: &'a mut Vec<f32>, _: bool) -> &'a [f32] {
        src
    }
}

impl Widen for f16 {
    fn widen<'a>(src: &'a [f16], buf: &'a mut Vec<f32>, finite: bool) -> &'a [f32] {
        buf.resize(src.len(), 0.0);
        f16_to_f32(src, buf, finite);
        buf
    }
}

/// Buffers reused by every tile of a call.
#[derive(Default)]
struct Scratch {
    rows: Vec<f32>,
    scores: Vec<f32>,
    wide: Vec<f32>,
    part: Vec<f32>,
    acc: Vec<f32>,
    sums: Vec<f32>,
}

fn run<E: Widen>(pages: &[Page<E>], q: Queries, kvh: usize, hd: usize, out: &mut [f32]) {
    let held: usize = pages.iter().map(|p| p.rows).sum();
    assert!(held >= q.start + q.t, "pages hold {held} positions, the chunk needs {}", q.start + q.t);
    let group = q.heads / kvh;
    let per_tile = (TILE_ROWS / group).max(1);
    let mut s = Scratch::default();
    for g in 0..kvh {
        for first in (0..q.t).step_by(per_tile) {
            tile(pages, q, g, group, hd, first, per_tile.min(q.t - first), &mut s, out);
        }
    }
}

/// Positions `first..first + n` of the chunk for KV head `g`'s group.
/// Row r of the tile is position first + r / group, query head g·group + r % group.
#[allow(clippy::too_many_arguments)]
fn tile<E: Widen>(pages: &[Page<E>], q: Queries, g: usize, group: usize, hd: usize, first: usize, n: usize, s: &mut Scratch, out: &mut [f32]) {
    let r_count = group * n;
    let keys = q.start + first + n; // the last row's view; row r sees start + first + r/group + 1
    // The first key row r sees (0 without a window); the tile's first row sees from the earliest.
    let lo = |r: usize| q.window.map_or(0, |w| (q.start + first + r / group + 1).saturating_sub(w));
    let first_page = lo(0) / PAGE;
    let scale = 1.0 / (hd as f32).sqrt();
    s.rows.clear();
    for r in 0..r_count {
        let (i, head) = (first + r / group, g * group + r % group);
        s.rows.extend(q.q[(head * q.t + i) * hd..][..hd].iter().map(|&x| x * scale));
    }
    // Page p's scores: a block [R][n_p] at R · (p − first_page) · PAGE (every earlier page is full).
    let visible = |p: usize| PAGE.min(keys - p * PAGE);
    let at = |p: usize| r_count * (p - first_page) * PAGE;
    let page_count = keys.div_ceil(PAGE);
    s.scores.resize(r_count * (keys - first_page * PAGE), 0.0);
    for (p, page) in pages.iter().enumerate().take(page_count).skip(first_page) {
        // A sliding-window layer's cache recycles the pages before its ring
        // (`kv_cache::ring`), which keeps every page a window reads from.
        assert!(page.is_held(), "page {p} was recycled, yet the window of position {} reads it", q.start + first);
        let nv = visible(p);
        let k = E::widen(&page.k[g * page.rows * hd..][..nv * hd], &mut s.wide, page.finite);
        dense::xwt(k, nv, hd, &s.rows, r_count, &mut s.scores[at(p)..][..r_count * nv]);
    }
    // The tile's own later positions are hidden from its earlier rows, and
    // keys before a row's window from it.
    for r in 0..r_count {
        let hidden = (first_page * PAGE..lo(r)).chain(q.start + first + r / group + 1..keys);
        for j in hidden {
            let p = j / PAGE;
            s.scores[at(p) + r * visible(p) + j % PAGE] = f32::NEG_INFINITY;
        }
    }
    s.sums.clear();
    for r in 0..r_count {
        // Row r's scores in page p.
        let segment = |p: usize| {
            let from = at(p) + r * visible(p);
            from..from + visible(p)
        };
        let mut max = f32::NEG_INFINITY;
        for p in first_page..page_count {
            for &x in &s.scores[segment(p)] {
                if x > max {
                    max = x;
                }
            }
        }
        let mut sum = 0.0;
        for p in first_page..page_count {
            sum += crate::f32_exp::exp_shifted_sum(&mut s.scores[segment(p)], max);
        }
        s.sums.push(sum);
    }
    s.acc.clear();
    s.acc.resize(r_count * hd, 0.0);
    s.part.resize(r_count * hd, 0.0);
    for (p, page) in pages.iter().enumerate().take(page_count).skip(first_page) {
        let nv = visible(p);
        let v = E::widen(&page.v[g * page.rows * hd..][..nv * hd], &mut s.wide, page.finite);
        dense::xw(v, nv, hd, &s.scores[at(p)..][..r_count * nv], r_count, &mut s.part);
        for (a, &x) in s.acc.iter_mut().zip(&s.part) {
            *a += x;
        }
    }
    for r in 0..r_count {
        let (i, head) = (first + r / group, g * group + r % group);
        let inv = 1.0 / s.sums[r];
        for (o, &a) in out[(i * q.heads + head) * hd..][..hd].iter_mut().zip(&s.acc[r * hd..][..hd]) {
            *o = a * inv;
        }
    }
}
