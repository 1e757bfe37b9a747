//! The ICMPv6 builders against independent decoders: the checksum recomputed here over
//! the RFC 8200 §8.1 pseudo-header (not with `net::wire::checksum`), the input frames
//! built by etherparse, and every reply decoded by tshark from a pcap.

use std::net::Ipv6Addr;
use std::sync::Arc;

use super::*;
use crate::fib::FibBuilder;
use crate::icmp::MplsReply;
use crate::pipeline::LocalAddrs;

const ROUTER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const PEER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x99];

fn o(s: &str) -> [u8; 16] {
    s.parse::<Ipv6Addr>().unwrap().octets()
}

/// The addresses `fib` carries (every table built here carries them).
fn ll(fib: &Fib) -> &LocalAddrs {
    fib.local().expect("a table with the router's addresses")
}

fn fib(with_global: bool) -> Fib {
    let mut b = FibBuilder::new();
    if with_global {
        b.set_port_address6(0, o("2001:db8:ff::1"));
    }
    let mut f = b.build(1);
    f.set_local(Arc::new(LocalAddrs::new(&[ROUTER_MAC], [])));
    f
}

/// An Ethernet/IPv6/UDP frame built by etherparse, `payload` bytes of UDP data.
fn udp6(src: &str, dst: &str, hop: u8, payload: usize) -> Vec<u8> {
    let b = etherparse::PacketBuilder::ethernet2(PEER_MAC, ROUTER_MAC)
        .ipv6(o(src), o(dst), hop)
        .udp(40000, 33434);
    let data = vec![0x5a; payload];
    let mut f = Vec::new();
    b.write(&mut f, &data).unwrap();
    f
}

/// An Ethernet/IPv6/ICMPv6 frame built by etherparse.
fn icmp6(src: &str, dst: &str, t: etherparse::Icmpv6Type, data: &[u8]) -> Vec<u8> {
    let b = etherparse::PacketBuilder::ethernet2(PEER_MAC, ROUTER_MAC)
        .ipv6(o(src), o(dst), 64)
        .icmpv6(t);
    let mut f = Vec::new();
    b.write(&mut f, data).unwrap();
    f
}

/// `frame` with its IPv6 packet below `labels` (label, TTL), the last bottom of stack.
fn labelled(frame: &[u8], labels: &[(u32, u8)]) -> Vec<u8> {
    let mut f = frame[..12].to_vec();
    f.extend_from_slice(&[0x88, 0x47]);
    for (i, &(l, ttl)) in labels.iter().enumerate() {
        let bos = (i + 1 == labels.len()) as u32;
        f.extend_from_slice(&(l << 12 | bos << 8 | ttl as u32).to_be_bytes());
    }
    f.extend_from_slice(&frame[14..]);
    f
}

/// One's complement sum of 16-bit words, written here independently.
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

/// Whether the ICMPv6 message of IPv6 packet `ip` has a valid checksum.
fn checksum_ok(ip: &[u8]) -> bool {
    let msg = &ip[40..];
    let mut ph = ip[8..40].to_vec();
    ph.extend_from_slice(&(msg.len() as u32).to_be_bytes());
    ph.extend_from_slice(&[0, 0, 0, 58]);
    let s = ones(&ph) + ones(msg);
    (s & 0xffff) + (s >> 16) == 0xffff
}

struct Out {
    reply: Reply,
    frame: Vec<u8>,
}

impl Out {
    /// The IPv6 packet of the reply (after `labels` label entries).
    fn ip(&self, labels: usize) -> &[u8] {
        &self.frame[14 + 4 * labels..]
    }
}

fn build(f: impl FnOnce(&mut [u8]) -> Result<Reply, IcmpError>) -> Result<Out, IcmpError> {
    let mut out = vec![0u8; 4096];
    let reply = f(&mut out)?;
    out.truncate(reply.len);
    Ok(Out { reply, frame: out })
}

#[test]
fn time_exceeded_quotes_the_packet_from_the_port_address() {
    let (cfg, fib) = (IcmpConfig::default(), fib(true));
    let rx = udp6("2001:db8:1::7", "2001:db8:2::9", 1, 100);
    let r = build(|out| time_exceeded6(&cfg, &fib, ll(&fib), 0, &rx, out)).unwrap();
    assert_eq!(r.reply.via, SendVia::Route);
    assert_eq!(&r.frame[12..14], &[0x86, 0xdd]);
    let ip = r.ip(0);
    assert_eq!(ip[6], 58, "next header ICMPv6");
    assert_eq!(ip[7], cfg.ttl, "hop limit");
    assert_eq!(
        &ip[8..24],
        &o("2001:db8:ff::1"),
        "source: the port's address"
    );
    assert_eq!(&ip[24..40], &o("2001:db8:1::7"), "to the packet's source");
    assert_eq!((ip[40], ip[41]), (3, 0));
    assert_eq!(ip[44], 0, "no RFC 4884 length without an extension");
    assert_eq!(&ip[48..], &rx[14..], "the whole packet is quoted");
    assert!(checksum_ok(ip));
}

