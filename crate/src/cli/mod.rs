//! The native command line over the same engine the page runs.
//!
//! One subcommand = one `Command` variant + one module with
//! `pub fn run(args) -> crate::error::Result<()>`. Errors print
//! `error: <message>` on stderr and exit with status 2; usage errors are
//! reported by clap the same way.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod bench;
pub mod check_cache;
pub mod compare;
pub mod config;
pub mod dist;
pub mod inside;
pub mod generate;
pub mod lesson;
mod model_arg;
pub mod rule_args;
pub mod score;
pub mod settings;
pub mod train;

#[derive(Parser, Debug)]
#[command(
    name = "nexttoken",
    version,
    about = "Next-Token Playground engine on the command line"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Show how each decoding rule reshapes a next-token distribution.
    Dist(dist::DistArgs),
    /// Generate text from a model, token by token, with the same rules.
    Generate(generate::GenerateArgs),
    /// Compare the KV-cached logits with a full recompute at every position.
    CheckCache(check_cache::CheckCacheArgs),
    /// Time loading, prefill and decoding on a model (one thread unless --threads).
    Bench(bench::BenchArgs),
    /// Score a text: every token's probability and rank given the ones before it.
    Score(score::ScoreArgs),
    /// Train the default model on the Shakespeare corpus.
    Train(train::TrainArgs),
    /// Print every setting's default and range (the page's copy: --js).
    Settings(settings::SettingsArgs),
    /// Print a course preset's numbers (the page's Lessons menu) as JSON.
    Lesson(lesson::LessonArgs),
    /// After a prompt: what the newest query read in every layer, and the logit lens.
    Inside(inside::InsideArgs),
    /// Two decoding configurations (each in an engine's words) side by side, and N continuations each, as JSON.
    Compare(compare::CompareArgs),
    /// A decoding configuration in one engine's words written in another's.
    Config(config::ConfigArgs),
}

/// Parses the arguments, runs the subcommand, and turns an error into a
/// message and exit status 2 (never a panic trace).
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Dist(args) => dist::run(args),
        Command::Generate(args) => generate::run(args),
        Command::CheckCache(args) => check_cache::run(args),
        Command::Score(args) => score::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Train(args) => train::run(args),
        Command::Settings(args) => settings::run(args),
        Command::Lesson(args) => lesson::run(args),
        Command::Inside(args) => inside::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Config(args) => config::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
