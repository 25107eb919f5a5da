//! `nexttoken inside`: after a prompt, what the newest token's query read in
//! every layer and what each layer would already predict (the logit lens),
//! as a table or as the page's `InsideReport` in JSON.

use std::io::Write;

use clap::Args;

use super::model_arg::ModelArgs;
use crate::error::{Error, Result};
use crate::inside::InsideReport;
use crate::settings::GenerationSettings;

#[derive(Args, Debug)]
pub struct InsideArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[arg(long, allow_hyphen_values = true)]
    pub prompt: String,
    /// The prompt is a user's message: wrap it in the model's chat template.
    #[arg(long)]
    pub chat: bool,
    /// Print the InsideReport as JSON (attention weights included) instead of tables.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: InsideArgs) -> Result<()> {
    let mut session = args.model.open()?;
    session.set_inside(true);
    let settings = GenerationSettings { chat: args.chat, ..GenerationSettings::default() };
    let report = session.start(&args.prompt, &settings)?;
    let Some(inside) = report.inside else {
        return Err(Error::new(format!("{} has no layers to look inside", session.info().name)));
    };
    let text = if args.json {
        serde_json::to_string(&inside).map_err(|e| Error::new(format!("cannot write JSON: {e}")))? + "\n"
    } else {
        format_tables(&inside)
    };
    std::io::stdout().lock().write_all(text.as_bytes()).map_err(|e| Error::new(format!("cannot write to stdout: {e}")))
}

/// The lens, one row per layer, then each layer's attention in summary.
fn format_tables(r: &InsideReport) -> String {
    // Lens entry 0 reads the stream after the embedding, entry l after
    // block l - 1 (blocks counted from 0, as the attention's layers are).
    let after = |entry: usize| if entry == 0 { "the embedding".to_string() } else { format!("layer {}", entry - 1) };
    let mut out = format!(
        "logit lens at position {} (following the raw top-1 {:?}, p = {:.4}; the top-1 from after {} on)\n",
        r.query,
        r.token.display,
        r.raw_prob,
        r.top1_from.map_or("-".to_string(), after)
    );
    out.push_str(&format!("{:>9} {:>8} {:>6} {:>9}  top 5\n", "after", "H nats", "rank", "p"));
    for l in &r.lens {
        let top: Vec<String> = l.top.iter().map(|t| format!("{:?} {:.3}", t.display, t.prob)).collect();
        let name = if l.layer == 0 { "embedding".to_string() } else { format!("layer {}", l.layer - 1) };
        out.push_str(&format!("{name:>9} {:>8.3} {:>6} {:>9.5}  {}\n", l.entropy, l.token_rank, l.token_prob, top.join(", ")));
    }
    out.push_str(&format!("\nattention of position {} ({} query heads over {} KV heads)\n", r.query, r.heads, r.kv_heads));
    out.push_str(&format!("{:>5} {:>7} {:>10} {:>10}  most read (position: mean weight)\n", "layer", "reads", "H mean", "sink mean"));
    for a in &r.attention {
        let n = r.query + 1 - a.first;
        let heads = a.entropy.len().max(1);
        let mut mean = vec![0f64; n];
        for row in a.weights.chunks(n) {
            for (m, &w) in mean.iter_mut().zip(row) {
                *m += w as f64 / heads as f64;
            }
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&x, &y| mean[y].total_cmp(&mean[x]));
        let most: Vec<String> = order.iter().take(3).map(|&i| format!("{}: {:.3}", a.first + i, mean[i])).collect();
        out.push_str(&format!(
            "{:>5} {:>7} {:>10.3} {:>10.3}  {}\n",
            a.layer,
            if a.window.is_some() { format!("{n}/w") } else { n.to_string() },
            a.entropy.iter().sum::<f64>() / heads as f64,
            a.sink.iter().sum::<f64>() / heads as f64,
            most.join(", ")
        ));
    }
    out
}
