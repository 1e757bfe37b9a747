//! `mplsrouter bench-lookup`: our `Lpm4` against DPDK's `rte_lpm`, same table, same keys,
//! same run. Both must return the same next hop for every key, or the command fails.
//! `--family ipv6` compares `Lpm6` with `rte_lpm6` and `rte_fib6` ([`super::bench_lookup6`]).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use dpdk::{Eal, RteLpm};
use net::fib::{Lpm4, NO_ROUTE};
use traffic;

#[derive(Args, Debug)]
pub struct BenchLookupArgs {
    /// `ipv4` (Lpm4 vs rte_lpm) or `ipv6` (Lpm6 vs rte_lpm6 and rte_fib6).
    #[arg(long, default_value = "ipv4", value_parser = ["ipv4", "ipv6"])]
    pub family: String,
    /// Prefix list to build the tables from (one CIDR per line, plain or .gz). Default:
    /// ../shared/data/ipv4-fullview-2023.txt.gz, or ipv6-fullview-2023.txt.gz with
    /// `--family ipv6`.
    #[arg(long)]
    pub routes: Option<PathBuf>,
    /// `random` (uniform over announced address space) or a pcap whose destinations (of
    /// the family) are used as keys.
    #[arg(long, default_value = "random")]
    pub keys: String,
    /// Number of random keys.
    #[arg(long, default_value_t = 1 << 22)]
    pub count: usize,
    /// Seconds per contender: the five measurements take turns for five times this long,
    /// and each figure is its best pass.
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
    /// Distinct next-hop values spread over the prefixes by a fixed hash.
    #[arg(long, default_value_t = 256)]
    pub next_hops: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub(super) const BATCH: usize = 64;

/// The next hop of `addr/len` among `n`: the spread the lookup examples use. (Until
/// session 14 a multiplicative hash here kept prefixes' zero low bits, so the default 256
/// next hops were 18 distinct values on the full view.)
fn next_hop_of(addr: u32, len: u8, n: u32) -> u32 {
    net::fib::prefix_list::spread_value(addr, len, n.max(1))
}

/// Free hugepage memory the EAL needs before rte_lpm is put on hugepages: tbl24 (64 MiB)
/// and its tbl8 groups and rules, with room to spare.
const HUGE_NEEDED: u64 = 160 << 20;

/// EAL arguments: hugepages (`--in-memory`: no files, no shared config) when enough of
/// them are free in any size, so rte_lpm sits on them as in DPDK's own deployments;
/// else ordinary memory (`--no-huge`).
pub(super) fn eal_args(huge: bool) -> Vec<String> {
    let mut a: Vec<String> = [
        "mplsrouter-bench-lookup",
        "-l",
        "0",
        "--no-pci",
        "--no-telemetry",
        "--log-level=lib.eal:error",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.push(format!(
        "--file-prefix=mplsr-bench-lookup-{}",
        std::process::id()
    ));
    if huge {
        a.push("--in-memory".into());
    } else {
        a.extend([
            "--no-huge".into(),
            "--no-shconf".into(),
            "-m".into(),
            "1024".into(),
        ]);
    }
    a
}

/// One `pages:` line per structure lookups read: which pages back it (the kernel's
/// smaps), so a figure is never read without knowing whether it had hugepages.
fn page_lines(ours: &Lpm4, rte: &RteLpm) -> Vec<String> {
    let mib = |b: usize| b as f64 / (1024.0 * 1024.0);
    let lines = ours
        .memory_regions()
        .into_iter()
        .map(|r| ("Lpm4", r))
        .chain(rte.regions().into_iter().map(|r| ("rte_lpm", r)))
        .map(|(who, (name, addr, len))| {
            format!(
                "pages: {who:<8} {name:<6} {:>7.2} MiB  {}",
                mib(len),
                super::pages::describe_own(addr, len)
            )
        });
    lines.collect()
}

/// The IPv4 destination of a frame (plain or labelled), as the lookup takes it.
fn dst_of_frame(f: &[u8]) -> Option<u32> {
    let ip = net::wire::ipv4::Ipv4Packet::new_checked(net::wire::ip_packet(f)?).ok()?;
    Some(u32::from_be_bytes(ip.dst_addr()))
}

/// Best rate (million lookups per second) of each of `fs` over passes taken in turn for
/// `secs` per function: interleaving gives every contender the same share of a busy
/// machine's quiet and loud moments, so the ratios hold even when absolute rates wander.
pub(super) fn measure_interleaved(
    keys: usize,
    secs: f64,
    fs: &mut [&mut dyn FnMut() -> u64],
) -> Vec<f64> {
    let mut best = vec![f64::MAX; fs.len()];
    let start = Instant::now();
    let total = Duration::from_secs_f64(secs * fs.len() as f64);
    let mut rounds = 0;
    while rounds < 2 || start.elapsed() < total {
        for (f, b) in fs.iter_mut().zip(best.iter_mut()) {
            let t = Instant::now();
            black_box(f());
            *b = b.min(t.elapsed().as_secs_f64());
        }
        rounds += 1;
    }
    best.iter().map(|b| keys as f64 / b / 1e6).collect()
}

pub fn run(a: BenchLookupArgs) -> Result<i32> {
    let data = |f: &str| PathBuf::from("../shared/data").join(f);
    if a.family == "ipv6" {
        let routes = a
            .routes
            .clone()
            .unwrap_or_else(|| data("ipv6-fullview-2023.txt.gz"));
        return super::bench_lookup6::run(a, &routes);
    }
    let routes = a
        .routes
        .clone()
        .unwrap_or_else(|| data("ipv4-fullview-2023.txt.gz"));
    let prefixes = super::prefix_file::load(&routes)?;
    if prefixes.is_empty() {
        bail!("{}: no prefixes", routes.display());
    }
    let mut uniq = prefixes.clone();
    uniq.sort_unstable();
    uniq.dedup();
    println!(
        "table: {} ({} prefixes, {} distinct)",
        routes.display(),
        prefixes.len(),
        uniq.len()
    );

    let t = Instant::now();
    let mut ours = Lpm4::new();
    for &(p, l) in &uniq {
        ours.insert(p, l, next_hop_of(p, l, a.next_hops));
    }
    let ours_build = t.elapsed();

    let huge = super::pages::free_huge_bytes(std::path::Path::new("/sys/kernel/mm/hugepages"))
        >= HUGE_NEEDED;
    println!(
        "rte_lpm memory: {}",
        if huge {
            "EAL hugepages (--in-memory)"
        } else {
            "ordinary pages (--no-huge: fewer than 160 MiB of hugepages free)"
        }
    );
    let _eal = Eal::init(&eal_args(huge)).context("EAL init for rte_lpm")?;
    let tbl8s = 1 + uniq
        .iter()
        .filter(|&&(_, l)| l > 24)
        .map(|&(p, _)| p >> 8)
        .collect::<std::collections::HashSet<_>>()
        .len() as u32;
    // rte_lpm's build of the full view took 134 s on session 26's VM with nothing
    // printed: say so before the wait, on stderr (stdout is the report).
    eprintln!(
        "bench-lookup: Lpm4 built in {} ms; building rte_lpm, one rte_lpm_add a prefix \
         (seconds to minutes for a full view)",
        ours_build.as_millis()
    );
    let t = Instant::now();
    let mut rte = RteLpm::new("bench_lpm", uniq.len() as u32 + 16, (tbl8s * 2).max(256))
        .context("rte_lpm_create")?;
    for &(p, l) in &uniq {
        rte.add(p, l, next_hop_of(p, l, a.next_hops))
            .with_context(|| format!("rte_lpm_add {p:#x}/{l}"))?;
    }
    let rte_build = t.elapsed();

    let keys: Vec<u32> = if a.keys == "random" {
        net::fib::prefix_list::random_keys_in(&uniq, a.count, a.seed)
    } else {
        let frames = traffic::read_pcap(std::path::Path::new(&a.keys))
            .with_context(|| format!("read {}", a.keys))?;
        let k: Vec<u32> = frames.iter().filter_map(|f| dst_of_frame(f)).collect();
        if k.is_empty() {
            bail!("{}: no IPv4 destinations found", a.keys);
        }
        k
    };

    // Correctness first: every key, single and batched, both implementations.
    let mut ours_batch = vec![0u32; keys.len()];
    let mut rte_batch = vec![0u32; keys.len()];
    for (kc, oc) in keys.chunks(BATCH).zip(ours_batch.chunks_mut(BATCH)) {
        ours.lookup_batch(kc, oc);
    }
    for (kc, oc) in keys.chunks(BATCH).zip(rte_batch.chunks_mut(BATCH)) {
        rte.lookup_bulk(kc, oc, NO_ROUTE);
    }
    let mut mismatches = 0usize;
    for (i, &k) in keys.iter().enumerate() {
        let o = ours.lookup(k).unwrap_or(NO_ROUTE);
        let r = rte.lookup(k).unwrap_or(NO_ROUTE);
        if o != r || o != ours_batch[i] || r != rte_batch[i] {
            if mismatches < 10 {
                eprintln!(
                    "MISMATCH key {}: Lpm4 {o:#x} (batch {:#x}) rte_lpm {r:#x} (bulk {:#x})",
                    std::net::Ipv4Addr::from(k),
                    ours_batch[i],
                    rte_batch[i]
                );
            }
            mismatches += 1;
        }
    }
    if mismatches > 0 {
        bail!(
            "{mismatches} of {} keys disagree between Lpm4 and rte_lpm",
            keys.len()
        );
    }
    println!("keys: {} ({}), all next hops agree", keys.len(), a.keys);
    println!("batched lookups: {}", net::fib::batch_form());
    for l in page_lines(&ours, &rte) {
        println!("{l}");
    }

    let n = keys.len();
    let mut out = [0u32; BATCH];
    let mut out2 = [0u32; BATCH];
    let rates = measure_interleaved(
        n,
        a.seconds,
        &mut [
            &mut || {
                keys.iter()
                    .map(|&k| ours.lookup(k).unwrap_or(0) as u64)
                    .sum()
            },
            &mut || {
                keys.iter()
                    .map(|&k| rte.lookup(k).unwrap_or(0) as u64)
                    .sum()
            },
            &mut || {
                let mut s = 0u64;
                for kc in keys.chunks(BATCH) {
                    ours.lookup_batch(kc, &mut out[..kc.len()]);
                    s += out[0] as u64;
                }
                s
            },
            &mut || {
                let mut s = 0u64;
                for kc in keys.chunks(BATCH) {
                    rte.lookup_bulk(kc, &mut out2[..kc.len()], NO_ROUTE);
                    s += out2[0] as u64;
                }
                s
            },
            &mut || {
                let mut s = 0u64;
                for kc in keys.chunks_exact(4) {
                    let h = rte.lookup_x4(&[kc[0], kc[1], kc[2], kc[3]], NO_ROUTE);
                    s += h[0] as u64;
                }
                s
            },
        ],
    );
    let [ours_single, rte_single, ours_batched, rte_bulk, rte_x4] = rates[..] else {
        unreachable!("five contenders")
    };
    let rte_batched = rte_bulk.max(rte_x4);

    let mib = |b: usize| b as f64 / (1024.0 * 1024.0);
    println!();
    println!(
        "{:<10} {:>10} {:>10} {:>14} {:>14} {:>12}",
        "", "build ms", "MiB", "single Mlps", "batched Mlps", "ns/lookup"
    );
    println!(
        "{:<10} {:>10.1} {:>10.2} {:>14.1} {:>14.1} {:>12.2}",
        "Lpm4",
        ours_build.as_secs_f64() * 1e3,
        mib(ours.memory_bytes()),
        ours_single,
        ours_batched,
        1e3 / ours_batched
    );
    println!(
        "{:<10} {:>10.1} {:>10.2} {:>14.1} {:>14.1} {:>12.2}   (bulk {:.1}, x4 {:.1})",
        "rte_lpm",
        rte_build.as_secs_f64() * 1e3,
        mib(rte.memory_bytes()),
        rte_single,
        rte_batched,
        1e3 / rte_batched,
        rte_bulk,
        rte_x4
    );
    println!(
        "ratio Lpm4 / rte_lpm: single {:.2}x, batched {:.2}x, memory {:.2}x",
        ours_single / rte_single,
        ours_batched / rte_batched,
        ours.memory_bytes() as f64 / rte.memory_bytes() as f64
    );
    Ok(0)
}

#[cfg(test)]
mod frame_tests {
    use super::*;

    #[test]
    fn keys_from_plain_and_labelled_frames_and_nothing_from_others() {
        let plain = traffic::FrameSpec {
            dst_ip: [198, 51, 100, 7],
            ..traffic::FrameSpec::default()
        }
        .build();
        let labelled = traffic::FrameSpec {
            dst_ip: [203, 0, 113, 9],
            labels: vec![(1000, 0, 64), (2000, 0, 64)],
            ..traffic::FrameSpec::default()
        }
        .build();
        assert_eq!(dst_of_frame(&plain), Some(0xc633_6407));
        assert_eq!(dst_of_frame(&labelled), Some(0xcb00_7109));
        let mut arp = plain.clone();
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(dst_of_frame(&arp), None);
        assert_eq!(dst_of_frame(&plain[..20]), None, "truncated");
    }
}
