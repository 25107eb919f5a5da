//! The lesson-18 bigram: three tokens {a, b, c}, an embedding table E (3×4)
//! and an output matrix W (4×3), `logits = E[x] · W`, 24 parameters,
//! trained with burn autodiff on the period-4 corpus "abcbabcb…".
//!
//! ```text
//! corpus (60 tokens)  a b c b a b c b … ; training uses the first 50 → 49 pairs
//! pairs               a→b ×13   c→b ×12   b→a ×12   b→c ×12
//! optimum             P(b|a) = P(b|c) = 1,  P(a|b) = P(c|b) = 1/2 (an exact tie in the data)
//!                     loss = 24 pairs leaving b · ln 2 / 49 = (24/49) ln 2 ≈ 0.3395
//! ```
//!
//! The recipe is the lesson's: AdamW at peak learning rate 0.15, weight
//! decay 0.015, 60 steps of linear warmup then cosine decay to zero, full
//! batch (all 49 pairs every step). The initial weights come from the
//! engine's own [`Rng`](crate::rng::Rng), so a seed gives the same start on
//! every platform; the lesson's own init (its `seed(18)`) is not
//! reproducible outside its runtime, so the learned numbers differ from the
//! lesson's while the probabilities they encode agree.
//!
//! Runs on flex with autodiff, natively and in wasm (the page retrains it).

use burn::module::{Module, Param};
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamWConfig, GradientsParams};
use burn::tensor::{Device, Int, Tensor, TensorData};
use serde::{Deserialize, Serialize};

use crate::rng::Rng;

/// Tokens a, b, c.
pub const VOCAB: usize = 3;
/// Embedding width.
pub const D_EMB: usize = 4;
/// Length of the lesson's corpus and how much of it is trained on.
pub const CORPUS_LEN: usize = 60;
pub const TRAIN_TOKENS: usize = 50;
pub const PEAK_LR: f64 = 0.15;
pub const WEIGHT_DECAY: f64 = 0.015;
pub const WARMUP_STEPS: usize = 60;
/// The lesson's step count and the seed of the shipped model.
pub const LESSON_STEPS: usize = 600;
pub const LESSON_SEED: u64 = 18;
/// Standard deviation of the initial weights: small enough that the first
/// logits are near zero (every row starts close to uniform).
pub const INIT_STD: f64 = 0.5;

/// What a training run leaves: the loss before each step's update, and the
/// trained weights.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BigramTrainResult {
    pub losses: Vec<f64>,
    /// Embedding of token i: row i.
    pub e: [[f32; D_EMB]; VOCAB],
    pub w: [[f32; VOCAB]; D_EMB],
    /// `P(· | x)` for every x before step `s`: every one of the first
    /// `TRACE_EARLY` steps (where the rows move), then `TRACE_POINTS` spread
    /// over the run, and after the last: how the rows settle (the page
    /// draws it). Not part of the shipped model's file.
    #[serde(skip)]
    pub trace: Vec<(usize, [[f64; VOCAB]; VOCAB])>,
}

/// Snapshots of the rows a run keeps: each of the first `TRACE_EARLY`
/// steps, then `TRACE_POINTS` over the run (plus the final one).
pub const TRACE_EARLY: usize = 64;
pub const TRACE_POINTS: usize = 60;

impl BigramTrainResult {
    /// Logits for the token after `x`: `E[x] · W`.
    pub fn logits(&self, x: usize) -> [f32; VOCAB] {
        compute_logits(&self.e, &self.w, x)
    }

    /// `P(· | x)` for every x: row x is softmax(E[x] · W).
    pub fn probs(&self) -> [[f64; VOCAB]; VOCAB] {
        probs_of(&self.e, &self.w)
    }
}

/// Row x is softmax(E[x] · W).
fn probs_of(e: &[[f32; D_EMB]; VOCAB], w: &[[f32; VOCAB]; D_EMB]) -> [[f64; VOCAB]; VOCAB] {
    let mut out = [[0.0; VOCAB]; VOCAB];
    for (x, row) in out.iter_mut().enumerate() {
        *row = softmax3(&compute_logits(e, w, x));
    }
    out
}

/// `E[x] · W` (x < 3).
pub fn compute_logits(e: &[[f32; D_EMB]; VOCAB], w: &[[f32; VOCAB]; D_EMB], x: usize) -> [f32; VOCAB] {
    let mut out = [0.0f32; VOCAB];
    for (j, o) in out.iter_mut().enumerate() {
        *o = (0..D_EMB).map(|k| e[x][k] * w[k][j]).sum();
    }
    out
}

fn softmax3(logits: &[f32; VOCAB]) -> [f64; VOCAB] {
    let max = logits.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v)) as f64;
    let exps = logits.map(|v| (v as f64 - max).exp());
    let sum: f64 = exps.iter().sum();
    exps.map(|v| v / sum)
}