#[test]
fn labelled_time_exceeded_carries_the_stack_and_goes_along_the_lsp() {
    let (cfg, fib) = (IcmpConfig::default(), fib(true));
    let rx = labelled(
        &udp6("2001:db8:1::7", "2001:db8:2::9", 9, 40),
        &[(1000, 1), (2001, 1)],
    );
    let r = build(|out| time_exceeded6(&cfg, &fib, ll(&fib), 0, &rx, out)).unwrap();
    assert_eq!(r.reply.via, SendVia::LabelSwitch);
    assert_eq!(&r.frame[12..14], &[0x88, 0x47]);
    let lse = |i: usize| u32::from_be_bytes(r.frame[14 + 4 * i..18 + 4 * i].try_into().unwrap());
    assert_eq!(
        (lse(0) >> 12, lse(0) & 0xff, lse(0) >> 8 & 1),
        (1000, 255, 0)
    );
    assert_eq!(
        (lse(1) >> 12, lse(1) & 0xff, lse(1) >> 8 & 1),
        (2001, 255, 1)
    );
    let ip = r.ip(2);
    assert!(checksum_ok(ip));
    let quoted = rx.len() - 22;
    assert_eq!(
        ip[44] as usize * 8,
        128,
        "RFC 4884 length: padded to 128 bytes"
    );
    assert_eq!(&ip[48..48 + quoted], &rx[22..]);
    let ext = &ip[48 + 128..];
    assert_eq!(ext[0] >> 4, 2, "extension version 2");
    assert_eq!(ones(ext), 0xffff, "extension checksum");
    assert_eq!((ext[6], ext[7]), (1, 1), "RFC 4950 incoming stack object");
    assert_eq!(&ext[8..], &rx[14..22], "the stack as received");
    // Direct: routed back only when there is a route to the source (none here).
    let direct = IcmpConfig {
        mpls_reply: MplsReply::Direct,
        ..cfg
    };
    let r = build(|out| time_exceeded6(&direct, &fib, ll(&fib), 0, &rx, out)).unwrap();
    assert_eq!(r.reply.via, SendVia::LabelSwitch);
}

#[test]
fn errors_fit_the_minimum_mtu() {
    let (cfg, fib) = (IcmpConfig::default(), fib(true));
    let rx = udp6("2001:db8:1::7", "2001:db8:2::9", 64, 1400);
    let r = build(|out| packet_too_big(&cfg, &fib, ll(&fib), 0, &rx, 1400, out)).unwrap();
    let ip = r.ip(0);
    assert_eq!(ip.len(), 1280, "as much as fits in 1280 bytes");
    assert_eq!((ip[40], ip[41]), (2, 0));
    assert_eq!(u32::from_be_bytes(ip[44..48].try_into().unwrap()), 1400);
    assert_eq!(&ip[48..], &rx[14..14 + 1232]);
    assert!(checksum_ok(ip));
    let rx = labelled(&rx, &[(16, 64)]);
    let r = build(|out| time_exceeded6(&cfg, &fib, ll(&fib), 0, &rx, out)).unwrap();
    let ip = r.ip(1);
    assert_eq!(
        ip.len(),
        1280 - 4,
        "quote a multiple of 8 beside a 12-byte extension"
    );
    assert_eq!(ip[44] as usize * 8, 1232 - 16);
    assert!(checksum_ok(ip));
}

#[test]
fn no_route_is_destination_unreachable_code_0() {
    let (cfg, fib) = (IcmpConfig::default(), fib(true));
    let rx = udp6("2001:db8:1::7", "2001:db8:2::9", 64, 10);
    let r = build(|out| no_route6(&cfg, &fib, ll(&fib), 0, &rx, out)).unwrap();
    let ip = r.ip(0);
    assert_eq!((ip[40], ip[41]), (1, 0));
    assert!(checksum_ok(ip));
}

