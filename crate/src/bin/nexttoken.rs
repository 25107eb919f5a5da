//! `nexttoken`: the engine's command line (see `nexttoken::cli`).

fn main() -> std::process::ExitCode {
    nexttoken::cli::run()
}