/// The lesson's corpus: `pat = [a, b, c, b]` repeated to 60 tokens (ids 0, 1, 2).
pub fn build_lesson18_corpus() -> Vec<u32> {
    const PATTERN: [u32; 4] = [0, 1, 2, 1];
    (0..CORPUS_LEN).map(|i| PATTERN[i % 4]).collect()
}

/// Linear warmup over `WARMUP_STEPS` to `PEAK_LR`, then cosine decay to 0 at
/// `steps`. `step` is 0-based; the first step already has a non-zero rate.
pub fn compute_learning_rate(step: usize, steps: usize) -> f64 {
    if step < WARMUP_STEPS {
        return PEAK_LR * (step + 1) as f64 / WARMUP_STEPS as f64;
    }
    let decay_steps = steps.saturating_sub(WARMUP_STEPS).max(1) as f64;
    let progress = ((step - WARMUP_STEPS) as f64 / decay_steps).min(1.0);
    PEAK_LR * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos())
}

/// The 24 trainable numbers.
#[derive(Module, Debug)]
struct BigramNet {
    /// (vocab, d_emb)
    e: Param<Tensor<2>>,
    /// (d_emb, vocab)
    w: Param<Tensor<2>>,
}

impl BigramNet {
    fn init(rng: &mut Rng, device: &Device) -> Self {
        let mut draw = |n: usize| -> Vec<f32> { (0..n).map(|_| (rng.next_normal() * INIT_STD) as f32).collect() };
        let e = draw(VOCAB * D_EMB);
        let w = draw(D_EMB * VOCAB);
        Self {
            e: Param::from_data(TensorData::new(e, [VOCAB, D_EMB]), device),
            w: Param::from_data(TensorData::new(w, [D_EMB, VOCAB]), device),
        }
    }

    /// # Shapes
    /// - `one_hot`: (N, vocab), one row per input token
    /// - returns: (N, vocab) logits
    fn forward(&self, one_hot: Tensor<2>) -> Tensor<2> {
        one_hot.matmul(self.e.val()).matmul(self.w.val())
    }
}

/// Trains the lesson-18 bigram for `steps` full-batch AdamW steps from the
/// initial weights drawn with `seed`.
pub fn train_bigram(steps: usize, seed: u64) -> BigramTrainResult {
    let device = Device::flex().autodiff();
    let mut rng = Rng::new(seed);
    let mut model = BigramNet::init(&mut rng, &device);

    let corpus = build_lesson18_corpus();
    let train = &corpus[..TRAIN_TOKENS];
    let n = train.len() - 1;
    // Inputs as one-hot rows, so the embedding lookup is a matmul (its gradient too).
    let mut one_hot = vec![0.0f32; n * VOCAB];
    for (row, &x) in train[..n].iter().enumerate() {
        one_hot[row * VOCAB + x as usize] = 1.0;
    }
    let targets: Vec<i64> = train[1..].iter().map(|&y| y as i64).collect();
    let inputs = Tensor::<2>::from_data(TensorData::new(one_hot, [n, VOCAB]), &device);
    let targets = Tensor::<1, Int>::from_data(TensorData::new(targets, [n]), &device);

    let loss_fn = CrossEntropyLossConfig::new().init(&device);
    let mut optim = AdamWConfig::new().with_weight_decay(WEIGHT_DECAY as f32).with_epsilon(1e-8).init();
    let mut losses = Vec::with_capacity(steps);
    let every = steps.div_ceil(TRACE_POINTS).max(1);
    let mut trace = Vec::with_capacity(TRACE_EARLY + TRACE_POINTS + 1);
    for step in 0..steps {
        if step < TRACE_EARLY || step % every == 0 {
            trace.push((step, probs_of(&read_matrix(model.e.val()), &read_matrix(model.w.val()))));
        }
        let logits = model.forward(inputs.clone());
        let loss = loss_fn.forward(logits, targets.clone());
        losses.push(loss.clone().into_scalar::<f32>() as f64);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(compute_learning_rate(step, steps), model, grads);
    }
    let (e, w) = (read_matrix(model.e.val()), read_matrix(model.w.val()));
    trace.push((steps, probs_of(&e, &w)));
    BigramTrainResult { losses, e, w, trace }
}

/// Copies a small (R, C) tensor into an array.
fn read_matrix<const R: usize, const C: usize>(t: Tensor<2>) -> [[f32; C]; R] {
    let values: Vec<f32> = t.into_data().convert::<f32>().try_into_vec::<f32>().unwrap_or_default();
    let mut out = [[0.0f32; C]; R];
    for (i, v) in values.into_iter().take(R * C).enumerate() {
        out[i / C][i % C] = v;
    }
    out
}
