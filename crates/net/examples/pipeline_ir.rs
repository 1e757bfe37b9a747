//! Instructions per packet of the pipeline, for callgrind (repeatable on a loaded box,
//! unlike cycles): runs `ROUNDS` bursts of 32 packets of one case through
//! `Pipeline::process_burst_counted` (as the worker runs it), each burst reset from the original first; only
//! [`run_burst`] is meant to be counted.
//!
//! ```text
//! cargo build --release -p net --example pipeline_ir
//! valgrind --tool=callgrind --toggle-collect='pipeline_ir::run_burst*' \
//!     target/release/examples/pipeline_ir mpls_swap 2000
//! ```
//! Ir of the run / (rounds x 32) is the figure (`scripts/bench/pipeline-ir.sh` does it
//! for every case). Cases: mpls_swap, mpls_php_pop, ler_push2, ipv4_forward, ecmp4, ecmp4_ipv4, ecmp6,
//! mpls_swap_staged, ipv4_forward_staged (the last two through the staged path only),
//! ipv6_forward, 6pe_push (the IPv6 fast path, `pipeline::fast6`), mpls_explicit_null4,
//! mpls_explicit_null6, mpls_pop_lookup4, mpls_pop_lookup6 (the egress LER,
//! `pipeline::egress`), mpls_null_swap (explicit null above a swap: every fast path turns
//! it away), mixed6 and mixed4 (IPv6, IPv4, MPLS swap and explicit null in turn, starting
//! with IPv6 or IPv4); any case with `_staged` appended runs through the stages only.

#[path = "../benches/fixture/mod.rs"]
mod fixture;

use fixture::{case, fib, pipeline, BURST};
use net::fib::Fib;
use net::packet::VecBuf;
use net::pipeline::{FamilyCounts, Pipeline, Verdict};
use std::hint::black_box;

#[inline(never)]
fn run_burst(
    p: &Pipeline,
    fib: &Fib,
    b: &mut [VecBuf],
    v: &mut [Verdict],
    staged: bool,
    families: &mut FamilyCounts,
) {
    if staged {
        p.process_burst_staged(fib, 0, b, v);
    } else {
        p.process_burst_counted(fib, 0, b, v, families);
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "mpls_swap".into());
    let rounds: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(2000);
    let pkts = case(&name).unwrap_or_else(|| panic!("unknown case {name}"));
    let staged = name.ends_with("_staged");
    let (fib, p) = (fib(), pipeline());
    let mut v = [Verdict::Forward { port: 0 }; BURST];
    let mut b = pkts.clone();
    let mut families = FamilyCounts::default();
    run_burst(&p, &fib, &mut b, &mut v, staged, &mut families);
    assert!(
        v.iter().all(|v| matches!(v, Verdict::Forward { .. })),
        "{name}: {v:?}"
    );
    for _ in 0..rounds {
        b.clone_from(&pkts);
        run_burst(&p, &fib, black_box(&mut b), &mut v, staged, &mut families);
        black_box(&v);
    }
    black_box(&families);
    println!("{name}: {rounds} bursts of {BURST}");
}
