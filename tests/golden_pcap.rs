//! Golden pcap runs: the real binary on net_pcap vdevs, one frame per behaviour in, the
//! output decoded by tshark (an independent dissector) and compared with what RFC 3032,
//! 3443, 1812, 4884 and 4950 say should come out.
#![forbid(unsafe_code)]

mod common;

use std::collections::HashMap;

use common::{checksum, fill_ipv4_checksum, pcap_config, run_for, tshark, Decoded, TempDir};
use traffic::{write_pcap, FrameSpec};

const ROUTES: &str = r#"
neighbors:
  - {ip: 10.0.0.2, mac: "02:00:00:00:00:02"}
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"}
  - {ip: 10.0.1.3, mac: "02:00:00:00:01:03"}
  - {ip: 10.0.1.4, mac: "02:00:00:00:01:04"}
  - {ip: 10.0.1.5, mac: "02:00:00:00:01:05"}
ipv4:
  - {prefix: 192.0.2.0/24, via: 10.0.0.2}
  - {prefix: 198.51.100.0/24, via: 10.0.1.2}
  - {prefix: 203.0.113.0/24, via: 10.0.1.3, push: [100]}
  - {prefix: 20.3.0.0/16, via: 10.0.1.3, push: [301, 302, 303]}
  - {prefix: 50.0.0.0/8, via: 10.0.1.2, push: [500, 501]}
  - prefix: 40.0.0.0/8
    nexthops:
      - {via: 10.0.1.2}
      - {via: 10.0.1.3}
      - {via: 10.0.1.4}
      - {via: 10.0.1.5}
mpls:
  - {in_label: 1000, action: swap, via: 10.0.1.2, push: [2000]}
  - {in_label: 1001, action: swap_and_push, via: 10.0.1.2, push: [2001, 2002]}
  - {in_label: 1002, action: pop, via: 10.0.1.4}
  - {in_label: 1003, action: pop_and_lookup}
"#;

/// A UDP test frame from 192.0.2.1, identified by its source port.
fn udp(id: u16, dst: [u8; 4], ttl: u8, labels: &[(u32, u8, u8)]) -> FrameSpec {
    FrameSpec {
        dst_mac: [2, 0, 0, 0, 0, 1],
        src_mac: [2, 0, 0, 0, 0, 2],
        labels: labels.to_vec(),
        src_ip: [192, 0, 2, 1],
        dst_ip: dst,
        ttl,
        src_port: id,
        ..FrameSpec::default()
    }
}

fn echo_request(dst: [u8; 4], id: u16) -> Vec<u8> {
    let mut f = udp(0, dst, 64, &[]).build();
    f[23] = 1; // protocol ICMP
    fill_ipv4_checksum(&mut f, 14);
    let icmp = &mut f[34..];
    icmp.fill(0x61);
    icmp[0] = 8;
    icmp[1] = 0;
    icmp[2..4].copy_from_slice(&[0, 0]);
    icmp[4..6].copy_from_slice(&id.to_be_bytes());
    icmp[6..8].copy_from_slice(&1u16.to_be_bytes());
    let c = checksum(icmp);
    icmp[2..4].copy_from_slice(&c.to_be_bytes());
    f
}

const FIELDS: &[&str] = &[
    "eth.dst",
    "mpls.label",
    "mpls.ttl",
    "mpls.bottom",
    "ip.src",
    "ip.dst",
    "ip.ttl",
    "ip.checksum.status",
    "udp.srcport",
    "icmp.type",
    "icmp.code",
    "icmp.checksum.status",
    "icmp.mtu",
    "icmp.mpls.label",
    "icmp.mpls.ttl",
    "icmp.ext.checksum.status",
    "icmp.ident",
];

/// Frames keyed by the UDP source port of the (possibly quoted) test packet.
fn by_port(frames: Vec<Decoded>) -> HashMap<u16, Vec<Decoded>> {
    let mut m: HashMap<u16, Vec<Decoded>> = HashMap::new();
    for f in frames {
        for p in f.list("udp.srcport") {
            m.entry(p.parse().unwrap()).or_default().push(f.clone());
        }
    }
    m
}