#[test]
fn no_error_about_errors_multicast_or_anonymous_sources() {
    use etherparse::Icmpv6Type::*;
    let (cfg, fib) = (IcmpConfig::default(), fib(true));
    let te = |f: &[u8]| build(|out| time_exceeded6(&cfg, &fib, ll(&fib), 0, f, out)).map(|_| ());
    let unreachable = DestinationUnreachable(etherparse::icmpv6::DestUnreachableCode::NoRoute);
    let suppressed = |f: &[u8]| matches!(te(f), Err(IcmpError::Suppressed(_)));
    assert!(suppressed(&icmp6(
        "2001:db8::7",
        "2001:db8::9",
        unreachable,
        &[0x60; 48]
    )));
    assert!(suppressed(&icmp6(
        "2001:db8::7",
        "2001:db8::9",
        Unknown {
            type_u8: 137,
            code_u8: 0,
            bytes5to8: [0; 4]
        },
        &[0; 32]
    )));
    assert!(suppressed(&udp6("2001:db8::7", "ff0e::1", 1, 8)));
    assert!(suppressed(&udp6("::", "2001:db8::9", 1, 8)));
    assert!(suppressed(&udp6("ff02::1", "2001:db8::9", 1, 8)));
    assert!(suppressed(&udp6("::1", "2001:db8::9", 1, 8)));
    let mut bcast = udp6("2001:db8::7", "2001:db8::9", 1, 8);
    bcast[..6].copy_from_slice(&[0x33, 0x33, 0, 0, 0, 1]);
    assert!(suppressed(&bcast));
    let echo = EchoRequest(etherparse::IcmpEchoHeader { id: 1, seq: 2 });
    assert_eq!(te(&icmp6("2001:db8::7", "2001:db8::9", echo, b"x")), Ok(()));
    assert_eq!(te(&rx_ipv4()), Err(IcmpError::NotIpv6));
}

fn rx_ipv4() -> Vec<u8> {
    let b = etherparse::PacketBuilder::ethernet2(PEER_MAC, ROUTER_MAC)
        .ipv4([192, 0, 2, 7], [198, 51, 100, 1], 1)
        .udp(1, 2);
    let mut f = Vec::new();
    b.write(&mut f, &[0; 8]).unwrap();
    f
}

#[test]
fn source_falls_back_to_the_link_local_address() {
    let cfg = IcmpConfig::default();
    let rx = udp6("2001:db8:1::7", "2001:db8:2::9", 1, 10);
    let r = build(|out| time_exceeded6(&cfg, &fib(false), ll(&fib(false)), 0, &rx, out)).unwrap();
    assert_eq!(
        &r.ip(0)[8..24],
        &o("fe80::ff:fe00:1"),
        "EUI-64 of 02:00:00:00:00:01"
    );
    let bare = FibBuilder::new().build(1);
    assert_eq!(
        build(|out| time_exceeded6(&cfg, &bare, &LocalAddrs::new(&[], []), 0, &rx, out))
            .map(|_| ()),
        Err(IcmpError::NoSourceAddress(0))
    );
}

#[test]
fn echo_reply_swaps_addresses_and_keeps_the_data() {
    let cfg = IcmpConfig::default();
    let echo = etherparse::Icmpv6Type::EchoRequest(etherparse::IcmpEchoHeader { id: 77, seq: 5 });
    let rx = icmp6("2001:db8:1::7", "2001:db8:ff::1", echo, b"ping data");
    let r = build(|out| echo_reply6(&cfg, ll(&fib(true)), 0, &rx, out)).unwrap();
    assert_eq!(r.reply.via, SendVia::Route);
    let ip = r.ip(0);
    assert_eq!(&ip[8..24], &o("2001:db8:ff::1"));
    assert_eq!(&ip[24..40], &o("2001:db8:1::7"));
    assert_eq!((ip[40], ip[41]), (129, 0));
    assert_eq!(&ip[44..48], &[0, 77, 0, 5]);
    assert_eq!(&ip[48..], b"ping data");
    assert!(checksum_ok(ip));
    let mut bad = rx.clone();
    *bad.last_mut().unwrap() ^= 1;
    assert_eq!(
        build(|out| echo_reply6(&cfg, ll(&fib(true)), 0, &bad, out)).map(|_| ()),
        Err(IcmpError::NotEchoRequest)
    );
    let udp = udp6("2001:db8:1::7", "2001:db8:ff::1", 64, 10);
    assert_eq!(
        build(|out| echo_reply6(&cfg, ll(&fib(true)), 0, &udp, out)).map(|_| ()),
        Err(IcmpError::NotEchoRequest)
    );
}

