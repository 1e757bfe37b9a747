//! `mplsrouter check FILE`: validate without running; exit 0 with a summary, 1 with every
//! error found (file:line:column, key path, what is wrong and how to fix it).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// A startup config or a routes file (told apart by their top-level keys).
    pub file: PathBuf,
}

pub fn run(a: CheckArgs) -> Result<i32> {
    let (text, code) = config::render_check(&config::check_file(&a.file));
    if code == 0 {
        print!("{text}");
    } else {
        eprint!("{text}");
    }
    Ok(code)
}
