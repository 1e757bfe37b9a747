//! Property tests of the pipeline: robustness on arbitrary bytes and invariants of
//! everything it forwards.
#![forbid(unsafe_code)]

mod pipeline_support;

use net::fib::{Fib, LabelEntry, LabelOp, NextHop, RouteTarget, TtlMode};
use net::pipeline::Verdict;
use pipeline_support::*;
use proptest::prelude::*;

/// A table exercising every operation: ECMP (4 members, mixed pushes), swap, swap+push,
/// PHP and pop-and-lookup in both TTL modes, local and connected routes.
fn fib() -> Fib {
    let mut b = builder();
    let m: Vec<_> = (0..4u16)
        .map(|p| (b.add_adjacency(adj(p, &[1000 + p as u32])), 1 + p as u32))
        .collect();
    let ecmp_swap = b.add_ecmp(&m).unwrap();
    let plain: Vec<_> = (0..4u16)
        .map(|p| (b.add_adjacency(adj(p, &[])), 1))
        .collect();
    let ecmp_plain = b.add_ecmp(&plain).unwrap();
    let push2 = b.add_adjacency(adj(1, &[2000, 2001]));
    let u = TtlMode::Uniform;
    let e = |op, nh, mode| LabelEntry {
        op,
        next_hop: nh,
        ttl_mode: mode,
    };
    b.add_label(100, e(LabelOp::Swap, Some(NextHop::Ecmp(ecmp_swap)), u))
        .unwrap();
    b.add_label(101, e(LabelOp::Swap, Some(NextHop::Adjacency(push2)), u))
        .unwrap();
    b.add_label(110, e(LabelOp::Pop, Some(NextHop::Ecmp(ecmp_plain)), u))
        .unwrap();
    b.add_label(
        111,
        e(
            LabelOp::Pop,
            Some(NextHop::Ecmp(ecmp_plain)),
            TtlMode::Pipe(255),
        ),
    )
    .unwrap();
    b.add_label(120, e(LabelOp::PopAndLookup, None, u)).unwrap();
    b.add_label(121, e(LabelOp::PopAndLookup, None, TtlMode::Pipe(255)))
        .unwrap();
    b.add_ipv4_route(
        addr([10, 0, 0, 0]),
        8,
        route(RouteTarget::NextHop(NextHop::Ecmp(ecmp_plain)), u),
    )
    .unwrap();
    b.add_ipv4_route(
        addr([11, 0, 0, 0]),
        8,
        route(RouteTarget::NextHop(NextHop::Adjacency(push2)), u),
    )
    .unwrap();
    b.add_ipv4_route(
        addr([12, 0, 0, 0]),
        8,
        route(RouteTarget::Connected { port: 1 }, u),
    )
    .unwrap();
    b.add_ipv4_route(addr(ROUTER_ADDR), 32, route(RouteTarget::Local, u))
        .unwrap();
    b.build(1)
}

fn ip_strategy() -> impl Strategy<Value = Ip4> {
    (
        (1u8..=223, any::<[u8; 3]>()),
        prop_oneof![Just(10u8), Just(11), Just(12), Just(13)],
        any::<[u8; 3]>(),
        any::<u8>(),
        0u8..64,
        any::<(bool, u16, u16)>(),
        0usize..1600,
    )
        .prop_filter("martian source", |((s, _), ..)| *s != 127)
        .prop_map(|((s0, s), d0, d, ttl, dscp, (df, sport, dport), len)| {
            let mut ip = Ip4::new([s0, s[0], s[1], s[2]], [d0, d[0], d[1], d[2]]);
            ip.ttl = ttl;
            ip.dscp = dscp;
            ip.df = df;
            ip.sport = sport;
            ip.dport = dport;
            ip.payload_len = len;
            ip
        })
}

fn label_strategy() -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(0u32),
        Just(1),
        Just(3),
        Just(7),
        Just(100),
        Just(101),
        Just(110),
        Just(111),
        Just(120),
        Just(121),
        16u32..(1 << 20),
    ]
}

