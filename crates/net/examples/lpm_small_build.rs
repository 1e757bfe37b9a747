//! Cost of building (and dropping) small [`Lpm4`] tables, the case of the pipeline fuzz
//! target and of tests that build a FIB per case: an empty table, 6 short prefixes (as the
//! fuzz target draws them: /0-/8), and 100 and 1,000 random prefixes /8-/32. Each round
//! builds the table, looks up 16 random keys in it (so that pages a lookup touches for the
//! first time count) and drops it.
//!
//! `cargo run -p net --release --example lpm_small_build [-- ROUNDS]`
//!
//! Prints min and median microseconds per round (wall time; on a loaded box, the min is
//! the figure to compare).

use std::hint::black_box;
use std::time::Instant;

use net::fib::Lpm4;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 32) as u32
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
    let mut r = Rng(1);
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

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("ROUNDS is a number"))
        .unwrap_or(2000);
    measure("empty", rounds, |_| Vec::new());
    measure("6 short", rounds, |r| short_prefixes(r, 6));
    measure("100 random", rounds, |r| random_prefixes(r, 100));
    measure("1000 random", rounds / 4, |r| random_prefixes(r, 1000));
}
