//! Trains the default model: a small decoder on token ids, with burn's
//! autodiff on the CPU, seeded, with a held-out validation loss, progress
//! reporting and checkpoints it can resume from.
//!
//! ```text
//! every step:  B random windows of T+1 tokens from the training ids (our RNG)
//!              ─► logits (B, T, V) ─► cross-entropy vs the next token ─► backward ─► AdamW
//! lr:          linear warmup to `lr`, then cosine down to lr/10
//! every eval:  mean loss over fixed windows of the validation ids
//! ```

use std::path::Path;
use std::time::Instant;

use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamWConfig, GradientsParams};
use burn::grad_clipping::GradientClippingConfig;
use burn::tensor::{Device, Int, Tensor, TensorData};
use serde::{Deserialize, Serialize};

use crate::bail;
use crate::config::ModelConfig;
use crate::error::{Error, Result};
use crate::model::Transformer;
use crate::rng::Rng;
use crate::weights;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TrainOptions {
    pub steps: usize,
    pub batch: usize,
    /// Tokens per training window (≤ the model's context).
    pub seq_len: usize,
    pub lr: f64,
    pub warmup: usize,
    pub weight_decay: f64,
    pub grad_clip: f64,
    pub seed: u64,
    /// Steps between validation passes and checkpoints.
    pub eval_every: usize,
    /// Windows in one validation pass.
    pub eval_windows: usize,
}

/// What a training run measured, step by step.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TrainLog {
    pub step: usize,
    pub tokens_seen: u64,
    pub seconds: f64,
    /// (step, mean training loss in nats/token over the last eval period)
    pub train_loss: Vec<(usize, f64)>,
    /// (step, validation loss in nats/token)
    pub val_loss: Vec<(usize, f64)>,
}

/// Where a run resumes from.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct CheckpointState {
    options: TrainOptions,
    config: ModelConfig,
    log: TrainLog,
    rng: Rng,
}

/// Warmup then cosine: the learning rate at `step`.
pub fn learning_rate(o: &TrainOptions, step: usize) -> f64 {
    if step < o.warmup {
        return o.lr * (step + 1) as f64 / o.warmup as f64;
    }
    let progress = (step - o.warmup) as f64 / (o.steps - o.warmup).max(1) as f64;
    let floor = o.lr / 10.0;
    floor + (o.lr - floor) * 0.5 * (1.0 + (std::f64::consts::PI * progress.min(1.0)).cos())
}

/// B windows of T+1 tokens starting at random offsets: inputs and next-token targets.
fn sample_batch(ids: &[u32], batch: usize, t: usize, rng: &mut Rng, device: &Device) -> (Tensor<2, Int>, Tensor<1, Int>) {
    let mut x = Vec::with_capacity(batch * t);
    let mut y = Vec::with_capacity(batch * t);
    for _ in 0..batch {
        let start = (rng.next_u64() % (ids.len() - t - 1) as u64) as usize;
        x.extend(ids[start..start + t].iter().map(|&v| v as i64));
        y.extend(ids[start + 1..start + t + 1].iter().map(|&v| v as i64));
    }
    (
        Tensor::from_data(TensorData::new(x, [batch, t]), device),
        Tensor::from_data(TensorData::new(y, [batch * t]), device),
    )
}

/// Mean next-token loss (nats/token) of a model over non-overlapping
/// windows of `ids` (the first `windows` of them).
pub fn evaluate(model: &Transformer, config: &ModelConfig, ids: &[u32], t: usize, windows: usize, device: &Device) -> Result<f64> {
    let loss_fn = CrossEntropyLossConfig::new().init(device);
    let (mut total, mut count) = (0.0, 0usize);
    let starts: Vec<usize> = (0..).map(|i| i * t).take_while(|s| s + t + 1 <= ids.len()).take(windows).collect();
    if starts.is_empty() {
        bail!("the validation text is shorter than one window of {t} tokens");
    }
    for chunk in starts.chunks(16) {
        let b = chunk.len();
        let x: Vec<i64> = chunk.iter().flat_map(|&s| ids[s..s + t].iter().map(|&v| v as i64)).collect();
        let y: Vec<i64> = chunk.iter().flat_map(|&s| ids[s + 1..s + t + 1].iter().map(|&v| v as i64)).collect();
        let x = Tensor::<2, Int>::from_data(TensorData::new(x, [b, t]), device);
        let y = Tensor::<1, Int>::from_data(TensorData::new(y, [b * t]), device);
        let logits = model.forward(config, x, 0, None, false).0.reshape([b * t, config.vocab_size]);
        let loss: f32 = loss_fn.forward(logits, y).into_scalar();
        total += loss as f64 * b as f64;
        count += b;
    }
    Ok(total / count as f64)
}

/// Progress callback: (step, steps, train loss, tokens/s, seconds left, val loss if just measured).
pub type Progress<'a> = &'a mut dyn FnMut(usize, usize, f64, f64, f64, Option<f64>);

