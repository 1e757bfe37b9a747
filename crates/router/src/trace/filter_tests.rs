//! The filter language: parsing (and its errors), the encoding the workers read, and
//! matching on built frames (IPv4 and IPv6, plain, labelled, with extension headers).

use super::*;
use traffic::{Frame6Spec, FrameSpec};

fn udp(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, labels: &[u32]) -> Vec<u8> {
    FrameSpec {
        src_ip: src,
        dst_ip: dst,
        src_port: sport,
        dst_port: dport,
        labels: labels.iter().map(|&l| (l, 0, 64)).collect(),
        ..FrameSpec::default()
    }
    .build()
}

fn terms(expr: &str) -> Vec<Term> {
    Filter::parse(expr).unwrap().terms().collect()
}

#[test]
fn parses_every_primitive() {
    let t = |test| Term {
        test,
        negate: false,
    };
    assert_eq!(
        terms("dst 10.1.2.3/8 and src 192.0.2.1 and host 203.0.113.0/24"),
        [
            t(Test::Dst {
                addr: 0x0a00_0000,
                len: 8
            }),
            t(Test::Src {
                addr: 0xc000_0201,
                len: 32
            }),
            t(Test::Host {
                addr: 0xcb00_7100,
                len: 24
            }),
        ]
    );
    assert_eq!(
        terms("label 1000 and proto udp and tcp and proto 89 and port 53 and sport 1 and dport 2"),
        [
            t(Test::Label(1000)),
            t(Test::Proto(17)),
            t(Test::Proto(6)),
            t(Test::Proto(89)),
            t(Test::Port(53)),
            t(Test::Sport(1)),
            t(Test::Dport(2)),
        ]
    );
    assert_eq!(
        terms("mpls and not ip and arp"),
        [
            t(Test::Mpls),
            Term {
                test: Test::Ipv4,
                negate: true
            },
            t(Test::Arp)
        ]
    );
    assert!(Filter::parse("").unwrap().is_empty());
    assert!(Filter::parse("   ").unwrap().is_empty());
}

#[test]
fn bad_expressions_say_what_is_wrong() {
    for (expr, says) in [
        ("dst", "missing"),
        ("dst 10.0.0.0/33", "not an IPv4 prefix (at most /32)"),
        ("dst 10.0.0", "not an IPv4 or IPv6 address"),
        ("dst 2001:db8::/129", "not an IPv6 prefix (at most /128)"),
        ("src 2001:db8::g", "not an IPv4 or IPv6 address"),
        ("host 2001:db8::/x", "not an IPv4 or IPv6 address"),
        ("proto icmp7", "not a valid protocol (udp, tcp, icmp, icmp6"),
        ("label 1048576", "over 1048575"),
        ("label x", "not a valid label"),
        ("port 65536", "not a valid port"),
        ("proto sctpx", "not a valid protocol"),
        ("udp or tcp", "joined by `and`"),
        ("udp and", "missing"),
        ("not", "missing"),
        ("vlan 3", "unknown filter word `vlan`"),
        (
            "ip and ip and ip and ip and ip and ip and ip and ip and ip",
            "at most 8",
        ),
    ] {
        let e = Filter::parse(expr).expect_err(expr);
        assert!(e.contains(says), "{expr}: {e}");
    }
}

#[test]
fn the_cell_gives_the_workers_the_same_filter() {
    let cell = FilterCell::default();
    for expr in [
        "dst 10.0.0.0/8 and not src 192.0.2.1 and host 0.0.0.0/0 and label 1048575",
        "proto 255 and port 65535 and sport 0 and dport 7 and mpls and ip and not arp",
        "dst 2001:db8::/32 and not src ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff \
         and host ::/0 and net fe80::1/128 and ip6 and not ip6 and icmp6",
        "",
    ] {
        let f = Filter::parse(expr).unwrap();
        cell.store(&f);
        assert_eq!(cell.load(), f, "{expr}");
    }
}

#[test]
fn matches_what_the_frame_carries() {
    let plain = udp([192, 0, 2, 1], [10, 1, 2, 3], 4000, 53, &[]);
    let labelled = udp([192, 0, 2, 9], [198, 51, 100, 1], 5, 6, &[1000, 2000]);
    let mut arp = vec![0xffu8; 6];
    arp.extend([2, 0, 0, 0, 0, 1, 0x08, 0x06]);
    arp.extend([0u8; 28]);
    let yes = |e: &str, f: &[u8]| assert!(Filter::parse(e).unwrap().matches(f), "{e}");
    let no = |e: &str, f: &[u8]| assert!(!Filter::parse(e).unwrap().matches(f), "{e}");

    yes("", &plain);
    yes(
        "dst 10.0.0.0/8 and udp and port 53 and dport 53 and sport 4000",
        &plain,
    );
    yes(
        "host 10.1.2.3 and host 192.0.2.0/24 and src 192.0.2.1",
        &plain,
    );
    yes("not mpls and ip and not label 1000", &plain);
    no("dst 11.0.0.0/8", &plain);
    no("tcp", &plain);
    no("sport 53", &plain);
    no("mpls", &plain);

    yes(
        "label 2000 and label 1000 and mpls and dst 198.51.100.1",
        &labelled,
    );
    yes("src 192.0.2.9 and port 6 and not port 7", &labelled);
    no("label 3000", &labelled);

    yes("arp and not ip and not mpls", &arp);
    no("dst 0.0.0.0/0", &arp);
    no("port 0", &arp);
    no("ip", &[0u8; 10]);
    yes("not ip", &[0u8; 10]);

    // A later fragment has no ports to match.
    let mut frag = plain.clone();
    frag[14 + 7] = 1;
    no("port 53", &frag);
    yes("dst 10.1.2.3", &frag);
}

