//! Slow-path pressure on a live router (issue 23): a flood that replays, forever, a mix
//! of good traffic, packets to random hosts on a connected /16 (glean), TTL 1, echo
//! requests to the router, ARP requests from random on-link senders, traffic to one
//! on-link host and that host's ARP reply. Checked: what the budgets refuse is counted
//! under `<reason>_throttled` (and packets to an incomplete neighbour under
//! `neighbor_incomplete`), no mbuf goes missing, the punt queues never overflow, the host
//! that answers is learned and then forwarded to, and ICMP errors and echo replies still
//! go out, at most at their configured rate. The router's output pcap is decoded by
//! tshark; no assertion depends on how fast the box is.
#![forbid(unsafe_code)]

mod common;
mod live;

use std::time::{Duration, Instant};

use common::{tshark, TempDir};
use live::{sum, LiveRouter};
use traffic::{write_pcap, FrameSpec};

const ROUTER: [u8; 6] = [2, 0, 0, 0, 0, 1];
const HOST: [u8; 6] = [2, 0x77, 0, 0, 0, 0x77];
const HOST_IP: [u8; 4] = [10, 1, 0, 77];
/// `icmp_rate_limit` of the config: errors and echo replies, per second and burst.
const ICMP_RATE: f64 = 50.0;
const ICMP_BURST: f64 = 10.0;

const ROUTES: &str = r#"
neighbors:
  - {ip: 10.0.0.2, mac: "02:00:00:00:00:02"}
  - {ip: 10.2.0.2, mac: "02:00:00:00:02:02"}
ipv4:
  - {prefix: 100.0.0.0/8, via: 10.2.0.2}
  - {prefix: 200.0.0.0/8, via: 10.1.0.88}
"#;

fn udp(dst: [u8; 4], ttl: u8, sport: u16) -> Vec<u8> {
    FrameSpec {
        dst_mac: ROUTER,
        src_mac: [2, 0, 0, 0, 0, 2],
        src_ip: [10, 0, 0, 2],
        dst_ip: dst,
        ttl,
        src_port: sport,
        ..FrameSpec::default()
    }
    .build()
}

fn echo_request(id: u16) -> Vec<u8> {
    common::into_echo_request(udp([10, 0, 0, 1], 64, 0), id, 0)
}

fn arp(op: u16, dst: [u8; 6], sha: [u8; 6], spa: [u8; 4], tpa: [u8; 4]) -> Vec<u8> {
    common::arp_frame(op, (dst, sha), sha, spa, tpa)
}

/// One pass of the flood: per 16 frames, 8 good and 8 bad of every kind in turn.
fn flood() -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    let mut x = 0x2545_f491u32;
    let mut rand = || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    for i in 0..4000u32 {
        frames.push(udp([100, 0, (i >> 8) as u8, i as u8], 64, 1000));
        // Random hosts in 10.1.1.0-10.1.254.255 (never the host that answers), and ARP
        // requests for another host from senders in 10.1.255.0/24 (never learned).
        let r = rand();
        let host = [10, 1, (r >> 8) as u8 % 254 + 1, r as u8];
        let sender = [10, 1, 255, (r as u8).max(1)];
        frames.push(match i % 4 {
            0 => udp(host, 64, 2000),
            1 => udp([100, 9, 9, 9], 1, 3000),
            2 => echo_request(i as u16),
            _ => arp(
                1,
                [0xff; 6],
                [2, 0x42, 0, 0, 0, sender[3]],
                sender,
                [10, 1, 0, 200],
            ),
        });
        if i % 500 == 0 {
            frames.push(udp(HOST_IP, 64, 7777));
        }
    }
    frames.push(arp(2, ROUTER, HOST, HOST_IP, [10, 1, 0, 1]));
    frames
}

