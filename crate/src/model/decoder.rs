//! The transformer as a `LanguageModel`: it owns its KV cache and counts the
//! work of the cached and the naive path.

use burn::module::Module;
use burn::tensor::{Device, Int, Tensor, TensorData};

use super::Transformer;
use crate::backend::BackendKind;
use crate::bail;
use crate::config::ModelConfig;
use crate::counters::Counters;
use crate::error::{Error, Result};
use crate::inside::Capture;
use crate::kv_cache::{KvCache, KvHeld, KvPrecision, PAGE};
use crate::lm::{LanguageModel, ModelInfo, WindowInfo};

/// Where a decoder's weights came from (for the page's model facts).
#[derive(Debug, Clone, PartialEq)]
pub struct WeightsSource {
    /// "gguf" | "nexttoken-model" | "builtin"
    pub format: &'static str,
    pub quant: Option<String>,
    pub file_bytes: Option<usize>,
}

impl Default for WeightsSource {
    fn default() -> Self {
        WeightsSource { format: "builtin", quant: None, file_bytes: None }
    }
}

pub struct DecoderLm {
    pub name: String,
    pub config: ModelConfig,
    pub model: Transformer,
    pub backend: BackendKind,
    pub eos_id: Option<u32>,
    /// What `info()` reports about the file the weights came from (set it
    /// with `set_source`, which also picks the cache precision for it).
    pub source: WeightsSource,
    device: Device,
    cache: KvCache,
    /// The tokens fed through the cache, at positions 0..: what a rewind
    /// past the local layers' rings is fed again from (`truncate`). The
    /// cache holds the first `cache.len()` of them; any after those are fed
    /// again before the next tokens.
    ids: Vec<u32>,
    /// Rewinds that had to feed the text again.
    refills: usize,
    counters: Counters,
}

impl DecoderLm {
    pub fn new(name: &str, config: ModelConfig, model: Transformer, backend: BackendKind) -> Result<Self> {
        config.validate()?;
        let device = backend.device()?;
        let model = model.to_device(&device);
        let source = WeightsSource::default();
        let cache = new_cache(&config, KvPrecision::default_for(source.format));
        Ok(DecoderLm {
            name: name.to_string(),
            config,
            model,
            backend,
            eos_id: None,
            source,
            device,
            cache,
            ids: Vec::new(),
            refills: 0,
            counters: Counters::default(),
        })
    }

    /// Random weights from a seed (tests, the kv-demo model).
    pub fn random(name: &str, config: ModelConfig, seed: u64, backend: BackendKind) -> Result<Self> {
        config.validate()?;
        let model = Transformer::init_seeded(&config, seed, &backend.device()?);
        Self::new(name, config, model, backend)
    }

    pub fn device(&self) -> &Device {
        &self.device
    }

    pub fn cache(&self) -> &KvCache {
        &self.cache
    }

    /// Rewinds so far that had to feed the text again from position 0
    /// (`truncate`).
    pub fn refills(&self) -> usize {
        self.refills
    }

    /// Says where the weights came from, which also sets the cache's
    /// precision to that source's default (`KvPrecision::default_for`).
    pub fn set_source(&mut self, source: WeightsSource) {
        self.replace_cache(KvPrecision::default_for(source.format));
        self.source = source;
    }

    /// An empty cache of this precision instead of the one there was.
    fn replace_cache(&mut self, precision: KvPrecision) {
        self.cache = new_cache(&self.config, precision);
        self.ids.clear();
    }

