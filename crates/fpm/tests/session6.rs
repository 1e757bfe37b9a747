//! IPv6 through the session: next hops to ports (IPv6 subnets, link-local by ifindex,
//! 6PE through IPv4 neighbours), family mismatches refused and counted, next-hop
//! groups, label entries via IPv6 neighbours, and resync by mark and sweep.
#![forbid(unsafe_code)]

mod harness;

use std::time::Duration;

use fpm::encode::{path, path6};
use fpm::msg::{Gateway, Key, NexthopBody, Path, RouteBody};
use fpm::{Hop, Target};
use harness::{ip, mapped, paths, v4, v6, DB8_0, DB8_1, H, LL, SETTLE};

fn hop(port: u16, via: Gateway, labels: &[u32], weight: u32) -> Hop {
    Hop {
        port,
        via,
        labels: labels.to_vec(),
        weight,
    }
}

fn fwd(h: &[Hop]) -> Option<Target> {
    Some(Target::Forward(h.to_vec()))
}

/// 2001:db8:N00::/40.
fn p(n: u128) -> Key {
    v6((0x2001_0db8_0000 | n << 8) << 80, 40)
}

fn iface(ifindex: u32) -> Path {
    Path {
        gateway: None,
        ifindex,
        labels: vec![],
        weight: 1,
    }
}

#[test]
fn ipv6_routes_resolve_by_subnet_ifindex_and_through_ipv4_for_6pe() {
    let mut h = H::new();
    let v4gw = Gateway::V4(ip(10, 0, 1, 2));
    h.route(p(1), paths(&[path6(DB8_1 | 2, 0, &[], 1)]));
    h.route(p(2), paths(&[path6(LL | 2, 5, &[100], 1)]));
    h.route(
        p(3),
        paths(&[path6(DB8_0 | 2, 0, &[], 1), path6(LL | 3, 5, &[], 2)]),
    );
    h.route(p(4), paths(&[path6(mapped(ip(10, 0, 1, 2)), 0, &[600], 1)]));
    h.route(p(5), paths(&[path(ip(10, 0, 1, 2), 0, &[601, 602], 1)]));
    h.route(p(6), RouteBody::Drop);
    // zebra's connected routes: on a mapped ifindex, and by the subnet holding them.
    h.route(v6(DB8_1, 64), paths(&[iface(5)]));
    h.route(v6(DB8_0, 64), paths(&[iface(3)]));
    assert_eq!(
        h.changes(),
        vec![
            (p(1), fwd(&[hop(1, Gateway::V6(DB8_1 | 2), &[], 1)])),
            (p(2), fwd(&[hop(1, Gateway::V6(LL | 2), &[100], 1)])),
            (
                p(3),
                fwd(&[
                    hop(0, Gateway::V6(DB8_0 | 2), &[], 1),
                    hop(1, Gateway::V6(LL | 3), &[], 2)
                ])
            ),
            (p(4), fwd(&[hop(1, v4gw, &[600], 1)])),
            (p(5), fwd(&[hop(1, v4gw, &[601, 602], 1)])),
            (p(6), Some(Target::Drop)),
            (v6(DB8_1, 64), Some(Target::Connected { port: 1 })),
            (v6(DB8_0, 64), Some(Target::Connected { port: 0 })),
        ]
    );
    assert_eq!(h.s.installed(), (0, 8, 0));
    assert_eq!(h.errors("no_port") + h.errors("gateway_family"), 0);
}

#[test]
fn wrong_families_and_unmapped_link_local_are_refused_and_counted() {
    let mut h = H::new();
    // A link-local gateway on an ifindex no port has: fe80::/64 is on every link.
    h.route(p(1), paths(&[path6(LL | 2, 9, &[], 1)]));
    // IPv6 via an IPv4 neighbour without a label: it cannot carry IPv6.
    h.route(p(2), paths(&[path(ip(10, 0, 1, 2), 5, &[], 1)]));
    h.route(p(3), paths(&[path6(mapped(ip(10, 0, 1, 2)), 5, &[], 1)]));
    // IPv4 via an IPv6 neighbour (RFC 5549) is not supported.
    h.route(v4(1, 0, 0, 0, 8), paths(&[path6(DB8_1 | 2, 5, &[], 1)]));
    // Nor zebra's form of it (BGP unnumbered): 169.254.0.1 onlink on the interface,
    // with or without labels, alone or beside a usable path.
    let unnumbered = |labels: &[u32]| path(ip(169, 254, 0, 1), 5, labels, 1);
    h.route(v4(2, 0, 0, 0, 8), paths(&[unnumbered(&[])]));
    h.route(v4(3, 0, 0, 0, 8), paths(&[unnumbered(&[16])]));
    let usable = path(ip(10, 0, 1, 2), 5, &[], 1);
    h.route(v4(4, 0, 0, 0, 8), paths(&[usable, unnumbered(&[])]));
    assert_eq!(h.changes(), vec![]);
    assert_eq!(h.errors("no_port"), 1);
    assert_eq!(h.errors("gateway_family"), 6);
    // On a port whose own subnet holds 169.254.0.1 it is an ordinary neighbour.
    h.route(
        v4(5, 0, 0, 0, 8),
        paths(&[path(ip(169, 254, 0, 1), 0, &[], 1)]),
    );
    let link_local = Gateway::V4(ip(169, 254, 0, 1));
    assert_eq!(
        h.changes(),
        vec![(v4(5, 0, 0, 0, 8), fwd(&[hop(0, link_local, &[], 1)]))]
    );
    // The same prefix with a usable next hop installs.
    h.route(p(2), paths(&[path(ip(10, 0, 1, 2), 5, &[16], 1)]));
    assert_eq!(
        h.changes(),
        vec![(p(2), fwd(&[hop(1, Gateway::V4(ip(10, 0, 1, 2)), &[16], 1)]))]
    );
}

