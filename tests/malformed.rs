//! Malformed traffic through the real binary: broken frames interleaved with good ones on a
//! net_pcap port. The router must survive, forward exactly the good frames (the output
//! pcap decoded by tshark), and count every bad frame
//! under the drop reason that names what is wrong — on the live /metrics endpoint while it
//! runs, and in the final summary.
#![forbid(unsafe_code)]

mod common;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{fill_ipv4_checksum, pcap_config, tshark, Launch, Router, TempDir};
use traffic::{write_pcap, FrameSpec};

const ROUTES: &str = r#"
neighbors:
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"}
ipv4:
  - {prefix: 198.51.100.0/24, via: 10.0.1.2}
mpls:
  - {in_label: 1000, action: swap, via: 10.0.1.2, push: [2000]}
"#;

/// A good UDP frame to 198.51.100.0/24 (forwarded to `out`), tagged by its source port.
fn good(id: u16) -> Vec<u8> {
    FrameSpec {
        dst_mac: [2, 0, 0, 0, 0, 1],
        src_port: id,
        ..FrameSpec::default()
    }
    .build()
}

fn labelled(labels: &[(u32, u8, u8)]) -> Vec<u8> {
    FrameSpec {
        dst_mac: [2, 0, 0, 0, 0, 1],
        labels: labels.to_vec(),
        ..FrameSpec::default()
    }
    .build()
}

/// The broken frames and the counter each must land in.
fn bad_frames() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let mut v: Vec<(&'static str, Vec<u8>, &'static str)> = Vec::new();
    let g = good(1);
    v.push(("zero-length", Vec::new(), "truncated"));
    v.push(("truncated ethernet", g[..10].to_vec(), "truncated"));
    v.push(("ethernet header only", g[..14].to_vec(), "truncated"));
    let l = labelled(&[(1000, 0, 64)]);
    v.push(("label stack cut mid-entry", l[..16].to_vec(), "truncated"));
    let mut no_bos = l[..22].to_vec();
    no_bos[16] &= !1; // S bit cleared: the stack runs off the end
    v.push(("label stack without bottom", no_bos, "truncated"));
    let deep: Vec<(u32, u8, u8)> = (0..20).map(|_| (1000, 0, 64)).collect();
    v.push((
        "stack deeper than the limit",
        labelled(&deep),
        "stack_too_deep",
    ));
    let mut ihl = good(2);
    ihl[14] = 0x44;
    fill_ipv4_checksum(&mut ihl, 14);
    v.push(("IHL 4", ihl, "bad_ipv4_header"));
    let mut ver = good(3);
    ver[14] = 0x65;
    fill_ipv4_checksum(&mut ver, 14);
    v.push(("IP version 6 under ethertype IPv4", ver, "bad_ipv4_header"));
    let mut tl = good(4);
    tl[16..18].copy_from_slice(&1400u16.to_be_bytes());
    fill_ipv4_checksum(&mut tl, 14);
    v.push(("total length beyond the buffer", tl, "truncated"));
    let mut ck = good(5);
    ck[24] ^= 0x55;
    v.push(("bad header checksum", ck, "bad_checksum"));
    for label in [3u32, 4, 15] {
        v.push((
            "reserved label",
            labelled(&[(label, 0, 64)]),
            "reserved_label",
        ));
    }
    v.push(("unknown label", labelled(&[(4242, 0, 64)]), "no_label"));
    v.push((
        "no route",
        FrameSpec {
            dst_mac: [2, 0, 0, 0, 0, 1],
            dst_ip: [203, 0, 113, 9],
            ..FrameSpec::default()
        }
        .build(),
        "no_route",
    ));
    v.push((
        "jumbo beyond the egress MTU, DF clear",
        FrameSpec {
            dst_mac: [2, 0, 0, 0, 0, 1],
            frame_len: 1600,
            ..FrameSpec::default()
        }
        .build(),
        "mtu_exceeded",
    ));
    for (name, tag) in [("VLAN-tagged", 1usize), ("VLAN-in-VLAN", 2)] {
        let mut f = g[..12].to_vec();
        for t in 0..tag {
            f.extend_from_slice(&[0x81, 0x00, 0x00, 10 + t as u8]);
        }
        f.extend_from_slice(&g[12..]);
        v.push((name, f, "vlan_tagged"));
    }
    for et in [0x88ccu16, 0x8848, 0x0000, 0xffff] {
        let mut f = g.clone();
        f[12..14].copy_from_slice(&et.to_be_bytes());
        v.push(("unknown ethertype", f, "unsupported_ethertype"));
    }
    let mut v4_as_v6 = g.clone();
    v4_as_v6[12..14].copy_from_slice(&0x86ddu16.to_be_bytes());
    v.push(("IPv4 under the IPv6 ethertype", v4_as_v6, "bad_ipv6_header"));
    let mut src0 = good(6);
    src0[26..30].copy_from_slice(&[127, 0, 0, 1]);
    fill_ipv4_checksum(&mut src0, 14);
    v.push(("loopback source", src0, "martian_address"));
    v
}

/// Frames that are not errors but must not be forwarded: TTL 0 and 1 go to the slow path
/// (ICMP time exceeded), by design, not the drop counters.
fn expiring() -> Vec<Vec<u8>> {
    [0u8, 1]
        .iter()
        .map(|&ttl| {
            FrameSpec {
                dst_mac: [2, 0, 0, 0, 0, 1],
                ttl,
                ..FrameSpec::default()
            }
            .build()
        })
        .collect()
}

