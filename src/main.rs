//! `mplsrouter`: the command-line edge. Parses arguments and calls into the crates;
//! `anyhow` lives here and nowhere else.

mod cmd;

use clap::{Parser, Subcommand};

const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "\ngit revision: ",
    env!("MPLSROUTER_GIT_REV"),
    "\nDPDK (build, pkg-config): ",
    env!("MPLSROUTER_DPDK_VERSION"),
);

/// A DPDK-based MPLS/IPv4 label-switching router (LSR and LER).
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
    /// Compare the IPv4 lookup of our Lpm4 with DPDK's rte_lpm on the same table and keys.
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

/// Version information shared by `--version` and the `mplsrouter_build_info` metric.
pub fn build_info() -> router::metrics::BuildInfo {
    router::metrics::BuildInfo {
        version: env!("CARGO_PKG_VERSION").into(),
        git_rev: env!("MPLSROUTER_GIT_REV").into(),
        dpdk_version: env!("MPLSROUTER_DPDK_VERSION").into(),
    }
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(a) => cmd::run::run(a),
        Command::Check(a) => cmd::check::run(a),
        Command::GenTraffic(a) => cmd::gen_traffic::run(a),
        Command::BenchLookup(a) => cmd::bench_lookup::run(a),
        Command::Stats(a) => cmd::stats::run(a),
        Command::Show(a) => cmd::show::run(a),
        Command::Lookup(a) => cmd::lookup::run(a),
        Command::Trace(a) => cmd::trace::run(a),
        Command::Capture(a) => cmd::capture::run(a),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("{}", error_text(&format!("{e:#}")));
            std::process::exit(1);
        }
    }
}

/// The one line that reports a failed command: `mplsrouter: error: ...`, without a
/// second "error:" when the message (e.g. config diagnostics) already starts with one.
fn error_text(msg: &str) -> String {
    let msg = msg.strip_prefix("error: ").unwrap_or(msg);
    format!("mplsrouter: error: {msg}")
}

#[cfg(test)]
mod tests {
    use super::error_text;

    #[test]
    fn error_is_said_once() {
        assert_eq!(
            error_text("error: a.yaml:1:1: bogus: unknown key"),
            "mplsrouter: error: a.yaml:1:1: bogus: unknown key"
        );
        assert_eq!(
            error_text("cannot read x"),
            "mplsrouter: error: cannot read x"
        );
    }
}