/// ARP gets one packet a second: the flood of requests takes it, so the host's reply is
/// learned only because ARP from a neighbour being resolved is classified first.
fn config(dir: &TempDir) -> std::path::PathBuf {
    let n = std::process::id();
    let d = dir.0.display();
    let cfg = format!(
        "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: mplsr-punt-{n}}}\n\
         ports:\n\
         \x20 - {{name: in, vdev: \"net_pcap_pin{n},rx_pcap={d}/in.pcap,tx_pcap={d}/in-out.pcap,infinite_rx=1\", mac: \"02:00:00:00:00:01\", addresses: [10.0.0.1/24, 10.1.0.1/16]}}\n\
         \x20 - {{name: out, vdev: \"net_null_pout{n},no-rx=1\", mac: \"02:00:00:00:01:01\", addresses: [10.2.0.1/24]}}\n\
         routes: routes.yaml\n\
         metrics_listen: 127.0.0.1:0\n\
         idle: {{backoff: {{}}}}\n\
         icmp_rate_limit: {{per_second: 50, burst: 10}}\n\
         punt: {{glean_pps: 200, glean_burst: 50, arp_pps: 1, arp_burst: 1}}\n"
    );
    let p = dir.path("startup.yaml");
    std::fs::write(&p, cfg).unwrap();
    p
}

fn drops(m: &str, reason: &str) -> u64 {
    sum(m, "mplsrouter_drops_total", &format!("reason=\"{reason}\""))
}

