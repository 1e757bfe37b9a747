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
//! in bursts of 64 and 32 (the router's) beside the scalar batch (`lookup_batch_scalar`),
//! so that one run compares the CPU's batch form with the scalar one.

use std::hint::black_box;
use std::time::{Duration, Instant};

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
    let best = best_passes(&lpm, &keys, secs);
    let rate = |s: f64| keys.len() as f64 / s / 1e6;
    println!(
        "{:.2} MiB, single {:.1}, batched {:.1} Mlookups/s ({})",
        lpm.memory_bytes() as f64 / (1 << 20) as f64,
        rate(best[0]),
        rate(best[1]),
        net::fib::batch_form()
    );
    println!(
        "  bursts of 64/32: batched {:.1}/{:.1}, scalar batch {:.1}/{:.1} Mlookups/s",
        rate(best[1]),
        rate(best[2]),
        rate(best[3]),
        rate(best[4])
    );
}

/// The best time of each pass, the passes alternated for `secs`: single lookups, then
/// the batch in bursts of 64 and 32 (the router's default burst), then the scalar batch
/// in the same bursts (the same as the batch where the CPU has no AVX-512 form).
fn best_passes(lpm: &Lpm4, keys: &[u32], secs: f64) -> [f64; 5] {
    type Batch = fn(&Lpm4, &[u32], &mut [u32]);
    let passes: [(usize, Batch); 4] = [
        (64, Lpm4::lookup_batch),
        (32, Lpm4::lookup_batch),
        (64, Lpm4::lookup_batch_scalar),
        (32, Lpm4::lookup_batch_scalar),
    ];
    let mut best = [f64::MAX; 5];
    let mut out = [0u32; 64];
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs_f64(secs) {
        let t = Instant::now();
        let mut acc = 0u32;
        for &k in keys {
            acc = acc.wrapping_add(lpm.lookup(k).unwrap_or(0));
        }
        black_box(acc);
        best[0] = best[0].min(t.elapsed().as_secs_f64());
        for (i, (burst, batch)) in passes.iter().enumerate() {
            let t = Instant::now();
            let mut acc = 0u32;
            for keys in keys.chunks(*burst) {
                batch(lpm, keys, &mut out);
                acc = acc.wrapping_add(out[0]);
            }
            black_box(acc);
            best[i + 1] = best[i + 1].min(t.elapsed().as_secs_f64());
        }
    }
    best
}
