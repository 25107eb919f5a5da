//! `nexttoken check-cache`: generate greedily, then compare the cached
//! path's logits with a full recompute at every position (teacher forcing),
//! and print the work counters of the generation.

use clap::Args;
use serde::Serialize;

use super::model_arg::ModelArgs;
use crate::counters::Counters;
use crate::error::Result;
use crate::kv_check::{TeacherForcedCheck, teacher_forced};
use crate::rules::RuleSettings;
use crate::session::GenerationSettings;
use crate::settings::MAX_NEW;

#[derive(Args, Debug)]
pub struct CheckCacheArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[arg(long, allow_hyphen_values = true)]
    pub prompt: String,
    /// Tokens to generate greedily after the prompt.
    #[arg(long, allow_negative_numbers = true, default_value_t = 24)]
    pub steps: usize,
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct CheckCacheReport {
    prompt_tokens: usize,
    generated: usize,
    /// Work of the greedy generation, per layer and KV head.
    generation: Counters,
    teacher_forced: TeacherForcedCheck,
    cache_bytes: usize,
}

pub fn run(args: CheckCacheArgs) -> Result<()> {
    if args.steps == 0 || args.steps > MAX_NEW {
        crate::bail!("--steps must be between 1 and {MAX_NEW}, got {}", args.steps);
    }
    let mut session = args.model.open()?;
    let settings = GenerationSettings {
        rules: RuleSettings { temperature: 0.0, ..RuleSettings::default() },
        max_new: args.steps,
        ..GenerationSettings::default()
    };
    let start = session.start(&args.prompt, &settings)?;
    let mut last = start.clone();
    while last.stop.is_none() {
        last = session.step(&settings)?;
    }
    let prompt_len = session.transcript().prompt_tokens.len();
    let tokens = session.history();
    let report = CheckCacheReport {
        prompt_tokens: prompt_len,
        generated: tokens.len() - prompt_len,
        generation: last.counters,
        cache_bytes: last.kv.bytes,
        teacher_forced: teacher_forced(session.model_mut(), &tokens, prompt_len)?,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report).expect("report serialises"));
        return Ok(());
    }
    let tf = &report.teacher_forced;
    println!("prompt {} tokens, generated {} greedily", report.prompt_tokens, report.generated);
    println!(
        "teacher-forced, {} positions: largest |cached - recomputed| = {:.3e}; same argmax at {}/{}",
        tf.positions, tf.max_abs_diff, tf.argmax_agree, tf.positions
    );
    let (c, n) = (report.generation.cached, report.generation.naive);
    println!("per layer and KV head during generation:");
    println!("  K/V rows projected: cached {:>8}   naive {:>8}   ({:.1}x)", c.kv_rows, n.kv_rows, n.kv_rows as f64 / c.kv_rows.max(1) as f64);
    println!("  attention scores:   cached {:>8}   naive {:>8}   ({:.1}x)", c.scores, n.scores, n.scores as f64 / c.scores.max(1) as f64);
    println!("KV cache now holds {} bytes", report.cache_bytes);
    Ok(())
}