#[test]
fn replies_to_a_link_local_address_go_straight_back_from_the_link_local_address() {
    let (cfg, fib) = (IcmpConfig::default(), fib(true));
    let router_ll = "fe80::ff:fe00:1"; // EUI-64 of ROUTER_MAC
    let echo = etherparse::Icmpv6Type::EchoRequest(etherparse::IcmpEchoHeader { id: 9, seq: 1 });
    let udp = udp6("fe80::99", "2001:db8:2::9", 1, 30);
    for (what, rx) in [
        (
            "echo to the link-local address",
            icmp6("fe80::99", router_ll, echo, b"ll"),
        ),
        (
            "echo to the global address",
            icmp6("fe80::99", "2001:db8:ff::1", echo, b"g"),
        ),
        ("time exceeded", udp.clone()),
    ] {
        let r = match what {
            "time exceeded" => build(|out| time_exceeded6(&cfg, &fib, ll(&fib), 0, &rx, out)),
            _ => build(|out| echo_reply6(&cfg, ll(&fib), 0, &rx, out)),
        }
        .unwrap();
        assert_eq!(r.reply.via, SendVia::Direct, "{what}");
        assert_eq!(&r.frame[..6], &PEER_MAC, "{what}: to the requester's MAC");
        assert_eq!(&r.frame[6..12], &ROUTER_MAC, "{what}: from the port's MAC");
        let ip = r.ip(0);
        assert_eq!(
            &ip[8..24],
            &o(router_ll),
            "{what}: from the link-local address"
        );
        assert_eq!(&ip[24..40], &o("fe80::99"), "{what}");
        assert!(checksum_ok(ip), "{what}");
    }
    let ping_ll = icmp6("fe80::99", router_ll, echo, b"ll");
    let labelled_ping = labelled(&ping_ll, &[(1000, 64)]);
    let r = build(|out| echo_reply6(&cfg, ll(&fib), 0, &labelled_ping, out)).unwrap();
    assert_eq!(
        r.reply.via,
        SendVia::Route,
        "a labelled request is not answered on-link"
    );
    assert_eq!(
        build(|out| echo_reply6(&cfg, &LocalAddrs::new(&[], []), 0, &ping_ll, out)).map(|_| ()),
        Err(IcmpError::NoSourceAddress(0))
    );
}

/// A pcap of Ethernet frames.
fn pcap(frames: &[Vec<u8>]) -> Vec<u8> {
    // Magic, version 2.4, zone, accuracy, snap length, link type 1 (Ethernet).
    let mut b = Vec::new();
    for w in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 65535, 1] {
        b.extend_from_slice(&w.to_le_bytes());
    }
    for f in frames {
        for w in [0u32, 0, f.len() as u32, f.len() as u32] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        b.extend_from_slice(f);
    }
    b
}

#[test]
fn tshark_decodes_every_reply() {
    let (cfg, fib) = (IcmpConfig::default(), fib(true));
    let udp = udp6("2001:db8:1::7", "2001:db8:2::9", 1, 60);
    let echo = etherparse::Icmpv6Type::EchoRequest(etherparse::IcmpEchoHeader { id: 3, seq: 4 });
    let ping = icmp6("2001:db8:1::7", "2001:db8:ff::1", echo, b"abc");
    let lab = labelled(&udp, &[(1000, 1), (2001, 1)]);
    let frames: Vec<Vec<u8>> = [
        build(|o| time_exceeded6(&cfg, &fib, ll(&fib), 0, &udp, o)),
        build(|o| packet_too_big(&cfg, &fib, ll(&fib), 0, &udp, 1280, o)),
        build(|o| no_route6(&cfg, &fib, ll(&fib), 0, &udp, o)),
        build(|o| echo_reply6(&cfg, ll(&fib), 0, &ping, o)),
        build(|o| time_exceeded6(&cfg, &fib, ll(&fib), 0, &lab, o)),
    ]
    .into_iter()
    .map(|r| r.unwrap().frame)
    .collect();
    let path = std::env::temp_dir().join(format!("icmp6-build-{}.pcap", std::process::id()));
    std::fs::write(&path, pcap(&frames)).unwrap();
    let out = std::process::Command::new("tshark")
        .arg("-r")
        .arg(&path)
        .args(["-T", "fields"])
        .args([
            "-e",
            "icmpv6.type",
            "-e",
            "icmpv6.code",
            "-e",
            "icmpv6.checksum.status",
        ])
        .args([
            "-e",
            "icmpv6.mtu",
            "-e",
            "icmp.mpls.label",
            "-e",
            "icmp.ext.checksum.status",
        ])
        .output()
        .expect("tshark is installed");
    std::fs::remove_file(&path).unwrap();
    let text = String::from_utf8(out.stdout).unwrap().replace('\t', "/");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "3/0/1///",
            "2/0/1/1280//",
            "1/0/1///",
            "129/0/1///",
            "3/0/1//1000,2001/1",
        ],
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
