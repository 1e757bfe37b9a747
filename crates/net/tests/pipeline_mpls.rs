//! LSR and egress LER behaviour of the pipeline, one test per behaviour.
#![forbid(unsafe_code)]

mod pipeline_support;

use net::fib::{Fib, LabelEntry, LabelOp, NextHop, RouteTarget, TtlMode};
use net::pipeline::{DropReason, PipelineConfig, PuntReason, Verdict};
use pipeline_support::*;

const SRC: [u8; 4] = [198, 51, 100, 7];
const DST: [u8; 4] = [203, 0, 113, 9];

fn entry(op: LabelOp, nh: Option<u32>, mode: TtlMode) -> LabelEntry {
    LabelEntry {
        op,
        next_hop: nh.map(NextHop::Adjacency),
        ttl_mode: mode,
    }
}

/// Labels:
/// 100 swap -> 200 (port 1); 101 swap+push -> [300, 201] (port 2, uniform);
/// 102 swap+push pipe(255); 110 PHP pop (port 1, uniform); 111 PHP pop pipe;
/// 120 pop-and-lookup uniform; 121 pop-and-lookup pipe.
/// IPv4: 203.0.113.0/24 via port 3 plain; 203.0.114.0/24 via port 2 pushing [500];
/// the router's address is local.
fn fib() -> Fib {
    let mut b = builder();
    let swap = b.add_adjacency(adj(1, &[200]));
    let swap_push = b.add_adjacency(adj(2, &[300, 201]));
    let plain1 = b.add_adjacency(adj(1, &[]));
    let plain3 = b.add_adjacency(adj(3, &[]));
    let push500 = b.add_adjacency(adj(2, &[500]));
    let u = TtlMode::Uniform;
    let p = TtlMode::Pipe(255);
    b.add_label(100, entry(LabelOp::Swap, Some(swap), u))
        .unwrap();
    b.add_label(101, entry(LabelOp::Swap, Some(swap_push), u))
        .unwrap();
    b.add_label(102, entry(LabelOp::Swap, Some(swap_push), p))
        .unwrap();
    b.add_label(110, entry(LabelOp::Pop, Some(plain1), u))
        .unwrap();
    b.add_label(111, entry(LabelOp::Pop, Some(plain1), p))
        .unwrap();
    b.add_label(120, entry(LabelOp::PopAndLookup, None, u))
        .unwrap();
    b.add_label(121, entry(LabelOp::PopAndLookup, None, p))
        .unwrap();
    b.add_ipv4_route(addr([203, 0, 113, 0]), 24, route(via(plain3), u))
        .unwrap();
    b.add_ipv4_route(addr([203, 0, 114, 0]), 24, route(via(push500), u))
        .unwrap();
    b.add_ipv4_route(addr(ROUTER_ADDR), 32, route(RouteTarget::Local, u))
        .unwrap();
    b.build(1)
}

fn ip(ttl: u8) -> Vec<u8> {
    Ip4::new(SRC, DST).ttl(ttl).bytes()
}

#[test]
fn swap_decrements_ttl_keeps_tc_and_payload() {
    let payload = ip(64);
    let (v, out) = run1(&fib(), mpls(&[(100, 3, 50)], &payload));
    assert_eq!(v, Verdict::Forward { port: 1 });
    let d = decode(&out);
    assert_eq!(
        (d.dst, d.src, d.ethertype),
        (nh_mac(1), port_mac(1), 0x8847)
    );
    assert_eq!(d.labels, vec![(200, 3, true, 49)]);
    assert_eq!(d.payload, payload, "payload untouched by an LSR");
}

#[test]
fn swap_above_other_labels_clears_s_and_keeps_inner_labels() {
    let (v, out) = run1(&fib(), mpls(&[(100, 1, 50), (999, 6, 7)], &ip(64)));
    assert_eq!(v, Verdict::Forward { port: 1 });
    assert_eq!(
        decode(&out).labels,
        vec![(200, 1, false, 49), (999, 6, true, 7)]
    );
}

#[test]
fn swap_and_push_uniform_and_pipe() {
    let (v, out) = run1(&fib(), mpls(&[(101, 2, 50)], &ip(64)));
    assert_eq!(v, Verdict::Forward { port: 2 });
    assert_eq!(
        decode(&out).labels,
        vec![(300, 2, false, 49), (201, 2, true, 49)]
    );
    let (_, out) = run1(&fib(), mpls(&[(102, 2, 50)], &ip(64)));
    assert_eq!(
        decode(&out).labels,
        vec![(300, 2, false, 255), (201, 2, true, 49)]
    );
}

