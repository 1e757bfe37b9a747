//! Frames the router must not route, through the real binary on net_pcap ports (RFC 1812
//! §5.2.1, §5.3.4, §5.3.7): unicast frames for another station's MAC, unicast IP packets
//! in link-layer broadcast or multicast frames, and packets from outside that claim one of
//! the router's addresses as source. None of them may come out of `out`, none may draw an
//! ICMP error, and each is counted under its drop reason. Control frames in the same run
//! (good traffic, a broadcast ARP request, a ping and a TTL expiry addressed to the
//! router) show that what must still work does. The output pcaps are decoded by tshark.
#![forbid(unsafe_code)]

mod common;

use std::collections::HashMap;

use common::{checksum, fill_ipv4_checksum, pcap_config, run_for, tshark, Decoded, TempDir};
use traffic::{write_pcap, FrameSpec};

const ROUTES: &str = r#"
neighbors:
  - {ip: 10.0.0.2, mac: "02:00:00:00:00:02"}
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"}
ipv4:
  - {prefix: 192.0.2.0/24, via: 10.0.0.2}
  - {prefix: 198.51.100.0/24, via: 10.0.1.2}
mpls:
  - {in_label: 1000, action: swap, via: 10.0.1.2, push: [2000]}
"#;

/// The router's MAC on `in` (tests/common's pcap config).
const ROUTER_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
const OTHER_STATION: [u8; 6] = [2, 0, 0, 0, 0, 0x99];
const BROADCAST: [u8; 6] = [0xff; 6];
const IPV4_MULTICAST: [u8; 6] = [0x01, 0x00, 0x5e, 0x00, 0x00, 0x05];

/// A UDP frame towards 198.51.100.0/24 (routed to `out` when accepted), identified by
/// its UDP source port.
fn udp(id: u16, dst_mac: [u8; 6], src_ip: [u8; 4], ttl: u8, labels: &[(u32, u8, u8)]) -> Vec<u8> {
    FrameSpec {
        dst_mac,
        src_mac: [2, 0, 0, 0, 0, 2],
        labels: labels.to_vec(),
        src_ip,
        dst_ip: [198, 51, 100, 7],
        ttl,
        src_port: id,
        ..FrameSpec::default()
    }
    .build()
}

const HOST: [u8; 4] = [192, 0, 2, 1];

/// The refused frames: (what, frame, drop reason). Their UDP source ports are 7000+.
fn refused() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    vec![
        (
            "unicast IPv4 to another station",
            udp(7001, OTHER_STATION, HOST, 64, &[]),
            "other_host",
        ),
        (
            "labelled to another station",
            udp(7002, OTHER_STATION, HOST, 64, &[(1000, 0, 64)]),
            "other_host",
        ),
        (
            "unicast IPv4 in a broadcast frame",
            udp(7003, BROADCAST, HOST, 64, &[]),
            "l2_multicast",
        ),
        (
            "unicast IPv4 with TTL 1 in a broadcast frame (no time exceeded)",
            udp(7004, BROADCAST, HOST, 1, &[]),
            "l2_multicast",
        ),
        (
            "unicast IPv4 in an IPv4-multicast frame",
            udp(7005, IPV4_MULTICAST, HOST, 64, &[]),
            "l2_multicast",
        ),
        (
            "labelled in a multicast frame",
            udp(7006, IPV4_MULTICAST, HOST, 64, &[(1000, 0, 64)]),
            "l2_multicast",
        ),
        (
            "source is the router's address on `in`",
            udp(7007, ROUTER_MAC, [10, 0, 0, 1], 64, &[]),
            "own_source",
        ),
        (
            "source is the router's address on `out`",
            udp(7008, ROUTER_MAC, [10, 0, 1, 1], 64, &[]),
            "own_source",
        ),
        (
            "own source with TTL 1 (no time exceeded)",
            udp(7009, ROUTER_MAC, [10, 0, 0, 1], 1, &[]),
            "own_source",
        ),
    ]
}

/// A broadcast ARP request from 10.0.0.2 for the router's address on `in`.
fn arp_request() -> Vec<u8> {
    let mut f = BROADCAST.to_vec();
    f.extend_from_slice(&[2, 0, 0, 0, 0, 2, 0x08, 0x06]);
    f.extend_from_slice(&[0, 1, 0x08, 0x00, 6, 4, 0, 1]);
    f.extend_from_slice(&[2, 0, 0, 0, 0, 2, 10, 0, 0, 2]);
    f.extend_from_slice(&[0, 0, 0, 0, 0, 0, 10, 0, 0, 1]);
    f.resize(60, 0);
    f
}

