//! `mplsrouter`: the command-line edge. Parses arguments and calls into the crates;
//! `anyhow` lives here and nowhere else.
#![forbid(unsafe_code)]

mod cmd;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "\ngit revision: ",
    env!("MPLSROUTER_GIT_REV"),
    "\nDPDK (build, pkg-config): ",
    env!("MPLSROUTER_DPDK_VERSION"),
    "\nDPDK linked from: ",
    env!("MPLSROUTER_DPDK_LINK"),
);

/// A DPDK-based MPLS/IP label-switching router (LSR and LER), IPv4 and IPv6 (6PE).
#[derive(Parser, Debug)]
#[command(name = "mplsrouter", version, long_version = LONG_VERSION, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the router with a startup config (see dpdk-config/demo.yaml).
    Run(cmd::run::RunArgs),
    /// Validate a startup config or a routes file without running anything.
    Check(cmd::check::CheckArgs),
    /// Write a traffic scenario to a pcap file (and the routes that forward it).
    GenTraffic(cmd::gen_traffic::GenTrafficArgs),
    /// Compare our LPM with DPDK's on the same table and keys: Lpm4 with rte_lpm, or
    /// (--family ipv6) Lpm6 with rte_lpm6 and rte_fib6.
    BenchLookup(cmd::bench_lookup::BenchLookupArgs),
    /// Print a running router's counters as a table, read from its /metrics endpoint.
    Stats(cmd::stats::StatsArgs),
    /// Show what a running router holds (routes, labels, neighbours, ports, workers),
    /// asked over its control socket.
    Show(cmd::show::ShowArgs),
    /// What the running router does with a packet: route or label entry, ECMP member,
    /// rewrite and egress port, decided by the data path's own code.
    Lookup(cmd::lookup::LookupArgs),
    /// What the next packets did: headers, decisions and verdict, from the workers.
    Trace(cmd::trace::TraceArgs),
    /// Frames a port receives, into a pcap for Wireshark (bounded by count and time).
    Capture(cmd::capture::CaptureArgs),
}

// Package-build commands, added to the parser hidden and absent from `Cli::command()`,
// which is what the man pages and completions are generated from. (Not a doc comment:
// clap would make it the `about` of the whole parser, over `Cli`'s.)
#[derive(Subcommand, Debug)]
enum BuildCommand {
    /// Write the man pages into DIR.
    #[command(hide = true)]
    GenerateMan(cmd::generate::OutDirArgs),
    /// Write bash, zsh and fish completions into DIR.
    #[command(hide = true)]
    GenerateCompletions(cmd::generate::OutDirArgs),
}

/// Version information shared by `--version` and the `mplsrouter_build_info` metric.
pub fn build_info() -> router::metrics::BuildInfo {
    router::metrics::BuildInfo {
        version: env!("CARGO_PKG_VERSION").into(),
        git_rev: env!("MPLSROUTER_GIT_REV").into(),
        dpdk_version: env!("MPLSROUTER_DPDK_VERSION").into(),
    }
}

/// The parser: `Cli` with the hidden package-build commands.
fn parser() -> clap::Command {
    BuildCommand::augment_subcommands(Cli::command())
}

fn main() {
    let matches = parser().get_matches();
    let cli = match BuildCommand::from_arg_matches(&matches) {
        Ok(BuildCommand::GenerateMan(a)) => exit(cmd::generate::man(Cli::command(), a)),
        Ok(BuildCommand::GenerateCompletions(a)) => {
            exit(cmd::generate::completions(Cli::command(), a))
        }
        Err(_) => Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit()),
    };
    exit(match cli.command {
        Command::Run(a) => cmd::run::run(a),
        Command::Check(a) => cmd::check::run(a),
        Command::GenTraffic(a) => cmd::gen_traffic::run(a),
        Command::BenchLookup(a) => cmd::bench_lookup::run(a),
        Command::Stats(a) => cmd::stats::run(a),
        Command::Show(a) => cmd::show::run(a),
        Command::Lookup(a) => cmd::lookup::run(a),
        Command::Trace(a) => cmd::trace::run(a),
        Command::Capture(a) => cmd::capture::run(a),
    })
}

