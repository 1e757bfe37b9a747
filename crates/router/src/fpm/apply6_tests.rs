//! IPv6 FPM routes on real compiled tables: the same precedence as IPv4 (the routes
//! file's `ipv6:` entries win), adjacencies resolved by NDP for IPv6 neighbours and by
//! ARP for 6PE's IPv4 ones, static and learned MACs of both families, per-family counts.

use super::*;
use config::types::{Cidr, Cidr6};
use config::{RouteContext, RouteSet};
use fpm::Hop;
use net::fib::{Family, Fib, NextHop};

const DB8: u128 = 0x2001_0db8 << 96;

/// 2001:db8:N::/48.
fn p48(n: u128) -> u128 {
    DB8 | n << 80
}

/// Port i: 10.0.i.1/24 and 2001:db8:i::1/64.
fn ports() -> Vec<PortIface> {
    (0..2u8)
        .map(|i| PortIface {
            id: i as u16,
            name: format!("p{i}"),
            mac: [2, 0, 0, 0, i, 1],
            mtu: 1500,
            addresses6: vec![Cidr6 {
                addr: p48(i as u128) | 1,
                len: 64,
            }],
            addresses: vec![Cidr {
                addr: u32::from_be_bytes([10, 0, i, 1]),
                len: 24,
            }],
        })
        .collect()
}

fn compile(text: &str) -> (RouteSet, Fib) {
    let ctx = RouteContext {
        ports: Some(ports()),
        max_label_depth: 16,
        ..RouteContext::standalone()
    };
    let set = config::parse_routes(std::path::Path::new("r.yaml"), text, &ctx).unwrap();
    let fib = config::compile(&set, &ports(), 1).unwrap();
    (set, fib)
}

const V6_MAC: [u8; 6] = [2, 0, 0, 0, 1, 0x62];
const V4_MAC: [u8; 6] = [2, 0, 0, 0, 1, 2];
const FILE: &str = "neighbors:\n  - {ip: \"2001:db8:1::2\", mac: \"02:00:00:00:01:62\"}\n  \
                    - {ip: 10.0.1.2, mac: \"02:00:00:00:01:02\"}\n\
                    ipv6:\n  - {prefix: \"2001:db8:f::/48\", via: \"2001:db8:1::2\", push: [777]}\n";

fn v4gw() -> Gateway {
    Gateway::V4(u32::from_be_bytes([10, 0, 1, 2]))
}
fn v6gw() -> Gateway {
    Gateway::V6(p48(1) | 2)
}

fn hop(via: Gateway, labels: &[u32], weight: u32) -> Hop {
    Hop {
        port: 1,
        via,
        labels: labels.to_vec(),
        weight,
    }
}

fn set(key: Key, t: Target) -> Change {
    Change {
        key,
        target: Some(Arc::new(t)),
    }
}

fn key(n: u128) -> Key {
    Key::Ipv6 {
        addr: p48(n),
        len: 48,
    }
}

/// What an address in `2001:db8:n::/48` forwards to in `fib`: per member, its IPv4
/// neighbour, IPv6 neighbour, labels, MAC, payload family and weight.
type Member = (
    [u8; 4],
    Option<[u8; 16]>,
    Vec<u32>,
    Option<[u8; 6]>,
    Family,
    u32,
);

fn members(fib: &Fib, n: u128) -> Vec<Member> {
    let id = fib.lookup_ipv6(p48(n) | 5).expect("a route");
    let nh = match fib.route(id).target {
        RouteTarget::NextHop(nh) => nh,
        t => panic!("unexpected {t:?}"),
    };
    let list = match nh {
        NextHop::Adjacency(a) => vec![(a, 1)],
        NextHop::Ecmp(g) => fib.ecmp_group(g).members().to_vec(),
    };
    list.into_iter()
        .map(|(a, w)| {
            let a = fib.adjacency(a);
            let labels = a.labels().to_vec();
            (a.neighbor, a.neighbor6, labels, a.dst_mac, a.payload, w)
        })
        .collect()
}

fn target(fib: &Fib, n: u128) -> Option<RouteTarget> {
    fib.lookup_ipv6(p48(n) | 5).map(|id| fib.route(id).target)
}

fn control() -> (FpmControl, Fib, Arc<FpmStats>) {
    let (set, fib) = compile(FILE);
    let stats = Arc::new(FpmStats::default());
    let mut c = FpmControl::new(Duration::ZERO, ports(), stats.clone());
    c.set_file_view(&fib, &set.neighbors, &set.neighbors6);
    (c, fib, stats)
}