#[test]
fn a_slow_path_flood_is_throttled_in_the_worker_and_a_neighbour_still_resolves() {
    let dir = TempDir::new("punt-pressure");
    std::fs::write(dir.path("routes.yaml"), ROUTES).unwrap();
    write_pcap(&dir.path("in.pcap"), &flood()).unwrap();
    let started = Instant::now();
    let r = LiveRouter::start(&config(&dir), 60.0);

    // Until the host is learned (a host route: generation 2) and every budget has
    // refused something.
    let deadline = Instant::now() + Duration::from_secs(40);
    let mut incomplete = 0;
    let m = loop {
        let m = r.scrape();
        let throttled = [
            "glean_throttled",
            "ttl_expired_throttled",
            "echo_throttled",
            "arp_throttled",
            "neighbor_incomplete",
        ]
        .iter()
        .all(|d| drops(&m, d) > 0);
        incomplete = incomplete.max(sum(&m, "mplsrouter_arp_incomplete", ""));
        if throttled && incomplete > 0 && sum(&m, "mplsrouter_arp_entries", "") >= 1 {
            break m;
        }
        assert!(
            Instant::now() < deadline,
            "not there yet:\n{m}\n{}",
            r.output()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    // A little more flood, now forwarded to the learned host.
    let fwd_before = sum(&m, "mplsrouter_worker_forwarded_packets_total", "");
    let deadline = Instant::now() + Duration::from_secs(20);
    while sum(&r.scrape(), "mplsrouter_worker_forwarded_packets_total", "") < fwd_before + 20_000 {
        assert!(Instant::now() < deadline, "{}", r.output());
        std::thread::sleep(Duration::from_millis(100));
    }
    let m = r.scrape();
    assert!(
        sum(&m, "mplsrouter_arp_incomplete", "") <= sum(&m, "mplsrouter_arp_pending", ""),
        "only resolutions in progress are marked:\n{m}"
    );
    let (status, out) = r.stop(Duration::from_secs(20));
    let elapsed = started.elapsed().as_secs_f64();
    assert!(status.success(), "{out}");
    assert!(
        out.contains("mbufs unaccounted for by the workers: 0"),
        "rx = tx + drops + punts:\n{out}"
    );
    assert_eq!(
        sum(&m, "mplsrouter_slow_path_queue_drops_total", ""),
        0,
        "the punt queues never overflow:\n{m}"
    );
    // The flood is still running when `m` was scraped: what the workers punted and the
    // slow path has not yet taken is in its two queues (1,024 places each), no more.
    let (taken, punted) = (
        sum(&m, "mplsrouter_slow_path_packets_total", ""),
        sum(&m, "mplsrouter_worker_slow_path_packets_total", ""),
    );
    assert!(
        taken <= punted && punted - taken <= 2 * 1024,
        "every punted packet reached the slow path or waits in its queues:\n{m}"
    );

    let dec = tshark(
        &dir.path("in-out.pcap"),
        &[
            "eth.dst",
            "arp.opcode",
            "arp.dst.proto_ipv4",
            "icmp.type",
            "udp.srcport",
        ],
    );
    // Asked for once per retry interval while incomplete, then forwarded to at its MAC.
    let asks = dec
        .iter()
        .filter(|d| d.get("arp.opcode") == "1" && d.get("arp.dst.proto_ipv4") == "10.1.0.77")
        .count();
    assert!(asks >= 1, "{dec:?}");
    // At most one request per address per retry interval (500 ms), whatever the flood.
    let mut per_addr = std::collections::HashMap::<&str, usize>::new();
    for d in dec.iter().filter(|d| d.get("arp.opcode") == "1") {
        *per_addr.entry(d.get("arp.dst.proto_ipv4")).or_default() += 1;
    }
    let most = per_addr.values().copied().max().unwrap_or(0);
    assert!(
        most as f64 <= 1.0 + elapsed / 0.5,
        "{most} requests for one address in {elapsed:.1} s"
    );
    let to_host: Vec<_> = dec
        .iter()
        .filter(|d| d.get("udp.srcport") == "7777" && d.get("icmp.type").is_empty())
        .collect();
    assert!(!to_host.is_empty(), "nothing forwarded to the learned host");
    assert!(to_host
        .iter()
        .all(|d| d.get("eth.dst") == "02:77:00:00:00:77"));
    // ICMP still goes out during the flood: at least a burst of each, at most the rate.
    let count = |t: &str| dec.iter().filter(|d| d.get("icmp.type") == t).count() as f64;
    eprintln!(
        "{elapsed:.1} s: {} arp requests for the host, {} frames to it, {} time exceeded, {} echo replies; drops: {:?}",
        asks,
        to_host.len(),
        count("11"),
        count("0"),
        ["glean_throttled", "ttl_expired_throttled", "echo_throttled", "arp_throttled", "neighbor_incomplete", "no_route"]
            .map(|d| (d, drops(&m, d)))
    );
    let bound = ICMP_BURST + ICMP_RATE * elapsed;
    for (kind, t) in [("time exceeded", "11"), ("echo reply", "0")] {
        let n = count(t);
        assert!(
            n >= ICMP_BURST && n <= bound,
            "{n} {kind} in {elapsed:.1} s"
        );
    }
    assert_eq!(
        dec.iter().filter(|d| d.get("arp.opcode") == "2").count(),
        0,
        "no request was for the router"
    );
}

/// A route whose next hop never answers (10.1.0.88): once its ARP request is out, the
/// workers drop the route's traffic as `neighbor_incomplete` (the adjacency is marked),
/// and the next hop is asked for at most once per retry interval.
#[test]
fn traffic_through_an_unresolved_next_hop_is_not_punted_packet_by_packet() {
    let dir = TempDir::new("punt-nexthop");
    std::fs::write(dir.path("routes.yaml"), ROUTES).unwrap();
    let frames: Vec<Vec<u8>> = (0..4000u32)
        .flat_map(|i| {
            let (a, b) = ((i >> 8) as u8, i as u8);
            [udp([100, 0, a, b], 64, 1000), udp([200, 0, a, b], 64, 2000)]
        })
        .collect();
    write_pcap(&dir.path("in.pcap"), &frames).unwrap();
    let started = Instant::now();
    let r = LiveRouter::start(&config(&dir), 60.0);
    let deadline = Instant::now() + Duration::from_secs(40);
    let m = loop {
        let m = r.scrape();
        if drops(&m, "neighbor_incomplete") > 100_000 {
            break m;
        }
        assert!(
            Instant::now() < deadline,
            "not there yet:\n{m}\n{}",
            r.output()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let (status, out) = r.stop(Duration::from_secs(20));
    let elapsed = started.elapsed().as_secs_f64();
    assert!(status.success(), "{out}");
    assert!(
        out.contains("mbufs unaccounted for by the workers: 0"),
        "{out}"
    );
    assert_eq!(
        sum(&m, "mplsrouter_slow_path_queue_drops_total", ""),
        0,
        "{m}"
    );
    let punted = sum(&m, "mplsrouter_worker_slow_path_packets_total", "");
    let throttled = drops(&m, "glean_throttled");
    eprintln!(
        "{elapsed:.1} s: {punted} punted, {throttled} glean_throttled, {} neighbor_incomplete",
        drops(&m, "neighbor_incomplete")
    );
    let asks = tshark(
        &dir.path("in-out.pcap"),
        &["arp.opcode", "arp.dst.proto_ipv4"],
    )
    .iter()
    .filter(|d| d.get("arp.opcode") == "1" && d.get("arp.dst.proto_ipv4") == "10.1.0.88")
    .count();
    assert!(
        asks >= 1 && asks as f64 <= 1.0 + elapsed / 0.5,
        "{asks} requests for the next hop in {elapsed:.1} s"
    );
}
