//! One layer's keys and values in fixed pages of positions, allocated as
//! the text needs them and never moved: growing is pushing a page, so no
//! position is ever copied and no buffer freed (wasm memory never shrinks,
//! and the doubling buffers this replaced left their smaller copies behind
//! as unusable holes: 20 MB and more of SmolLM2's tab at 1,024 tokens).
//!
//! ```text
//! page i holds positions i·PAGE .. i·PAGE + rows:
//!   k: [kv_heads][rows][head_dim]   v likewise
//! ```
//! A head's positions inside a page are consecutive rows of `head_dim`, so
//! the attention kernel reads each head's keys as one run per page.
//!
//! A sliding-window layer's list stays indexed by page (position / PAGE),
//! but a page no query will read again gives its buffers to the next page
//! written and stays as an empty placeholder (`reserve_ring`): the layer
//! holds a ring of pages however long the text (`super::ring`).

use std::ops::Range;

use half::f16;

/// Positions per page: memory is what the text needs rounded up to this
/// (for SmolLM2 at f16, 128 positions are 2.9 MB over all 30 layers).
pub const PAGE: usize = 128;

/// A number the cache can hold, rounded from the f32 the model computed.
pub trait KvElem: Copy + Default + Send + Sync + std::fmt::Debug + 'static {
    fn from_f32(x: f32) -> Self;
    fn is_finite(self) -> bool;
}

impl KvElem for f32 {
    fn from_f32(x: f32) -> Self {
        x
    }
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
}

impl KvElem for f16 {
    /// Round to nearest, ties to even (`half`'s conversion, as llama.cpp's
    /// `ggml_fp32_to_fp16`); beyond 65504 it is ±inf, as there.
    fn from_f32(x: f32) -> Self {
        f16::from_f32(x)
    }
    fn is_finite(self) -> bool {
        f16::is_finite(self)
    }
}

#[derive(Debug, Clone)]
pub struct Page<E> {
    /// Positions this page has room for (PAGE, or fewer for the last page of
    /// a context that is not a multiple of PAGE).
    pub rows: usize,
    pub k: Box<[E]>,
    pub v: Box<[E]>,
    /// No inf or NaN was ever written here (an f32 beyond 65504 is inf in
    /// f16): the browser's widening may then skip its inf/NaN fix-up.
    pub finite: bool,
}

impl<E: KvElem> Page<E> {
    fn new(rows: usize, kv_heads: usize, head_dim: usize) -> Self {
        let n = kv_heads * rows * head_dim;
        Page { rows, k: vec![E::default(); n].into_boxed_slice(), v: vec![E::default(); n].into_boxed_slice(), finite: true }
    }

    /// A page whose positions were recycled: it keeps its place (and its
    /// `rows`) in the list, but no buffers, so a read of it fails loudly.
    fn placeholder(rows: usize) -> Self {
        Page { rows, k: Box::default(), v: Box::default(), finite: true }
    }

    /// Whether the page has buffers (a placeholder has none).
    pub fn is_held(&self) -> bool {
        !self.k.is_empty()
    }
}

/// A layer's pages, in one precision.
#[derive(Debug, Clone)]
pub enum LayerPages {
    F16(Vec<Page<f16>>),
    F32(Vec<Page<f32>>),
}