#[test]
fn php_pop_at_bottom_exposes_ipv4_per_ttl_mode() {
    // Uniform: IP TTL = label TTL - 1 (never raised above the IP TTL).
    let (v, out) = run1(&fib(), mpls(&[(110, 0, 30)], &ip(64)));
    assert_eq!(v, Verdict::Forward { port: 1 });
    let d = decode(&out);
    assert_eq!((d.ethertype, d.labels.len()), (0x0800, 0));
    assert_eq!(d.ip.unwrap().time_to_live, 29);
    let (_, out) = run1(&fib(), mpls(&[(110, 0, 30)], &ip(10)));
    assert_eq!(decode(&out).ip.unwrap().time_to_live, 10);
    // Pipe: IP TTL as received.
    let (_, out) = run1(&fib(), mpls(&[(111, 0, 30)], &ip(64)));
    assert_eq!(decode(&out).ip.unwrap().time_to_live, 64);
}

#[test]
fn php_pop_above_a_label_exposes_it_with_mpls_ethertype() {
    let (v, out) = run1(&fib(), mpls(&[(110, 0, 30), (999, 4, 200)], &ip(64)));
    assert_eq!(v, Verdict::Forward { port: 1 });
    let d = decode(&out);
    assert_eq!(d.ethertype, 0x8847);
    assert_eq!(d.labels, vec![(999, 4, true, 29)]);
    let (_, out) = run1(&fib(), mpls(&[(111, 0, 30), (999, 4, 200)], &ip(64)));
    assert_eq!(decode(&out).labels, vec![(999, 4, true, 200)]);
}

#[test]
fn php_pop_of_non_ip_payload_is_dropped() {
    let (v, _) = run1(&fib(), mpls(&[(110, 0, 30)], &[0x00; 40]));
    assert_eq!(v, Verdict::Drop(DropReason::UnsupportedPayload));
    let mut bad = ip(64);
    bad[11] ^= 1;
    let (v, _) = run1(&fib(), mpls(&[(110, 0, 30)], &bad));
    assert_eq!(v, Verdict::Drop(DropReason::BadChecksum));
}

#[test]
fn lsr_does_not_trim_a_payload_that_only_looks_like_ipv4() {
    // Starts with 0x45 but its "checksum" does not verify: not trimmed, forwarded whole.
    let mut payload = vec![0x45, 0, 0, 20];
    payload.resize(50, 0x11);
    let f = mpls(&[(100, 0, 64)], &payload);
    let (v, out) = run1(&fib(), f.clone());
    assert_eq!(v, Verdict::Forward { port: 1 });
    assert_eq!(out.len(), f.len());
    assert_eq!(&out[18..], &payload[..]);
}

#[test]
fn pop_and_lookup_continues_on_next_label() {
    let (v, out) = run1(&fib(), mpls(&[(120, 0, 40), (100, 5, 255)], &ip(64)));
    assert_eq!(v, Verdict::Forward { port: 1 });
    // Uniform: the outer TTL carries on (min of both).
    assert_eq!(decode(&out).labels, vec![(200, 5, true, 39)]);
    // Pipe: the inner label's own TTL.
    let (_, out) = run1(&fib(), mpls(&[(121, 0, 40), (100, 5, 90)], &ip(64)));
    assert_eq!(decode(&out).labels, vec![(200, 5, true, 89)]);
}

#[test]
fn pop_and_lookup_at_bottom_routes_ipv4_per_ttl_mode() {
    let (v, out) = run1(&fib(), mpls(&[(120, 0, 40)], &ip(64)));
    assert_eq!(v, Verdict::Forward { port: 3 });
    let d = decode(&out);
    assert_eq!((d.dst, d.ethertype), (nh_mac(3), 0x0800));
    assert_eq!(d.ip.unwrap().time_to_live, 39);
    let (_, out) = run1(&fib(), mpls(&[(121, 0, 40)], &ip(64)));
    assert_eq!(decode(&out).ip.unwrap().time_to_live, 64);
}

#[test]
fn pop_and_lookup_then_ler_push() {
    let mut p = Ip4::new(SRC, [203, 0, 114, 1]).ttl(64);
    p.dscp = 0b011_000;
    let (v, out) = run1(&fib(), mpls(&[(120, 0, 40)], &p.bytes()));
    assert_eq!(v, Verdict::Forward { port: 2 });
    let d = decode(&out);
    assert_eq!(d.labels, vec![(500, 3, true, 39)]);
    assert_eq!(d.ip.unwrap().time_to_live, 39);
}

