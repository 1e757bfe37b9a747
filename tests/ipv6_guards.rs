//! IPv6 packets the router must never forward (RFC 8200, RFC 4291), and the rate limit
//! on the ICMPv6 errors it generates (RFC 4443 §2.4(f)), on the wire: the real binary on
//! net_pcap vdevs, the output pcaps decoded by tshark (an independent dissector), each
//! test packet told apart by its UDP destination port, and the router's exit summary
//! read for the reason each one was counted under.
#![forbid(unsafe_code)]

mod common;
mod live;

use std::net::Ipv6Addr;
use std::time::{Duration, Instant};

use common::{checksum, run_for, tshark, Decoded, TempDir};
use live::{sum, LiveRouter};
use net::wire::ethernet::{EthernetRepr, ETHERTYPE_IPV6};
use net::wire::ipv6::{Ipv6Repr, NH_UDP};
use traffic::write_pcap;

const ROUTES: &str = r#"
neighbors:
  - {ip: "2001:db8::7", mac: "02:00:00:00:00:07"}
  - {ip: "2001:db8:1::2", mac: "02:00:00:00:01:02"}
ipv6:
  - {prefix: "2001:db8:2::/48", via: "2001:db8:1::2"}
"#;

const ROUTER: [u8; 6] = [2, 0, 0, 0, 0, 1];
const HOST: [u8; 6] = [2, 0, 0, 0, 0, 7];
const BROADCAST: [u8; 6] = [0xff; 6];
/// An IPv6 multicast MAC (33:33 + the low 32 bits of ff02::1).
const ALL_NODES_MAC: [u8; 6] = [0x33, 0x33, 0, 0, 0, 1];

/// Two ports on pcap vdevs with IPv4 and IPv6 addresses: `in` replays `in.pcap` and
/// writes to `in-out.pcap`, `out` writes to `out.pcap`; `extra` is appended.
fn config(dir: &TempDir, extra: &str) -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let n = format!("{}x{k}", std::process::id());
    let cfg = format!(
        "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: mplsr-guard6-{n}}}\n\
         ports:\n\
         \x20 - {{name: in, vdev: \"net_pcap_gin{n},rx_pcap={d}/in.pcap,tx_pcap={d}/in-out.pcap\", mac: \"02:00:00:00:00:01\", addresses: [10.0.0.1/24, \"2001:db8::1/64\"]}}\n\
         \x20 - {{name: out, vdev: \"net_pcap_gout{n},tx_pcap={d}/out.pcap\", mac: \"02:00:00:00:01:01\", addresses: [10.0.1.1/24, \"2001:db8:1::1/64\"]}}\n\
         routes: routes.yaml\n\
         metrics_listen: 127.0.0.1:0\n\
         idle: {{backoff: {{}}}}\n{extra}",
        d = dir.0.display()
    );
    let p = dir.path("startup.yaml");
    std::fs::write(&p, cfg).unwrap();
    p
}

fn o(s: &str) -> [u8; 16] {
    s.parse::<Ipv6Addr>().unwrap().octets()
}

/// An Ethernet/IPv6/UDP frame to `dst_mac`, marked by its UDP destination port; the UDP
/// checksum is computed (RFC 8200 §8.1 pseudo-header) so every packet is valid but for
/// the property under test.
fn udp(dst_mac: [u8; 6], src: &str, dst: &str, hop: u8, port: u16) -> Vec<u8> {
    let (s, d) = (o(src), o(dst));
    let mut u = vec![0u8; 16];
    u[0..2].copy_from_slice(&40000u16.to_be_bytes());
    u[2..4].copy_from_slice(&port.to_be_bytes());
    u[4..6].copy_from_slice(&16u16.to_be_bytes());
    u[8..].copy_from_slice(b"guard6!!");
    let mut pseudo = Vec::new();
    pseudo.extend_from_slice(&s);
    pseudo.extend_from_slice(&d);
    pseudo.extend_from_slice(&(u.len() as u32).to_be_bytes());
    pseudo.extend_from_slice(&[0, 0, 0, NH_UDP]);
    pseudo.extend_from_slice(&u);
    let c = match checksum(&pseudo) {
        0 => 0xffff,
        c => c,
    };
    u[6..8].copy_from_slice(&c.to_be_bytes());
    let eth = EthernetRepr {
        dst: dst_mac,
        src: HOST,
        vlan: None,
        ethertype: ETHERTYPE_IPV6,
    };
    let ip = Ipv6Repr {
        src: s,
        dst: d,
        next_header: NH_UDP,
        hop_limit: hop,
        traffic_class: 0,
        flow_label: 0,
        payload_len: u.len(),
    };
    let mut f = vec![0u8; 14 + 40];
    eth.emit(&mut f).unwrap();
    ip.emit(&mut f[14..]).unwrap();
    f.extend_from_slice(&u);
    f
}