#[test]
fn ipv6_routes_native_6pe_ecmp_drop_connected_and_the_file_wins() {
    let (mut c, fib, stats) = control();
    let mut d = fib.derive();
    let both = Target::Forward(vec![hop(v6gw(), &[], 1), hop(v4gw(), &[601], 3)]);
    c.apply(
        &mut d,
        &[
            set(key(0xf), Target::Forward(vec![hop(v6gw(), &[100], 1)])),
            set(key(0x100), Target::Forward(vec![hop(v6gw(), &[], 1)])),
            set(key(0x600), Target::Forward(vec![hop(v4gw(), &[600], 1)])),
            set(key(0x700), both),
            set(key(0x800), Target::Drop),
            set(key(0x900), Target::Connected { port: 1 }),
        ],
        &Learned::default(),
    );
    let fib = d.build(2);
    let n6 = Some((p48(1) | 2).to_be_bytes());
    let v6 = |labels: &[u32], w| ([0; 4], n6, labels.to_vec(), Some(V6_MAC), Family::Ipv6, w);
    let v4 = |labels: &[u32], w| {
        let ip = [10, 0, 1, 2];
        (ip, None, labels.to_vec(), Some(V4_MAC), Family::Ipv4, w)
    };
    // The file's 2001:db8:f::/48 stays; FPM's others are installed, with the static
    // neighbours' MACs (NDP's for the IPv6 one, ARP's for 6PE's IPv4 one).
    assert_eq!(members(&fib, 0xf), vec![v6(&[777], 1)]);
    assert_eq!(members(&fib, 0x100), vec![v6(&[], 1)]);
    assert_eq!(members(&fib, 0x600), vec![v4(&[600], 1)]);
    assert_eq!(members(&fib, 0x700), vec![v6(&[], 1), v4(&[601], 3)]);
    assert_eq!(target(&fib, 0x800), Some(RouteTarget::Blackhole));
    assert_eq!(
        target(&fib, 0x900),
        Some(RouteTarget::Connected { port: 1 })
    );
    assert_eq!(stats.active[1].load(Relaxed), 5);
    assert_eq!(stats.overridden[1].load(Relaxed), 1);
    assert_eq!(stats.active[0].load(Relaxed), 0, "IPv6 is counted apart");

    // Deletes: FPM's route goes; withdrawing the file's prefix leaves the file's route.
    let mut d = fib.derive();
    let del = |k| Change {
        key: k,
        target: None,
    };
    c.apply(
        &mut d,
        &[del(key(0x100)), del(key(0xf))],
        &Learned::default(),
    );
    let fib = d.build(3);
    assert_eq!(target(&fib, 0x100), None);
    assert_eq!(members(&fib, 0xf), vec![v6(&[777], 1)]);
    assert_eq!(stats.active[1].load(Relaxed), 4);
    assert_eq!(stats.overridden[1].load(Relaxed), 0);
}

#[test]
fn a_reload_without_the_files_ipv6_route_brings_fpms_back_with_learned_macs() {
    let (mut c, fib, stats) = control();
    let mut d = fib.derive();
    c.apply(
        &mut d,
        &[set(key(0xf), Target::Forward(vec![hop(v6gw(), &[100], 1)]))],
        &Learned::default(),
    );
    assert_eq!(stats.overridden[1].load(Relaxed), 1);
    // The new file has no IPv6 route and no static neighbours: the MAC is NDP's now.
    let (set2, fib2) = compile("neighbors: []\n");
    c.set_file_view(&fib2, &set2.neighbors, &set2.neighbors6);
    let mut learned = Learned::default();
    let ndp_mac = [2, 0, 0, 0, 1, 0x99];
    let n = crate::slowpath::NbrAddr::V6(p48(1) | 2);
    learned
        .learn_addr(&mut fib2.derive(), &ports(), false, (1, n, ndp_mac))
        .unwrap();
    let mut d2 = fib2.derive();
    c.reapply_all(&mut d2, &learned);
    let fib = d2.build(4);
    let n6 = Some((p48(1) | 2).to_be_bytes());
    assert_eq!(
        members(&fib, 0xf),
        vec![([0; 4], n6, vec![100], Some(ndp_mac), Family::Ipv6, 1)]
    );
    assert_eq!(stats.active[1].load(Relaxed), 1);
    assert_eq!(stats.overridden[1].load(Relaxed), 0);
}

#[test]
fn label_entries_via_ipv6_neighbours_expose_ipv6_on_pop() {
    let (mut c, fib, stats) = control();
    let mut d = fib.derive();
    c.apply(
        &mut d,
        &[
            set(Key::Label(3000), Target::Pop(vec![hop(v6gw(), &[], 1)])),
            set(Key::Label(3001), Target::Swap(vec![hop(v6gw(), &[5], 1)])),
            set(Key::Label(3002), Target::Pop(vec![hop(v4gw(), &[], 1)])),
        ],
        &Learned::default(),
    );
    let fib = d.build(2);
    let adj = |l| match fib.lookup_label(l).unwrap().next_hop {
        Some(NextHop::Adjacency(a)) => fib.adjacency(a).clone(),
        nh => panic!("{nh:?}"),
    };
    assert_eq!(fib.lookup_label(3000).unwrap().op, LabelOp::Pop);
    assert_eq!(adj(3000).payload, Family::Ipv6);
    assert_eq!(adj(3000).dst_mac, Some(V6_MAC));
    assert_eq!(adj(3001).labels(), &[5]);
    assert_eq!(adj(3002).payload, Family::Ipv4);
    assert_eq!(stats.active[2].load(Relaxed), 3);
}
