use super::*;

use std::net::Ipv4Addr;

const US0: u32 = 0x0a00_0001; // 10.0.0.1/24 on port 0
const US1: u32 = 0xac10_0001; // 172.16.0.1/16 on port 1
const HOST: u32 = 0x0a00_0007; // 10.0.0.7
const MAC: [u8; 6] = [2, 0, 0, 0, 0, 7];
const MAC2: [u8; 6] = [2, 0, 0, 0, 0, 8];
const S: u64 = 1_000_000_000;

fn ports() -> Vec<PortIface> {
    let p = |id: u16, addr: u32, len: u8| PortIface {
        id,
        name: format!("p{id}"),
        mac: [2, 0, 0, 0, id as u8, 1],
        mtu: 1500,
        addresses6: match id {
            0 => vec!["2001:db8:1::1/64".parse().unwrap()],
            _ => Vec::new(),
        },
        addresses: vec![Cidr::new(Ipv4Addr::from(addr), len)],
    };
    vec![p(0, US0, 24), p(1, US1, 16)]
}

fn policy() -> ArpPolicy {
    ArpPolicy {
        accept_unsolicited: false,
        reachable_ns: 30 * S,
        max_entries: 4096,
    }
}

/// A request from `ip`/`mac` on port 0 for the router's address.
fn request(ip: u32, mac: [u8; 6]) -> ArpSeen {
    ArpSeen {
        port: 0,
        request: true,
        sender_ip: ip,
        sender_mac: mac,
        target_ip: US0,
        solicited: false,
        static_mac: None,
    }
}

/// A reply from `ip`/`mac` on port 0 to the router.
fn reply(ip: u32, mac: [u8; 6], solicited: bool) -> ArpSeen {
    ArpSeen {
        request: false,
        solicited,
        ..request(ip, mac)
    }
}

fn drain(rx: &crossbeam_channel::Receiver<SlowPathEvent>) -> Vec<SlowPathEvent> {
    rx.try_iter().collect()
}

fn learned(port: u16, ip: u32, mac: [u8; 6]) -> SlowPathEvent {
    SlowPathEvent::NeighborLearned { port, ip, mac }
}

#[test]
fn updates_wait_for_a_full_channel_and_none_is_lost() {
    let (tx, rx) = crossbeam_channel::bounded(2);
    let mut n = Neighbors::new(policy());
    let ports = ports();
    for i in 0..5u32 {
        let d = n.input(&ports, &reply(HOST + i, MAC, true), 0);
        assert_eq!(d.ignored, None);
    }
    assert_eq!(n.flush(&tx), 2, "the channel takes two");
    assert_eq!(n.unsent(), 3, "the rest stay queued");
    // Later answers with the same MAC change nothing, but the queued updates still go.
    for i in 0..5u32 {
        n.input(&ports, &reply(HOST + i, MAC, true), S);
    }
    let mut got = drain(&rx);
    while n.unsent() > 0 {
        assert!(n.flush(&tx) > 0);
        got.extend(drain(&rx));
    }
    let want: Vec<_> = (0..5u32).map(|i| learned(0, HOST + i, MAC)).collect();
    assert_eq!(
        got, want,
        "every learned neighbor reaches the control side once"
    );
    // Nobody listening: the queue does not grow without bound.
    drop(rx);
    n.input(&ports, &reply(HOST + 9, MAC, true), 2 * S);
    n.flush(&tx);
    assert_eq!(n.unsent(), 0);
}

#[test]
fn latest_state_per_address_wins_in_the_queue() {
    let (tx, rx) = crossbeam_channel::bounded(8);
    let mut n = Neighbors::new(policy());
    let ports = ports();
    n.input(&ports, &reply(HOST, MAC, true), 0);
    n.input(&ports, &reply(HOST, MAC2, true), 2 * S);
    n.flush(&tx);
    assert_eq!(drain(&rx), [learned(0, HOST, MAC2)]);
}

