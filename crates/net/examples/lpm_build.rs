//! Cost of building [`Lpm4`] tables, small and full.
//!
//! Small tables are the case of the pipeline fuzz target and of tests that build a FIB per
//! case: an empty table, 6 short prefixes (as the fuzz target draws them: /0-/8), and 100
//! and 1,000 random prefixes /8-/32. Each round builds the table, looks up 16 random keys
//! in it (so that pages a lookup touches for the first time count) and drops it. Prints
//! min and median microseconds per round (wall time; on a loaded box, the min is the
//! figure to compare).
//!
//! With `--full FILE` (a prefix list, plain or .gz) it also builds that table with
//! `from_prefixes` and with one `insert` per prefix (as `mplsrouter bench-lookup` does)
//! and prints the time, the lookup bytes and the peak resident set of the process.
//!
//! `cargo run -p net --release --example lpm_build [-- [ROUNDS] [--full FILE]]`

use std::hint::black_box;
use std::time::Instant;

use net::fib::prefix_list::SplitMix64;
use net::fib::prefix_list::{parse_prefix_list, spread_values};
use net::fib::Lpm4;

/// The crate's deterministic generator, 32 bits at a time.
struct Rng(SplitMix64);

impl Rng {
    fn next(&mut self) -> u32 {
        (self.0.next_u64() >> 32) as u32
    }
}

fn short_prefixes(r: &mut Rng, n: usize) -> Vec<(u32, u8, u32)> {
    (0..n)
        .map(|i| (r.next() & 0xff00_0000, (r.next() % 9) as u8, i as u32))
        .collect()
}

fn random_prefixes(r: &mut Rng, n: usize) -> Vec<(u32, u8, u32)> {
    (0..n)
        .map(|i| (r.next(), 8 + (r.next() % 25) as u8, i as u32))
        .collect()
}

fn measure(name: &str, rounds: usize, mut make: impl FnMut(&mut Rng) -> Vec<(u32, u8, u32)>) {
    if rounds == 0 {
        return;
    }
    let mut r = Rng(SplitMix64(1));
    let mut us = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let prefixes = make(&mut r);
        let keys: Vec<u32> = (0..16).map(|_| r.next()).collect();
        let t = Instant::now();
        let lpm = Lpm4::from_prefixes(prefixes);
        let mut out = [0u32; 16];
        lpm.lookup_batch(black_box(&keys), &mut out);
        black_box(out);
        drop(lpm);
        us.push(t.elapsed().as_secs_f64() * 1e6);
    }
    us.sort_by(f64::total_cmp);
    println!(
        "{name:>16}: min {:8.1} us  median {:8.1} us  ({rounds} rounds)",
        us[0],
        us[rounds / 2]
    );
}

/// Peak resident set of this process so far, in MiB (`VmHWM`).
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let l = s.lines().find(|l| l.starts_with("VmHWM:"))?;
            l.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

fn full(path: &str) {
    let raw = std::fs::read(path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    let routes = spread_values(&parse_prefix_list(&raw).expect("prefix list"), 256);
    let mib = |b: usize| b as f64 / (1 << 20) as f64;
    let rss0 = peak_rss_mib();
    let t = Instant::now();
    let lpm = Lpm4::from_prefixes(routes.iter().copied());
    println!(
        "{:>16}: {:8.1} ms, lookup bytes {:.2} MiB, peak RSS {:.1} MiB (before {:.1})",
        "from_prefixes",
        t.elapsed().as_secs_f64() * 1e3,
        mib(lpm.memory_bytes()),
        peak_rss_mib(),
        rss0
    );
    drop(lpm);
    let t = Instant::now();
    let mut lpm = Lpm4::new();
    for &(a, l, v) in &routes {
        lpm.insert(a, l, v);
    }
    println!(
        "{:>16}: {:8.1} ms, lookup bytes {:.2} MiB, peak RSS {:.1} MiB",
        "insert each",
        t.elapsed().as_secs_f64() * 1e3,
        mib(lpm.memory_bytes()),
        peak_rss_mib()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut rounds = 2000;
    let mut full_path = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--full" {
            full_path = Some(it.next().expect("--full FILE").clone());
        } else {
            rounds = a.parse().expect("ROUNDS is a number");
        }
    }
    if let Some(p) = full_path {
        full(&p);
    }
    measure("empty", rounds, |_| Vec::new());
    measure("6 short", rounds, |r| short_prefixes(r, 6));
    measure("100 random", rounds, |r| random_prefixes(r, 100));
    measure("1000 random", rounds / 4, |r| random_prefixes(r, 1000));
}