/// Exits with the command's status, or prints its error and exits with 1.
fn exit(result: anyhow::Result<i32>) -> ! {
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("{}", error_text(e.chain().map(|c| c.to_string())));
            std::process::exit(1);
        }
    }
}

/// The one line that reports a failed command: `mplsrouter: error: ` then the error's
/// chain (outermost first) joined by ": ". Each cause is said once: one whose text its
/// parent's message already includes is left out. "error:" is said once: a message that
/// starts with one (config diagnostics, rustc style) loses it.
fn error_text(chain: impl Iterator<Item = String>) -> String {
    let mut parts: Vec<String> = Vec::new();
    for text in chain {
        let text = text.strip_prefix("error: ").unwrap_or(&text).to_owned();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
    }
    format!("mplsrouter: error: {}", parts.join(": "))
}

#[cfg(test)]
mod tests {
    use super::error_text;

    #[test]
    fn top_level_help_is_the_routers() {
        let help = super::parser().render_help().to_string();
        assert!(
            help.starts_with("DPDK-based MPLS/IP label-switching router"),
            "{help}"
        );
        assert!(help.contains("IPv6"), "{help}");
    }

    fn text(chain: &[&str]) -> String {
        error_text(chain.iter().map(|s| s.to_string()))
    }

    #[test]
    fn error_is_said_once() {
        assert_eq!(
            text(&["error: a.yaml:1:1: bogus: unknown key"]),
            "mplsrouter: error: a.yaml:1:1: bogus: unknown key"
        );
        assert_eq!(text(&["cannot read x"]), "mplsrouter: error: cannot read x");
    }

    /// A typed error whose message includes its source (thiserror's `{source}` style)
    /// says the source once; one whose message does not gets it appended.
    #[test]
    fn each_cause_is_said_once() {
        assert_eq!(
            text(&[
                "running a.yaml",
                "routes: cannot read r.yaml: No such file",
                "error: cannot read r.yaml: No such file",
                "No such file"
            ]),
            "mplsrouter: error: running a.yaml: routes: cannot read r.yaml: No such file"
        );
        assert_eq!(
            text(&["running a.yaml", "port \"a\"", "EBUSY"]),
            "mplsrouter: error: running a.yaml: port \"a\": EBUSY"
        );
    }
}

#[cfg(test)]
mod docs_tests {
    use super::{cmd::generate, Cli};
    use clap::CommandFactory;

    /// Every public subcommand gets a man page and completions; the package-build
    /// commands get neither.
    #[test]
    fn docs_cover_public_commands_only() {
        let dir = std::env::temp_dir().join(format!("mplsrouter-docs-{}", std::process::id()));
        let out = |d: &str| generate::OutDirArgs { dir: dir.join(d) };
        generate::man(Cli::command(), out("man")).unwrap();
        generate::completions(Cli::command(), out("comp")).unwrap();
        // One page for the command and every subcommand, nested ones (`show routes`)
        // included.
        fn names(prefix: &str, c: &clap::Command, pages: &mut Vec<String>) {
            pages.push(format!("{prefix}.1"));
            for s in c.get_subcommands().filter(|s| !s.is_hide_set()) {
                names(&format!("{prefix}-{}", s.get_name()), s, pages);
            }
        }
        let mut pages = Vec::new();
        names("mplsrouter", &Cli::command(), &mut pages);
        let mut found: Vec<String> = std::fs::read_dir(dir.join("man"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        found.sort();
        pages.sort();
        assert_eq!(found, pages);
        let check = std::fs::read_to_string(dir.join("man/mplsrouter-check.1")).unwrap();
        let version = env!("CARGO_PKG_VERSION");
        assert!(
            check.contains(&format!("\"mplsrouter {version}\"")),
            "{check}"
        );
        assert!(pages.contains(&"mplsrouter-check.1".to_owned()));
        for f in ["mplsrouter.bash", "_mplsrouter", "mplsrouter.fish"] {
            let text = std::fs::read_to_string(dir.join("comp").join(f)).unwrap();
            assert!(text.contains("gen-traffic"), "{f} lacks gen-traffic");
            assert!(
                !text.contains("generate-"),
                "{f} offers a package-build command"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
