//! NDP frames against RFC 4861's layouts, read here byte by byte (not through
//! `net::wire`), with the ICMPv6 checksum recomputed independently.

use super::*;
use config::types::Cidr6;
use std::net::Ipv6Addr;

const MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
const PEER: [u8; 6] = [2, 0, 0, 0, 0, 7];

fn o(s: &str) -> [u8; 16] {
    s.parse::<Ipv6Addr>().unwrap().octets()
}

fn port(addresses6: &[&str]) -> PortIface {
    PortIface {
        id: 0,
        name: "p0".into(),
        mac: MAC,
        mtu: 1500,
        addresses: Vec::new(),
        addresses6: addresses6
            .iter()
            .map(|a| a.parse::<Cidr6>().unwrap())
            .collect(),
    }
}

fn ones(b: &[u8]) -> u32 {
    let mut s: u32 = b
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s
}

/// Whether the frame's ICMPv6 checksum verifies over the pseudo-header.
fn checksum_ok(f: &[u8]) -> bool {
    let ip = &f[14..];
    let mut ph = ip[8..40].to_vec();
    ph.extend_from_slice(&((ip.len() - 40) as u32).to_be_bytes());
    ph.extend_from_slice(&[0, 0, 0, 58]);
    let s = ones(&ph) + ones(&ip[40..]);
    (s & 0xffff) + (s >> 16) == 0xffff
}

#[test]
fn addresses_of_a_port() {
    let p = port(&["2001:db8:1::1/64"]);
    assert_eq!(
        link_local(&p),
        o("fe80::ff:fe00:1"),
        "EUI-64 of 02:00:00:00:00:01"
    );
    let q = port(&["2001:db8:1::1/64", "fe80::1/64"]);
    assert_eq!(link_local(&q), o("fe80::1"), "a configured link-local wins");
    assert!(
        is_port_address6(&p, &o("2001:db8:1::1")) && is_port_address6(&p, &o("fe80::ff:fe00:1"))
    );
    assert!(!is_port_address6(&p, &o("2001:db8:1::2")));
    assert!(on_link6(&p, &o("2001:db8:1::9")) && on_link6(&p, &o("fe80::9")));
    assert!(!on_link6(&p, &o("2001:db8:2::9")) && !on_link6(&p, &o("ff02::1")));
    assert_eq!(source_for6(&p, &o("2001:db8:1::9")), o("2001:db8:1::1"));
    assert_eq!(source_for6(&p, &o("fe80::9")), o("fe80::ff:fe00:1"));
}

#[test]
fn solicitation_to_the_solicited_node_group_or_unicast() {
    let p = port(&["2001:db8:1::1/64"]);
    let f = solicit(&p, &o("2001:db8:1::12:3456"), None);
    assert_eq!(&f[..6], &[0x33, 0x33, 0xff, 0x12, 0x34, 0x56]);
    assert_eq!(&f[6..12], &MAC);
    assert_eq!(&f[12..14], &[0x86, 0xdd]);
    let ip = &f[14..];
    assert_eq!((ip[6], ip[7]), (58, 255), "ICMPv6, hop limit 255");
    assert_eq!(&ip[8..24], &o("2001:db8:1::1"));
    assert_eq!(&ip[24..40], &o("ff02::1:ff12:3456"));
    assert_eq!((ip[40], ip[41]), (135, 0));
    assert_eq!(&ip[48..64], &o("2001:db8:1::12:3456"), "target");
    assert_eq!(
        &ip[64..72],
        &[1, 1, 2, 0, 0, 0, 0, 1],
        "source link-layer option"
    );
    assert!(checksum_ok(&f));
    let probe = solicit(&p, &o("2001:db8:1::9"), Some(PEER));
    assert_eq!(&probe[..6], &PEER);
    assert_eq!(
        &probe[14 + 24..14 + 40],
        &o("2001:db8:1::9"),
        "unicast probe"
    );
    assert!(checksum_ok(&probe));
    // What the router sends, it reads back as a valid solicitation.
    let n = parse(&f).unwrap();
    assert_eq!(
        n.msg,
        NdpRepr::NeighborSolicit {
            target: o("2001:db8:1::12:3456"),
            lladdr: Some(MAC)
        }
    );
}

#[test]
fn advertisement_answers_the_solicitor_or_all_nodes() {
    let p = port(&["2001:db8:1::1/64"]);
    let mut peer = port(&["2001:db8:1::7/64"]);
    peer.mac = PEER;
    let ns = parse(&solicit(&peer, &o("2001:db8:1::1"), None)).unwrap();
    let f = advertise(&p, &ns, &o("2001:db8:1::1"), Some(PEER));
    assert_eq!(&f[..6], &PEER);
    let ip = &f[14..];
    assert_eq!(ip[7], 255);
    assert_eq!(&ip[8..24], &o("2001:db8:1::1"), "from the target address");
    assert_eq!(&ip[24..40], &o("2001:db8:1::7"), "to the solicitor");
    assert_eq!((ip[40], ip[41]), (136, 0));
    assert_eq!(ip[44], 0xe0, "router, solicited, override");
    assert_eq!(&ip[48..64], &o("2001:db8:1::1"));
    assert_eq!(
        &ip[64..72],
        &[2, 1, 2, 0, 0, 0, 0, 1],
        "target link-layer option"
    );
    assert!(checksum_ok(&f));
    // A duplicate address detection probe: to ff02::1, not solicited.
    let mut dad = ns;
    dad.src = [0; 16];
    let f = advertise(&p, &dad, &o("2001:db8:1::1"), None);
    assert_eq!(&f[..6], &[0x33, 0x33, 0, 0, 0, 1]);
    assert_eq!(&f[14 + 24..14 + 40], &o("ff02::1"));
    assert_eq!(f[14 + 44], 0xa0, "router, override, not solicited");
    assert!(checksum_ok(&f));
}

#[test]
fn invalid_messages_are_refused() {
    let p = port(&["2001:db8:1::1/64"]);
    let f = solicit(&p, &o("2001:db8:1::9"), None);
    assert!(parse(&f).is_some());
    let mut hop = f.clone();
    hop[14 + 7] = 254; // forwarded by a router: not from the link
    assert_eq!(parse(&hop), None);
    let mut sum = f.clone();
    *sum.last_mut().unwrap() ^= 1;
    assert_eq!(parse(&sum), None, "bad checksum");
    // From :: with a source link-layer option (RFC 4861 §7.1.1).
    let mut anon = port(&[]);
    anon.addresses6 = vec!["::/128".parse().unwrap()];
    let ns = solicit(&anon, &o("fe80::9"), None);
    let mut ns = ns.clone();
    ns[14 + 8..14 + 24].fill(0);
    assert_eq!(parse(&ns), None, "checksum or option: refused either way");
}
