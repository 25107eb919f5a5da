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

    /// Positions the pages have room for.
    pub fn allocated(&self) -> usize {
        match self {
            LayerPages::F16(p) => p.iter().map(|p| p.rows).sum(),
            LayerPages::F32(p) => p.iter().map(|p| p.rows).sum(),
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

impl PagesRef<'_> {
    /// Key `pos` of head `h` widened to f32 (tests and checks; the kernel reads whole pages).
    pub fn key(&self, h: usize, pos: usize, head_dim: usize) -> Vec<f32> {
        self.row(h, pos, head_dim, true)
    }

    pub fn value(&self, h: usize, pos: usize, head_dim: usize) -> Vec<f32> {
        self.row(h, pos, head_dim, false)
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
