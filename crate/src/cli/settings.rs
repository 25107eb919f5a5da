//! `nexttoken settings`: the engine's settings definition (every default and
//! range, the choices' names, the course constants) as JSON, or with `--js`
//! as the page's module `www/state/engine-settings.js`.

use std::io::Write;

use clap::Args;

use crate::error::{Error, Result};
use crate::schema::SettingsTable;

#[derive(Args, Debug)]
pub struct SettingsArgs {
    /// Print the page's ES module instead of JSON.
    #[arg(long)]
    pub js: bool,
}

pub fn run(args: SettingsArgs) -> Result<()> {
    let table = SettingsTable::new();
    let text = if args.js { table.to_page_module() } else { table.to_json() + "\n" };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| Error::new(format!("cannot write to stdout: {e}")))
}