fn scrape(addr: &str) -> String {
    let mut s = TcpStream::connect(addr).expect("connect metrics");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// Sums a metric over all label sets matching `filter` (a label substring, e.g. `reason="x"`).
fn metric(text: &str, name: &str, filter: &str) -> u64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| {
            l.starts_with(name)
                && (l[name.len()..].starts_with('{') || l[name.len()..].starts_with(' '))
        })
        .filter(|l| l.contains(filter))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

/// `name N` pairs from the summary line that starts with `workers:`.
fn summary_counts(stdout: &str) -> HashMap<String, u64> {
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("workers:"))
        .unwrap_or_else(|| panic!("no workers summary in:\n{stdout}"));
    let mut m = HashMap::new();
    let toks: Vec<&str> = line
        .split_whitespace()
        .map(|t| t.trim_matches(|c| c == '[' || c == ']'))
        .collect();
    for w in toks.windows(2) {
        if let Ok(n) = w[1].parse::<u64>() {
            m.insert(w[0].trim_end_matches(':').to_string(), n);
        }
    }
    for t in &toks {
        if let Some((k, n)) = t.split_once('=') {
            if let Ok(n) = n.parse::<u64>() {
                m.insert(k.to_string(), n);
            }
        }
    }
    m
}

#[test]
fn broken_frames_are_dropped_by_reason_and_good_ones_forwarded() {
    let dir = TempDir::new("malformed");
    let cfg = pcap_config(&dir, "");
    std::fs::write(dir.path("routes.yaml"), ROUTES).unwrap();
    let bad = bad_frames();
    let exp = expiring();
    let mut frames = Vec::new();
    let mut good_ids = Vec::new();
    let mut id = 100u16;
    for (_, f, _) in &bad {
        frames.push(good(id));
        good_ids.push(id);
        id += 1;
        frames.push(f.clone());
    }
    frames.extend(exp.iter().cloned());
    frames.push(good(id));
    good_ids.push(id);
    write_pcap(&dir.path("in.pcap"), &frames).unwrap();

    let launch = Launch::new(&cfg, 6.0).ready(Some("metrics: http://"), Duration::from_secs(20));
    let mut router = Router::start(&launch);
    let addr = router.metrics_addr();
    // Expected per-reason counts.
    let mut want: HashMap<&str, u64> = HashMap::new();
    for (_, _, r) in &bad {
        *want.entry(r).or_default() += 1;
    }
    let total = frames.len() as u64;
    let deadline = Instant::now() + Duration::from_secs(4);
    let live = loop {
        let m = scrape(&addr);
        if metric(&m, "mplsrouter_worker_rx_packets_total", "") >= total
            || Instant::now() > deadline
        {
            break m;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(router.running(), "router died on malformed input");
    assert_eq!(
        metric(&live, "mplsrouter_worker_rx_packets_total", ""),
        total,
        "every frame received once (live)"
    );
    for (reason, n) in &want {
        assert_eq!(
            metric(
                &live,
                "mplsrouter_drops_total",
                &format!("reason=\"{reason}\"")
            ),
            *n,
            "drops for {reason} (live /metrics); frames: {:?}",
            bad.iter()
                .filter(|b| b.2 == *reason)
                .map(|b| b.0)
                .collect::<Vec<_>>()
        );
    }
    let all_drops = metric(&live, "mplsrouter_drops_total", "");
    assert_eq!(
        all_drops,
        bad.len() as u64,
        "no drops beyond the bad frames"
    );
    assert_eq!(
        metric(&live, "mplsrouter_worker_forwarded_packets_total", ""),
        good_ids.len() as u64
    );
    assert_eq!(
        metric(&live, "mplsrouter_worker_slow_path_packets_total", ""),
        exp.len() as u64,
        "TTL 0 and 1 go to the slow path"
    );

    let (status, _) = router.wait_exit(Duration::from_secs(30));
    let (stdout, err) = (router.stdout(), router.stderr());
    assert!(status.success(), "exit status; stderr:\n{err}");
    let s = summary_counts(&stdout);
    assert_eq!(s["received"], total, "summary: {stdout}");
    assert_eq!(s["forwarded"], good_ids.len() as u64);
    assert_eq!(s["dropped"], bad.len() as u64);
    for (reason, n) in &want {
        assert_eq!(
            s.get(*reason).copied().unwrap_or(0),
            *n,
            "summary {reason}: {stdout}"
        );
    }
    assert!(
        stdout.contains("mbufs not returned to the pool: 0"),
        "mbuf leak: {stdout}"
    );

    // Exactly the good frames left on `out`, in order, decoded by tshark.
    let dec = tshark(
        &dir.path("out.pcap"),
        &["udp.srcport", "ip.ttl", "ip.checksum.status"],
    );
    let ports: Vec<u16> = dec
        .iter()
        .map(|d| d.get("udp.srcport").parse().unwrap())
        .collect();
    assert_eq!(ports, good_ids);
    for d in &dec {
        assert_eq!(d.get("ip.ttl"), "63");
        assert_eq!(d.get("ip.checksum.status"), "1", "checksum verified good");
    }
}