const FIELDS: &[&str] = &[
    "eth.dst",
    "ipv6.src",
    "ipv6.dst",
    "ipv6.hlim",
    "udp.dstport",
    "icmpv6.type",
    "icmpv6.code",
    "icmpv6.checksum.status",
];

/// Every UDP destination port seen in a decoded pcap (a quoted packet's included).
fn ports(frames: &[Decoded]) -> Vec<u16> {
    frames
        .iter()
        .flat_map(|f| f.list("udp.dstport"))
        .map(|p| p.parse().unwrap())
        .collect()
}

/// `reason=N` from the exit summary's `workers:` line (0 when absent).
fn worker_drop(stdout: &str, reason: &str) -> u64 {
    let line = stdout.lines().find(|l| l.starts_with("workers:"));
    let line = line.unwrap_or_else(|| panic!("no workers line:\n{stdout}"));
    let key = format!("{reason}=");
    line.split(|c: char| c.is_whitespace() || ",[]()".contains(c))
        .find_map(|w| w.strip_prefix(&key))
        .map_or(0, |v| v.parse().unwrap())
}

#[test]
fn never_forwarded_on_the_wire() {
    let dir = TempDir::new("guard6");
    std::fs::write(dir.path("routes.yaml"), ROUTES).unwrap();
    let cfg = config(&dir, "");
    let good = |port| udp(ROUTER, "2001:db8::7", "2001:db8:2::5", 64, port);
    // (port, frame, the reason it must be counted under)
    let bad: Vec<(u16, Vec<u8>, &str)> = vec![
        // RFC 4291 §2.5.6: a link-local source must not leave its link...
        (
            7001,
            udp(ROUTER, "fe80::7", "2001:db8:2::5", 64, 7001),
            "link_local_scope",
        ),
        // ... nor be forwarded to a link-local destination that is not the router's.
        (
            7002,
            udp(ROUTER, "2001:db8::7", "fe80::99", 64, 7002),
            "link_local_scope",
        ),
        // Multicast beyond link scope (site- and global-scope groups): not forwarded.
        (
            7003,
            udp(ROUTER, "2001:db8::7", "ff05::1:3", 64, 7003),
            "multicast",
        ),
        (
            7004,
            udp(ROUTER, "2001:db8::7", "ff0e::101", 64, 7004),
            "multicast",
        ),
        // RFC 4291 §2.5.2: the unspecified address never as the source of a forwarded
        // packet; §2.5.3: loopback never sent outside a node.
        (
            7005,
            udp(ROUTER, "::", "2001:db8:2::5", 64, 7005),
            "martian_address",
        ),
        (
            7006,
            udp(ROUTER, "::1", "2001:db8:2::5", 64, 7006),
            "martian_address",
        ),
        (
            7007,
            udp(ROUTER, "2001:db8::7", "::1", 64, 7007),
            "martian_address",
        ),
        // Routable packets in link-layer broadcast or multicast frames.
        (
            7008,
            udp(BROADCAST, "2001:db8::7", "2001:db8:2::5", 64, 7008),
            "l2_multicast",
        ),
        (
            7009,
            udp(ALL_NODES_MAC, "2001:db8::7", "2001:db8:2::5", 64, 7009),
            "l2_multicast",
        ),
    ];
    // Routable control packets around and between the bad ones.
    let mut frames = vec![good(6001)];
    let mut control = vec![6001u16];
    for (i, (_, f, _)) in bad.iter().enumerate() {
        frames.push(f.clone());
        let p = 6002 + i as u16;
        frames.push(good(p));
        control.push(p);
    }
    write_pcap(&dir.path("in.pcap"), &frames).unwrap();

    let out = run_for(&cfg, 1.5);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "router failed:\n{stdout}\n{stderr}");

    let fwd = tshark(&dir.path("out.pcap"), FIELDS);
    let back = tshark(&dir.path("in-out.pcap"), FIELDS);
    // The control packets left, routed (hop limit decremented, to the next hop's MAC).
    let mut got = ports(&fwd);
    got.sort_unstable();
    assert_eq!(got, control, "only the routable packets left: {fwd:?}");
    for f in &fwd {
        assert_eq!(f.get("eth.dst"), "02:00:00:00:01:02", "{f:?}");
        assert_eq!(f.get("ipv6.hlim"), "63", "{f:?}");
    }
    // None of the bad ones anywhere, not even quoted in an ICMPv6 error (RFC 4443
    // §2.4(e): no error for multicast or link-layer multicast packets).
    let echoed = ports(&back);
    for (p, _, _) in &bad {
        assert!(!echoed.contains(p), "{p} came back: {back:?}");
    }
    assert!(
        back.iter().all(|f| f.get("icmpv6.type").is_empty()),
        "no ICMPv6 error for any of them: {back:?}"
    );
    // Each counted under its reason, and nothing else dropped.
    let mut want = std::collections::BTreeMap::<&str, u64>::new();
    for (_, _, r) in &bad {
        *want.entry(r).or_default() += 1;
    }
    for (r, n) in &want {
        assert_eq!(worker_drop(&stdout, r), *n, "{r}:\n{stdout}");
    }
    assert!(
        stdout.contains("mbufs not returned to the pool: 0"),
        "{stdout}"
    );
}

