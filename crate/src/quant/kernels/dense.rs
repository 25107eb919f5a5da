//! f32 products for a few input rows (a decode step), where burn's general
//! matrix product spends much of its time setting up for one row:
//!
//! ```text
//! xw   out[r][j] = Σ_i x[r][i] · W[i][j]    W stored [k, n] (burn's Linear weight)
//! xwt  out[r][j] = Σ_i x[r][i] · W[j][i]    W stored [n, k] (a tied embedding as the LM head)
//! ```
//! `xw` (simd128) adds four rows of W at a time into the output row, and
//! the portable `xw` keeps a block of 16 outputs in registers down W's
//! rows; `xwt` takes four rows of W at a time against one load of x, each
//! with its own vector of partial sums. Paths: wasm simd128 (the browser
//! build); on x86_64 with AVX2 + FMA, `xw` the portable code compiled for
//! them (so it vectorises) and `xwt` AVX2 intrinsics in the portable
//! code's order of sums; and the portable code as such. The wasm and x86
//! paths add the same products in other orders, so they differ by f32
//! rounding only.

/// Outputs per register block in `xw`.
const COLS: usize = 16;

/// `out = x · W` for W `[k, n]` row-major, x `rows × k`, out `rows × n`.
///
/// # Panics
/// If a slice length does not match the shape.
pub fn xw(w: &[f32], k: usize, n: usize, x: &[f32], rows: usize, out: &mut [f32]) {
    assert!(w.len() == k * n && x.len() == rows * k && out.len() == rows * n, "xw shapes");
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    return simd128::xw(w, k, n, x, rows, out);
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: the CPU has AVX2 and FMA.
        return unsafe { xw_avx2(w, k, n, x, rows, out) };
    }
    #[allow(unreachable_code)]
    xw_portable(w, k, n, x, rows, out)
}

/// `out = x · Wᵀ` for W `[n, k]` row-major, x `rows × k`, out `rows × n`.
///
/// # Panics
/// If a slice length does not match the shape.
pub fn xwt(w: &[f32], n: usize, k: usize, x: &[f32], rows: usize, out: &mut [f32]) {
    assert!(w.len() == k * n && x.len() == rows * k && out.len() == rows * n, "xwt shapes");
    // Bands of W's rows across threads: each output as on one thread.
    crate::threads::split_columns(out, rows, n, w.len() * 4 * rows, |cols, dst| {
        xwt_band(&w[cols.start * k..cols.end * k], cols.len(), k, x, rows, dst)
    })
}

/// `xwt` on the calling thread.
pub(super) fn xwt_band(w: &[f32], n: usize, k: usize, x: &[f32], rows: usize, out: &mut [f32]) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    return simd128::xwt(w, n, k, x, rows, out);
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: the CPU has AVX2 and FMA.
        return unsafe { xwt_avx2(w, n, k, x, rows, out) };
    }
    #[allow(unreachable_code)]
    xwt_portable(w, n, k, x, rows, out)
}

#[cfg(target_arch = "x86_64")]
fn avx2() -> bool {
    is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
}

/// # Safety
/// The CPU has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn xw_avx2(w: &[f32], k: usize, n: usize, x: &[f32], rows: usize, out: &mut [f32]) {
    xw_portable(w, k, n, x, rows, out)
}

