//! Instructions per packet of the pipeline, for callgrind (repeatable on a loaded box,
//! unlike cycles): runs `ROUNDS` bursts of 32 packets of one case through
//! `Pipeline::process_burst`, each burst reset from the original first; only
//! [`run_burst`] is meant to be counted.
//!
//! ```text
//! cargo build --release -p net --example pipeline_ir
//! valgrind --tool=callgrind --toggle-collect='pipeline_ir::run_burst*' \
//!     target/release/examples/pipeline_ir mpls_swap 2000
//! ```
//! Ir of the run / (rounds x 32) is the figure (`scripts/bench/pipeline-ir.sh` does it
//! for every case). Cases: mpls_swap, mpls_php_pop, ler_push2, ipv4_forward, ecmp4,
//! mpls_swap_staged, ipv4_forward_staged (the last two through the staged path only).

use net::fib::{
    Adjacency, Fib, FibBuilder, Ipv4Route, LabelEntry, LabelOp, NextHop, RouteTarget, TtlMode,
};
use net::packet::VecBuf;
use net::pipeline::{LocalAddrs, Pipeline, PipelineConfig, Verdict};
use std::hint::black_box;

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
    let members: Vec<_> = (0..4)
        .map(|k| b.add_adjacency(adj(1 + k, &[300 + k as u32])))
        .collect();
    let w: Vec<_> = members.iter().map(|&a| (a, 1)).collect();
    let group = b.add_ecmp(&w).unwrap();
    let e = |op, nh| LabelEntry {
        op,
        next_hop: nh,
        ttl_mode: TtlMode::Uniform,
    };
    b.add_label(100, e(LabelOp::Swap, Some(NextHop::Adjacency(swap))))
        .unwrap();
    b.add_label(110, e(LabelOp::Pop, Some(NextHop::Adjacency(plain))))
        .unwrap();
    b.add_label(120, e(LabelOp::Swap, Some(NextHop::Ecmp(group))))
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

fn pipeline() -> Pipeline {
    let local = LocalAddrs::new(
        &[[2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 1, 1]],
        [[10, 0, 0, 1], [192, 0, 2, 1]],
    );
    Pipeline::new(PipelineConfig::default(), local)
}

fn case(name: &str) -> Option<Vec<VecBuf>> {
    let burst =
        |f: &dyn Fn(usize) -> Vec<u8>| Some((0..BURST).map(|i| VecBuf::new(&f(i))).collect());
    match name.trim_end_matches("_staged") {
        "mpls_swap" => burst(&|i| frame(0x8847, &[100], &ipv4([203, 0, 113, 9], i))),
        "mpls_php_pop" => burst(&|i| frame(0x8847, &[110], &ipv4([203, 0, 113, 9], i))),
        "ler_push2" => burst(&|i| frame(0x0800, &[], &ipv4([203, 0, 114, 9], i))),
        "ipv4_forward" => burst(&|i| frame(0x0800, &[], &ipv4([203, 0, 113, 9], i))),
        "ecmp4" => burst(&|i| frame(0x8847, &[120], &ipv4([203, 0, 113, 9], i))),
        _ => None,
    }
}

#[inline(never)]
fn run_burst(p: &Pipeline, fib: &Fib, b: &mut [VecBuf], v: &mut [Verdict], staged: bool) {
    if staged {
        p.process_burst_staged(fib, 0, b, v);
    } else {
        p.process_burst(fib, 0, b, v);
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
    run_burst(&p, &fib, &mut b, &mut v, staged);
    assert!(
        v.iter().all(|v| matches!(v, Verdict::Forward { .. })),
        "{name}: {v:?}"
    );
    for _ in 0..rounds {
        b.clone_from(&pkts);
        run_burst(&p, &fib, black_box(&mut b), &mut v, staged);
        black_box(&v);
    }
    println!("{name}: {rounds} bursts of {BURST}");
}