/// Where a layer's pages are read: what the attention kernel takes.
#[derive(Debug, Clone, Copy)]
pub enum PagesRef<'a> {
    F16(&'a [Page<f16>]),
    F32(&'a [Page<f32>]),
}

impl LayerPages {
    /// Pages for positions 0..end, pushing what is missing (never past `capacity`).
    pub fn reserve(&mut self, end: usize, capacity: usize, kv_heads: usize, head_dim: usize) {
        match self {
            LayerPages::F16(p) => reserve(p, end, capacity, kv_heads, head_dim),
            LayerPages::F32(p) => reserve(p, end, capacity, kv_heads, head_dim),
        }
    }

    /// Pages for positions 0..end in a sliding-window layer: the pages in
    /// `keep` (page indices) are left as they are, those from `first_written`
    /// up to `end` get buffers, and every other page gives its buffers up, to
    /// those or to nobody (a ring that shrank frees them).
    pub fn reserve_ring(&mut self, keep: &[Range<usize>], first_written: usize, end: usize, capacity: usize, kv_heads: usize, head_dim: usize) {
        match self {
            LayerPages::F16(p) => reserve_ring(p, keep, first_written, end, capacity, kv_heads, head_dim),
            LayerPages::F32(p) => reserve_ring(p, keep, first_written, end, capacity, kv_heads, head_dim),
        }
    }

    /// Positions the pages have room for (placeholders hold none).
    pub fn allocated(&self) -> usize {
        fn rows<E: KvElem>(p: &[Page<E>]) -> usize {
            p.iter().filter(|p| p.is_held()).map(|p| p.rows).sum()
        }
        match self {
            LayerPages::F16(p) => rows(p),
            LayerPages::F32(p) => rows(p),
        }
    }

    /// Which of positions 0..len the pages still hold.
    pub fn held(&self, len: usize) -> Vec<bool> {
        fn held<E: KvElem>(pages: &[Page<E>], len: usize) -> Vec<bool> {
            (0..len).map(|p| pages.get(p / PAGE).is_some_and(Page::is_held)).collect()
        }
        match self {
            LayerPages::F16(p) => held(p, len),
            LayerPages::F32(p) => held(p, len),
        }
    }

    /// Positions below `len` the pages still hold.
    pub fn held_positions(&self, len: usize) -> usize {
        fn count<E: KvElem>(pages: &[Page<E>], len: usize) -> usize {
            pages.iter().enumerate().filter(|(_, p)| p.is_held()).map(|(i, p)| (i * PAGE + p.rows).min(len).saturating_sub(i * PAGE)).sum()
        }
        match self {
            LayerPages::F16(p) => count(p, len),
            LayerPages::F32(p) => count(p, len),
        }
    }

    /// Whether every page of `pages` (indices) has its buffers.
    pub fn holds_pages(&self, pages: Range<usize>) -> bool {
        fn all<E: KvElem>(p: &[Page<E>], pages: Range<usize>) -> bool {
            pages.into_iter().all(|i| p.get(i).is_some_and(Page::is_held))
        }
        match self {
            LayerPages::F16(p) => all(p, pages),
            LayerPages::F32(p) => all(p, pages),
        }
    }

    /// Writes `t` positions from `start` on, from K and V as `[kv_heads][t][head_dim]` f32.
    pub fn write(&mut self, start: usize, t: usize, head_dim: usize, k: &[f32], v: &[f32]) {
        match self {
            LayerPages::F16(p) => write(p, start, t, head_dim, k, v),
            LayerPages::F32(p) => write(p, start, t, head_dim, k, v),
        }
    }

    pub fn as_ref(&self) -> PagesRef<'_> {
        match self {
            LayerPages::F16(p) => PagesRef::F16(p),
            LayerPages::F32(p) => PagesRef::F32(p),
        }
    }
}

fn reserve<E: KvElem>(pages: &mut Vec<Page<E>>, end: usize, capacity: usize, kv_heads: usize, head_dim: usize) {
    let mut have: usize = pages.iter().map(|p| p.rows).sum();
    while have < end.min(capacity) {
        let rows = PAGE.min(capacity - have);
        pages.push(Page::new(rows, kv_heads, head_dim));
        have += rows;
    }
}

/// Logical pages up to `end` (as `reserve`, but as placeholders), then the
/// buffers moved from the pages outside `keep` and the written ones to the
/// written ones that lack them; a new buffer only where none is spare.
fn reserve_ring<E: KvElem>(
    pages: &mut Vec<Page<E>>,
    keep: &[Range<usize>],
    first_written: usize,
    end: usize,
    capacity: usize,
    kv_heads: usize,
    head_dim: usize,
) {
    let mut have: usize = pages.iter().map(|p| p.rows).sum();
    while have < end.min(capacity) {
        let rows = PAGE.min(capacity - have);
        pages.push(Page::placeholder(rows));
        have += rows;
    }
    let written = first_written..end.min(capacity).div_ceil(PAGE);
    let wanted = |i: usize| written.contains(&i) || keep.iter().any(|r| r.contains(&i));
    let mut spare: Vec<Page<E>> = Vec::new();
    for (i, page) in pages.iter_mut().enumerate() {
        if page.is_held() && !wanted(i) {
            let rows = page.rows;
            spare.push(std::mem::replace(page, Page::placeholder(rows)));
        }
    }
    for page in &mut pages[written] {
        if page.is_held() {
            continue;
        }
        let n = kv_heads * page.rows * head_dim;
        // A short last page takes only a buffer of its own size.
        *page = match spare.iter().position(|old| old.k.len() == n) {
            Some(at) => {
                let old = spare.swap_remove(at);
                Page { rows: page.rows, k: old.k, v: old.v, finite: true }
            }
            None => Page::new(page.rows, kv_heads, head_dim),
        };
    }
}

