//! A derived snapshot must answer exactly like one built from scratch from the same
//! final content (the oracle: `FibBuilder` over a `BTreeMap` model).

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::super::{
    Adjacency, Fib, FibBuilder, FibError, Ipv4Route, LabelEntry, LabelOp, NextHop, RouteTarget,
    TtlMode,
};

fn adj(n: u8, labels: &[u32]) -> Adjacency {
    Adjacency::new(n as u16, 1500, [10, 0, 0, n], Some([n; 6]), [1; 6], labels)
}

/// Adjacencies 0..4 (2 and 3 push a label) and one ECMP group over 0 and 1.
fn base_builder() -> FibBuilder {
    let mut b = FibBuilder::new();
    b.add_adjacency(adj(1, &[]));
    b.add_adjacency(adj(2, &[]));
    b.add_adjacency(adj(3, &[100]));
    b.add_adjacency(adj(4, &[200, 300]));
    b.add_ecmp(&[(0, 1), (1, 2)]).unwrap();
    b.set_port_address(1, [10, 0, 0, 254]);
    b
}

fn route(k: u8) -> Ipv4Route {
    let target = match k % 7 {
        0 => RouteTarget::Local,
        1 => RouteTarget::Blackhole,
        2 => RouteTarget::Connected { port: 1 },
        3 => RouteTarget::NextHop(NextHop::Ecmp(0)),
        a => RouteTarget::NextHop(NextHop::Adjacency((a - 3) as u32)),
    };
    let ttl_mode = if k >= 7 {
        TtlMode::Pipe(64)
    } else {
        TtlMode::Uniform
    };
    Ipv4Route { target, ttl_mode }
}

fn entry(k: u8) -> LabelEntry {
    match k % 4 {
        0 => LabelEntry {
            op: LabelOp::Swap,
            next_hop: Some(NextHop::Adjacency(2 + (k as u32 / 4) % 2)),
            ttl_mode: TtlMode::Uniform,
        },
        1 => LabelEntry {
            op: LabelOp::Pop,
            next_hop: Some(NextHop::Ecmp(0)),
            ttl_mode: TtlMode::Pipe(9),
        },
        _ => LabelEntry {
            op: LabelOp::PopAndLookup,
            next_hop: None,
            ttl_mode: TtlMode::Uniform,
        },
    }
}

type Model = (BTreeMap<(u32, u8), Ipv4Route>, BTreeMap<u32, LabelEntry>);

fn scratch(m: &Model) -> Fib {
    let mut b = base_builder();
    for (&(a, l), &r) in &m.0 {
        b.add_ipv4_route(a, l, r).unwrap();
    }
    for (&l, &e) in &m.1 {
        b.add_label(l, e).unwrap();
    }
    b.build(1)
}

#[derive(Clone, Debug)]
enum Op {
    Route(u32, u8, u8),
    Unroute(u32, u8),
    Label(u32, u8),
    Unlabel(u32),
}

fn prefix(a: u32, l: u8) -> (u32, u8) {
    let l = l % 33;
    (
        if l == 0 {
            0
        } else {
            a & (u32::MAX << (32 - l))
        },
        l,
    )
}

/// Addresses clustered in a few /8s so edits overlap and nest.
fn addr() -> impl Strategy<Value = u32> {
    (0u32..4, any::<u32>()).prop_map(|(b, x)| ((b * 60 + 10) << 24) | (x & 0x00ff_ffff))
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (addr(), 0u8..33, 0u8..14).prop_map(|(a, l, r)| Op::Route(a, l, r)),
        2 => (addr(), 0u8..33).prop_map(|(a, l)| Op::Unroute(a, l)),
        2 => (16u32..80, 0u8..8).prop_map(|(l, e)| Op::Label(l, e)),
        1 => (16u32..80).prop_map(Op::Unlabel),
    ]
}

fn apply(m: &mut Model, d: &mut super::FibDelta, op: &Op) {
    match *op {
        Op::Route(a, l, r) => {
            let p = prefix(a, l);
            let old = d.replace_ipv4_route(p.0, p.1, route(r)).unwrap();
            assert_eq!(old, m.0.insert(p, route(r)));
        }
        Op::Unroute(a, l) => {
            let p = prefix(a, l);
            assert_eq!(d.remove_ipv4_route(p.0, p.1).unwrap(), m.0.remove(&p));
        }
        Op::Label(l, e) => {
            assert_eq!(
                d.replace_label(l, entry(e)).unwrap(),
                m.1.insert(l, entry(e))
            );
        }
        Op::Unlabel(l) => assert_eq!(d.remove_label(l), m.1.remove(&l)),
    }
}

