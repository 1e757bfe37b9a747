//! Instructions per packet of a worker's decision for the slow-path pressure mixes
//! (issue #23), for callgrind: the pipeline over a burst, then, for each punted packet,
//! the admission the worker runs before it queues a punt ([`PuntQueues::admit`]: marks,
//! budget, class). Wall-clock figures on a loaded box are noise; instruction counts and
//! simulated cache misses are not.
//!
//! ```text
//! cargo build --release -p router --example punt_ir
//! valgrind --tool=callgrind --cache-sim=yes --toggle-collect='punt_ir::run_burst*' \
//!     target/release/examples/punt_ir punt-glean 2000
//! ```
//! Ir of the run / (rounds x 32) is the figure (`scripts/bench/punt-ir.sh` prints it for
//! every mix). Mixes are those of `scripts/bench/punt_mix.py`: good UDP to 100.0.0.0/8
//! interleaved with one kind of bad packet (punt-noroute, punt-glean, punt-ttl1,
//! punt-echo, punt-arp), same table and addresses. Each burst comes 2 µs after the last
//! (16 Mpps); packets admitted to the slow path are marked as the slow path would mark
//! them (outside the counted function), over 1,024 addresses already being resolved.

use std::hint::black_box;
use std::sync::Arc;

use net::fib::{Adjacency, Fib, FibBuilder, Ipv4Route, NextHop, RouteTarget, TtlMode};
use net::packet::{PacketBuf, VecBuf};
use net::pipeline::{LocalAddrs, Pipeline, PipelineConfig, PuntReason, Verdict};
use router::punt::budget::{rates, Budgets};
use router::punt::{Mark, NeighborMarks, PuntQueues};

const BURST: usize = 32;
const TSC_HZ: u64 = 2_000_000_000;
/// TSC cycles between bursts: 32 packets at 16 Mpps.
const BURST_GAP: u64 = 4_000;
const ROUTER_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
const PEER_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];

fn ip4(a: [u8; 4]) -> u32 {
    u32::from_be_bytes(a)
}

/// Ports `in` (0) 10.0.0.1/24, `lan` (1) 10.1.0.1/16, `out` (2) 10.2.0.1/24 with the
/// static neighbour 10.2.0.2; 100.0.0.0/8 via 10.2.0.2. (The bench numbers `out` 1 and
/// `lan` 2 and gives `in` a /16: no decision of these mixes depends on either.)
fn fib() -> Fib {
    let mut b = FibBuilder::new();
    let adj = |port, ip, mac| Adjacency::new(port, 1500, ip, Some(mac), ROUTER_MAC, &[]);
    let peer = b.add_adjacency(adj(0, [10, 0, 0, 2], PEER_MAC));
    let out = b.add_adjacency(adj(2, [10, 2, 0, 2], [2, 0, 0, 0, 2, 2]));
    let route = |target| Ipv4Route {
        target,
        ttl_mode: TtlMode::Uniform,
    };
    let via = |a| route(RouteTarget::NextHop(NextHop::Adjacency(a)));
    for (addr, len, r) in [
        ([10, 0, 0, 0], 24, route(RouteTarget::Connected { port: 0 })),
        ([10, 1, 0, 0], 16, route(RouteTarget::Connected { port: 1 })),
        ([10, 2, 0, 0], 24, route(RouteTarget::Connected { port: 2 })),
        ([10, 0, 0, 1], 32, route(RouteTarget::Local)),
        ([10, 1, 0, 1], 32, route(RouteTarget::Local)),
        ([10, 2, 0, 1], 32, route(RouteTarget::Local)),
        ([10, 0, 0, 2], 32, via(peer)),
        ([10, 2, 0, 2], 32, via(out)),
        ([100, 0, 0, 0], 8, via(out)),
    ] {
        b.add_ipv4_route(ip4(addr), len, r).unwrap();
    }
    b.build(1)
}

fn pipeline() -> Pipeline {
    let macs = [ROUTER_MAC, [2, 0, 0, 0, 1, 1], [2, 0, 0, 0, 2, 1]];
    let local = LocalAddrs::new(&macs, [[10, 0, 0, 1], [10, 1, 0, 1], [10, 2, 0, 1]]);
    Pipeline::new(PipelineConfig::default(), local)
}

fn csum(b: &[u8]) -> u16 {
    let mut s: u32 = b
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32)
        .sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

fn frame(dst_mac: [u8; 6], src_mac: [u8; 6], ethertype: u16, l3: &[u8]) -> Vec<u8> {
    let mut f = [dst_mac, src_mac].concat();
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(l3);
    f.resize(60, 0);
    f
}

fn ipv4(dst: [u8; 4], proto: u8, ttl: u8, payload: &[u8]) -> Vec<u8> {
    let len = (20 + payload.len()) as u16;
    let mut h = vec![0x45, 0, 0, 0, 0, 0, 0, 0, ttl, proto, 0, 0, 10, 0, 0, 2];
    h[2..4].copy_from_slice(&len.to_be_bytes());
    h.extend_from_slice(&dst);
    let c = csum(&h);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h.extend_from_slice(payload);
    h
}

fn udp(dst: [u8; 4], ttl: u8, sport: u16) -> Vec<u8> {
    let mut u = sport.to_be_bytes().to_vec();
    u.extend_from_slice(&[0, 9, 0, 26, 0, 0]);
    u.resize(26, 0);
    frame(ROUTER_MAC, PEER_MAC, 0x0800, &ipv4(dst, 17, ttl, &u))
}