#[test]
fn every_forwarding_behaviour_on_the_wire() {
    let dir = TempDir::new("golden");
    std::fs::write(dir.path("routes.yaml"), ROUTES).unwrap();
    let cfg = pcap_config(&dir, "");

    let mut frames = vec![
        udp(5001, [198, 51, 100, 7], 64, &[]).build(), // IPv4 forward
        udp(5002, [203, 0, 113, 5], 64, &[]).build(),  // push 1
        udp(5003, [20, 3, 1, 1], 30, &[]).build(),     // push 3
        udp(5004, [198, 51, 100, 8], 64, &[(1000, 5, 64)]).build(), // swap
        udp(5005, [198, 51, 100, 8], 64, &[(1001, 0, 10)]).build(), // swap + push
        udp(5006, [198, 51, 100, 8], 64, &[(1002, 0, 20)]).build(), // PHP pop
        udp(5007, [198, 51, 100, 9], 64, &[(1003, 0, 40)]).build(), // pop-and-lookup
        udp(5008, [198, 51, 100, 10], 64, &[(0, 0, 20)]).build(), // explicit null
        udp(5009, [198, 51, 100, 11], 1, &[]).build(), // IPv4 TTL expiry
        udp(5010, [198, 51, 100, 12], 64, &[(1000, 0, 1)]).build(), // MPLS TTL expiry
        FrameSpec {
            dont_frag: true,
            frame_len: 1514,
            ..udp(5011, [50, 0, 0, 1], 64, &[])
        }
        .build(), // frag needed
        udp(5012, [203, 0, 200, 1], 64, &[]).build(),  // no route
        udp(5013, [198, 51, 100, 13], 64, &[(99_999, 0, 64)]).build(), // no label
        udp(5014, [198, 51, 100, 14], 64, &[(3, 0, 64), (1000, 0, 64)]).build(), // implicit null on the wire
    ];
    let mut bad = udp(5015, [198, 51, 100, 15], 64, &[]).build();
    bad[24] ^= 0xff; // corrupt the IPv4 header checksum
    frames.push(bad);
    frames.push(echo_request([10, 0, 0, 1], 0x4242));
    // ECMP: 64 flows, each sent twice.
    for i in 0..64u16 {
        let f = udp(6000 + i, [40, 1, (i % 7) as u8, i as u8], 64, &[]).build();
        frames.push(f.clone());
        frames.push(f);
    }
    write_pcap(&dir.path("in.pcap"), &frames).unwrap();

    let out = run_for(&cfg, 1.5);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "router failed:\n{stdout}\n{stderr}");

    let fwd = by_port(tshark(&dir.path("out.pcap"), FIELDS));
    let back = by_port(tshark(&dir.path("in-out.pcap"), FIELDS));
    let one = |m: &HashMap<u16, Vec<Decoded>>, p: u16| -> Decoded {
        let v = m
            .get(&p)
            .unwrap_or_else(|| panic!("no output for test frame {p}:\n{stdout}"));
        assert_eq!(v.len(), 1, "frame {p}: {v:?}");
        v[0].clone()
    };

    // (tshark checksum status: 1 = good, 0 = bad, 2 = not verified.)
    // IPv4 forward: TTL - 1, checksum good, next hop's MAC, no labels.
    let f = one(&fwd, 5001);
    assert_eq!(f.get("eth.dst"), "02:00:00:00:01:02");
    assert_eq!(
        (
            f.get("ip.ttl"),
            f.get("ip.checksum.status"),
            f.get("mpls.label")
        ),
        ("63", "1", "")
    );

    // LER push 1, uniform: label TTL = IP TTL - 1, S on the bottom.
    let f = one(&fwd, 5002);
    assert_eq!(f.get("eth.dst"), "02:00:00:00:01:03");
    assert_eq!(
        (f.get("mpls.label"), f.get("mpls.ttl"), f.get("mpls.bottom")),
        ("100", "63", "1")
    );
    assert_eq!((f.get("ip.ttl"), f.get("ip.checksum.status")), ("63", "1"));

    // Push 3: S bit only on the last.
    let f = one(&fwd, 5003);
    assert_eq!(f.list("mpls.label"), ["301", "302", "303"]);
    assert_eq!(f.list("mpls.ttl"), ["29", "29", "29"]);
    assert_eq!(f.list("mpls.bottom"), ["0", "0", "1"]);

    // Swap: label TTL - 1, inner IP untouched.
    let f = one(&fwd, 5004);
    assert_eq!((f.get("mpls.label"), f.get("mpls.ttl")), ("2000", "63"));
    assert_eq!(f.get("ip.ttl"), "64");

    // Swap and push.
    let f = one(&fwd, 5005);
    assert_eq!(f.list("mpls.label"), ["2001", "2002"]);
    assert_eq!(f.list("mpls.ttl"), ["9", "9"]);
    assert_eq!(f.list("mpls.bottom"), ["0", "1"]);

    // PHP pop, uniform: IP TTL = label TTL - 1, checksum fixed.
    let f = one(&fwd, 5006);
    assert_eq!(f.get("eth.dst"), "02:00:00:00:01:04");
    assert_eq!(
        (
            f.get("mpls.label"),
            f.get("ip.ttl"),
            f.get("ip.checksum.status")
        ),
        ("", "19", "1")
    );

    // Pop-and-lookup at the bottom of the stack: IPv4 route, one decrement in all.
    let f = one(&fwd, 5007);
    assert_eq!(f.get("eth.dst"), "02:00:00:00:01:02");
    assert_eq!(
        (
            f.get("mpls.label"),
            f.get("ip.ttl"),
            f.get("ip.checksum.status")
        ),
        ("", "39", "1")
    );

    // Explicit null (RFC 4182): popped, then IPv4.
    let f = one(&fwd, 5008);
    assert_eq!((f.get("mpls.label"), f.get("ip.ttl")), ("", "19"));

    // IPv4 TTL expiry: time exceeded from the ingress port's address, back to the source.
    let f = one(&back, 5009);
    assert_eq!(f.get("eth.dst"), "02:00:00:00:00:02");
    assert_eq!(
        (f.get("ip.src"), f.get("ip.dst")),
        ("10.0.0.1,192.0.2.1", "192.0.2.1,198.51.100.11")
    );
    assert_eq!(
        (
            f.get("icmp.type"),
            f.get("icmp.code"),
            f.get("icmp.checksum.status")
        ),
        ("11", "0", "1")
    );

    // MPLS TTL expiry: time exceeded with the RFC 4950 label stack object, sent onward
    // along the LSP (label-switched like the expired packet, label TTL 255 - 1).
    let f = one(&fwd, 5010);
    assert_eq!((f.get("mpls.label"), f.get("mpls.ttl")), ("2000", "254"));
    assert_eq!(f.get("icmp.type"), "11");
    assert_eq!(
        (f.get("icmp.mpls.label"), f.get("icmp.mpls.ttl")),
        ("1000", "1")
    );
    assert_eq!(f.get("icmp.ext.checksum.status"), "1");
    assert!(f.get("ip.dst").starts_with("192.0.2.1"), "{f:?}");

    // Too big after pushing two labels, DF set: fragmentation needed, MTU minus labels.
    let f = one(&back, 5011);
    assert_eq!(
        (f.get("icmp.type"), f.get("icmp.code"), f.get("icmp.mtu")),
        ("3", "4", "1492")
    );

    // Echo reply from the router's address.
    let replies: Vec<Decoded> = tshark(&dir.path("in-out.pcap"), FIELDS)
        .into_iter()
        .filter(|d| d.get("icmp.type") == "0")
        .collect();
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert_eq!(
        (replies[0].get("ip.src"), replies[0].get("icmp.ident")),
        ("10.0.0.1", "16962")
    );

    // Dropped: nothing out anywhere.
    for p in [5012, 5013, 5014, 5015] {
        assert!(
            !fwd.contains_key(&p) && !back.contains_key(&p),
            "frame {p} should be dropped"
        );
    }
    let summary = stdout.lines().find(|l| l.starts_with("workers:")).unwrap();
    for reason in [
        "no_route=1",
        "no_label=1",
        "bad_checksum=1",
        "reserved_label=1",
    ] {
        assert!(summary.contains(reason), "{reason} missing: {summary}");
    }
    assert!(
        stdout.contains("mbufs not returned to the pool: 0"),
        "{stdout}"
    );

    // ECMP: every member used, and both copies of a flow on the same member.
    let mut members = std::collections::HashSet::new();
    for i in 0..64u16 {
        let v = &fwd[&(6000 + i)];
        assert_eq!(v.len(), 2);
        assert_eq!(
            v[0].get("eth.dst"),
            v[1].get("eth.dst"),
            "flow {i} changed member"
        );
        members.insert(v[0].get("eth.dst").to_string());
    }
    assert_eq!(members.len(), 4, "{members:?}");
}