#[test]
fn static_neighbors_are_never_changed() {
    let (tx, rx) = crossbeam_channel::bounded(8);
    let mut n = Neighbors::new(policy());
    let ports = ports();
    let spoof = ArpSeen {
        static_mac: Some(MAC),
        ..reply(HOST, MAC2, false)
    };
    let d = n.input(&ports, &spoof, 0);
    assert_eq!(d.ignored, Some(ArpIgnored::StaticNeighbor));
    let asks = ArpSeen {
        static_mac: Some(MAC),
        ..request(HOST, MAC)
    };
    let d = n.input(&ports, &asks, 0);
    assert_eq!(
        (d.reply, d.ignored),
        (true, None),
        "the real one is answered"
    );
    n.flush(&tx);
    assert_eq!(n.get(0, HOST), None);
    assert!(drain(&rx).is_empty());
}

#[test]
fn invalid_sender_macs_are_ignored() {
    let mut n = Neighbors::new(policy());
    let ports = ports();
    for mac in [
        [0xff; 6],
        [1, 0, 0x5e, 0, 0, 1],
        [0x33, 0x33, 0, 0, 0, 1],
        [0; 6],
    ] {
        let d = n.input(&ports, &request(HOST, mac), 0);
        assert_eq!(
            (d.reply, d.ignored),
            (false, Some(ArpIgnored::InvalidSenderMac))
        );
    }
    assert_eq!(n.len(), 0);
}

#[test]
fn the_routers_own_addresses_are_never_neighbors() {
    let (tx, rx) = crossbeam_channel::bounded(8);
    let mut n = Neighbors::new(ArpPolicy {
        accept_unsolicited: true,
        ..policy()
    });
    let ports = ports();
    for ip in [US0, US1] {
        let d = n.input(&ports, &reply(ip, MAC, true), 0);
        assert_eq!(d.ignored, Some(ArpIgnored::OwnAddress));
        let d = n.input(&ports, &request(ip, MAC), 0);
        assert_eq!((d.reply, d.ignored), (false, Some(ArpIgnored::OwnAddress)));
    }
    n.flush(&tx);
    assert!(drain(&rx).is_empty(), "no update, so no new table");
}

#[test]
fn unsolicited_replies_are_learned_only_when_accepted() {
    let ports = ports();
    let mut n = Neighbors::new(policy());
    let d = n.input(&ports, &reply(HOST, MAC, false), 0);
    assert_eq!(d.ignored, Some(ArpIgnored::Unsolicited));
    let garp = ArpSeen {
        target_ip: HOST,
        ..request(HOST, MAC)
    };
    assert_eq!(
        n.input(&ports, &garp, 0).ignored,
        Some(ArpIgnored::Unsolicited)
    );
    assert_eq!(n.get(0, HOST), None);
    // Solicited, or a request for our address (RFC 826): learned.
    assert_eq!(n.input(&ports, &reply(HOST, MAC, true), 0).ignored, None);
    assert_eq!(n.input(&ports, &request(HOST + 1, MAC2), 0).ignored, None);
    assert_eq!(
        (n.get(0, HOST), n.get(0, HOST + 1)),
        (Some(MAC), Some(MAC2))
    );
    let mut n = Neighbors::new(ArpPolicy {
        accept_unsolicited: true,
        ..policy()
    });
    assert_eq!(n.input(&ports, &reply(HOST, MAC, false), 0).ignored, None);
    assert_eq!(n.get(0, HOST), Some(MAC));
}

#[test]
fn off_link_senders_are_not_answered() {
    let mut n = Neighbors::new(policy());
    let ports = ports();
    // Off-link, the subnet's network and broadcast addresses, another port's subnet.
    for ip in [0xc0a8_0105, 0x0a00_0000, 0x0a00_00ff, US1 + 5] {
        let d = n.input(&ports, &request(ip, MAC), 0);
        assert_eq!(
            (d.reply, d.ignored),
            (false, Some(ArpIgnored::OffLink)),
            "{ip:x}"
        );
    }
    // An address probe (sender 0.0.0.0, RFC 5227) is answered, and teaches nothing.
    let d = n.input(&ports, &request(0, MAC), 0);
    assert_eq!((d.reply, d.ignored), (true, None));
    assert_eq!(n.len(), 0);
}