    /// Runs `tokens` through the cache from its length on and returns the
    /// logits after the last one. A long run goes in chunks: the cache
    /// carries each to the next, so the result is the same, and the
    /// activations of only one chunk are held at once (the MLP's of 1,000
    /// SmolLM2 tokens would be 24 MB; wasm memory, once grown, never
    /// shrinks). No chunk crosses a page boundary, so a sliding-window
    /// layer's ring holds a window and one page being written
    /// (`kv_cache::ring`).
    ///
    /// With `capture`, the last chunk also records the inside of its last
    /// position (`inside::Capture`).
    fn run_chunks(&mut self, tokens: &[u32], capture: bool) -> Result<(Tensor<3>, Option<Capture>)> {
        let mut last = None;
        let mut rest = tokens;
        while !rest.is_empty() {
            let start = self.cache.len();
            let n = rest.len().min(PREFILL_CHUNK).min(PAGE - start % PAGE);
            let (chunk, after) = rest.split_at(n);
            let input = self.token_tensor(chunk);
            let cache = Some(&mut self.cache);
            // Only the last chunk's last position goes through the LM head.
            let work = if after.is_empty() {
                let (logits, work, captured) = self.model.forward_captured(&self.config, input, start, cache, true, capture);
                last = Some((logits, captured));
                work
            } else {
                self.model.feed(&self.config, input, start, cache)
            };
            self.counters.cached.add(work);
            self.ids.truncate(start);
            self.ids.extend_from_slice(chunk);
            rest = after;
        }
        Ok(last.expect("tokens is not empty"))
    }

    /// `forward_cached`, capturing the inside of the last position or not.
    fn forward_cached_with(&mut self, tokens: &[u32], capture: bool) -> Result<(Vec<f32>, Option<Capture>)> {
        self.check_tokens(tokens)?;
        let held = self.ids.len();
        if held + tokens.len() > self.config.context {
            bail!("context full: {held} cached + {} new positions exceed the context length {}", tokens.len(), self.config.context);
        }
        if self.cache.len() < held {
            // A rewind went past the local layers' rings (`truncate`): the
            // text up to the rewind point goes through again first, and the
            // new tokens go on from there as they would have.
            let again = self.ids[self.cache.len()..].to_vec();
            self.run_chunks(&again, false)?;
            self.refills += 1;
            let kept = self.cache.truncate(held);
            debug_assert!(kept, "a rewind to the length holds what it needs");
        }
        self.cache.start_feed();
        let (last, captured) = self.run_chunks(tokens, capture)?;
        Ok((logits_rows(last)?.pop().expect("one row"), captured))
    }


    fn check_tokens(&self, tokens: &[u32]) -> Result<()> {
        if tokens.is_empty() {
            bail!("nothing to run: the token list is empty");
        }
        if let Some(bad) = tokens.iter().find(|&&t| t as usize >= self.config.vocab_size) {
            bail!("token id {bad} is outside the vocabulary (size {})", self.config.vocab_size);
        }
        Ok(())
    }

    /// The naive path: every position from scratch, the cache left alone;
    /// the logits at every position, or only after the last one.
    fn recompute(&mut self, tokens: &[u32], last_only: bool) -> Result<Vec<Vec<f32>>> {
        self.check_tokens(tokens)?;
        if tokens.len() > self.config.context {
            bail!("context full: {} tokens exceed the context length {}", tokens.len(), self.config.context);
        }
        let input = self.token_tensor(tokens);
        let (logits, work) = self.model.forward(&self.config, input, 0, None, last_only);
        self.counters.naive.add(work);
        logits_rows(logits)
    }

    fn token_tensor(&self, tokens: &[u32]) -> Tensor<2, Int> {
        let ids: Vec<i64> = tokens.iter().map(|&t| t as i64).collect();
        Tensor::from_data(TensorData::new(ids, [1, tokens.len()]), &self.device)
    }
}

fn new_cache(c: &ModelConfig, precision: KvPrecision) -> KvCache {
    KvCache::new(c.n_layers, c.n_kv_heads, c.head_dim, c.context, precision).with_windows((0..c.n_layers).map(|l| c.layer_window(l)).collect())
}

/// Logits computed at once by `for_each_position` (4 M floats, 16 MB).
const HEAD_CHUNK_LOGITS: usize = 1 << 22;

/// Tokens a prompt is fed in at a time (as llama.cpp's micro-batches). A
/// wasm memory keeps the chunk's scratch: 64 left Gemma 3's worker 3.5 MiB
/// smaller than 128 after 1,000 tokens, as fast (12.0 against 12.4 s).
/// Natively 128 is 8% faster (147.6 against 136.5 tok/s, `nexttoken bench --prefill 1000`).
#[cfg(target_arch = "wasm32")]
const PREFILL_CHUNK: usize = 64;
#[cfg(not(target_arch = "wasm32"))]
const PREFILL_CHUNK: usize = 128;