/// A second run right after the first, with the same config and file prefix, works: no
/// stale runtime files, and SIGTERM-free `--duration` exits leave nothing behind.
#[test]
fn a_second_run_right_after_the_first_works() {
    let dir = TempDir::new("rerun");
    std::fs::write(dir.path("routes.yaml"), ROUTES).unwrap();
    let cfg = pcap_config(&dir, "");
    write_pcap(
        &dir.path("in.pcap"),
        &[udp(5001, [198, 51, 100, 7], 64, &[]).build()],
    )
    .unwrap();
    for run in 0..2 {
        let out = run_for(&cfg, 0.5);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "run {run} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains("workers: received 1 forwarded 1"),
            "run {run}:\n{stdout}"
        );
    }
}

const ROUTES6: &str = r#"
neighbors:
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"}
  - {ip: "2001:db8:1::2", mac: "02:00:00:00:01:06"}
  - {ip: "2001:db8:1::3", mac: "02:00:00:00:01:07"}
ipv6:
  - {prefix: "2001:db8:100::/40", via: "2001:db8:1::2"}
  - {prefix: "2001:db8:300::/40", via: "2001:db8:1::3", push: [100, 200], ttl_mode: pipe}
  - {prefix: "2001:db8:400::/40", via: 10.0.1.2, push: [300]}
