//! `nexttoken bench`: the engine's own speed on a model, measured the way
//! `pkg-scripts/bench-llamacpp` measures llama.cpp, so BENCHMARKS.md can
//! put the two side by side from one run: load time, prefill of a
//! 64-token prompt, decode one token at a time, peak memory.

use std::time::Instant;

use clap::Args;
use serde::Serialize;

use super::model_arg::ModelArgs;
use crate::error::Result;

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Prompt length for the prefill measure.
    #[arg(long, default_value_t = 64)]
    pub prefill: usize,
    /// Tokens decoded one at a time after the prompt.
    #[arg(long, default_value_t = 128)]
    pub decode: usize,
    /// Repeats of each measure; the median is reported.
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
    /// Threads the engine's kernels and burn-flex may use (rayon); 1 to compare with llama.cpp on one thread.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Also time whole greedy steps of the session (rules and report
    /// included), with the inside view off and on, in the same run.
    #[arg(long)]
    pub inside: bool,
}

#[derive(Serialize)]
struct BenchReport {
    engine: &'static str,
    model: String,
    backend: String,
    threads: usize,
    load_s: f64,
    prefill_tokens: usize,
    prefill_tok_s: f64,
    decode_tokens: usize,
    decode_tok_s: f64,
    decode_tok_s_best: f64,
    /// The process's peak resident memory (VmHWM), where /proc tells it.
    peak_rss_mb: Option<f64>,
    /// With `--inside`: session steps per second with the view off and on.
    #[serde(skip_serializing_if = "Option::is_none")]
    steps: Option<StepRates>,
}

#[derive(Serialize)]
struct StepRates {
    step_tok_s: f64,
    step_inside_tok_s: f64,
    /// Step time with the view on over the time with it off.
    inside_cost: f64,
}

/// Greedy session steps per second after the prompt (median of `repeats`),
/// with the inside view on or off: what a page's Run does per token.
fn step_rate(session: &mut crate::session::Session, prompt: &[u32], steps: usize, repeats: usize, inside: bool) -> Result<f64> {
    let mut settings = crate::settings::GenerationSettings { max_new: steps + 1, ..Default::default() };
    settings.rules.temperature = 0.0;
    session.set_inside(inside);
    let mut rates = Vec::new();
    for _ in 0..repeats {
        session.start_tokens(prompt, &settings)?;
        let t = Instant::now();
        for i in 0..steps {
            if let Some(stop) = session.step(&settings)?.stop {
                crate::bail!("the greedy run stopped after {} of {steps} steps ({}): bench a shorter --decode", i + 1, stop.describe());
            }
        }
        rates.push(steps as f64 / t.elapsed().as_secs_f64());
    }
    Ok(median(rates))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

pub fn run(args: BenchArgs) -> Result<()> {
    if args.threads == 0 {
        crate::bail!("--threads must be at least 1");
    }
    // rayon sizes its global pool from this variable the first time burn
    // uses it, which is after this point: nothing has run in parallel yet.
    unsafe { std::env::set_var("RAYON_NUM_THREADS", args.threads.to_string()) };
    let t0 = Instant::now();
    let mut session = args.model.open()?;
    let load_s = t0.elapsed().as_secs_f64();
    let info = session.info();
    let vocab = info.vocab_size as u32;
    if args.prefill == 0 || args.prefill + args.decode > info.context {
        crate::bail!("--prefill {} and --decode {} must be positive and fit the context of {}", args.prefill, args.decode, info.context);
    }
    // A fixed, ordinary token sequence: ids spread over the vocabulary.
    let prompt: Vec<u32> = (0..args.prefill as u32).map(|i| (1000 + i * 37) % vocab).collect();
    let repeats = args.repeats.max(1);
    let steps = if args.inside {
        let off = step_rate(&mut session, &prompt, args.decode, repeats, false)?;
        let on = step_rate(&mut session, &prompt, args.decode, repeats, true)?;
        session.set_inside(false);
        Some(StepRates { step_tok_s: off, step_inside_tok_s: on, inside_cost: off / on })
    } else {
        None
    };
    let model = session.model_mut();
    let (mut prefill, mut decode) = (Vec::new(), Vec::new());
    for _ in 0..repeats {
        model.truncate(0);
        let t = Instant::now();
        let mut logits = model.forward_cached(&prompt)?;
        prefill.push(args.prefill as f64 / t.elapsed().as_secs_f64());
        let t = Instant::now();
        for _ in 0..args.decode {
            let next = crate::rules::argmax(&logits.iter().map(|&v| v as f64).collect::<Vec<_>>()) as u32;
            logits = model.forward_cached(&[next])?;
        }
        decode.push(args.decode as f64 / t.elapsed().as_secs_f64());
    }
    let report = BenchReport {
        engine: "nexttoken (burn)",
        model: args.model.model.clone(),
        backend: args.model.backend.clone(),
        threads: args.threads,
        load_s,
        prefill_tokens: args.prefill,
        prefill_tok_s: median(prefill),
        decode_tokens: args.decode,
        decode_tok_s: median(decode.clone()),
        decode_tok_s_best: decode.iter().copied().fold(0.0, f64::max),
        peak_rss_mb: peak_rss_mb(),
        steps,
    };
    println!("{}", serde_json::to_string(&report).expect("report serialises"));
    Ok(())
}
