//! Lookup rate of [`Lpm4`] on a real table with uniformly random keys inside announced
//! space, without `rte_lpm` (whose build takes minutes): for comparing layouts quickly,
//! binary against binary, alternating runs.
//!
//! `cargo run -p net --release --example lpm_lookup -- FILE [SECONDS] [VALUES] [bulk|insert]`
//!
//! Builds the table with `from_prefixes` (`bulk`, the default, as a configured table is
//! built) or with one `insert` per distinct prefix in sorted order (`insert`: as
//! `bench-lookup` does and as FPM feeds the router), with VALUES values spread by hash
//! (default 256: as `bench-lookup`), draws 4M keys, then
//! alternates single and batched passes for SECONDS (default 3) and prints the best pass
//! of each in Mlookups/s, with the lookup bytes: the batch in 64-key bursts first, then
//! in bursts of 64 (the router's default) and 32 beside the scalar batch
//! (`lookup_batch_scalar`), so that one run compares the CPU's batch form with the scalar
//! one.

#[path = "common/passes.rs"]
mod passes;

use net::fib::prefix_list::{parse_prefix_list, random_keys_in, spread_values};
use net::fib::Lpm4;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: lpm_lookup FILE [SECONDS] [VALUES] [bulk|insert]");
    let secs: f64 = args.next().map_or(3.0, |s| s.parse().expect("SECONDS"));
    let values: u32 = args.next().map_or(256, |s| s.parse().expect("VALUES"));
    let raw = std::fs::read(&path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    let plain = parse_prefix_list(&raw).expect("prefix list");
    let routes = spread_values(&plain, values);
    let lpm = match args.next().as_deref() {
        None | Some("bulk") => Lpm4::from_prefixes(routes),
        Some("insert") => {
            let mut sorted = routes;
            sorted.sort_unstable();
            sorted.dedup_by_key(|r| (r.0, r.1));
            let mut lpm = Lpm4::new();
            for (a, l, v) in sorted {
                lpm.insert(a, l, v);
            }
            lpm
        }
        Some(other) => panic!("build {other:?}: expected bulk or insert"),
    };
    let keys = random_keys_in(&plain, 1 << 22, 1);
    let best = passes::best_rates(
        &lpm,
        &keys,
        secs,
        |l, k| l.lookup(k).unwrap_or(0),
        Lpm4::lookup_batch,
        Lpm4::lookup_batch_scalar,
    );
    println!(
        "{:.2} MiB, single {:.1}, batched {:.1} Mlookups/s ({})",
        lpm.memory_bytes() as f64 / (1 << 20) as f64,
        best[0],
        best[1],
        net::fib::batch_form()
    );
    println!(
        "  bursts of 64/32: batched {:.1}/{:.1}, scalar batch {:.1}/{:.1} Mlookups/s",
        best[1], best[2], best[3], best[4]
    );
}