mpls:
  - {in_label: 1000, action: pop, via: "2001:db8:1::2"}
  - {in_label: 1004, action: pop_and_lookup}
"#;

/// An Ethernet + IPv6/UDP frame to the router from 2001:db8::7, identified by its UDP
/// source port, below `labels` (label, TTL; S on the last).
fn udp6(id: u16, dst: &str, hop: u8, labels: &[(u32, u8)]) -> Vec<u8> {
    let src: std::net::Ipv6Addr = "2001:db8::7".parse().unwrap();
    let dst: std::net::Ipv6Addr = dst.parse().unwrap();
    let mut udp = id.to_be_bytes().to_vec();
    udp.extend(53u16.to_be_bytes());
    udp.extend(26u16.to_be_bytes());
    udp.extend([0, 0]);
    udp.extend([0x61; 18]);
    // Checksum over the pseudo-header (RFC 8200 §8.1) and the datagram.
    let mut pseudo = src.octets().to_vec();
    pseudo.extend(dst.octets());
    pseudo.extend(26u32.to_be_bytes());
    pseudo.extend([0, 0, 0, 17]);
    pseudo.extend(&udp);
    let c = checksum(&pseudo);
    udp[6..8].copy_from_slice(&c.to_be_bytes());
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];
    f.extend(if labels.is_empty() { 0x86ddu16 } else { 0x8847 }.to_be_bytes());
    for (k, &(l, ttl)) in labels.iter().enumerate() {
        let s = (k + 1 == labels.len()) as u32;
        f.extend((l << 12 | s << 8 | ttl as u32).to_be_bytes());
    }
    f.extend([0x60, 0, 0, 0, 0, 26, 17, hop]);
    f.extend(src.octets());
    f.extend(dst.octets());
    f.extend(udp);
    f
}

const FIELDS6: &[&str] = &[
    "eth.dst",
    "eth.type",
    "mpls.label",
    "mpls.ttl",
    "mpls.bottom",
    "ipv6.src",
    "ipv6.dst",
    "ipv6.hlim",
    "ipv6.plen",
    "udp.srcport",
    "udp.length",
];

