//! Instructions per IPv4 lookup under callgrind, and where the bench's keys end: builds
//! [`Lpm4`] from a prefix list, draws keys as `bench-lookup` does (uniform over the
//! announced space), prints how many end at the top entry, in the /18's record, or
//! deeper (from the prefix list alone, not from the structure), then looks them all up
//! in bursts of 64 (`batched_pass`) and one by one (`single_pass`).
//!
//! `valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*batched_pass*'
//!  target/release/examples/lpm_ir FILE [KEYS]` (then `single_pass`); divide by KEYS
//! (default 65536).

use std::collections::HashSet;
use std::hint::black_box;

use net::fib::prefix_list::{parse_prefix_list, random_keys_in, spread_values};
use net::fib::Lpm4;

#[inline(never)]
fn batched_pass(lpm: &Lpm4, keys: &[u32]) -> u64 {
    let mut out = [0u32; 64];
    let mut s = 0u64;
    for kc in keys.chunks(64) {
        lpm.lookup_batch(kc, &mut out[..kc.len()]);
        s += u64::from(out[0]);
    }
    s
}

#[inline(never)]
fn single_pass(lpm: &Lpm4, keys: &[u32]) -> u64 {
    keys.iter()
        .map(|&k| u64::from(lpm.lookup(k).unwrap_or(0)))
        .sum()
}

/// Keys whose /18 holds no longer prefix (top entry answers), whose /24 holds none
/// (one record), and the rest (a second record or more).
fn depths(plain: &[(u32, u8)], keys: &[u32]) -> [usize; 3] {
    let s18: HashSet<u32> = plain
        .iter()
        .filter(|p| p.1 > 18)
        .map(|p| p.0 >> 14)
        .collect();
    let s24: HashSet<u32> = plain
        .iter()
        .filter(|p| p.1 > 24)
        .map(|p| p.0 >> 8)
        .collect();
    let mut d = [0; 3];
    for &k in keys {
        d[usize::from(s18.contains(&(k >> 14))) + usize::from(s24.contains(&(k >> 8)))] += 1;
    }
    d
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: lpm_ir FILE [KEYS]");
    let n: usize = args.next().map_or(1 << 16, |s| s.parse().expect("KEYS"));
    let raw = std::fs::read(&path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    let plain = parse_prefix_list(&raw).expect("prefix list");
    let lpm = Lpm4::from_prefixes(spread_values(&plain, 256));
    let keys = random_keys_in(&plain, n, 1);
    let d = depths(&plain, &keys);
    println!(
        "{:.2} MiB; keys ending at top {}, first record {}, deeper {}",
        lpm.memory_bytes() as f64 / (1 << 20) as f64,
        d[0],
        d[1],
        d[2]
    );
    black_box(batched_pass(&lpm, &keys));
    black_box(single_pass(&lpm, &keys));
}