fn same_answers(a: &Fib, b: &Fib, m: &Model, keys: &[u32]) {
    let probe = keys.iter().copied().chain(
        m.0.keys()
            .flat_map(|&(p, l)| [p, p | u32::MAX.checked_shr(l as u32).unwrap_or(0)]),
    );
    for k in probe {
        let ra = a
            .lookup_ipv4(k)
            .map(|id| (*a.route(id), *a.direct(id).unwrap()));
        let rb = b
            .lookup_ipv4(k)
            .map(|id| (*b.route(id), *b.direct(id).unwrap()));
        assert_eq!(ra, rb, "lookup {:#x}", k);
    }
    for l in 0..100 {
        assert_eq!(a.lookup_label(l), b.lookup_label(l), "label {l}");
    }
    let (sa, sb) = (a.stats(), b.stats());
    assert_eq!(sa.ipv4_routes, sb.ipv4_routes);
    assert_eq!(sa.ipv4_routes, m.0.len());
    assert_eq!(sa.labels, sb.labels);
    assert_eq!(sa.labels, m.1.len());
    assert_eq!(a.port_address(1), b.port_address(1));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn derived_equals_scratch(
        init in proptest::collection::vec(op(), 0..60),
        edits in proptest::collection::vec(op(), 1..40),
        keys in proptest::collection::vec(addr(), 200),
    ) {
        let mut m: Model = Default::default();
        let mut d = base_builder().build(0).derive();
        // Seed a from-scratch base from the model after `init`.
        for o in &init {
            apply(&mut m, &mut d, o);
        }
        let base = scratch(&m);
        let mut d = base.derive();
        for o in &edits {
            apply(&mut m, &mut d, o);
        }
        let derived = d.build(2);
        prop_assert_eq!(derived.generation(), 2);
        same_answers(&derived, &scratch(&m), &m, &keys);
        // The base is untouched.
        let mut m0: Model = Default::default();
        let mut d0 = base_builder().build(0).derive();
        for o in &init {
            apply(&mut m0, &mut d0, o);
        }
        same_answers(&base, &scratch(&m0), &m0, &keys);
    }
}

#[test]
fn interning_reuses_equal_items_and_checks_references() {
    let base = base_builder().build(1);
    let mut d = base.derive();
    assert_eq!(d.intern_adjacency(adj(3, &[100])), 2);
    let fresh = d.intern_adjacency(adj(9, &[]));
    assert_eq!(fresh, 4);
    assert_eq!(d.intern_ecmp(&[(0, 1), (1, 2)]), Ok(0));
    assert_eq!(d.intern_ecmp(&[(0, 1), (fresh, 1)]), Ok(1));
    assert_eq!(
        d.intern_ecmp(&[(0, 1), (77, 1)]),
        Err(FibError::UnknownAdjacency(77))
    );
    let bad = Ipv4Route {
        target: RouteTarget::NextHop(NextHop::Ecmp(9)),
        ttl_mode: TtlMode::Uniform,
    };
    assert_eq!(
        d.replace_ipv4_route(0x0a000000, 8, bad),
        Err(FibError::UnknownEcmp(9))
    );
    assert!(matches!(
        d.replace_ipv4_route(0x0a000001, 8, route(4)),
        Err(FibError::BadPrefix { .. })
    ));
    let swap_plain = LabelEntry {
        op: LabelOp::Swap,
        next_hop: Some(NextHop::Adjacency(0)),
        ttl_mode: TtlMode::Uniform,
    };
    assert_eq!(
        d.replace_label(20, swap_plain),
        Err(FibError::SwapWithoutLabel(20))
    );
    assert_eq!(d.replace_label(3, entry(2)), Err(FibError::BadInLabel(3)));
    // A learned MAC rewrites the adjacency every user of it sees.
    d.replace_ipv4_route(0x0a000000, 8, route(4)).unwrap();
    let learned = Adjacency::new(2, 1500, [10, 0, 0, 2], Some([7; 6]), [1; 6], &[]);
    d.set_adjacency(1, learned.clone()).unwrap();
    assert_eq!(d.intern_adjacency(learned.clone()), 1);
    let f = d.build(2);
    let id = f.lookup_ipv4(0x0a010101).unwrap();
    assert_eq!(
        f.route(id).target,
        RouteTarget::NextHop(NextHop::Adjacency(1))
    );
    assert_eq!(f.adjacency(1), &learned);
    // The fast path's copy of it too.
    assert_eq!(f.direct(id).unwrap().eth[..6], [7; 6]);
    assert_eq!(base.adjacency(1), &adj(2, &[]));
    assert_eq!(base.lookup_ipv4(0x0a010101), None);
}

