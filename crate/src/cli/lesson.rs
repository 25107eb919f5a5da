//! `nexttoken lesson <name>`: the numbers (and figure data) of one of the
//! page's course presets as JSON, computed by the same code the page runs
//! (`crate::course`); `nexttoken lesson --list` names them all, and
//! `nexttoken lesson kv-size --layers ...` is the cache-size calculator and
//! `nexttoken lesson diversity --model M` measures diversity on a model.

use std::io::Write;

use clap::Args;

use crate::course::{self, kv::KvShape};
use crate::error::{Error, Result};

#[derive(Args, Debug)]
pub struct LessonArgs {
    /// The preset, e.g. temperature-10class (see --list).
    pub name: Option<String>,
    /// List every preset's name.
    #[arg(long)]
    pub list: bool,
    /// diversity: the model (a folder, a GGUF file or builtin:NAME).
    #[arg(long, default_value = "www/models/bard")]
    pub model: String,
    /// diversity: the prompt.
    #[arg(long, default_value = "ROMEO:\n")]
    pub prompt: String,
    /// kv-size: layers.
    #[arg(long, default_value_t = KvShape::LESSON.layers)]
    pub layers: usize,
    /// kv-size: query heads.
    #[arg(long, default_value_t = KvShape::LESSON.heads)]
    pub heads: usize,
    /// kv-size: K/V heads (fewer than heads: grouped-query attention).
    #[arg(long, default_value_t = KvShape::LESSON.kv_heads)]
    pub kv_heads: usize,
    /// kv-size: d_head.
    #[arg(long, default_value_t = KvShape::LESSON.head_dim)]
    pub head_dim: usize,
    /// kv-size: context length in positions.
    #[arg(long, default_value_t = KvShape::LESSON.context)]
    pub context: usize,
    /// kv-size: bytes per number (2 = fp16).
    #[arg(long, default_value_t = KvShape::LESSON.bytes_per_number)]
    pub bytes: usize,
}

pub fn run(args: LessonArgs) -> Result<()> {
    let text = if args.list {
        course::NAMES.join("\n")
    } else {
        let Some(name) = args.name.as_deref() else {
            return Err(Error::new(format!("name a lesson: one of {}", course::NAMES.join(", "))));
        };
        let value = if name == "diversity" {
            let prompt = args.prompt.replace("\\n", "\n");
            course::diversity::curve(&mut super::model_arg::open_session(&args.model, "flex", None)?, &prompt)?
        } else if name == "kv-size" {
            let shape = KvShape {
                layers: args.layers,
                heads: args.heads,
                kv_heads: args.kv_heads,
                head_dim: args.head_dim,
                context: args.context,
                bytes_per_number: args.bytes,
            };
            course::kv::check_shape(&shape)?;
            course::kv::size(&shape).to_json()
        } else {
            course::lesson(name)?
        };
        serde_json::to_string_pretty(&value).map_err(|e| Error::new(e.to_string()))?
    };
    writeln!(std::io::stdout().lock(), "{text}").map_err(|e| Error::new(format!("cannot write to stdout: {e}")))
}