#[test]
fn pop_and_lookup_to_the_router_is_local_delivery() {
    let f = mpls(&[(120, 0, 1)], &Ip4::new(SRC, ROUTER_ADDR).bytes());
    let (v, out) = run1(&fib(), f.clone());
    assert_eq!(v, Verdict::SlowPath(PuntReason::LocalDelivery));
    assert_eq!(out, f);
}

#[test]
fn explicit_null_is_popped_at_any_depth() {
    // Alone: IPv4 lookup with uniform TTL.
    let (v, out) = run1(&fib(), mpls(&[(0, 0, 20)], &ip(64)));
    assert_eq!(v, Verdict::Forward { port: 3 });
    assert_eq!(decode(&out).ip.unwrap().time_to_live, 19);
    // Above a label.
    let (v, out) = run1(&fib(), mpls(&[(0, 0, 20), (100, 0, 20)], &ip(64)));
    assert_eq!(v, Verdict::Forward { port: 1 });
    assert_eq!(decode(&out).labels, vec![(200, 0, true, 19)]);
    // Uniform: the lower of the two TTLs carries on.
    let (_, out) = run1(&fib(), mpls(&[(0, 0, 20), (100, 0, 9)], &ip(64)));
    assert_eq!(decode(&out).labels, vec![(200, 0, true, 8)]);
    // Below a pop-and-lookup label.
    let (v, out) = run1(&fib(), mpls(&[(120, 0, 20), (0, 0, 20)], &ip(64)));
    assert_eq!(v, Verdict::Forward { port: 3 });
    assert_eq!(decode(&out).ip.unwrap().time_to_live, 19);
}

#[test]
fn reserved_labels() {
    let cases = [
        (1, Verdict::SlowPath(PuntReason::RouterAlert)),
        // Label 2 (IPv6 explicit null) is popped: tests/pipeline_ipv6.rs.
        (3, Verdict::Drop(DropReason::ReservedLabel)),
    ];
    for (l, want) in cases {
        let f = mpls(&[(l, 0, 64), (100, 0, 64)], &ip(64));
        let (v, out) = run1(&fib(), f.clone());
        assert_eq!(v, want, "label {l}");
        assert_eq!(out, f);
    }
    for l in (4..16).filter(|&l| l != 7) {
        let (v, _) = run1(&fib(), mpls(&[(l, 0, 64), (100, 0, 64)], &ip(64)));
        assert_eq!(v, Verdict::Drop(DropReason::ReservedLabel), "label {l}");
    }
    // Router alert below a pop-and-lookup label is still punted.
    let (v, _) = run1(
        &fib(),
        mpls(&[(120, 0, 64), (1, 0, 64), (100, 0, 64)], &ip(64)),
    );
    assert_eq!(v, Verdict::SlowPath(PuntReason::RouterAlert));
}

#[test]
fn entropy_label_pair_at_top_is_popped_together() {
    let (v, out) = run1(
        &fib(),
        mpls(&[(7, 0, 30), (4242, 0, 0), (100, 0, 30)], &ip(64)),
    );
    assert_eq!(v, Verdict::Forward { port: 1 });
    assert_eq!(decode(&out).labels, vec![(200, 0, true, 29)]);
    let (v, _) = run1(&fib(), mpls(&[(7, 0, 30)], &ip(64)));
    assert_eq!(v, Verdict::Drop(DropReason::ReservedLabel));
}

#[test]
fn label_ttl_one_or_zero_expires_and_is_left_unmodified() {
    for op_label in [100, 101, 110] {
        for ttl in [0, 1] {
            let f = mpls(&[(op_label, 0, ttl)], &ip(64));
            let (v, out) = run1(&fib(), f.clone());
            assert_eq!(
                v,
                Verdict::SlowPath(PuntReason::TtlExpired { in_port: IN_PORT }),
                "label {op_label} ttl {ttl}"
            );
            assert_eq!(out, f);
        }
    }
    // Disposition to IPv4 forwarding with label TTL 1 (uniform) expires too.
    let (v, _) = run1(&fib(), mpls(&[(120, 0, 1)], &ip(64)));
    assert_eq!(
        v,
        Verdict::SlowPath(PuntReason::TtlExpired { in_port: IN_PORT })
    );
}