fn write<E: KvElem>(pages: &mut [Page<E>], start: usize, t: usize, head_dim: usize, k: &[f32], v: &[f32]) {
    assert_eq!(k.len(), v.len(), "K and V of one chunk");
    let kv_heads = k.len() / (t * head_dim).max(1);
    assert_eq!(k.len(), kv_heads * t * head_dim, "a chunk of {t} positions of {head_dim} values");
    for p in 0..t {
        let at = start + p;
        // Every page but a short last one holds PAGE positions.
        let page = &mut pages[at / PAGE];
        let (row, rows) = (at % PAGE, page.rows);
        assert!(row < rows, "position {at} past the pages");
        for h in 0..kv_heads {
            let src = (h * t + p) * head_dim;
            let dst = (h * rows + row) * head_dim;
            let mut finite = true;
            for (d, &s) in page.k[dst..dst + head_dim].iter_mut().zip(&k[src..src + head_dim]) {
                *d = E::from_f32(s);
                finite &= d.is_finite();
            }
            for (d, &s) in page.v[dst..dst + head_dim].iter_mut().zip(&v[src..src + head_dim]) {
                *d = E::from_f32(s);
                finite &= d.is_finite();
            }
            page.finite &= finite;
        }
    }
}

/// Consecutive key rows of one head, as the cache holds them.
pub enum KeyRun<'a> {
    F16(&'a [f16]),
    F32(&'a [f32]),
}

impl PagesRef<'_> {
    /// Key `pos` of head `h` widened to f32 (tests and checks; the kernel reads whole pages).
    pub fn key(&self, h: usize, pos: usize, head_dim: usize) -> Vec<f32> {
        self.row(h, pos, head_dim, true)
    }

    pub fn value(&self, h: usize, pos: usize, head_dim: usize) -> Vec<f32> {
        self.row(h, pos, head_dim, false)
    }

    /// Head `h`'s keys at `positions`, as the runs of consecutive rows the
    /// pages hold them in (one run per page touched), in order: what the
    /// inside view reads without a copy per key.
    pub fn key_runs(&self, h: usize, positions: Range<usize>, head_dim: usize, mut each: impl FnMut(KeyRun)) {
        fn runs<'a, E>(pages: &'a [Page<E>], h: usize, positions: Range<usize>, hd: usize, each: &mut impl FnMut(&'a [E])) {
            let mut pos = positions.start;
            while pos < positions.end {
                let page = &pages[pos / PAGE];
                let end = positions.end.min((pos / PAGE + 1) * PAGE);
                let at = (h * page.rows + pos % PAGE) * hd;
                each(&page.k[at..at + (end - pos) * hd]);
                pos = end;
            }
        }
        match *self {
            PagesRef::F16(p) => runs(p, h, positions, head_dim, &mut |r| each(KeyRun::F16(r))),
            PagesRef::F32(p) => runs(p, h, positions, head_dim, &mut |r| each(KeyRun::F32(r))),
        }
    }

    fn row(&self, h: usize, pos: usize, head_dim: usize, key: bool) -> Vec<f32> {
        fn get<E: Copy>(pages: &[Page<E>], h: usize, pos: usize, hd: usize, key: bool, f: impl Fn(E) -> f32) -> Vec<f32> {
            let page = &pages[pos / PAGE];
            let at = (h * page.rows + pos % PAGE) * hd;
            let data = if key { &page.k } else { &page.v };
            data[at..at + hd].iter().map(|&x| f(x)).collect()
        }
        match *self {
            PagesRef::F16(p) => get(p, h, pos, head_dim, key, f16::to_f32),
            PagesRef::F32(p) => get(p, h, pos, head_dim, key, |x| x),
        }
    }
}
