//! Pipeline throughput on Vec-backed bursts of 32 packets: MPLS swap, PHP pop, LER push
//! of two labels, plain IPv4 forwarding, IPv4 over a four-way ECMP group, plain IPv6
//! forwarding and 6PE. Criterion reports time per burst and packets/s; afterwards a TSC
//! loop prints cycles per packet (x86_64 only).
//!
//! Run: `cargo bench -p net --bench pipeline`; `cargo bench -p net --bench pipeline -- nomatch`
//! skips criterion and prints the TSC figures alone (`PIPELINE_CASE=mpls_swap` and
//! `PIPELINE_ROUNDS=N` run one case longer, e.g. under `perf record`).

mod fixture;

use criterion::{criterion_group, BatchSize, Criterion, Throughput};
use fixture::{case, fib, pipeline, BURST};
use net::packet::VecBuf;
use net::pipeline::Verdict;
use std::hint::black_box;
use std::time::Duration;

fn cases() -> Vec<(&'static str, Vec<VecBuf>)> {
    [
        "mpls_swap",
        "mpls_php_pop",
        "ler_push2",
        "ipv4_forward",
        "ecmp4_ipv4",
        "ipv6_forward",
        "6pe_push",
        "mpls_pop_lookup4",
        "mpls_pop_lookup6",
    ]
    .into_iter()
    .map(|n| (n, case(n).expect("a fixture case")))
    .collect()
}

fn bench(c: &mut Criterion) {
    let fib = fib();
    let pipeline = pipeline();
    let mut g = c.benchmark_group("pipeline_burst32");
    g.throughput(Throughput::Elements(BURST as u64));
    for (name, pkts) in cases() {
        // Sanity: every packet of the case is forwarded.
        let mut check = pkts.clone();
        let mut v = [Verdict::Forward { port: 0 }; BURST];
        pipeline.process_burst(&fib, 0, &mut check, &mut v);
        assert!(
            v.iter().all(|v| matches!(v, Verdict::Forward { .. })),
            "{name}: {v:?}"
        );
        g.bench_function(name, |b| {
            b.iter_batched_ref(
                || pkts.clone(),
                |p| {
                    let mut v = [Verdict::Forward { port: 0 }; BURST];
                    pipeline.process_burst(black_box(&fib), 0, p, &mut v);
                    black_box(v);
                },
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

/// Cycles per packet from the TSC, robust to a busy machine: each burst is timed on its
/// own (reset from the original, headers warm from the copy) and the minimum and median are reported;
/// the minimum is the figure to compare between runs.
#[cfg(target_arch = "x86_64")]
fn tsc_report() {
    let fib = fib();
    let pipeline = pipeline();
    // PIPELINE_ROUNDS / PIPELINE_CASE: longer runs of one case, for a profiler.
    let rounds: usize = std::env::var("PIPELINE_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3000);
    let only = std::env::var("PIPELINE_CASE").ok();
    for (name, pkts) in cases() {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let mut samples = Vec::with_capacity(rounds);
        let mut v = [Verdict::Forward { port: 0 }; BURST];
        let mut b = pkts.clone();
        for _ in 0..rounds {
            b.clone_from(&pkts);
            // SAFETY: rdtsc has no preconditions on x86_64.
            let c0 = unsafe { core::arch::x86_64::_rdtsc() };
            pipeline.process_burst(&fib, 0, black_box(&mut b), &mut v);
            // SAFETY: as above.
            let c1 = unsafe { core::arch::x86_64::_rdtsc() };
            black_box(&v);
            samples.push(c1 - c0);
        }
        samples.sort_unstable();
        let per = |c: u64| c as f64 / BURST as f64;
        println!(
            "tsc {name:>14}: min {:6.1}  median {:6.1} TSC cycles/packet",
            per(samples[0]),
            per(samples[rounds / 2])
        );
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn tsc_report() {}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = bench
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    tsc_report();
}
