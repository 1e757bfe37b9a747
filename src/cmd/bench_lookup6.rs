//! `mplsrouter bench-lookup --family ipv6`: our `Lpm6` against DPDK's `rte_lpm6` and
//! `rte_fib6` (trie), same table, same keys, same run. All three must return the same
//! next hop for every key, or the command fails.
//!
//! Memory: ours is the lookup arrays (`Lpm6::memory_bytes`; the control-side prefix map
//! is printed apart); DPDK's is what building the table took from its heap, rules and
//! RIB included.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use dpdk::{heap_allocated_bytes, Eal, RteFib6, RteLpm6};
use net::fib::{Lpm6, NO_ROUTE};

use super::bench_lookup::{eal_args, measure_interleaved, BenchLookupArgs, BATCH};

/// Free hugepage memory before rte_lpm6 and rte_fib6 go on hugepages: both tables
/// (about 130 and 360 MiB for the full view) with room to spare.
const HUGE_NEEDED6: u64 = 640 << 20;

fn next_hop_of(addr: u128, len: u8, n: u32) -> u32 {
    let h = (addr >> 64) as u64 ^ addr as u64;
    ((h.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) as u32 ^ u32::from(len).wrapping_mul(40503))
        % n.max(1)
}

/// tbl8 groups a 24-8-8-... trie needs for these prefixes: one per distinct node below
/// the first level (rte_lpm6 and the rte_fib6 trie share that shape).
fn tbl8s_needed(prefixes: &[(u128, u8)]) -> u32 {
    let mut nodes = std::collections::HashSet::new();
    for &(a, l) in prefixes {
        let mut depth = 24u32;
        while depth < u32::from(l) {
            nodes.insert((a >> (128 - depth), depth));
            depth += 8;
        }
    }
    nodes.len() as u32
}

/// The IPv6 destination of a frame (plain or labelled), as the lookup takes it.
fn dst6_of_frame(f: &[u8]) -> Option<u128> {
    let ip = net::wire::ipv6::Ipv6Packet::new_checked(net::wire::ip_packet(f)?).ok()?;
    Some(u128::from_be_bytes(ip.dst_addr()))
}

fn keys(a: &BenchLookupArgs, uniq: &[(u128, u8)]) -> Result<Vec<u128>> {
    if a.keys == "random" {
        return Ok(net::fib::prefix_list6::random_keys_in6(
            uniq, a.count, a.seed,
        ));
    }
    let frames =
        traffic::read_pcap(Path::new(&a.keys)).with_context(|| format!("read {}", a.keys))?;
    let k: Vec<u128> = frames.iter().filter_map(|f| dst6_of_frame(f)).collect();
    if k.is_empty() {
        bail!("{}: no IPv6 destinations found", a.keys);
    }
    Ok(k)
}

/// The three tables over the same prefixes, with build time and memory of each.
struct Tables {
    ours: Lpm6,
    lpm6: RteLpm6,
    fib6: RteFib6,
    /// (build seconds, bytes) of ours, rte_lpm6, rte_fib6.
    cost: [(f64, usize); 3],
}