/// Two input rows at a time against four rows of W (eight independent
/// sums in registers), each output summed exactly as `xwt_portable` sums
/// it, so the numbers are the same bits. The portable code compiled for
/// AVX2 keeps one chain of sums per output, waiting on each add: measured
/// on an F16 copy of SmolLM2, one thread, Xeon with AVX-512
/// (`nexttoken bench --model FILE`), its 64-token prompt took 58-61 tok/s,
/// this way 213-216 (builds alternating); bard and SmolLM2's Q4_1 file
/// the same within the noise.
///
/// # Safety
/// The CPU has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn xwt_avx2(w: &[f32], n: usize, k: usize, x: &[f32], rows: usize, out: &mut [f32]) {
    let mut r = 0;
    while r + 2 <= rows {
        // SAFETY: the CPU has AVX2 and FMA; this function's own contract.
        unsafe { x86::xwt_rows::<2>(w, n, k, x, r, out) };
        r += 2;
    }
    if r < rows {
        // SAFETY: as above.
        unsafe { x86::xwt_rows::<1>(w, n, k, x, r, out) };
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::x86_64::*;

    /// Input rows `r..r + X` of `xwt`.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) unsafe fn xwt_rows<const X: usize>(w: &[f32], n: usize, k: usize, x: &[f32], r: usize, out: &mut [f32]) {
        const LANES: usize = 8;
        let k8 = k / LANES * LANES;
        let xr: [&[f32]; X] = core::array::from_fn(|m| &x[(r + m) * k..][..k]);
        let mut j = 0;
        while j + 4 <= n {
            let wr: [&[f32]; 4] = core::array::from_fn(|q| &w[(j + q) * k..][..k]);
            let mut acc = [[_mm256_setzero_ps(); 4]; X];
            let mut i = 0;
            while i < k8 {
                // SAFETY: i + 8 <= k: eight f32 of each input row and of each weight row.
                unsafe {
                    let xv: [__m256; X] = core::array::from_fn(|m| _mm256_loadu_ps(xr[m].as_ptr().add(i)));
                    for q in 0..4 {
                        let wv = _mm256_loadu_ps(wr[q].as_ptr().add(i));
                        for m in 0..X {
                            acc[m][q] = _mm256_add_ps(acc[m][q], _mm256_mul_ps(xv[m], wv));
                        }
                    }
                }
                i += LANES;
            }
            for m in 0..X {
                for q in 0..4 {
                    let mut lanes = [0f32; LANES];
                    // SAFETY: eight f32 into a local array.
                    unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), acc[m][q]) };
                    out[(r + m) * n + j + q] = super::lane_sums_8(&lanes) + super::tail_dot(&xr[m][k8..], &wr[q][k8..]);
                }
            }
            j += 4;
        }
        for m in 0..X {
            for jj in j..n {
                out[(r + m) * n + jj] = super::dot_8_lanes(xr[m], &w[jj * k..][..k]);
            }
        }
    }
}

#[inline(always)]
pub(super) fn xw_portable(w: &[f32], k: usize, n: usize, x: &[f32], rows: usize, out: &mut [f32]) {
    for r in 0..rows {
        let (xr, yr) = (&x[r * k..][..k], &mut out[r * n..][..n]);
        let mut j = 0;
        while j + COLS <= n {
            let mut acc = [0f32; COLS];
            for (i, &xi) in xr.iter().enumerate() {
                let wi = &w[i * n + j..][..COLS];
                for c in 0..COLS {
                    acc[c] += xi * wi[c];
                }
            }
            yr[j..j + COLS].copy_from_slice(&acc);
            j += COLS;
        }
        for (jj, y) in yr.iter_mut().enumerate().skip(j) {
            *y = xr.iter().enumerate().map(|(i, &xi)| xi * w[i * n + jj]).sum();
        }
    }
}

#[inline(always)]
pub(super) fn xwt_portable(w: &[f32], n: usize, k: usize, x: &[f32], rows: usize, out: &mut [f32]) {
    for r in 0..rows {
        let xr = &x[r * k..][..k];
        for (j, wj) in w.chunks_exact(k).enumerate() {
            out[r * n + j] = dot_8_lanes(xr, wj);
        }
    }
}

/// One output of `xwt`: eight lanes of partial sums along the row (each
/// product added to its lane), then `lane_sums_8`, then the products past
/// the last whole eight. Every x86 path sums in this order.
#[inline(always)]
pub(super) fn dot_8_lanes(x: &[f32], w: &[f32]) -> f32 {
    const LANES: usize = 8;
    let mut acc = [0f32; LANES];
    let mut xs = x.chunks_exact(LANES);
    let mut ws = w.chunks_exact(LANES);
    for (xc, wc) in (&mut xs).zip(&mut ws) {
        for l in 0..LANES {
            acc[l] += xc[l] * wc[l];
        }
    }
    lane_sums_8(&acc) + tail_dot(xs.remainder(), ws.remainder())
}