/// Copies a `[1, T, vocab]` logits tensor out as T rows.
fn logits_rows(logits: Tensor<3>) -> Result<Vec<Vec<f32>>> {
    let [_, t, v] = logits.dims();
    let flat = logits
        .try_into_vec_as::<f32>()
        .map_err(|e| Error::new(format!("reading logits back from the backend failed: {e:?}")))?;
    // A decode step's one row is the whole vector: no copy of it.
    Ok(if t == 1 { vec![flat] } else { (0..t).map(|i| flat[i * v..(i + 1) * v].to_vec()).collect() })
}

impl LanguageModel for DecoderLm {
    fn info(&self) -> ModelInfo {
        let c = &self.config;
        ModelInfo {
            name: self.name.clone(),
            kind: "transformer".into(),
            vocab_size: c.vocab_size,
            layers: c.n_layers,
            heads: c.n_heads,
            kv_heads: c.n_kv_heads,
            head_dim: c.head_dim,
            d_model: c.d_model,
            context: c.context,
            params: c.param_count(),
            bytes_per_number: self.cache.precision().bytes(),
            backend: self.backend.name().into(),
            eos_id: self.eos_id,
            format: self.source.format.into(),
            quant: self.source.quant.clone(),
            file_bytes: self.source.file_bytes,
            chat: None,
            sliding_window: c.options.sliding_window.as_ref().map(|w| WindowInfo {
                size: w.size,
                local_layers: (0..c.n_layers).filter(|&l| c.layer_window(l).is_some()).collect(),
                ring: self.cache.ring_positions().unwrap_or(0),
            }),
        }
    }

    fn forward_cached(&mut self, tokens: &[u32]) -> Result<Vec<f32>> {
        Ok(self.forward_cached_with(tokens, false)?.0)
    }

    fn forward_cached_inside(&mut self, tokens: &[u32]) -> Result<(Vec<f32>, Option<Capture>)> {
        self.forward_cached_with(tokens, true)
    }

    /// The final norm and LM head on each residual, as many rows at a time
    /// as `HEAD_CHUNK_LOGITS` allows (Gemma's 19 rows of 262,144 logits
    /// would be 20 MB at once).
    fn lens(&mut self, residuals: &[Vec<f32>], each: &mut dyn FnMut(usize, &[f32]) -> Result<()>) -> Result<()> {
        let d = self.config.d_model;
        if let Some(bad) = residuals.iter().find(|r| r.len() != d) {
            bail!("a residual of {} values for a model of width {d}", bad.len());
        }
        let chunk = (HEAD_CHUNK_LOGITS / self.config.vocab_size).max(1);
        let vocab = self.config.vocab_size;
        for (c, rows) in residuals.chunks(chunk).enumerate() {
            let x = Tensor::<3>::from_data(TensorData::new(rows.concat(), [1, rows.len(), d]), &self.device);
            let logits = self
                .model
                .head(&self.config, x)
                .try_into_vec_as::<f32>()
                .map_err(|e| Error::new(format!("reading the lens's logits back from the backend failed: {e:?}")))?;
            for (i, row) in logits.chunks_exact(vocab).enumerate() {
                each(c * chunk + i, row)?;
            }
        }
        Ok(())
    }

    fn forward_naive(&mut self, tokens: &[u32]) -> Result<Vec<Vec<f32>>> {
        self.recompute(tokens, false)
    }

    fn forward_naive_last(&mut self, tokens: &[u32]) -> Result<Vec<f32>> {
        Ok(self.recompute(tokens, true)?.pop().expect("one row"))
    }

    fn for_each_position(&mut self, tokens: &[u32], each: &mut dyn FnMut(usize, &[f32]) -> Result<()>) -> Result<()> {
        self.check_tokens(tokens)?;
        if tokens.len() > self.config.context {
            bail!("{} tokens exceed the context length {}", tokens.len(), self.config.context);
        }
        let input = self.token_tensor(tokens);
        let hidden = self.model.hidden(&self.config, input, 0, None); // (1, T, d)
        let [_, t, d] = hidden.dims();
        // The LM head in chunks: T × vocab logits at once would be 200 MB
        // for 1,024 tokens of a 49,152-token vocabulary.
        let chunk = (HEAD_CHUNK_LOGITS / self.config.vocab_size).max(1);
        for first in (0..t).step_by(chunk) {
            let last = (first + chunk).min(t);
            let rows = logits_rows(self.model.head(&self.config, hidden.clone().slice([0..1, first..last, 0..d])))?;
            for (i, row) in rows.iter().enumerate() {
                each(first + i, row)?;
            }
        }
        Ok(())
    }

