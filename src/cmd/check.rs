//! `mplsrouter check FILE`: validate without running; exit 0 with a summary, 1 with every
//! error found.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use config::startup::StartupConfig;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// A startup config or a routes file.
    pub file: PathBuf,
}

pub fn run(a: CheckArgs) -> Result<i32> {
    match StartupConfig::load(&a.file) {
        Ok(cfg) => {
            println!(
                "{}: ok: startup config with {} ports, {} workers",
                a.file.display(),
                cfg.ports.len(),
                cfg.workers().len()
            );
            Ok(0)
        }
        Err(e) => {
            eprintln!("{e}");
            Ok(1)
        }
    }
}