/// Trains from scratch, or resumes from `checkpoint_dir` when it holds a
/// checkpoint of the same options and config. Writes a checkpoint every
/// `eval_every` steps. Stops after step `stop_after` (at most `options.steps`:
/// the schedule stays that of the whole run). Returns the trained model
/// (without autodiff) and its log.
pub fn train(
    config: &ModelConfig,
    options: &TrainOptions,
    stop_after: usize,
    train_ids: &[u32],
    val_ids: &[u32],
    checkpoint_dir: &Path,
    progress: Progress,
) -> Result<(Transformer, TrainLog)> {
    config.validate()?;
    if options.seq_len > config.context {
        bail!("seq_len {} is longer than the context {}", options.seq_len, config.context);
    }
    if train_ids.len() < options.seq_len + 2 {
        bail!("the training text has {} tokens, fewer than one window", train_ids.len());
    }
    let device = Device::flex().autodiff();
    let mut model = Transformer::init_seeded(config, options.seed, &device);
    let mut rng = Rng::new(options.seed);
    let mut log = TrainLog::default();
    if let Some((state, weights)) = read_checkpoint(checkpoint_dir)? {
        if state.options == *options && state.config == *config {
            model = weights::load_weights(config, weights, &device)?;
            rng = state.rng;
            log = state.log;
            eprintln!("resuming from step {} ({})", log.step, checkpoint_dir.display());
        } else {
            eprintln!("ignoring the checkpoint in {}: it was made with other options", checkpoint_dir.display());
        }
    }
    // AdamW moments are not in the checkpoint: a resumed run restarts them
    // (weights, step, schedule and data order are restored exactly).
    let mut optim = AdamWConfig::new()
        .with_weight_decay(options.weight_decay as f32)
        .with_grad_clipping(Some(GradientClippingConfig::Norm(options.grad_clip as f32)))
        .init();
    let loss_fn = CrossEntropyLossConfig::new().init(&device);
    let (b, t, v) = (options.batch, options.seq_len, config.vocab_size);
    let started = Instant::now();
    let seconds_before = log.seconds;
    let first_step = log.step;
    let (mut period_loss, mut period_steps) = (0.0, 0usize);
    let last_step = stop_after.min(options.steps);
    for step in first_step..last_step {
        let (x, y) = sample_batch(train_ids, b, t, &mut rng, &device);
        let logits = model.forward(config, x, 0, None, false).0.reshape([b * t, v]);
        let loss = loss_fn.forward(logits, y);
        let loss_value: f32 = loss.clone().into_scalar();
        if !loss_value.is_finite() {
            bail!("training diverged at step {step}: the loss is {loss_value}");
        }
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(learning_rate(options, step), model, grads);
        period_loss += loss_value as f64;
        period_steps += 1;
        log.step = step + 1;
        log.tokens_seen += (b * t) as u64;
        let elapsed = started.elapsed().as_secs_f64();
        log.seconds = seconds_before + elapsed;
        let rate = ((log.step - first_step) * b * t) as f64 / elapsed.max(1e-9);
        let left = (options.steps - log.step) as f64 * (b * t) as f64 / rate.max(1e-9);
        let mut val = None;
        if log.step % options.eval_every == 0 || log.step == last_step {
            let train_loss = period_loss / period_steps as f64;
            let v = evaluate(&model.valid(), config, val_ids, t, options.eval_windows, &device.clone().without_autodiff())?;
            log.train_loss.push((log.step, train_loss));
            log.val_loss.push((log.step, v));
            (period_loss, period_steps) = (0.0, 0);
            write_checkpoint(checkpoint_dir, &model.valid(), &CheckpointState {
                options: options.clone(),
                config: config.clone(),
                log: log.clone(),
                rng: rng.clone(),
            })?;
            val = Some(v);
        }
        progress(log.step, options.steps, loss_value as f64, rate, left, val);
    }
    Ok((model.valid(), log))
}

fn read_checkpoint(dir: &Path) -> Result<Option<(CheckpointState, Vec<u8>)>> {
    let (state_path, weights_path) = (dir.join("state.json"), dir.join("model.safetensors"));
    if !state_path.exists() || !weights_path.exists() {
        return Ok(None);
    }
    let read = |p: &Path| std::fs::read(p).map_err(|e| Error::new(format!("reading {}: {e}", p.display())));
    let state: CheckpointState = serde_json::from_slice(&read(&state_path)?)
        .map_err(|e| Error::new(format!("checkpoint {} is damaged: {e}", state_path.display())))?;
    Ok(Some((state, read(&weights_path)?)))
}

/// Writes weights then state, each through a temporary file and a rename,
/// so a run killed mid-write leaves the previous checkpoint whole.
fn write_checkpoint(dir: &Path, model: &Transformer, state: &CheckpointState) -> Result<()> {
    let io = |e: std::io::Error| Error::new(format!("writing a checkpoint in {}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(io)?;
    let put = |name: &str, bytes: &[u8]| -> Result<()> {
        let tmp = dir.join(format!("{name}.tmp"));
        std::fs::write(&tmp, bytes).map_err(io)?;
        std::fs::rename(&tmp, dir.join(name)).map_err(io)
    };
    put("model.safetensors", &weights::weights_to_bytes(model)?)?;
    put("state.json", serde_json::to_string(state).expect("state serialises").as_bytes())
}