/// An IPv6 UDP frame (under `labels`, outermost first).
fn udp6(src: &str, dst: &str, sport: u16, dport: u16, labels: &[u32]) -> Vec<u8> {
    Frame6Spec {
        src_ip: src.parse::<Ipv6Addr>().unwrap().octets(),
        dst_ip: dst.parse::<Ipv6Addr>().unwrap().octets(),
        src_port: sport,
        dst_port: dport,
        labels: labels.iter().map(|&l| (l, 0, 64)).collect(),
        ..Frame6Spec::default()
    }
    .build()
}

/// `f` (IPv6 at `ip`) with extension headers `(next header value, bytes)` put between
/// its fixed header and its payload, in order, and its payload length fixed.
fn with_ext(mut f: Vec<u8>, ip: usize, chain: &[(u8, usize)]) -> Vec<u8> {
    let mut next = f[ip + 6];
    let mut ext = Vec::new();
    for &(kind, len) in chain.iter().rev() {
        let mut h = vec![0u8; len];
        h[0] = next;
        h[1] = if kind == 44 { 0 } else { (len / 8 - 1) as u8 };
        ext.splice(0..0, h);
        next = kind;
    }
    f[ip + 6] = next;
    let plen = u16::from_be_bytes([f[ip + 4], f[ip + 5]]) + ext.len() as u16;
    f[ip + 4..ip + 6].copy_from_slice(&plen.to_be_bytes());
    f.splice(ip + 40..ip + 40, ext);
    f
}

#[test]
fn parses_ipv6_primitives() {
    let t = |test| Term {
        test,
        negate: false,
    };
    let a = |s: &str| u128::from(s.parse::<Ipv6Addr>().unwrap());
    assert_eq!(
        terms("dst 2001:db8:100::5/40 and src 2001:db8::1 and host fe80::/10 and net ::/0"),
        [
            t(Test::Dst6 {
                addr: a("2001:db8:100::"),
                len: 40
            }),
            t(Test::Src6 {
                addr: a("2001:db8::1"),
                len: 128
            }),
            t(Test::Host6 {
                addr: a("fe80::"),
                len: 10
            }),
            t(Test::Host6 { addr: 0, len: 0 }),
        ]
    );
    assert_eq!(
        terms("icmp6 and proto icmpv6 and proto 44 and ip6 and ipv6 and ipv4"),
        [
            t(Test::Proto(58)),
            t(Test::Proto(58)),
            t(Test::Proto(44)),
            t(Test::Ipv6),
            t(Test::Ipv6),
            t(Test::Ipv4),
        ]
    );
    // An IPv4-mapped address is an IPv6 address: it matches IPv6 headers only.
    assert_eq!(
        terms("dst ::ffff:10.0.0.1"),
        [t(Test::Dst6 {
            addr: a("::ffff:10.0.0.1"),
            len: 128
        })]
    );
}

#[test]
fn matches_ipv6_plain_and_labelled() {
    let plain = udp6("2001:db8:ffff::1", "2001:db8:100::5", 1001, 9, &[]);
    let labelled = udp6("2001:db8:ffff::2", "2001:db8:100::9", 1003, 53, &[1000, 2]);
    let v4 = udp([192, 0, 2, 1], [10, 1, 2, 3], 1001, 9, &[]);
    let yes = |e: &str, f: &[u8]| assert!(Filter::parse(e).unwrap().matches(f), "{e}");
    let no = |e: &str, f: &[u8]| assert!(!Filter::parse(e).unwrap().matches(f), "{e}");

    yes(
        "ip6 and not ip and not mpls and dst 2001:db8:100::/40 and src 2001:db8:ffff::1",
        &plain,
    );
    yes(
        "host 2001:db8:100::5 and host 2001:db8:ffff::/48 and udp and sport 1001 and dport 9",
        &plain,
    );
    yes("port 9 and not port 10 and proto 17 and not icmp6", &plain);
    no("dst 2001:db8:100::6", &plain);
    no("dst 2001:db8:200::/40", &plain);
    no("src 2001:db8:100::5", &plain);
    no("tcp", &plain);
    no("icmp", &plain);

    yes(
        "mpls and label 1000 and label 2 and ip6 and dst 2001:db8:100::9 and dport 53",
        &labelled,
    );
    no("not ip6", &labelled);
    no("ip", &labelled);

    // Each family's address tests are false on the other family.
    no("dst 0.0.0.0/0", &plain);
    no("host 0.0.0.0/0", &labelled);
    no("dst ::/0", &v4);
    no("host ::/0", &v4);
    yes("not ip6 and not src ::/0", &v4);
    no("ip6", &v4);
    // Ports are read over both families.
    yes("sport 1001 and dport 9", &v4);
    yes("ip6 and sport 1001 and dport 9", &plain);

    // ICMPv6.
    let mut icmp = plain.clone();
    icmp[14 + 6] = 58;
    yes("icmp6 and proto 58 and ip6", &icmp);
    no("udp", &icmp);
    no("port 9", &icmp);
}