/// The products past a SIMD loop's last whole vector, summed in order.
#[inline(always)]
pub(super) fn tail_dot(x: &[f32], w: &[f32]) -> f32 {
    x.iter().zip(w).map(|(a, b)| a * b).sum()
}

/// The portable `xwt`'s sum of its eight lanes.
#[inline(always)]
pub(super) fn lane_sums_8(acc: &[f32; 8]) -> f32 {
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(super) mod simd128 {
    use core::arch::wasm32::*;

    /// Four rows of W at a time, each read front to back (four sequential
    /// streams), into the output row, which stays in L1: in a scratch
    /// benchmark of bard's decode products in Node this took 190 µs a step,
    /// against 300 for blocks of 16 columns walking down W and 360-400 for
    /// gemm 0.19 (burn-flex's matmul).
    pub(super) fn xw(w: &[f32], k: usize, n: usize, x: &[f32], rows: usize, out: &mut [f32]) {
        let n4 = n / 4 * 4;
        for r in 0..rows {
            let (xr, yr) = (&x[r * k..][..k], &mut out[r * n..][..n]);
            yr.fill(0.0);
            for i in (0..k).step_by(4) {
                let m = (k - i).min(4);
                // A missing row (k not a multiple of 4) reads row i again, times 0.
                let xv: [v128; 4] = core::array::from_fn(|q| f32x4_splat(if q < m { xr[i + q] } else { 0.0 }));
                let at: [usize; 4] = core::array::from_fn(|q| (i + if q < m { q } else { 0 }) * n);
                let mut j = 0;
                while j < n4 {
                    // SAFETY: rows at[q] of w hold n values and j + 4 <= n; so does the output row.
                    unsafe {
                        let row = |q: usize| v128_load(w.as_ptr().add(at[q] + j) as *const v128);
                        let s01 = f32x4_add(f32x4_mul(xv[0], row(0)), f32x4_mul(xv[1], row(1)));
                        let s23 = f32x4_add(f32x4_mul(xv[2], row(2)), f32x4_mul(xv[3], row(3)));
                        let y = yr.as_mut_ptr().add(j) as *mut v128;
                        v128_store(y, f32x4_add(v128_load(y), f32x4_add(s01, s23)));
                    }
                    j += 4;
                }
                for (jj, y) in yr.iter_mut().enumerate().skip(n4) {
                    *y += (0..m).map(|q| xr[i + q] * w[(i + q) * n + jj]).sum::<f32>();
                }
            }
        }
    }

    /// The lane sums of four accumulators, one per output: `(l0 + l2) + (l1 + l3)`.
    #[inline(always)]
    pub(in crate::quant::kernels) fn lane_sums(acc: [v128; 4]) -> [f32; 4] {
        let t0 = f32x4_add(i32x4_shuffle::<0, 4, 1, 5>(acc[0], acc[1]), i32x4_shuffle::<2, 6, 3, 7>(acc[0], acc[1]));
        let t1 = f32x4_add(i32x4_shuffle::<0, 4, 1, 5>(acc[2], acc[3]), i32x4_shuffle::<2, 6, 3, 7>(acc[2], acc[3]));
        let s = f32x4_add(i32x4_shuffle::<0, 1, 4, 5>(t0, t1), i32x4_shuffle::<2, 3, 6, 7>(t0, t1));
        let mut y = [0f32; 4];
        // SAFETY: four f32 into a local array.
        unsafe { v128_store(y.as_mut_ptr() as *mut v128, s) };
        y
    }

    /// Two input rows at a time against four rows of W, each weight vector
    /// loaded once for both; every output's sums as one row alone gets
    /// them. Measured in headless Chromium on an F16 copy of SmolLM2, one
    /// thread (`pkg-scripts/bench-engine-wasm.mjs FILE 3`): a 64-token
    /// prompt at 99-106 tok/s one input row at a time, 109-133 two at a
    /// time (builds alternating), 121-125 three.
    pub(super) fn xwt(w: &[f32], n: usize, k: usize, x: &[f32], rows: usize, out: &mut [f32]) {
        let mut r = 0;
        while r + 2 <= rows {
            xwt_rows::<2>(w, n, k, x, r, out);
            r += 2;
        }
        if r < rows {
            xwt_rows::<1>(w, n, k, x, r, out);
        }
    }

    /// Input rows `r..r + X` of `xwt`.
    #[inline(always)]
    fn xwt_rows<const X: usize>(w: &[f32], n: usize, k: usize, x: &[f32], r: usize, out: &mut [f32]) {
        let k4 = k / 4 * 4;
        let xr: [&[f32]; X] = core::array::from_fn(|m| &x[(r + m) * k..][..k]);
        let mut j = 0;
        while j + 4 <= n {
            let mut acc = [[f32x4_splat(0.0); 4]; X];
            let mut i = 0;
            while i < k4 {
                // SAFETY: i + 4 <= k: four f32 of each input row, and of rows j..j + 4 of w.
                unsafe {
                    let xv: [v128; X] = core::array::from_fn(|m| v128_load(xr[m].as_ptr().add(i) as *const v128));
                    for q in 0..4 {
                        let wv = v128_load(w.as_ptr().add((j + q) * k + i) as *const v128);
                        for m in 0..X {
                            acc[m][q] = f32x4_add(acc[m][q], f32x4_mul(xv[m], wv));
                        }
                    }
                }
                i += 4;
            }
            for m in 0..X {
                for (q, yq) in lane_sums(acc[m]).iter().enumerate() {
                    out[(r + m) * n + j + q] = yq + super::tail_dot(&xr[m][k4..], &w[(j + q) * k + k4..][..k - k4]);
                }
            }
            j += 4;
        }
        for m in 0..X {
            for jj in j..n {
                out[(r + m) * n + jj] = xr[m].iter().zip(&w[jj * k..][..k]).map(|(a, b)| a * b).sum();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    /// Against the f64 sums, within the bound `test_support` derives; the
    /// wasm run (crate/tests/wasm_kernels.rs) makes the same check on simd128.
    #[test]
    fn dense_products_match_the_exact_sums() {
        let shapes = [(1, 192, 192), (1, 192, 2048), (3, 512, 192), (2, 7, 5), (1, 33, 21), (4, 64, 48), (1, 1, 1)];
        super::super::test_support::check_dense_products(0x9E37_79B9, &shapes);
    }

    /// The AVX2 `xwt` sums every output in the portable order, so its
    /// outputs are the same bits: checked on shapes with every kind of edge
    /// (an odd input row, weight rows past the last four, values past the
    /// last eight).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_xwt_gives_the_portable_bits() {
        if !super::avx2() {
            eprintln!("this CPU has no AVX2 + FMA: the portable xwt is the only one");
            return;
        }
        let mut rng = crate::rng::Rng::new(0xA5A5_0F0F);
        for (rows, n, k) in [(1, 4, 8), (3, 9, 13), (2, 7, 5), (5, 23, 101), (4, 64, 576), (1, 3, 7)] {
            let w: Vec<f32> = (0..n * k).map(|_| (rng.next_f64() * 2.0 - 1.0) as f32).collect();
            let x: Vec<f32> = (0..rows * k).map(|_| (rng.next_f64() * 2.0 - 1.0) as f32).collect();
            let (mut fast, mut plain) = (vec![0f32; rows * n], vec![0f32; rows * n]);
            // SAFETY: checked above that the CPU has AVX2 and FMA.
            unsafe { super::xwt_avx2(&w, n, k, &x, rows, &mut fast) };
            super::xwt_portable(&w, n, k, &x, rows, &mut plain);
            let differ = fast.iter().zip(&plain).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
            assert_eq!(differ, 0, "{differ} of {} outputs differ for rows {rows}, n {n}, k {k}", fast.len());
        }
    }
}
