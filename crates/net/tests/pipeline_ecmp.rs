//! ECMP over labelled traffic: which fields the flow hash uses (RFC 6790 entropy labels).
#![forbid(unsafe_code)]

mod pipeline_support;

use std::collections::HashSet;

use net::fib::{Fib, LabelEntry, LabelOp, NextHop, TtlMode};
use net::pipeline::Verdict;
use pipeline_support::*;

/// Label 100 swaps to 200 over an 8-way ECMP group (ports 0..8).
fn fib() -> Fib {
    let mut b = builder();
    let members: Vec<_> = (0..8)
        .map(|p| (b.add_adjacency(adj(p, &[200])), 1))
        .collect();
    let g = b.add_ecmp(&members).unwrap();
    b.add_label(
        100,
        LabelEntry {
            op: LabelOp::Swap,
            next_hop: Some(NextHop::Ecmp(g)),
            ttl_mode: TtlMode::Uniform,
        },
    )
    .unwrap();
    b.build(1)
}

fn port(v: Verdict) -> u16 {
    match v {
        Verdict::Forward { port } => port,
        v => panic!("not forwarded: {v:?}"),
    }
}

fn udp(sport: u16) -> Vec<u8> {
    let mut ip = Ip4::new([198, 51, 100, 7], [203, 0, 113, 9]);
    ip.sport = sport;
    ip.bytes()
}

#[test]
fn ipv4_flows_below_the_stack_spread_and_stick() {
    let fib = fib();
    let mut seen = HashSet::new();
    for sport in 0..200 {
        let a = port(run1(&fib, mpls(&[(100, 0, 64)], &udp(sport))).0);
        let b = port(run1(&fib, mpls(&[(100, 7, 9)], &udp(sport))).0);
        assert_eq!(a, b, "TC and TTL must not move a flow");
        seen.insert(a);
    }
    assert_eq!(seen.len(), 8, "200 flows should reach all 8 members");
}

#[test]
fn reserved_labels_do_not_enter_the_hash() {
    let fib = fib();
    for sport in 0..50 {
        let a = port(run1(&fib, mpls(&[(100, 0, 64)], &udp(sport))).0);
        let b = port(run1(&fib, mpls(&[(0, 0, 64), (100, 0, 64)], &udp(sport))).0);
        assert_eq!(a, b);
    }
}

#[test]
fn entropy_label_alone_decides() {
    let fib = fib();
    let mut by_el = HashSet::new();
    for el in 16..216u32 {
        let members: HashSet<u16> = (0..10)
            .map(|sport| {
                port(
                    run1(
                        &fib,
                        mpls(&[(100, 0, 64), (7, 0, 0), (el, 0, 0)], &udp(sport)),
                    )
                    .0,
                )
            })
            .collect();
        assert_eq!(members.len(), 1, "one entropy label, one member");
        by_el.extend(members);
    }
    assert_eq!(by_el.len(), 8, "entropy labels spread over all members");
}

#[test]
fn non_ipv4_payload_hashes_on_labels() {
    let fib = fib();
    let mut seen = HashSet::new();
    for inner in 1000..1200u32 {
        let a = port(run1(&fib, mpls(&[(100, 0, 64), (inner, 0, 64)], &[0u8; 30])).0);
        let b = port(run1(&fib, mpls(&[(100, 0, 64), (inner, 0, 64)], &[9u8; 30])).0);
        assert_eq!(a, b);
        seen.insert(a);
    }
    assert_eq!(seen.len(), 8);
}
