//! The filter language: parsing (and its errors), the encoding the workers read, and
//! matching on built frames.

use super::*;
use traffic::FrameSpec;

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
        ("dst 10.0.0.0/33", "not an IPv4"),
        ("dst 10.0.0", "not an IPv4"),
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