/// The ICMPv6 errors of one rate-limit run: (type, quoted UDP port) of each message on
/// the wire, and the counters where the others went.
struct Burst {
    errors: Vec<(String, u16)>,
    rate_limited: u64,
    ttl_throttled: u64,
    unreachable_throttled: u64,
    /// Seconds from before the router started to after its last scrape: an upper bound
    /// on how long its token buckets refilled.
    elapsed: f64,
}

const SENT_EACH: u16 = 100;

/// Replays `SENT_EACH` hop-limit-1 packets and as many without a route, interleaved, in
/// one pcap (marked by UDP ports 10000.. and 20000..), under `extra` config.
fn burst(extra: &str) -> Burst {
    let dir = TempDir::new("icmp6rate");
    std::fs::write(dir.path("routes.yaml"), ROUTES).unwrap();
    let cfg = config(&dir, extra);
    let frames: Vec<Vec<u8>> = (0..SENT_EACH)
        .flat_map(|i| {
            [
                udp(ROUTER, "2001:db8::7", "2001:db8:2::5", 1, 10000 + i),
                udp(ROUTER, "2001:db8::7", "2001:db8:99::5", 64, 20000 + i),
            ]
        })
        .collect();
    write_pcap(&dir.path("in.pcap"), &frames).unwrap();
    let t0 = Instant::now();
    let r = LiveRouter::start(&cfg, 30.0);
    let n = frames.len() as u64;
    // Settled: every frame received, and the slow path has accounted for all it got.
    let m = r.scrape_until("all frames handled", Duration::from_secs(15), |m| {
        let got = sum(m, "mplsrouter_slow_path_packets_total", "")
            + sum(m, "mplsrouter_slow_path_generated_total", "");
        let went = sum(m, "mplsrouter_slow_path_handled_total", "")
            + sum(m, "mplsrouter_slow_path_transmitted_total", "")
            + sum(m, "mplsrouter_slow_path_dropped_total", "");
        sum(m, "mplsrouter_worker_rx_packets_total", "") == n && got == went
    });
    let elapsed = t0.elapsed().as_secs_f64();
    let (status, out) = r.stop(Duration::from_secs(20));
    assert!(status.success(), "{out}");
    let drops = |r: &str| sum(&m, "mplsrouter_drops_total", &format!("reason=\"{r}\""));
    let rate_limited = sum(&m, "mplsrouter_icmp_rate_limited_total", "");
    assert_eq!(
        rate_limited,
        sum(
            &m,
            "mplsrouter_slow_path_dropped_total",
            "reason=\"icmp_rate_limited\""
        ),
        "{m}"
    );
    assert_eq!(sum(&m, "mplsrouter_arp_held_packets", ""), 0, "{m}");
    let back = tshark(&dir.path("in-out.pcap"), FIELDS);
    let errors: Vec<_> = back
        .iter()
        .filter(|f| !f.get("icmpv6.type").is_empty())
        .map(|f| {
            assert_eq!(f.get("icmpv6.checksum.status"), "1", "{f:?}");
            assert_eq!(f.get("eth.dst"), "02:00:00:00:00:07", "{f:?}");
            assert_eq!(f.get("ipv6.src"), "2001:db8::1,2001:db8::7", "{f:?}");
            let quoted = ports(std::slice::from_ref(f));
            assert_eq!(quoted.len(), 1, "quotes the packet: {f:?}");
            (f.get("icmpv6.type").to_string(), quoted[0])
        })
        .collect();
    assert!(
        ports(&tshark(&dir.path("out.pcap"), FIELDS)).is_empty(),
        "none forwarded"
    );
    let b = Burst {
        errors,
        rate_limited,
        ttl_throttled: drops("ttl_expired_throttled"),
        unreachable_throttled: drops("unreachable_throttled"),
        elapsed,
    };
    eprintln!(
        "{} errors out, rate limited {}, throttled ttl {} unreachable {}, {:.2} s",
        b.errors.len(),
        b.rate_limited,
        b.ttl_throttled,
        b.unreachable_throttled,
        b.elapsed
    );
    b
}