#[test]
fn unknown_label_and_malformed_stacks() {
    let (v, _) = run1(&fib(), mpls(&[(4000, 0, 64)], &ip(64)));
    assert_eq!(v, Verdict::Drop(DropReason::NoLabel));
    // No bottom of stack before the end of the frame.
    let mut f = eth(0x8847, &lse(100, 0, false, 64));
    f.extend_from_slice(&[0, 0]);
    assert_eq!(run1(&fib(), f).0, Verdict::Drop(DropReason::Truncated));
    // Deeper than the default limit of 16.
    let deep: Vec<(u32, u8, u8)> = (0..17).map(|_| (120, 0, 64)).collect();
    assert_eq!(
        run1(&fib(), mpls(&deep, &ip(64))).0,
        Verdict::Drop(DropReason::StackTooDeep)
    );
    // A configured limit.
    let cfg = PipelineConfig {
        max_label_depth: 2,
        ..PipelineConfig::default()
    };
    let f = mpls(&[(120, 0, 64), (120, 0, 64), (100, 0, 64)], &ip(64));
    assert_eq!(
        run_with(cfg, &fib(), std::slice::from_ref(&f))[0].0,
        Verdict::Drop(DropReason::StackTooDeep)
    );
    assert_eq!(run1(&fib(), f).0, Verdict::Forward { port: 1 });
}

#[test]
fn disposition_checks_the_ipv4_header() {
    let mut bad = ip(64);
    bad[10] ^= 0xff;
    let (v, _) = run1(&fib(), mpls(&[(120, 0, 64)], &bad));
    assert_eq!(v, Verdict::Drop(DropReason::BadChecksum));
    let (v, _) = run1(&fib(), mpls(&[(120, 0, 64)], &[0x00; 40]));
    assert_eq!(v, Verdict::Drop(DropReason::UnsupportedPayload));
}

#[test]
fn a_swap_keeps_every_byte_below_the_stack() {
    // An LSR does not parse the payload: padding or trailers travel with the packet.
    let mut f = mpls(&[(100, 0, 64)], &Ip4::new(SRC, DST).len(0).bytes());
    f.extend_from_slice(&[0; 14]);
    let len = f.len();
    let (v, out) = run1(&fib(), f);
    assert_eq!(v, Verdict::Forward { port: 1 });
    assert_eq!(out.len(), len);
}

#[test]
fn php_towards_ipv4_trims_the_padding() {
    // The exposed IPv4 datagram is forwarded as IPv4: cut to its total length.
    let ip = Ip4::new(SRC, DST).len(0).bytes();
    let mut f = mpls(&[(110, 0, 64)], &ip);
    f.extend_from_slice(&[0; 14]);
    let (v, out) = run1(&fib(), f);
    assert_eq!(v, Verdict::Forward { port: 1 });
    assert_eq!(out.len(), 14 + ip.len());
}

#[test]
fn mtu_counts_pushed_and_kept_labels() {
    // 101 swaps one label for two: 4 more bytes on the wire.
    let p = Ip4::new(SRC, DST).len(1500 - 28 - 4);
    let (v, _) = run1(&fib(), mpls(&[(101, 0, 64)], &p.bytes()));
    assert_eq!(
        v,
        Verdict::SlowPath(PuntReason::FragNeeded {
            in_port: IN_PORT,
            mtu: 1492
        })
    );
    let p = Ip4::new(SRC, DST).len(1500 - 28 - 8);
    assert_eq!(
        run1(&fib(), mpls(&[(101, 0, 64)], &p.bytes())).0,
        Verdict::Forward { port: 2 }
    );
    let mut p = Ip4::new(SRC, DST).len(1500 - 28);
    p.df = false;
    assert_eq!(
        run1(&fib(), mpls(&[(101, 0, 64)], &p.bytes())).0,
        Verdict::Drop(DropReason::MtuExceeded)
    );
    // Non-IPv4 payload too big: dropped.
    assert_eq!(
        run1(&fib(), mpls(&[(101, 0, 64)], &[0u8; 1500])).0,
        Verdict::Drop(DropReason::MtuExceeded)
    );
}

#[test]
fn implicit_null_is_never_written() {
    // Every operation on every label in this table: no label 3 ever leaves.
    for top in [100, 101, 102, 110, 111, 120, 121] {
        for below in [None, Some(100), Some(0)] {
            let mut labels = vec![(top, 0, 64)];
            labels.extend(below.map(|l| (l, 0, 64)));
            let (v, out) = run1(&fib(), mpls(&labels, &ip(64)));
            if let Verdict::Forward { .. } = v {
                assert!(decode(&out).labels.iter().all(|l| l.0 != 3), "{labels:?}");
            }
        }
    }
}
