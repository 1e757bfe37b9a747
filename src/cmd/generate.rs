//! `mplsrouter generate-man DIR` and `mplsrouter generate-completions DIR`: hidden
//! subcommands that write the man pages (clap_mangen) and the bash/zsh/fish completions
//! (clap_complete) from the same clap definitions the binary parses with.
//!
//! Why here and not in an xtask: the CLI is defined in this binary crate, and the package
//! build (scripts/package.sh) runs the binary it is about to ship, so the pages always
//! document exactly that binary, subcommands added later included. Hidden subcommands
//! (these two) get no man page and no completion.
//!
//! Must never do anything but write files into the given directory.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use clap_complete::Shell;

#[derive(Args, Debug)]
pub struct OutDirArgs {
    /// Directory to write into (created when missing).
    pub dir: PathBuf,
}

/// One page per visible command: mplsrouter.1, mplsrouter-run.1, mplsrouter-check.1, ...
/// Every page's footer names the program and its version ("mplsrouter 0.1.0").
pub fn man(cmd: clap::Command, a: OutDirArgs) -> Result<i32> {
    create(&a.dir)?;
    let source = format!("{} {}", cmd.get_name(), cmd.get_version().unwrap_or(""));
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    write_pages(&cmd, source.trim_end(), &a.dir)
        .with_context(|| format!("cannot write man pages to {}", a.dir.display()))?;
    Ok(0)
}

fn write_pages(cmd: &clap::Command, source: &str, dir: &Path) -> std::io::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, source, dir)?;
    }
    clap_mangen::Man::new(cmd.clone())
        .source(source)
        .generate_to(dir)
        .map(drop)
}

/// mplsrouter.bash, _mplsrouter (zsh) and mplsrouter.fish.
pub fn completions(mut cmd: clap::Command, a: OutDirArgs) -> Result<i32> {
    create(&a.dir)?;
    let name = cmd.get_name().to_owned();
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        clap_complete::generate_to(shell, &mut cmd, &name, &a.dir)
            .with_context(|| format!("cannot write {shell} completions to {}", a.dir.display()))?;
    }
    Ok(0)
}

fn create(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
}