#[test]
fn bindings_are_probed_then_removed() {
    let (tx, rx) = crossbeam_channel::bounded(64);
    let mut n = Neighbors::new(policy());
    let ports = ports();
    n.input(&ports, &reply(HOST, MAC, true), 0);
    n.flush(&tx);
    drain(&rx);
    assert!(n.age(30 * S - 1).is_empty(), "reachable for 30 s");
    let mut t = 30 * S;
    for _ in 0..PROBES {
        assert_eq!(
            n.age(t),
            [(0, NbrAddr::V4(HOST), MAC)],
            "unicast probe to the known MAC"
        );
        assert!(
            n.age(t + RETRY_NS - 1).is_empty(),
            "one probe per retry interval"
        );
        t += RETRY_NS;
    }
    assert!(n.age(t).is_empty());
    assert_eq!(n.get(0, HOST), None, "removed after unanswered probes");
    n.flush(&tx);
    assert_eq!(
        drain(&rx),
        [SlowPathEvent::NeighborGone { port: 0, ip: HOST }]
    );
}

#[test]
fn an_answered_probe_keeps_the_binding() {
    let mut n = Neighbors::new(policy());
    let ports = ports();
    n.input(&ports, &reply(HOST, MAC, true), 0);
    assert_eq!(n.age(30 * S).len(), 1);
    n.input(&ports, &reply(HOST, MAC, false), 30 * S + 1);
    assert!(n.age(31 * S).is_empty());
    assert!(n.age(60 * S).is_empty(), "reachable again for 30 s");
    assert_eq!(n.age(61 * S).len(), 1);
    assert_eq!(n.get(0, HOST), Some(MAC));
}

#[test]
fn a_flood_of_senders_stays_within_the_bound() {
    let (tx, rx) = crossbeam_channel::bounded(1 << 14);
    let mut n = Neighbors::new(ArpPolicy {
        max_entries: 100,
        ..policy()
    });
    let ports = ports();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut full = 0;
    for i in 0..10_000u64 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let ip = (US1 & 0xffff_0000) | (seed as u32 & 0xffff).clamp(2, 0xfffe);
        let a = ArpSeen {
            port: 1,
            target_ip: US1,
            ..request(ip, [2, 0, (i >> 16) as u8, (i >> 8) as u8, i as u8, 9])
        };
        full += usize::from(
            n.input(&ports, &a, i)
                == ArpDecision {
                    reply: true,
                    ignored: Some(ArpIgnored::TableFull),
                },
        );
        assert!(n.len() <= 100);
    }
    assert_eq!(n.len(), 100);
    assert!(full >= 9_800, "{full} refused");
    // A resolution the router asked for still gets in, evicting the stalest binding.
    n.flush(&tx);
    drain(&rx);
    let a = ArpSeen {
        port: 1,
        target_ip: US1,
        ..reply(US1 + 0x0101, MAC, true)
    };
    assert_eq!(n.input(&ports, &a, 20_000).ignored, None);
    assert_eq!(n.len(), 100);
    n.flush(&tx);
    let ev = drain(&rx);
    assert_eq!(ev.len(), 2, "{ev:?}");
    assert!(ev.contains(&learned(1, US1 + 0x0101, MAC)));
}

#[test]
fn a_mac_changes_at_most_once_per_locktime() {
    let mut n = Neighbors::new(policy());
    let ports = ports();
    n.input(&ports, &reply(HOST, MAC, true), 0);
    let d = n.input(&ports, &reply(HOST, MAC2, false), LOCKTIME_NS - 1);
    assert_eq!(d.ignored, Some(ArpIgnored::Locked));
    assert_eq!(n.get(0, HOST), Some(MAC));
    let d = n.input(&ports, &reply(HOST, MAC2, false), 2 * LOCKTIME_NS);
    assert_eq!(d.ignored, None);
    assert_eq!(n.get(0, HOST), Some(MAC2));
}

#[test]
fn no_arp_for_a_subnets_network_or_broadcast_address() {
    let ports = ports();
    let p = &ports[0];
    for ip in [0x0a00_0000, 0x0a00_00ff, 0, 0xe000_0001, 0xffff_ffff] {
        assert!(!arp_target_ok(p, ip), "{ip:x}");
    }
    assert!(arp_target_ok(p, HOST));
    let p31 = PortIface {
        addresses6: Vec::new(),
        addresses: vec![Cidr::new(Ipv4Addr::new(10, 9, 9, 0), 31)],
        ..p.clone()
    };
    assert!(
        arp_target_ok(&p31, 0x0a09_0901),
        "a /31 has no broadcast address"
    );
}

