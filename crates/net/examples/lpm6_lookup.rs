//! Build time, memory and lookup rate of [`Lpm6`] on a real IPv6 table, with two key
//! sets: uniformly random inside the announced space (nearly all keys land in the short
//! prefixes) and one key per randomly picked prefix (every length as often as the table
//! has it, so /48s dominate and a lookup walks 5-6 nodes).
//!
//! `cargo run -p net --release --example lpm6_lookup -- FILE [SECONDS]`
//!
//! Builds with `from_prefixes` (300 values spread by hash) three times (best is printed),
//! times a one-prefix change, draws 4M keys of each kind, then alternates single and
//! batched passes for SECONDS (default 3) and prints the best pass of each in
//! Mlookups/s: the batch in bursts of 64 (the router's default) and 32 beside the scalar
//! batch (`lookup_batch_scalar`), so that one run compares the CPU's batch form with it.

use std::time::{Duration, Instant};

#[path = "common/passes.rs"]
mod passes;

use net::fib::prefix_list6::{
    parse_prefix_list6, random_keys_in6, random_keys_per_prefix6, spread_values6,
};
use net::fib::Lpm6;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: lpm6_lookup FILE [SECONDS]");
    let secs: f64 = args.next().map_or(3.0, |s| s.parse().expect("SECONDS"));
    let raw = std::fs::read(&path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    let t = Instant::now();
    let plain = parse_prefix_list6(&raw).expect("prefix list");
    let parse = t.elapsed();
    let routes = spread_values6(&plain, 300);
    let mut build = Duration::MAX;
    let mut lpm = Lpm6::new();
    for _ in 0..3 {
        let t = Instant::now();
        lpm = Lpm6::from_prefixes(routes.iter().copied());
        build = build.min(t.elapsed());
    }
    let (nodes, leaves) = lpm.shape();
    println!(
        "{} prefixes: parse {:.0} ms, build {:.0} ms (best of 3), {:.2} MiB lookup memory \
         ({nodes} nodes, {leaves} leaves)",
        lpm.len(),
        parse.as_secs_f64() * 1e3,
        build.as_secs_f64() * 1e3,
        lpm.memory_bytes() as f64 / (1 << 20) as f64,
    );
    let (a, l, v) = routes[routes.len() / 2];
    let t = Instant::now();
    lpm.insert(a | 1 << 60, 64, v);
    lpm.remove(a | 1 << 60, 64);
    println!(
        "insert + remove of a /64 inside a /{l}: {:.1} us",
        t.elapsed().as_secs_f64() * 1e6
    );
    for (name, keys) in [
        ("uniform in space", random_keys_in6(&plain, 1 << 22, 1)),
        (
            "uniform per prefix",
            random_keys_per_prefix6(&plain, 1 << 22, 2),
        ),
    ] {
        let [single, b64, b32, s64, s32] = passes::best_rates(
            &lpm,
            &keys,
            secs,
            |l, k| l.lookup(k).unwrap_or(0),
            Lpm6::lookup_batch,
            Lpm6::lookup_batch_scalar,
        );
        println!(
            "{name}: single {single:.1}, batched {b64:.1} Mlookups/s ({}); bursts of \
             64/32: batched {b64:.1}/{b32:.1}, scalar batch {s64:.1}/{s32:.1}",
            net::fib::batch_form()
        );
    }
}