fn max_ttl(d: &Decoded) -> u8 {
    d.labels
        .iter()
        .map(|l| l.3)
        .chain(d.ip.as_ref().map(|h| h.time_to_live))
        .max()
        .unwrap_or(0)
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(
        et in prop_oneof![Just(0x0800u16), Just(0x8847), Just(0x8100), Just(0x0806), any::<u16>()],
        body in proptest::collection::vec(any::<u8>(), 0..200),
        cut in 0usize..20,
    ) {
        let mut f = eth(et, &body);
        f.truncate(f.len().saturating_sub(cut));
        let fib = fib();
        for cfg in [net::pipeline::PipelineConfig::default(), net::pipeline::PipelineConfig { accept_vlan: true, max_label_depth: 3, punt_ip_options: true }] {
            let (v, out) = run_with(cfg, &fib, &[f.clone()]).pop().unwrap();
            if !matches!(v, Verdict::Forward { .. }) {
                prop_assert_eq!(&out, &f, "only forwarded packets are modified");
            } else if et == 0x0800 {
                decode(&out);
            }
        }
    }

    #[test]
    fn forwarded_ipv4_is_valid_and_ttl_decremented(ip in ip_strategy(), pad in 0usize..30) {
        let mut f = ipv4_frame(&ip);
        f.resize(f.len() + pad, 0xa5);
        let (v, out) = run1(&fib(), f);
        if let Verdict::Forward { .. } = v {
            // decode() checks IPv4/UDP checksums and total length == buffer.
            let d = decode(&out);
            prop_assert_eq!(d.ip.as_ref().unwrap().time_to_live, ip.ttl - 1);
            prop_assert!(ip.ttl > 1);
            prop_assert!(d.labels.iter().all(|l| l.3 == ip.ttl - 1 && l.0 != 3));
        }
    }

    #[test]
    fn ttls_never_increase_through_the_lsr(
        labels in proptest::collection::vec((label_strategy(), 0u8..8, any::<u8>()), 1..5),
        ip in ip_strategy(),
        pad in 0usize..20,
    ) {
        let mut f = mpls(&labels, &ip.bytes());
        f.resize(f.len() + pad, 0);
        let (v, out) = run1(&fib(), f.clone());
        if let Verdict::Forward { .. } = v {
            let d = decode(&out);
            let in_max = labels.iter().map(|l| l.2).chain([ip.ttl]).max().unwrap();
            prop_assert!(max_ttl(&d) <= in_max, "{:?} -> {:?}", labels, d.labels);
            // Labels below the top travel untouched; none of ours is 3 or has TTL 0.
            let count = |f: &dyn Fn(u32, u8) -> bool| -> (usize, usize) {
                (
                    d.labels.iter().filter(|l| f(l.0, l.3)).count(),
                    labels.iter().filter(|l| f(l.0, l.2)).count(),
                )
            };
            let (o, i) = count(&|l, _| l == 3);
            prop_assert!(o <= i);
            let (o, i) = count(&|_, t| t == 0);
            prop_assert!(o <= i);
            if let Some(h) = &d.ip {
                prop_assert!(h.time_to_live <= ip.ttl);
                // An exposed IPv4 header (no labels left) is never sent with TTL 0.
                prop_assert!(h.time_to_live > 0 || !d.labels.is_empty());
            }
        } else {
            prop_assert_eq!(out, f);
        }
    }

    #[test]
    fn a_flow_never_changes_member(
        ip in ip_strategy(),
        ttls in (2u8..=255, 2u8..=255),
        lens in (0usize..1400, 0usize..1400),
        dscp in 0u8..64,
        label_ttl in 2u8..=255,
    ) {
        let fib = fib();
        let (mut a, mut b) = (ip.clone(), ip.clone());
        a.ttl = ttls.0;
        b.ttl = ttls.1;
        b.dscp = dscp;
        a.payload_len = lens.0;
        b.payload_len = lens.1;
        prop_assert_eq!(run1(&fib, ipv4_frame(&a)).0, run1(&fib, ipv4_frame(&b)).0);
        let la = run1(&fib, mpls(&[(100, 0, label_ttl)], &a.bytes())).0;
        let lb = run1(&fib, mpls(&[(100, 5, 64)], &b.bytes())).0;
        prop_assert_eq!(la, lb);
    }
}