#[test]
fn ipv6_and_6pe_forwarding_on_the_wire() {
    let dir = TempDir::new("golden6");
    std::fs::write(dir.path("routes.yaml"), ROUTES6).unwrap();
    let cfg = pcap_config(&dir, "");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let text = text.replace(
        "addresses: [10.0.1.1/24]",
        "addresses: [10.0.1.1/24, \"2001:db8:1::1/64\"]",
    );
    std::fs::write(&cfg, text).unwrap();
    let frames = [
        udp6(7001, "2001:db8:100::5", 64, &[]), // IPv6 forward
        udp6(7002, "2001:db8:400::5", 64, &[]), // 6PE push
        udp6(7003, "2001:db8:100::6", 64, &[(1000, 20)]), // PHP to IPv6
        udp6(7004, "2001:db8:100::7", 64, &[(2, 30)]), // label 2 popped
        udp6(7005, "2001:db8:100::8", 64, &[(1004, 40)]), // pop-and-lookup
        udp6(7006, "2001:db8:300::9", 64, &[]), // LER push 2, pipe
    ];
    write_pcap(&dir.path("in.pcap"), &frames).unwrap();
    let out = run_for(&cfg, 1.5);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "router failed:\n{stdout}\n{stderr}");
    let fwd = by_port(tshark(&dir.path("out.pcap"), FIELDS6));
    let one = |p: u16| -> Decoded {
        let v = fwd
            .get(&p)
            .unwrap_or_else(|| panic!("no output for test frame {p}:\n{stdout}"));
        assert_eq!(v.len(), 1, "frame {p}: {v:?}");
        assert_eq!(v[0].get("ipv6.src"), "2001:db8::7", "{p}");
        assert_eq!(
            (v[0].get("ipv6.plen"), v[0].get("udp.length")),
            ("26", "26")
        );
        v[0].clone()
    };
    let fields = |f: &Decoded| {
        (
            f.get("eth.dst").to_string(),
            f.get("eth.type").to_string(),
            f.get("mpls.label").to_string(),
            f.get("ipv6.hlim").to_string(),
        )
    };
    let n6 = "02:00:00:00:01:06".to_string();
    let bare = |mac: &str, hlim: &str| {
        (
            mac.to_string(),
            "0x86dd".to_string(),
            String::new(),
            hlim.to_string(),
        )
    };
    // Native: hop limit - 1, the IPv6 neighbour's MAC.
    assert_eq!(fields(&one(7001)), bare(&n6, "63"));
    // 6PE: the IPv4 next hop's MAC, its label (uniform TTL), the IPv6 packet intact but
    // for the hop limit.
    let f = one(7002);
    assert_eq!(
        (
            f.get("eth.dst"),
            f.get("mpls.label"),
            f.get("mpls.ttl"),
            f.get("mpls.bottom")
        ),
        ("02:00:00:00:01:02", "300", "63", "1")
    );
    assert_eq!(
        (f.get("ipv6.dst"), f.get("ipv6.hlim")),
        ("2001:db8:400::5", "63")
    );
    // PHP towards the IPv6 neighbour, uniform: hop limit = label TTL - 1.
    assert_eq!(fields(&one(7003)), bare(&n6, "19"));
    // Label 2 (IPv6 explicit null) popped, then the IPv6 lookup.
    assert_eq!(fields(&one(7004)), bare(&n6, "29"));
    // Pop-and-lookup into the IPv6 table.
    assert_eq!(fields(&one(7005)), bare(&n6, "39"));
    // LER push of two labels in pipe mode: label TTL 255, hop limit - 1.
    let f = one(7006);
    assert_eq!(f.get("eth.dst"), "02:00:00:00:01:07");
    assert_eq!(f.list("mpls.label"), ["100", "200"]);
    assert_eq!(f.list("mpls.ttl"), ["255", "255"]);
    assert_eq!(f.list("mpls.bottom"), ["0", "1"]);
    assert_eq!(f.get("ipv6.hlim"), "63");
    assert!(
        stdout.contains("mbufs not returned to the pool: 0"),
        "{stdout}"
    );
}
