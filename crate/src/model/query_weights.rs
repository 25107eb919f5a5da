//! The softmax weights of one query over a layer's KV cache, for the inside
//! view (`inside::Capture`): the attention kernel fuses them away, so the
//! query of a chunk's last position is weighed again here, from the same
//! query and the same cached keys, with the kernel's exponentials.

use crate::f32_exp::exp_shifted_sum;
use crate::inside::LayerWeights;
use crate::kv_cache::{KeyRun, LayerView};
use crate::quant::kernels::widen;

/// The softmax weights of one query over a layer's cached keys: query head
/// h against KV head h / (heads / kv_heads), scaled by 1/√head_dim as the
/// attention kernel does (a model's own scale is already in the queries),
/// over the positions `first_visible(query, window)..=query`.
///
/// `q` is the query's `heads · head_dim` values after rotation and scaling,
/// the ones the kernel attended with; `kv` holds this layer's keys with the
/// query's own already written. Each KV head's keys are widened to f32 once
/// for the query heads that share it.
pub fn weights_of_query(q: &[f32], heads: usize, kv: LayerView, query: usize, window: Option<usize>) -> LayerWeights {
    let hd = kv.head_dim;
    assert_eq!(q.len(), heads * hd, "one query of {heads} heads × {hd}");
    let group = heads / kv.kv_heads;
    let first = window.map_or(0, |w| (query + 1).saturating_sub(w));
    let n = query + 1 - first;
    let scale = 1.0 / (hd as f32).sqrt();
    let mut weights = vec![0f32; heads * n];
    let mut keys = vec![0f32; n * hd];
    for kvh in 0..kv.kv_heads {
        let mut at = 0;
        kv.pages.key_runs(kvh, first..query + 1, hd, |run| {
            let len = match run {
                KeyRun::F16(r) => {
                    widen::f16_to_f32(r, &mut keys[at..at + r.len()], false);
                    r.len()
                }
                KeyRun::F32(r) => {
                    keys[at..at + r.len()].copy_from_slice(r);
                    r.len()
                }
            };
            at += len;
        });
        for h in kvh * group..(kvh + 1) * group {
            let qh = &q[h * hd..(h + 1) * hd];
            let row = &mut weights[h * n..(h + 1) * n];
            for (s, key) in row.iter_mut().zip(keys.chunks_exact(hd)) {
                *s = dot(qh, key) * scale;
            }
            softmax_in_place(row);
        }
    }
    LayerWeights { window, first, weights }
}

/// Σ a·b in eight lanes (so it vectorises; the order of the sum is fixed).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (ac, bc) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ac.remainder().iter().zip(bc.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ac.zip(bc) {
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// softmax as the attention kernel takes it (its exponentials).
fn softmax_in_place(row: &mut [f32]) {
    let max = row.iter().fold(f32::NEG_INFINITY, |m, &s| m.max(s));
    let inv = 1.0 / exp_shifted_sum(row, max);
    row.iter_mut().for_each(|w| *w *= inv);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv_cache::{KvCache, KvPrecision};
    use burn::tensor::{Tensor, TensorData};

    /// The weights are softmax(q·k/√d) by the definition, computed here in
    /// f64 from the keys as the cache rounded them, for grouped heads and a
    /// window that hides the oldest positions.
    #[test]
    fn weights_are_the_softmax_of_the_scaled_scores() {
        let (heads, kvh, hd, len) = (4, 2, 8, 11);
        let device = crate::backend::BackendKind::Flex.device().unwrap();
        let mut cache = KvCache::new(1, kvh, hd, 64, KvPrecision::F16);
        let mut rng = crate::rng::Rng::new(9);
        let mut normal = |n: usize| (0..n).map(|_| (rng.next_f64() * 4.0 - 2.0) as f32).collect::<Vec<f32>>();
        let k = normal(kvh * len * hd);
        let v = normal(kvh * len * hd);
        let t = |x: Vec<f32>| Tensor::<4>::from_data(TensorData::new(x, [1, kvh, len, hd]), &device);
        cache.write(0, t(k), t(v));
        cache.advance(len);
        let q = normal(heads * hd);
        for window in [None, Some(4)] {
            let got = weights_of_query(&q, heads, cache.view(0), len - 1, window);
            let first = window.map_or(0, |w| len - w);
            assert_eq!(got.first, first);
            for h in 0..heads {
                let scores: Vec<f64> = (first..len)
                    .map(|p| {
                        let key = cache.view(0).pages.key(h / 2, p, hd);
                        key.iter().zip(&q[h * hd..(h + 1) * hd]).map(|(&k, &q)| k as f64 * q as f64).sum::<f64>() / (hd as f64).sqrt()
                    })
                    .collect();
                let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let sum: f64 = scores.iter().map(|s| (s - max).exp()).sum();
                let n = len - first;
                for (i, s) in scores.iter().enumerate() {
                    let want = (s - max).exp() / sum;
                    let have = got.weights[h * n + i] as f64;
                    assert!((want - have).abs() < 1e-6, "head {h} position {}: {have} against {want}", first + i);
                }
            }
        }
    }
}