#[test]
fn ipv6_ports_and_protocol_past_extension_headers() {
    let plain = udp6("2001:db8:ffff::1", "2001:db8:100::5", 1001, 9, &[]);
    // Hop-by-hop, routing, destination options (16 bytes), fragment (first): UDP behind.
    let chain = [(0, 8), (43, 8), (60, 16), (44, 8)];
    let f = with_ext(plain.clone(), 14, &chain);
    for e in [
        "udp",
        "proto 0",
        "proto 17",
        "sport 1001 and dport 9",
        "port 1001",
    ] {
        assert!(Filter::parse(e).unwrap().matches(&f), "{e}");
    }
    assert!(!Filter::parse("proto 43").unwrap().matches(&f));
    // Under labels too.
    let labelled = udp6("2001:db8:ffff::1", "2001:db8:100::5", 7, 8, &[300]);
    let f = with_ext(labelled, 18, &[(60, 8)]);
    assert!(
        Filter::parse("label 300 and proto 60 and udp and sport 7 and dport 8")
            .unwrap()
            .matches(&f)
    );

    // A later fragment's data has no ports: the protocol is still known.
    let mut later = with_ext(plain.clone(), 14, &[(44, 8)]);
    later[14 + 40 + 2] = 0x05; // offset 1280
    assert!(Filter::parse("udp and proto 44 and dst 2001:db8:100::5")
        .unwrap()
        .matches(&later));
    assert!(!Filter::parse("port 9").unwrap().matches(&later));

    // A chain longer than the wire module walks: only the fixed header's next header.
    let long = with_ext(plain.clone(), 14, &[(60, 8); 9]);
    let m = |e: &str| Filter::parse(e).unwrap().matches(&long);
    assert!(m("proto 60") && m("ip6") && !m("udp") && !m("port 9"));
    // A header cut by the payload length (or the frame) is not read past.
    let mut cut = with_ext(plain.clone(), 14, &[(60, 16)]);
    cut[14 + 5] = 8; // payload length 8: the 16-byte header runs past it
    assert!(!Filter::parse("udp").unwrap().matches(&cut));
    let short = &with_ext(plain.clone(), 14, &[(0, 8)])[..14 + 40 + 4];
    assert!(Filter::parse("proto 0 and dst 2001:db8:100::5")
        .unwrap()
        .matches(short));
    assert!(!Filter::parse("udp").unwrap().matches(short));
    assert!(!Filter::parse("ip6").unwrap().matches(&plain[..14 + 39]));
}

/// The workers test untrusted bytes: every cut of well-formed frames, and random bytes
/// behind each ethertype the filter reads, are tested without a panic.
#[test]
fn never_panics_on_cut_or_random_frames() {
    let every = Filter::parse(
        "host 2001:db8::/32 and host 10.0.0.0/8 and label 5 and udp and port 53 and ip6",
    )
    .unwrap();
    let ports = Filter::parse("not sport 1 and not dport 2 and not icmp6").unwrap();
    let v6 = udp6("2001:db8::1", "2001:db8::2", 1, 2, &[7, 8]);
    let frames = [
        with_ext(v6.clone(), 22, &[(0, 8), (43, 16), (44, 8), (60, 8)]),
        with_ext(udp6("::1", "::2", 1, 2, &[]), 14, &[(51, 12)]),
        udp([10, 0, 0, 1], [10, 0, 0, 2], 1, 2, &[5]),
    ];
    for f in &frames {
        for n in 0..=f.len() {
            let _ = (every.matches(&f[..n]), ports.matches(&f[..n]));
        }
    }
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..20_000 {
        let mut f = vec![0u8; 14 + (i % 160)];
        for b in f.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        let et: [u8; 2] = [[0x86, 0xdd], [0x08, 0x00], [0x88, 0x47], [0x81, 0x00]][i % 4];
        f[12..14].copy_from_slice(&et);
        if et == [0x86, 0xdd] && f.len() > 21 {
            // IPv6 with an extension header (or an upper layer) next, to walk.
            f[14] = 0x60 | (f[14] & 0xf);
            f[20] = [0, 43, 44, 60, 51, 17, 6][i % 7];
        }
        let _ = (every.matches(&f), ports.matches(&f));
    }
}
