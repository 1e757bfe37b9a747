//! Pipeline throughput on Vec-backed bursts of 32 packets: MPLS swap, PHP pop, LER push
//! of two labels, plain IPv4 forwarding. Criterion reports time per burst and packets/s;
//! afterwards a TSC loop prints cycles per packet (x86_64 only).
//!
//! Run: `cargo bench -p net --bench pipeline`; `cargo bench -p net --bench pipeline -- nomatch`
//! skips criterion and prints the TSC figures alone (`PIPELINE_CASE=mpls_swap` and
//! `PIPELINE_ROUNDS=N` run one case longer, e.g. under `perf record`).

use criterion::{criterion_group, BatchSize, Criterion, Throughput};
use net::fib::{
    Adjacency, Fib, FibBuilder, Ipv4Route, LabelEntry, LabelOp, NextHop, RouteTarget, TtlMode,
};
use net::packet::VecBuf;
use net::pipeline::{LocalAddrs, Pipeline, PipelineConfig, Verdict};
use std::hint::black_box;
use std::time::Duration;

const BURST: usize = 32;

fn adj(port: u16, labels: &[u32]) -> Adjacency {
    Adjacency::new(
        port,
        1500,
        [10, 0, 0, 2],
        Some([2, 0, 0, 0, 0, 2]),
        [2, 0, 0, 0, 0, 1],
        labels,
    )
}

fn fib() -> Fib {
    let mut b = FibBuilder::new();
    let swap = b.add_adjacency(adj(1, &[200]));
    let plain = b.add_adjacency(adj(2, &[]));
    let push2 = b.add_adjacency(adj(3, &[1000, 2000]));
    let e = |op, nh| LabelEntry {
        op,
        next_hop: nh,
        ttl_mode: TtlMode::Uniform,
    };
    b.add_label(100, e(LabelOp::Swap, Some(NextHop::Adjacency(swap))))
        .unwrap();
    b.add_label(110, e(LabelOp::Pop, Some(NextHop::Adjacency(plain))))
        .unwrap();
    let r = |a| Ipv4Route {
        target: RouteTarget::NextHop(NextHop::Adjacency(a)),
        ttl_mode: TtlMode::Uniform,
    };
    b.add_ipv4_route(0xcb00_7100, 24, r(plain)).unwrap(); // 203.0.113.0/24
    b.add_ipv4_route(0xcb00_7200, 24, r(push2)).unwrap(); // 203.0.114.0/24
    b.build(1)
}

/// A 64-byte-class IPv4/UDP datagram (46 bytes of IP) to `dst`, flow `i`.
fn ipv4(dst: [u8; 4], i: usize) -> Vec<u8> {
    let mut ip = vec![0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 17, 0, 0, 198, 51, 100, 7];
    ip.extend_from_slice(&dst);
    ip.extend_from_slice(&(1024 + i as u16).to_be_bytes());
    ip.extend_from_slice(&[0, 53, 0, 26, 0, 0]);
    ip.resize(46, 0xab);
    let mut s: u32 = ip[..20]
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]) as u32)
        .sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    ip[10..12].copy_from_slice(&(!(s as u16)).to_be_bytes());
    ip
}

fn frame(ethertype: u16, labels: &[u32], ip: &[u8]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 9];
    f.extend_from_slice(&ethertype.to_be_bytes());
    for (k, l) in labels.iter().enumerate() {
        let s = (k + 1 == labels.len()) as u32;
        f.extend_from_slice(&((l << 12) | (s << 8) | 64).to_be_bytes());
    }
    f.extend_from_slice(ip);
    f
}

/// The router: port 0 (where the bursts arrive) has the MAC the frames are sent to.
fn pipeline() -> Pipeline {
    let local = LocalAddrs::new(
        &[[2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 1, 1]],
        [[10, 0, 0, 1], [192, 0, 2, 1]],
    );
    Pipeline::new(PipelineConfig::default(), local)
}

fn cases() -> Vec<(&'static str, Vec<VecBuf>)> {
    let burst = |f: &dyn Fn(usize) -> Vec<u8>| (0..BURST).map(|i| VecBuf::new(&f(i))).collect();
    vec![
        (
            "mpls_swap",
            burst(&|i| frame(0x8847, &[100], &ipv4([203, 0, 113, 9], i))),
        ),
        (
            "mpls_php_pop",
            burst(&|i| frame(0x8847, &[110], &ipv4([203, 0, 113, 9], i))),
        ),
        (
            "ler_push2",
            burst(&|i| frame(0x0800, &[], &ipv4([203, 0, 114, 9], i))),
        ),
        (
            "ipv4_forward",
            burst(&|i| frame(0x0800, &[], &ipv4([203, 0, 113, 9], i))),
        ),
    ]
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
