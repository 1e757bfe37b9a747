//! Precedence and translation of FPM changes on real compiled tables.

use super::*;
use config::types::Cidr;
use config::{RouteContext, RouteSet};
use fpm::Hop;
use net::fib::{Fib, NextHop};

fn ports() -> Vec<PortIface> {
    (0..2u8)
        .map(|i| PortIface {
            id: i as u16,
            name: format!("p{i}"),
            mac: [2, 0, 0, 0, i, 1],
            mtu: 1500,
            addresses6: Vec::new(),
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

const FILE: &str = "neighbors:\n  - {ip: 10.0.1.2, mac: \"02:00:00:00:01:02\"}\n\
                    ipv4:\n  - {prefix: 203.0.113.0/24, via: 10.0.1.2, push: [777]}\n\
                    mpls:\n  - {in_label: 1000, action: pop, via: 10.0.1.2}\n";

fn ip(a: u8, b: u8, c: u8, d: u8) -> u32 {
    u32::from_be_bytes([a, b, c, d])
}

fn set(key: Key, t: Target) -> Change {
    Change {
        key,
        target: Some(Arc::new(t)),
    }
}

fn fwd(labels: &[u32]) -> Target {
    Target::Forward(vec![Hop {
        port: 1,
        via: Gateway::V4(ip(10, 0, 1, 2)),
        labels: labels.to_vec(),
        weight: 1,
    }])
}

/// The labels pushed by the IPv4 route of exactly `addr/len` in `d`, and its MAC.
fn pushed(d: &FibDelta, addr: u32, len: u8) -> Option<(Vec<u32>, Option<[u8; 6]>)> {
    match d.ipv4_route(addr, len)?.target {
        RouteTarget::NextHop(NextHop::Adjacency(a)) => {
            let a = &d.adjacencies()[a as usize];
            Some((a.labels().to_vec(), a.dst_mac))
        }
        t => panic!("unexpected {t:?}"),
    }
}

fn control() -> (FpmControl, Fib, Arc<FpmStats>) {
    let (set, fib) = compile(FILE);
    let stats = Arc::new(FpmStats::default());
    let mut c = FpmControl::new(Duration::ZERO, ports(), stats.clone());
    c.set_file_view(&fib, &set.neighbors, &set.neighbors6);
    (c, fib, stats)
}

#[test]
fn the_file_wins_for_what_it_names_and_fpm_fills_the_rest() {
    let (mut c, fib, stats) = control();
    let mut d = fib.derive();
    let k_file = Key::Ipv4 {
        addr: ip(203, 0, 113, 0),
        len: 24,
    };
    let k_fpm = Key::Ipv4 {
        addr: ip(198, 51, 100, 0),
        len: 24,
    };
    c.apply(
        &mut d,
        &[set(k_file, fwd(&[100])), set(k_fpm, fwd(&[100, 200]))],
        &Learned::default(),
    );
    let mac = Some([2, 0, 0, 0, 1, 2]);
    assert_eq!(pushed(&d, ip(203, 0, 113, 0), 24), Some((vec![777], mac)));
    // The static neighbour's MAC is used for the FPM next hop.
    assert_eq!(
        pushed(&d, ip(198, 51, 100, 0), 24),
        Some((vec![100, 200], mac))
    );
    assert_eq!(stats.overridden[0].load(Relaxed), 1);
    assert_eq!(stats.active[0].load(Relaxed), 1);
    // FPM withdrawing what the file names leaves the file's route.
    c.apply(
        &mut d,
        &[Change {
            key: k_file,
            target: None,
        }],
        &Learned::default(),
    );
    assert_eq!(pushed(&d, ip(203, 0, 113, 0), 24), Some((vec![777], mac)));
    assert_eq!(stats.overridden[0].load(Relaxed), 0);
}

#[test]
fn when_the_file_stops_naming_a_prefix_the_fpm_route_comes_back() {
    let (mut c, fib, stats) = control();
    let mut d = fib.derive();
    let k = Key::Ipv4 {
        addr: ip(203, 0, 113, 0),
        len: 24,
    };
    c.apply(&mut d, &[set(k, fwd(&[100]))], &Learned::default());
    assert_eq!(pushed(&d, ip(203, 0, 113, 0), 24).unwrap().0, vec![777]);
    // A reload without the prefix: the FPM route is re-applied on the new table.
    let (set2, fib2) = compile("neighbors:\n  - {ip: 10.0.1.2, mac: \"02:00:00:00:01:02\"}\n");
    c.set_file_view(&fib2, &set2.neighbors, &set2.neighbors6);
    let mut d2 = fib2.derive();
    c.reapply_all(&mut d2, &Learned::default());
    assert_eq!(pushed(&d2, ip(203, 0, 113, 0), 24).unwrap().0, vec![100]);
    assert_eq!(stats.active[0].load(Relaxed), 1);
    assert_eq!(stats.overridden[0].load(Relaxed), 0);
}

#[test]
fn label_entries_and_drops_are_installed() {
    let (mut c, fib, _) = control();
    let mut d = fib.derive();
    let hop = |labels: &[u32]| {
        vec![Hop {
            port: 1,
            via: Gateway::V4(ip(10, 0, 1, 2)),
            labels: labels.to_vec(),
            weight: 1,
        }]
    };
    c.apply(
        &mut d,
        &[
            set(Key::Label(1000), Target::Swap(hop(&[5]))),
            set(Key::Label(2000), Target::Swap(hop(&[2001, 2002]))),
            set(Key::Label(2001), Target::Pop(hop(&[]))),
            set(Key::Label(2002), Target::PopAndLookup),
            set(
                Key::Ipv4 {
                    addr: ip(9, 0, 0, 0),
                    len: 8,
                },
                Target::Drop,
            ),
        ],
        &Learned::default(),
    );
    assert_eq!(
        d.label(1000).unwrap().op,
        LabelOp::Pop,
        "the file's entry for 1000 stays"
    );
    assert_eq!(d.label(2000).unwrap().op, LabelOp::Swap);
    assert_eq!(d.label(2001).unwrap().op, LabelOp::Pop);
    assert_eq!(d.label(2002).unwrap().op, LabelOp::PopAndLookup);
    assert_eq!(
        d.ipv4_route(ip(9, 0, 0, 0), 8).unwrap().target,
        RouteTarget::Blackhole
    );
    c.apply(
        &mut d,
        &[Change {
            key: Key::Label(2000),
            target: None,
        }],
        &Learned::default(),
    );
    assert!(d.label(2000).is_none());
}
