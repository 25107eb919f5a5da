//! `nexttoken score`: how likely the model found every token of a text
//! (teacher-forced, one pass), as a table or as JSON.

use std::io::Write;

use clap::Args;

use super::model_arg::ModelArgs;
use crate::error::{Error, Result};

#[derive(Args, Debug)]
pub struct ScoreArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[arg(long, allow_hyphen_values = true)]
    pub text: String,
    /// Score the text as a user's message inside the model's chat template.
    #[arg(long)]
    pub chat: bool,
    /// Print the whole report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ScoreArgs) -> Result<()> {
    let mut session = args.model.open()?;
    let report = session.score(&args.text, args.chat)?;
    let mut out = String::new();
    if args.json {
        out = serde_json::to_string(&report).expect("a score report serialises") + "\n";
    } else {
        out.push_str(&format!("{:>5}  {:>7}  {:>6}  {:>10}  token\n", "pos", "id", "rank", "p"));
        for (i, t) in report.tokens.iter().enumerate() {
            let (rank, p) = match (t.rank, t.prob) {
                (Some(r), Some(p)) => (r.to_string(), format!("{p:.6}")),
                _ => ("-".into(), "-".into()),
            };
            out.push_str(&format!("{i:>5}  {:>7}  {rank:>6}  {p:>10}  {}\n", t.id, t.display));
        }
        let b = report.rank_buckets;
        out.push_str(&format!(
            "{} tokens scored: mean surprisal {:.4} bits, perplexity {:.3}; rank 1: {}, 2-10: {}, 11-100: {}, beyond: {}\n",
            report.scored, report.mean_surprisal_bits, report.perplexity, b.top1, b.top10, b.top100, b.rest
        ));
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes()).and_then(|_| stdout.flush()).map_err(|e| Error::new(format!("cannot write to stdout: {e}")))
}