#[test]
fn next_hop_groups_with_ipv6_members_follow_their_changes() {
    let mut h = H::new();
    let nh = |g: Gateway, labels: &[u32]| {
        NexthopBody::Single(Path {
            gateway: Some(g),
            ifindex: 5,
            labels: labels.to_vec(),
            weight: 1,
        })
    };
    h.nh(1, nh(Gateway::V6(LL | 2), &[]));
    h.nh(2, nh(Gateway::V6(mapped(ip(10, 0, 1, 3))), &[700]));
    h.nh(10, NexthopBody::Group(vec![(1, 1), (2, 2)]));
    h.route(p(1), RouteBody::Group(10));
    h.route(p(2), RouteBody::Group(1));
    assert_eq!(
        h.changes(),
        vec![
            (
                p(1),
                fwd(&[
                    hop(1, Gateway::V6(LL | 2), &[], 1),
                    hop(1, Gateway::V4(ip(10, 0, 1, 3)), &[700], 2)
                ])
            ),
            (p(2), fwd(&[hop(1, Gateway::V6(LL | 2), &[], 1)])),
        ]
    );
    // Member 1 moves: both routes follow.
    h.nh(1, nh(Gateway::V6(LL | 9), &[]));
    let c = h.changes();
    assert_eq!(c.len(), 2, "{c:?}");
    assert!(c
        .iter()
        .all(|(_, t)| format!("{t:?}").contains(&format!("{}", LL | 9))));
    // A blackhole object drops.
    h.nh(3, NexthopBody::Blackhole);
    h.route(p(3), RouteBody::Group(3));
    assert_eq!(h.changes(), vec![(p(3), Some(Target::Drop))]);
}

#[test]
fn label_entries_via_ipv6_neighbours() {
    let mut h = H::new();
    h.route(Key::Label(1000), paths(&[path6(DB8_1 | 2, 0, &[2000], 1)]));
    h.route(Key::Label(1001), paths(&[path6(LL | 2, 5, &[3], 1)]));
    assert_eq!(
        h.changes(),
        vec![
            (
                Key::Label(1000),
                Some(Target::Swap(vec![hop(
                    1,
                    Gateway::V6(DB8_1 | 2),
                    &[2000],
                    1
                )]))
            ),
            (
                Key::Label(1001),
                Some(Target::Pop(vec![hop(1, Gateway::V6(LL | 2), &[], 1)]))
            ),
        ]
    );
    assert_eq!(h.s.installed(), (0, 0, 2));
}

#[test]
fn resync_sweeps_ipv6_routes_not_sent_again_and_deletes_withdraw() {
    let mut h = H::new();
    for n in 1..=3 {
        h.route(p(n), paths(&[path6(DB8_1 | n, 0, &[], 1)]));
    }
    h.route(
        v4(1, 0, 0, 0, 8),
        paths(&[path(ip(10, 0, 1, 2), 0, &[], 1)]),
    );
    h.del(p(3));
    assert_eq!(h.changes().len(), 5);
    assert_eq!(h.s.installed(), (1, 2, 0));
    // zebra restarts: p(1) again unchanged, p(2) not at all.
    h.s.connect(h.now);
    h.route(p(1), paths(&[path6(DB8_1 | 1, 0, &[], 1)]));
    assert_eq!(h.changes(), vec![], "an unchanged route emits nothing");
    h.advance(SETTLE + Duration::from_millis(1));
    let mut swept = h.changes();
    swept.sort_by_key(|c| c.0);
    assert_eq!(swept, vec![(v4(1, 0, 0, 0, 8), None), (p(2), None)]);
    assert_eq!(h.s.installed(), (0, 1, 0));
}