/// Whether each error answers the right packet: time exceeded (3, code 0) for ports
/// 10000.., destination unreachable (1) for 20000...
fn check_kinds(b: &Burst) {
    for (t, p) in &b.errors {
        let want = if *p < 20000 { "3" } else { "1" };
        assert_eq!(t, want, "port {p}");
    }
}

/// The slow path's limiter (`icmp_rate_limit`, one bucket for every ICMPv6 error): with
/// the worker budgets opened wide, every packet reaches it and all but `burst` plus the
/// refill are refused, counted as rate limited.
#[test]
fn icmpv6_errors_rate_limited_by_the_slow_path() {
    let (rate, cap) = (1.0, 5);
    let b = burst(&format!(
        "icmp_rate_limit: {{per_second: {rate}, burst: {cap}}}\n\
         punt: {{ttl_expired_pps: 100000, ttl_expired_burst: 1000, unreachable_pps: 100000, unreachable_burst: 1000}}\n"
    ));
    check_kinds(&b);
    let sent = b.errors.len() as u64;
    let bound = cap + (rate * b.elapsed).ceil() as u64;
    assert!(
        (1..=bound).contains(&sent),
        "{sent} errors out, at most {bound} allowed ({:.1} s)",
        b.elapsed
    );
    assert_eq!((b.ttl_throttled, b.unreachable_throttled), (0, 0));
    assert_eq!(
        sent + b.rate_limited,
        2 * SENT_EACH as u64,
        "the rest refused"
    );
}

/// The workers' punt budgets, which by default follow `icmp_rate_limit` (one per kind
/// of error): the excess never reaches the slow path, counted as throttled per kind, and
/// the errors on the wire stay within the configured rate.
#[test]
fn icmpv6_errors_throttled_by_the_punt_budgets() {
    let (rate, cap) = (1.0, 5);
    let b = burst(&format!(
        "icmp_rate_limit: {{per_second: {rate}, burst: {cap}}}\n"
    ));
    check_kinds(&b);
    let sent = b.errors.len() as u64;
    let bound = cap + (rate * b.elapsed).ceil() as u64;
    assert!(
        (1..=bound).contains(&sent),
        "{sent} errors out, at most {bound} allowed ({:.1} s)",
        b.elapsed
    );
    let each = SENT_EACH as u64;
    // Each kind's budget admits at most its burst plus the refill; the rest throttled.
    for t in [b.ttl_throttled, b.unreachable_throttled] {
        assert!(t >= each - bound && t < each, "{t} throttled of {each}");
    }
    assert_eq!(
        sent + b.rate_limited + b.ttl_throttled + b.unreachable_throttled,
        2 * each,
        "every packet answered or counted"
    );
}
