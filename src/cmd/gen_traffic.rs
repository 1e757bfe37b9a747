//! `mplsrouter gen-traffic`: scenario pcaps for demos, benchmarks and tests.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use traffic::{self, GenOptions, Scenario, SCENARIOS};

#[derive(Args, Debug)]
pub struct GenTrafficArgs {
    /// Scenario: mpls-swap, mpls-php, ler-push2, ipv4-small, ipv4-full, ecmp-4, demo,
    /// ipv6-small, ipv6-full, 6pe-push.
    pub scenario: String,
    /// Output pcap file.
    #[arg(long, short)]
    pub out: PathBuf,
    /// Also write the routes file that forwards this traffic (YAML).
    #[arg(long)]
    pub routes: Option<PathBuf>,
    /// Number of frames. Keep it small (a few thousand) for benchmarks: a large pcap makes
    /// the net_pcap source itself the bottleneck.
    #[arg(long, default_value_t = 4096)]
    pub count: usize,
    /// Frame size on the wire in bytes, FCS included (64..=1518). IPv6 frames are at
    /// least 66 bytes (Ethernet, IPv6 and UDP headers and the FCS).
    #[arg(long, default_value_t = 64)]
    pub size: usize,
    /// Random seed (the same seed gives the same pcap).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Prefix list for ipv4-full (one CIDR per line, plain or .gz).
    #[arg(long, default_value = "../shared/data/ipv4-fullview-2023.txt.gz")]
    pub prefixes: PathBuf,
    /// Prefix list for ipv6-full (one IPv6 CIDR per line, plain or .gz).
    #[arg(long, default_value = "../shared/data/ipv6-fullview-2023.txt.gz")]
    pub prefixes6: PathBuf,
}

pub fn run(a: GenTrafficArgs) -> Result<i32> {
    let Some(scenario) = Scenario::parse(&a.scenario) else {
        bail!(
            "unknown scenario {:?}; choose one of {}",
            a.scenario,
            SCENARIOS.join(", ")
        );
    };
    if !(64..=1518).contains(&a.size) {
        bail!("--size {} is outside 64..=1518", a.size);
    }
    if a.count == 0 {
        bail!("--count must be at least 1");
    }
    let prefixes = if scenario == Scenario::Ipv4Full {
        Some(super::prefix_file::load(&a.prefixes).context("ipv4-full needs --prefixes")?)
    } else {
        None
    };
    let prefixes6 = if scenario == Scenario::Ipv6Full {
        let raw = std::fs::read(&a.prefixes6).with_context(|| {
            format!(
                "ipv6-full needs --prefixes6: read {}",
                a.prefixes6.display()
            )
        })?;
        Some(
            net::fib::prefix_list6::parse_prefix_list6(&raw)
                .with_context(|| format!("parse {}", a.prefixes6.display()))?,
        )
    } else {
        None
    };
    let opts = GenOptions {
        count: a.count,
        size: a.size,
        seed: a.seed,
        prefixes,
        prefixes6,
    };
    let frames = scenario.frames(&opts);
    traffic::write_pcap(&a.out, &frames).with_context(|| format!("write {}", a.out.display()))?;
    println!(
        "wrote {} frames of {} bytes to {}",
        frames.len(),
        frames.first().map_or(a.size, |f| f.len() + 4),
        a.out.display()
    );
    if let Some(r) = &a.routes {
        std::fs::write(r, scenario.routes_yaml(&opts))
            .with_context(|| format!("write {}", r.display()))?;
        println!("wrote routes to {}", r.display());
    }
    Ok(0)
}