fn build(uniq: &[(u128, u8)], next_hops: u32) -> Result<Tables> {
    let t = Instant::now();
    let ours = Lpm6::from_prefixes(
        uniq.iter()
            .map(|&(p, l)| (p, l, next_hop_of(p, l, next_hops))),
    );
    let ours_cost = (t.elapsed().as_secs_f64(), ours.memory_bytes());
    let tbl8s = tbl8s_needed(uniq) + uniq.len() as u32 / 8 + 256;
    let rules = uniq.len() as u32 + 16;
    let fib6_tbl8s: u32 = std::env::var("MPLSROUTER_FIB6_TBL8S")
        .ok()
        .and_then(|v| v.parse().ok())
        // The trie takes about 3.8 times the groups of the 24-8-8 count (221k for the
        // 2023 full view, found by bisection): 4 times, or MPLSROUTER_FIB6_TBL8S.
        .unwrap_or(tbl8s * 4);
    eprintln!(
        "bench-lookup: Lpm6 built in {:.0} ms; building rte_lpm6 and rte_fib6, one add a \
         prefix (seconds to minutes for a full view)",
        ours_cost.0 * 1e3
    );
    let (t, h) = (Instant::now(), heap_allocated_bytes());
    let mut lpm6 = RteLpm6::new("bench_lpm6", rules, tbl8s).context("rte_lpm6_create")?;
    for &(p, l) in uniq {
        lpm6.add(p, l, next_hop_of(p, l, next_hops))
            .with_context(|| format!("rte_lpm6_add {}/{l}", std::net::Ipv6Addr::from(p)))?;
    }
    let lpm6_cost = (t.elapsed().as_secs_f64(), heap_allocated_bytes() - h);
    let (t, h) = (Instant::now(), heap_allocated_bytes());
    let mut fib6 =
        RteFib6::new_trie("bench_fib6", rules, fib6_tbl8s, next_hops).context("rte_fib6_create")?;
    for &(p, l) in uniq {
        fib6.add(p, l, next_hop_of(p, l, next_hops))
            .with_context(|| format!("rte_fib6_add {}/{l}", std::net::Ipv6Addr::from(p)))?;
    }
    let fib6_cost = (t.elapsed().as_secs_f64(), heap_allocated_bytes() - h);
    Ok(Tables {
        ours,
        lpm6,
        fib6,
        cost: [ours_cost, lpm6_cost, fib6_cost],
    })
}

/// Every key, single and batched, in all three; fails on any disagreement.
fn agree(t: &Tables, keys: &[u128], bytes: &[[u8; 16]], miss: u32) -> Result<()> {
    let mut bad = 0usize;
    let (mut ob, mut lb, mut fb) = ([0u32; BATCH], [0i32; BATCH], [0u64; BATCH]);
    for (kc, bc) in keys.chunks(BATCH).zip(bytes.chunks(BATCH)) {
        let n = kc.len();
        t.ours.lookup_batch(kc, &mut ob[..n]);
        t.lpm6.lookup_bulk(bc, &mut lb[..n]);
        t.fib6.lookup_bulk(bc, &mut fb[..n]);
        for i in 0..n {
            let o = t.ours.lookup(kc[i]).unwrap_or(NO_ROUTE);
            let l = t.lpm6.lookup(&bc[i]).unwrap_or(NO_ROUTE);
            let lbulk = u32::try_from(lb[i]).unwrap_or(NO_ROUTE);
            let f = if fb[i] == u64::from(miss) {
                NO_ROUTE
            } else {
                fb[i] as u32
            };
            if o != ob[i] || o != l || o != lbulk || o != f {
                if bad < 10 {
                    eprintln!(
                        "MISMATCH key {}: Lpm6 {o:#x} (batch {:#x}) rte_lpm6 {l:#x} (bulk {lbulk:#x}) rte_fib6 {f:#x}",
                        std::net::Ipv6Addr::from(kc[i]),
                        ob[i]
                    );
                }
                bad += 1;
            }
        }
    }
    if bad > 0 {
        bail!(
            "{bad} of {} keys disagree between Lpm6, rte_lpm6 and rte_fib6",
            keys.len()
        );
    }
    Ok(())
}

pub fn run(a: BenchLookupArgs, routes: &Path) -> Result<i32> {
    let raw = std::fs::read(routes).with_context(|| format!("read {}", routes.display()))?;
    let prefixes = net::fib::prefix_list6::parse_prefix_list6(&raw)
        .with_context(|| format!("parse {}", routes.display()))?;
    let mut uniq: Vec<(u128, u8)> = prefixes
        .iter()
        .map(|&(p, l)| (p & net::fib::mask6(l), l))
        .collect();
    uniq.sort_unstable();
    uniq.dedup();
    if uniq.is_empty() {
        bail!("{}: no prefixes", routes.display());
    }
    println!(
        "table: {} ({} prefixes, {} distinct)",
        routes.display(),
        prefixes.len(),
        uniq.len()
    );
    // Two 64 MiB first levels and their tbl8s: more than the IPv4 run's 1 GiB heap
    // leaves free in one piece.
    let huge = super::pages::free_huge_bytes(std::path::Path::new("/sys/kernel/mm/hugepages"))
        >= HUGE_NEEDED6;
    let args: Vec<String> = eal_args(huge)
        .into_iter()
        .map(|s| if s == "1024" { "4096".into() } else { s })
        .collect();
    let _eal = Eal::init(&args).context("EAL init for rte_lpm6/rte_fib6")?;
    let t = build(&uniq, a.next_hops)?;
    let keys = keys(&a, &uniq)?;
    let bytes: Vec<[u8; 16]> = keys.iter().map(|k| k.to_be_bytes()).collect();
    agree(&t, &keys, &bytes, a.next_hops)?;
    println!("keys: {} ({}), all next hops agree", keys.len(), a.keys);
    println!("batched lookups: {}", net::fib::batch_form());
    let rates = rates(&t, &keys, &bytes, a.seconds);
    print_table(&t, &rates);
    Ok(0)
}