type Model6 = BTreeMap<(u128, u8), Ipv4Route>;

fn scratch6(m: &Model6) -> Fib {
    let mut b = base_builder();
    for (&(a, l), &r) in m {
        b.add_ipv6_route(a, l, r).unwrap();
    }
    b.build(1)
}

/// Addresses in two /32s of 2001:db8::/29 so edits overlap and nest.
fn addr6() -> impl Strategy<Value = u128> {
    (0u128..2, any::<u128>()).prop_map(|(b, x)| ((0x2001_0db8 + b) << 96) | (x >> 32))
}

fn apply6(m: &mut Model6, d: &mut super::FibDelta, add: bool, a: u128, l: u8, r: u8) {
    let p = (a & super::super::mask6(l), l);
    if add {
        let old = d.replace_ipv6_route(p.0, p.1, route(r)).unwrap();
        assert_eq!(old, m.insert(p, route(r)));
    } else {
        assert_eq!(d.remove_ipv6_route(p.0, p.1).unwrap(), m.remove(&p));
    }
}

fn same_answers6(a: &Fib, b: &Fib, m: &Model6, keys: &[u128]) {
    let ends = m
        .keys()
        .flat_map(|&(p, l)| [p, p | !super::super::mask6(l)]);
    for k in keys.iter().copied().chain(ends) {
        let ra = a.lookup_ipv6(k).map(|id| *a.route(id));
        let rb = b.lookup_ipv6(k).map(|id| *b.route(id));
        assert_eq!(ra, rb, "lookup {:#x}", k);
        let direct6 = |f: &Fib| f.lookup_ipv6(k).map(|id| *f.direct6(id).unwrap());
        assert_eq!(direct6(a), direct6(b), "direct6 {:#x}", k);
        assert_eq!(
            a.ipv6_longest_match(k).map(|(_, _, r)| *r),
            ra,
            "longest match {k:#x}"
        );
    }
    assert_eq!(a.stats().ipv6_routes, m.len());
    assert_eq!(b.stats().ipv6_routes, m.len());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn derived_ipv6_equals_scratch(
        init in proptest::collection::vec((any::<bool>(), addr6(), 0u8..129, 0u8..14), 0..40),
        edits in proptest::collection::vec((any::<bool>(), addr6(), 0u8..129, 0u8..14), 1..30),
        keys in proptest::collection::vec(addr6(), 100),
    ) {
        let mut m = Model6::new();
        let mut d = base_builder().build(0).derive();
        for &(add, a, l, r) in &init {
            apply6(&mut m, &mut d, add || l % 3 == 0, a, l, r);
        }
        let base = scratch6(&m);
        let before = m.clone();
        let mut d = base.derive();
        for &(add, a, l, r) in &edits {
            apply6(&mut m, &mut d, add, a, l, r);
        }
        let derived = d.build(2);
        same_answers6(&derived, &scratch6(&m), &m, &keys);
        same_answers6(&base, &scratch6(&before), &before, &keys);
    }
}

#[test]
fn ipv4_edits_share_the_ipv6_table() {
    let mut b = base_builder();
    b.add_ipv6_route(0x2001_0db8 << 96, 32, route(4)).unwrap();
    let base = b.build(1);
    let mut d = base.derive();
    d.replace_ipv4_route(0x0a000000, 8, route(4)).unwrap();
    let next = d.build(2);
    assert!(std::ptr::eq(base.lpm6(), next.lpm6()));
    let mut d = next.derive();
    assert_eq!(d.remove_ipv6_route(0x2001_0db9 << 96, 32), Ok(None));
    d.replace_ipv6_route(0x2001_0db9 << 96, 32, route(5))
        .unwrap();
    let last = d.build(3);
    assert!(!std::ptr::eq(next.lpm6(), last.lpm6()));
    assert_eq!(next.stats().ipv6_routes, 1);
    assert_eq!(last.stats().ipv6_routes, 2);
}