fn o6(s: &str) -> [u8; 16] {
    s.parse::<std::net::Ipv6Addr>().unwrap().octets()
}

/// An NDP message on port 0 about `addr`.
fn ndp(addr: &str, mac: Option<[u8; 6]>, advert: bool, override_: bool) -> NdpSeen {
    NdpSeen {
        port: 0,
        addr: o6(addr),
        mac,
        advert,
        override_,
        solicited: false,
        static_mac: None,
    }
}

#[test]
fn ndp_learns_from_solicitations_and_solicited_advertisements() {
    let (tx, rx) = crossbeam_channel::bounded(16);
    let (ports, mut n) = (ports(), Neighbors::new(policy()));
    // A solicitation for our address with a source link-layer option teaches its sender.
    assert_eq!(
        n.input6(&ports, &ndp("fe80::7", Some(MAC), false, false), 0),
        None
    );
    assert_eq!(n.get_addr(0, NbrAddr::v6(o6("fe80::7"))), Some(MAC));
    // An unsolicited advertisement does not, unless accepted; a solicited one does.
    let na = ndp("2001:db8:1::9", Some(MAC2), true, true);
    assert_eq!(n.input6(&ports, &na, 0), Some(ArpIgnored::Unsolicited));
    let solicited = NdpSeen {
        solicited: true,
        ..na
    };
    assert_eq!(n.input6(&ports, &solicited, 0), None);
    n.flush(&tx);
    assert_eq!(
        drain(&rx),
        [
            SlowPathEvent::Neighbor6Learned {
                port: 0,
                ip: o6("2001:db8:1::9"),
                mac: MAC2
            },
            SlowPathEvent::Neighbor6Learned {
                port: 0,
                ip: o6("fe80::7"),
                mac: MAC
            },
        ],
        "in address order"
    );
    // Without the override flag a known MAC stays (RFC 4861 §7.2.5), with it it changes.
    let other = ndp("2001:db8:1::9", Some(MAC), true, false);
    assert_eq!(n.input6(&ports, &other, 5 * S), Some(ArpIgnored::Locked));
    let other = NdpSeen {
        override_: true,
        ..other
    };
    assert_eq!(n.input6(&ports, &other, 5 * S), None);
    assert_eq!(n.get_addr(0, NbrAddr::v6(o6("2001:db8:1::9"))), Some(MAC));
    // Nothing to learn without a link-layer option; never our own or off-link addresses.
    assert_eq!(
        n.input6(&ports, &ndp("fe80::8", None, false, false), 0),
        None
    );
    assert_eq!(n.get_addr(0, NbrAddr::v6(o6("fe80::8"))), None);
    let own = ndp("2001:db8:1::1", Some(MAC), true, true);
    assert_eq!(n.input6(&ports, &own, 0), Some(ArpIgnored::OwnAddress));
    let off = ndp("2001:db8:2::1", Some(MAC), false, false);
    assert_eq!(n.input6(&ports, &off, 0), Some(ArpIgnored::OffLink));
    let bad = ndp("fe80::9", Some([0x33, 0x33, 0, 0, 0, 1]), false, false);
    assert_eq!(
        n.input6(&ports, &bad, 0),
        Some(ArpIgnored::InvalidSenderMac)
    );
    // They age and are probed like ARP bindings.
    let probes = n.age(40 * S);
    assert!(
        probes.contains(&(0, NbrAddr::v6(o6("fe80::7")), MAC)),
        "{probes:?}"
    );
}

#[test]
fn ndp_never_changes_a_static_ipv6_neighbour() {
    let (ports, mut n) = (ports(), Neighbors::new(policy()));
    let spoof = NdpSeen {
        static_mac: Some(MAC2),
        ..ndp("2001:db8:1::2", Some(MAC), true, true)
    };
    assert_eq!(
        n.input6(&ports, &spoof, 0),
        Some(ArpIgnored::StaticNeighbor)
    );
    let same = NdpSeen {
        mac: Some(MAC2),
        ..spoof
    };
    assert_eq!(n.input6(&ports, &same, 0), None, "agrees with the file");
    assert_eq!(n.len(), 0, "the file's entry is not learned");
}