/// An ICMP echo request from 192.0.2.1 to the router's address on `in`.
fn echo_request(id: u16) -> Vec<u8> {
    let mut f = udp(0, ROUTER_MAC, HOST, 64, &[]);
    f[14 + 16..14 + 20].copy_from_slice(&[10, 0, 0, 1]);
    f[23] = 1; // protocol ICMP
    fill_ipv4_checksum(&mut f, 14);
    let icmp = &mut f[34..];
    icmp.fill(0x61);
    icmp[..8].copy_from_slice(&[8, 0, 0, 0, (id >> 8) as u8, id as u8, 0, 1]);
    let c = checksum(icmp);
    icmp[2..4].copy_from_slice(&c.to_be_bytes());
    f
}

/// `name=N` and `name: N` counts from the final summary's `workers:` line.
fn summary_counts(stdout: &str) -> HashMap<String, u64> {
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("workers:"))
        .unwrap_or_else(|| panic!("no workers summary in:\n{stdout}"));
    let toks: Vec<&str> = line
        .split_whitespace()
        .map(|t| t.trim_matches(|c| c == '[' || c == ']'))
        .collect();
    let mut m = HashMap::new();
    for w in toks.windows(2) {
        if let Ok(n) = w[1].parse::<u64>() {
            m.insert(w[0].trim_end_matches(':').to_string(), n);
        }
    }
    for (k, n) in toks.iter().filter_map(|t| t.split_once('=')) {
        if let Ok(n) = n.parse::<u64>() {
            m.insert(k.to_string(), n);
        }
    }
    m
}

const FIELDS: &[&str] = &[
    "eth.dst",
    "arp.opcode",
    "arp.src.proto_ipv4",
    "ip.src",
    "ip.dst",
    "udp.srcport",
    "icmp.type",
    "icmp.ident",
];

fn ports(frames: &[Decoded]) -> Vec<u16> {
    let mut v: Vec<u16> = frames
        .iter()
        .flat_map(|f| f.list("udp.srcport"))
        .map(|p| p.parse().unwrap())
        .collect();
    v.sort_unstable();
    v
}

#[test]
fn frames_not_for_the_router_and_own_sources_are_dropped_and_counted() {
    let dir = TempDir::new("l2filter");
    std::fs::write(dir.path("routes.yaml"), ROUTES).unwrap();
    let cfg = pcap_config(&dir, "");
    let bad = refused();
    let mut frames = Vec::new();
    let mut good = Vec::new();
    for (k, (_, f, _)) in bad.iter().enumerate() {
        let id = 5000 + k as u16;
        frames.push(udp(id, ROUTER_MAC, HOST, 64, &[]));
        good.push(id);
        frames.push(f.clone());
    }
    // Labelled and plain good traffic, and what is addressed to the router itself.
    frames.push(udp(5100, ROUTER_MAC, HOST, 64, &[(1000, 0, 64)]));
    good.push(5100);
    frames.push(arp_request());
    frames.push(echo_request(0x4242));
    frames.push(udp(5200, ROUTER_MAC, HOST, 1, &[])); // expires here: time exceeded
    write_pcap(&dir.path("in.pcap"), &frames).unwrap();

    let out = run_for(&cfg, 2.0);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "router failed:\n{stdout}\n{stderr}");

    // Out of `out`: exactly the good frames.
    let fwd = tshark(&dir.path("out.pcap"), FIELDS);
    assert_eq!(ports(&fwd), good, "forwarded frames:\n{stdout}");
    assert!(fwd.iter().all(|f| f.get("eth.dst") == "02:00:00:00:01:02"));

    // Back out of `in`: the ARP reply, the echo reply, the time exceeded about 5200, and
    // nothing about any refused frame.
    let back = tshark(&dir.path("in-out.pcap"), FIELDS);
    let arp: Vec<_> = back.iter().filter(|f| f.get("arp.opcode") == "2").collect();
    assert_eq!(arp.len(), 1, "one ARP reply: {back:?}");
    assert_eq!(arp[0].get("arp.src.proto_ipv4"), "10.0.0.1");
    let icmp: Vec<(String, String)> = back
        .iter()
        .filter(|f| !f.get("icmp.type").is_empty())
        .map(|f| (f.list("icmp.type")[0].clone(), f.get("ip.dst").to_string()))
        .collect();
    assert_eq!(
        icmp.len(),
        2,
        "only the echo reply and one time exceeded: {back:?}"
    );
    assert!(icmp.iter().any(|(t, _)| t == "0"), "echo reply: {back:?}");
    assert_eq!(
        ports(&back),
        [5200],
        "ICMP errors quote only frame 5200: {back:?}"
    );
    assert_eq!(back.len(), 3, "{back:?}");

    // Counted by reason, and nothing else dropped.
    let s = summary_counts(&stdout);
    let mut want: HashMap<&str, u64> = HashMap::new();
    for (_, _, r) in &bad {
        *want.entry(r).or_default() += 1;
    }
    for (reason, n) in &want {
        assert_eq!(
            s.get(*reason).copied().unwrap_or(0),
            *n,
            "{reason}: {stdout}"
        );
    }
    assert_eq!(s["dropped"], bad.len() as u64, "{stdout}");
    assert_eq!(s["forwarded"], good.len() as u64, "{stdout}");
}