fn echo(ident: u16) -> Vec<u8> {
    let mut b = vec![8, 0, 0, 0];
    b.extend_from_slice(&ident.to_be_bytes());
    b.extend_from_slice(&[0, 1]);
    b.extend_from_slice(&[b'a'; 18]);
    let c = csum(&b);
    b[2..4].copy_from_slice(&c.to_be_bytes());
    frame(
        ROUTER_MAC,
        PEER_MAC,
        0x0800,
        &ipv4([10, 0, 0, 1], 1, 64, &b),
    )
}

fn arp_request(ip: [u8; 4]) -> Vec<u8> {
    let mac = [2, 0x42, 0, 0, ip[2], ip[3]];
    let mut a = vec![0, 1, 8, 0, 6, 4, 0, 1];
    a.extend_from_slice(&mac);
    a.extend_from_slice(&ip);
    a.extend_from_slice(&[0; 6]);
    a.extend_from_slice(&[10, 0, 0, 1]);
    frame([0xff; 6], mac, 0x0806, &a)
}

/// The bad packet `i` of a mix (`r`: 16 random bits), as `punt_mix.py` makes it.
fn bad(mix: &str, i: usize, r: u32) -> Vec<u8> {
    let (hi, lo) = ((r >> 8) as u8, r as u8);
    match mix {
        "punt-noroute" => udp([203, 0, 113, i as u8], 64, 1024),
        "punt-glean" => udp([10, 1, hi, lo.max(1)], 64, 1024),
        "punt-ttl1" => udp([100, (i >> 8) as u8, i as u8, 1], 1, 1024),
        "punt-echo" => echo(i as u16),
        "punt-arp" => arp_request([10, 0, hi.max(1), lo.max(3)]),
        _ => panic!("unknown mix {mix}"),
    }
}

/// xorshift32: the same random hosts on every run.
fn random(state: &mut u32) -> u32 {
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    *state
}

/// What the worker decides for one burst: verdicts, then the admission of each punt
/// (the mbuf hand-off itself is left out: it is the same cost in every mix).
#[inline(never)]
fn run_burst(
    p: &Pipeline,
    fib: &Fib,
    q: &mut PuntQueues,
    tsc: u64,
    b: &mut [VecBuf],
    v: &mut [Verdict],
    admitted: &mut Vec<(PuntReason, usize)>,
) -> u64 {
    p.process_burst(fib, 0, b, v);
    q.begin_burst(tsc);
    let mut dropped = 0;
    for (i, (pkt, verdict)) in b.iter().zip(v.iter()).enumerate() {
        if let Verdict::SlowPath(reason) = *verdict {
            match q.admit(reason, 0, pkt.data()) {
                Ok(_) => admitted.push((reason, i)),
                Err(why) => dropped += why.index() as u64,
            }
        }
    }
    dropped
}

/// The slow path's side: a glean it was handed marks its address.
fn mark(marks: &NeighborMarks, reason: PuntReason, frame: &[u8]) {
    if let (PuntReason::Glean { port }, Some(ip)) = (reason, router::punt::ipv4_dst(frame)) {
        marks.insert(Mark::Addr { port, ip });
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mix = args.next().unwrap_or_else(|| "punt-glean".into());
    let rounds: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(2000);
    let mut seed = 23u32;
    let bursts: Vec<Vec<VecBuf>> = (0..rounds)
        .map(|k| {
            (0..BURST / 2)
                .flat_map(|j| {
                    let i = k * BURST / 2 + j;
                    let good = udp(
                        [100, (i >> 8) as u8, i as u8, 1],
                        64,
                        1024 + (i as u16 & 0x3ff),
                    );
                    let r = random(&mut seed) & 0xffff;
                    [VecBuf::new(&good), VecBuf::new(&bad(&mix, i, r))]
                })
                .collect()
        })
        .collect();
    let (fib, p) = (fib(), pipeline());
    let marks = Arc::new(NeighborMarks::default());
    // The slow path is already resolving 1,024 hosts of the scan (its MAX_PENDING).
    for _ in 0..1024 {
        let r = random(&mut seed);
        let ip = ip4([10, 1, (r >> 8) as u8, (r as u8).max(1)]);
        marks.insert(Mark::Addr { port: 1, ip });
    }
    let rates = rates(&Default::default(), &Default::default());
    let (control, _c) = crossbeam_channel::bounded(1);
    let (data, _d) = crossbeam_channel::bounded(1);
    let mut q = PuntQueues {
        control,
        data,
        budgets: Budgets::new(&rates, TSC_HZ, 1),
        marks: marks.clone(),
    };
    let mut v = [Verdict::Forward { port: 0 }; BURST];
    let mut b = bursts[0].clone();
    let mut admitted = Vec::with_capacity(BURST);
    let (mut sum, mut punted, mut fwd) = (0u64, 0usize, 0usize);
    for (k, burst) in bursts.iter().enumerate() {
        b.clone_from(burst);
        admitted.clear();
        let tsc = (k as u64 + 1) * BURST_GAP;
        sum += run_burst(
            &p,
            &fib,
            &mut q,
            tsc,
            black_box(&mut b),
            &mut v,
            &mut admitted,
        );
        fwd += v
            .iter()
            .filter(|v| matches!(v, Verdict::Forward { .. }))
            .count();
        for &(reason, i) in &admitted {
            mark(&marks, reason, b[i].data());
        }
        punted += admitted.len();
    }
    black_box(sum);
    println!(
        "{mix}: {rounds} bursts of {BURST}: {fwd} forwarded, {punted} admitted to the slow path"
    );
}