    fn cache_len(&self) -> usize {
        self.ids.len()
    }

    /// Rewinds to the first `n` positions. Where the local layers still hold
    /// what a query at `n` reads (a rewind by up to `ring::SLACK` + 1
    /// positions at least, or to a beam search's starting point), this only
    /// moves the cache's end. Where they no longer do, the cache is emptied
    /// and the next `forward_cached` first feeds the first `n` tokens again:
    /// a prefill of n tokens (on Gemma 3 270M, natively, about the time of a
    /// prompt of that length), paid once for that rewind.
    ///
    /// It starts from position 0 because nothing later is exact: a local
    /// layer's keys at the rewound positions depend, through the layer
    /// below, on its window before them, and so on down the stack, so
    /// through Gemma's 15 local layers they reach about 15 · 511 positions
    /// back: to the start of any text under 7,700 tokens.
    fn truncate(&mut self, n: usize) {
        self.ids.truncate(n);
        let n = self.ids.len();
        if n <= self.cache.len() {
            // False: the cache was emptied, and `forward_cached` feeds ids[..n] again.
            let _kept = self.cache.truncate(n);
        }
    }

    fn counters(&self) -> Counters {
        self.counters
    }

    fn reset_counters(&mut self) {
        self.counters = Counters::default();
    }

    fn set_kv_precision(&mut self, precision: KvPrecision) -> Result<()> {
        self.replace_cache(precision);
        Ok(())
    }

    fn kv_held(&self) -> KvHeld {
        self.cache.held()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin::kv_demo_config;
    use crate::counters::PathCost;

    /// The counters the attention takes from the shapes it ran come to the
    /// definitions in `counters` (a chunk of n after c cached projects n K/V
    /// rows and scores n·c + n(n+1)/2; a recompute over t scores the
    /// triangle): a cache that re-projected its prefix, or a mask that let a
    /// query see the future, would count more.
    #[test]
    fn counted_work_is_the_definition() {
        let mut lm = DecoderLm::random("count", kv_demo_config(), 3, BackendKind::Flex).unwrap();
        let mut expected = PathCost::default();
        for chunk in [[1u32, 2, 3].as_slice(), &[0], &[1], &[2, 3], &[5]] {
            expected.add(PathCost::cached_step(lm.cache_len(), chunk.len()));
            lm.forward_cached(chunk).unwrap();
            assert_eq!(lm.counters().cached, expected);
        }
        lm.forward_naive(&[1, 2, 3, 4, 5, 0, 1]).unwrap();
        lm.forward_naive_last(&[1, 2, 3]).unwrap();
        let mut naive = PathCost::naive_step(7);
        naive.add(PathCost::naive_step(3));
        assert_eq!(lm.counters().naive, naive);
    }

    /// A prompt longer than a prefill chunk gives the logits of one full
    /// recompute (the chunks meet through the cache), and the counters of one
    /// chunk of that length.
    #[test]
    fn a_prompt_in_chunks_is_the_whole_prompt() {
        let config = ModelConfig { context: 3 * PREFILL_CHUNK, ..kv_demo_config() };
        let mut lm = DecoderLm::random("chunks", config, 5, BackendKind::Flex).unwrap();
        let prompt: Vec<u32> = (0..2 * PREFILL_CHUNK + 7).map(|i| (i * 7 % 6) as u32).collect();
        let cached = lm.forward_cached(&prompt).unwrap();
        let whole = lm.forward_naive_last(&prompt).unwrap();
        let worst = cached.iter().zip(&whole).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(worst < 1e-4, "chunked prefill differs from the recompute by {worst}");
        assert_eq!(lm.cache_len(), prompt.len());
        assert_eq!(lm.counters().cached, PathCost::cached_step(0, prompt.len()));
    }
}
