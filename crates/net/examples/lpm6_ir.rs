//! Instructions per IPv6 lookup under callgrind: builds [`Lpm6`] from a prefix list, draws
//! keys as `bench-lookup` does (uniform over the announced space, or one per prefix with
//! `per-prefix`), and looks them all up in bursts of 64 (`batched_pass`) and one by one
//! (`single_pass`); prints the table's size. Timing under load is noise; instruction
//! counts are not.
//!
//! `valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*batched_pass*'
//!  target/release/examples/lpm6_ir FILE [KEYS] [per-prefix]` (then `single_pass`);
//! divide the total by KEYS (default 65536).

use std::hint::black_box;

use net::fib::prefix_list6::{
    parse_prefix_list6, random_keys_in6, random_keys_per_prefix6, spread_values6,
};
use net::fib::Lpm6;

#[inline(never)]
fn batched_pass(lpm: &Lpm6, keys: &[u128]) -> u64 {
    let mut out = [0u32; 64];
    let mut s = 0u64;
    for kc in keys.chunks(64) {
        lpm.lookup_batch(kc, &mut out[..kc.len()]);
        s += u64::from(out[0]);
    }
    s
}

#[inline(never)]
fn single_pass(lpm: &Lpm6, keys: &[u128]) -> u64 {
    keys.iter()
        .map(|&k| u64::from(lpm.lookup(k).unwrap_or(0)))
        .sum()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: lpm6_ir FILE [KEYS] [per-prefix]");
    let n: usize = args.next().map_or(1 << 16, |s| s.parse().expect("KEYS"));
    let per_prefix = args.next().as_deref() == Some("per-prefix");
    let raw = std::fs::read(&path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    let plain = parse_prefix_list6(&raw).expect("prefix list");
    let lpm = Lpm6::from_prefixes(spread_values6(&plain, 256));
    let (nodes, leaves) = lpm.shape();
    eprintln!(
        "Lpm6: {} prefixes, {:.2} MiB, {nodes} nodes, {leaves} leaves",
        lpm.len(),
        lpm.memory_bytes() as f64 / (1 << 20) as f64
    );
    let keys = if per_prefix {
        random_keys_per_prefix6(&plain, n, 1)
    } else {
        random_keys_in6(&plain, n, 1)
    };
    black_box(batched_pass(&lpm, &keys));
    black_box(single_pass(&lpm, &keys));
}
