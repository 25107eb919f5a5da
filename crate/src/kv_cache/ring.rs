//! Which pages a sliding-window layer keeps: a ring, so its cache stays
//! bounded however long the text (Gemma 3's local layers see 512 positions
//! of texts up to 32,768).
//!
//! ```text
//! window W = 512, PAGE = 128, writing position s (decode) on page P:
//!   pages   P-5    P-4    P-3    P-2    P-1     P
//!          [ slack ][        window (s+1-W ..= s)       ]
//!   kept:  the pages of s+1-W-SLACK .. s, and the chunk's own;
//!   older: placeholders, their buffers moved to the next page written
//! ```
//!
//! Why this design: the page list stays indexed by position / PAGE, so the
//! attention kernel reads a local layer exactly as a global one; it only
//! reads pages from its first row's window on (pages wholly before every
//! row's window are skipped), and those are kept. A recycled page is a
//! placeholder without buffers, so a read of one would fail loudly instead
//! of reading another position's keys. (A ring indexed modulo its size
//! would need the kernel to wrap; llama.cpp's SWA cache is a separate cell
//! array of n_swa + n_ubatch positions, searched by position.)
//!
//! A prefill chunk writes all its keys before its queries read them, so a
//! ring must hold a window plus the chunk: `DecoderLm` cuts chunks at page
//! boundaries, so the chunk is part of one page and the ring is
//! `ring_positions`: the window's pages, the page being written, and the
//! slack (768 positions for Gemma's 512).
//!
//! The slack makes a short rewind free: after writing position s the ring
//! still holds what a query at s − SLACK reads, so stepping back by up to
//! SLACK + 1 positions (by one token, in the session's step-back) needs no
//! recompute; the page rounding often gives up to a page more. A rewind
//! point (`KvCache::truncate`) keeps its own ring while the text is run
//! again from it (beam search runs every beam from one point), so beams of
//! any depth need no recompute either; the cache then holds at most two
//! rings. A rewind past what is held makes `DecoderLm` feed the text again
//! from position 0 (see `DecoderLm::truncate` for what that costs).

use std::ops::Range;

use super::PAGE;

/// Positions a ring keeps before a chunk besides the window: one page.
pub const SLACK: usize = PAGE;

/// The page indices holding positions `positions`.
fn pages_of(positions: Range<usize>) -> Range<usize> {
    if positions.is_empty() {
        return 0..0;
    }
    positions.start / PAGE..(positions.end - 1) / PAGE + 1
}

/// How far back a query reads: its window, and at least the position
/// before it (a rewind to n writes position n on the page of n − 1, whose
/// earlier rows a window of one masks but the kernel still reads).
fn reach(window: usize) -> usize {
    window.max(2)
}

/// The pages of what a query at position `p`, or one up to SLACK before
/// it, reads besides itself: positions p + 1 − window − SLACK .. p.
pub fn ring_before(p: usize, window: usize) -> Range<usize> {
    pages_of((p + 1).saturating_sub(reach(window) + SLACK)..p)
}

/// The pages a query at position `n` reads besides itself (positions
/// n + 1 − window .. n): all must be held for a rewind to `n`.
pub fn needed_at(n: usize, window: usize) -> Range<usize> {
    pages_of((n + 1).saturating_sub(reach(window))..n)
}

/// The most positions a layer with this window holds while chunks stay
/// within a page and no rewind point is kept: the chunk's page and the
/// pages of the W + SLACK − 1 positions before it (at most
/// ⌈(W + SLACK − 1) / PAGE⌉ of them, when the chunk starts at its page's
/// first position), within the context.
pub fn ring_positions(window: usize, capacity: usize) -> usize {
    ((1 + (reach(window) + SLACK - 1).div_ceil(PAGE)) * PAGE).min(capacity)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bound, against counting the pages a chunk within one page keeps
    /// at every start of three pages' worth, for windows below, at and above
    /// a page.
    #[test]
    fn the_ring_bounds_the_pages_kept_at_every_start() {
        for window in [1, 2, 8, PAGE - 1, PAGE, PAGE + 1, 512] {
            let mut most = 0;
            for s in 0..8 * PAGE {
                for t in 1..=PAGE - s % PAGE {
                    let kept = ring_before(s, window);
                    let written = pages_of(s..s + t);
                    let pages = kept.start.min(written.start)..written.end;
                    assert!(kept.end <= written.end && kept.end + 1 >= written.start, "one run of pages");
                    most = most.max(pages.len() * PAGE);
                    // A query at s − SLACK reads what the ring keeps.
                    if s >= SLACK {
                        let need = needed_at(s - SLACK, window);
                        assert!(need.is_empty() || need.start >= pages.start, "window {window}, s {s}");
                    }
                }
            }
            assert_eq!(most, ring_positions(window, usize::MAX), "window {window}");
        }
        assert_eq!(ring_positions(512, 32768), 768, "Gemma 3: 512 + a page being written + a page of slack");
        assert_eq!(ring_positions(8, 256), 256, "within the context");
    }

    #[test]
    fn a_rewind_needs_the_window_and_the_page_it_goes_on() {
        assert_eq!(needed_at(0, 4), 0..0);
        assert_eq!(needed_at(1, 4), 0..1);
        assert_eq!(needed_at(PAGE, 1), 0..1, "a window of one: the position before");
        assert_eq!(needed_at(PAGE + 1, 1), 1..2);
        assert_eq!(needed_at(3 * PAGE, PAGE), 2..3);
        assert_eq!(needed_at(3 * PAGE + 1, PAGE + 2), 2..4, "positions 2·PAGE ..= 3·PAGE");
        assert_eq!(needed_at(3 * PAGE + 1, PAGE + 3), 1..4);
    }
}