/// Mlookups/s: [ours single, ours batched, lpm6 single, lpm6 bulk, fib6 single, fib6 bulk].
fn rates(t: &Tables, keys: &[u128], bytes: &[[u8; 16]], secs: f64) -> Vec<f64> {
    let (mut ob, mut lb, mut fb) = ([0u32; BATCH], [0i32; BATCH], [0u64; BATCH]);
    let mut f1 = [0u64; 1];
    measure_interleaved(
        keys.len(),
        secs,
        &mut [
            &mut || {
                keys.iter()
                    .map(|&k| t.ours.lookup(k).unwrap_or(0) as u64)
                    .sum()
            },
            &mut || {
                let mut s = 0u64;
                for kc in keys.chunks(BATCH) {
                    t.ours.lookup_batch(kc, &mut ob[..kc.len()]);
                    s += ob[0] as u64;
                }
                s
            },
            &mut || {
                bytes
                    .iter()
                    .map(|k| t.lpm6.lookup(k).unwrap_or(0) as u64)
                    .sum()
            },
            &mut || {
                let mut s = 0u64;
                for bc in bytes.chunks(BATCH) {
                    t.lpm6.lookup_bulk(bc, &mut lb[..bc.len()]);
                    s += lb[0] as u64;
                }
                s
            },
            &mut || {
                let mut s = 0u64;
                for bc in bytes.chunks(1) {
                    t.fib6.lookup_bulk(bc, &mut f1);
                    s += f1[0];
                }
                s
            },
            &mut || {
                let mut s = 0u64;
                for bc in bytes.chunks(BATCH) {
                    t.fib6.lookup_bulk(bc, &mut fb[..bc.len()]);
                    s += fb[0];
                }
                s
            },
        ],
    )
}

fn print_table(t: &Tables, r: &[f64]) {
    let mib = |b: usize| b as f64 / (1024.0 * 1024.0);
    println!();
    println!(
        "{:<10} {:>10} {:>10} {:>14} {:>14} {:>12}",
        "", "build ms", "MiB", "single Mlps", "batched Mlps", "ns/lookup"
    );
    for (i, name) in ["Lpm6", "rte_lpm6", "rte_fib6"].iter().enumerate() {
        let (secs, bytes) = t.cost[i];
        println!(
            "{:<10} {:>10.1} {:>10.2} {:>14.1} {:>14.1} {:>12.2}",
            name,
            secs * 1e3,
            mib(bytes),
            r[2 * i],
            r[2 * i + 1],
            1e3 / r[2 * i + 1]
        );
    }
    let best = if r[3] >= r[5] { (3, 1) } else { (5, 2) };
    println!(
        "ratio Lpm6 / faster DPDK ({}): single {:.2}x, batched {:.2}x, memory {:.3}x",
        ["", "rte_lpm6", "rte_fib6"][best.1],
        r[0] / r[best.0 - 1],
        r[1] / r[best.0],
        t.cost[0].1 as f64 / t.cost[best.1].1 as f64
    );
    let (nodes, leaves) = t.ours.shape();
    println!(
        "Lpm6 shape: {nodes} nodes, {leaves} leaves; memory is the lookup arrays (the control-side prefix map is extra)"
    );
}
