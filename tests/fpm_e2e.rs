//! FPM end to end through the real binary: a client written here (the frames come from
//! `fpm::encode`, the same shapes zebra sends) programs routes and label entries over
//! TCP; real Linux hosts in network namespaces send traffic through the router's
//! af_packet ports and tcpdump records what leaves; tshark decodes it. Then the session
//! drops (routes held, then withdrawn after the hold time), a reconnect resyncs (what is
//! not resent is swept), and bad input is counted by reason while forwarding goes on.
//!
//! Needs root (as CI runs); skipped with a message otherwise. The router, the FPM
//! client and the scrapes run in the router's namespace (`ip netns exec`), because its
//! FPM and metrics sockets live there.
#![forbid(unsafe_code)]

mod common;

use std::io::Write;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use common::{bin, ip_in, is_root, sh, tshark, Launch, Router, TempDir};
use fpm::encode::{self, path, path6};
use fpm::msg::{Key, NexthopBody, Path, RouteBody};
use traffic::FrameSpec;

fn ip(a: u8, b: u8, c: u8, d: u8) -> u32 {
    u32::from_be_bytes([a, b, c, d])
}

/// Three namespaces: host A - router - host B, removed (and every child stopped) on drop.
struct Net {
    r: String,
    a: String,
    b: String,
    children: Vec<Child>,
    _ns: common::Netns,
}

impl Net {
    fn new() -> Net {
        Net::tagged("fpm")
    }

    /// The same with namespaces named after `tag` (one per test of this binary).
    fn tagged(tag: &str) -> Net {
        let mut ns = common::Netns::new(tag);
        let (r, a, b) = (ns.add("r"), ns.add("a"), ns.add("b"));
        let net = Net {
            r,
            a,
            b,
            children: Vec::new(),
            _ns: ns,
        };
        net.link(&net.a, "ha", "02:00:00:00:00:02", "ri", "02:00:00:00:00:01");
        net.link(&net.b, "hb", "02:00:00:00:01:02", "ro", "02:00:00:00:01:01");
        ip_in(&net.a, &["addr", "add", "10.0.0.2/24", "dev", "ha"]);
        ip_in(&net.b, &["addr", "add", "10.0.1.2/24", "dev", "hb"]);
        ip_in(&net.b, &["addr", "add", "10.0.1.3/24", "dev", "hb"]);
        net
    }

    fn link(&self, host: &str, h: &str, hmac: &str, r: &str, rmac: &str) {
        let o = common::VethOpts {
            macs: Some((hmac, rmac)),
            ..Default::default()
        };
        common::veth(host, h, &self.r, r, o);
    }

    fn spawn(&mut self, ns: &str, args: &[&str], stdin: bool, log: &std::path::Path) -> usize {
        let c = Command::new("ip")
            .args(["netns", "exec", ns])
            .args(args)
            .stdin(if stdin { Stdio::piped() } else { Stdio::null() })
            .stdout(std::fs::File::create(log).unwrap())
            .stderr(std::fs::File::create(log.with_extension("err")).unwrap())
            .spawn()
            .unwrap();
        self.children.push(c);
        self.children.len() - 1
    }

    /// Runs a python3 snippet in `ns` to completion.
    fn python(&self, ns: &str, code: &str, args: &[&str]) -> String {
        let mut a = vec!["ip", "netns", "exec", ns, "python3", "-c", code];
        a.extend_from_slice(args);
        sh(&a)
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for c in &mut self.children {
            common::router::terminate(c, Duration::from_secs(10));
        }
    }
}

/// Pipes bytes from stdin to the router's FPM port (retrying until it listens).
const RELAY: &str = "import os,socket,sys,time
for i in range(200):
    try:
        s=socket.create_connection(('127.0.0.1',2620)); break
    except OSError: time.sleep(0.05)
print('connected', flush=True)
while True:
    b=os.read(0,65536)
    if not b: break
    try: s.sendall(b)
    except OSError: break
s.close()";

/// Sends the hex frames of a file on an interface.
const SEND: &str = "import socket,sys
s=socket.socket(socket.AF_PACKET,socket.SOCK_RAW); s.bind((sys.argv[1],0))
for l in open(sys.argv[2]):
    s.send(bytes.fromhex(l.strip()))";

const SCRAPE: &str = "import urllib.request,sys
print(urllib.request.urlopen(sys.argv[1]).read().decode())";

/// One FPM connection: the relay process and its stdin.
struct Fpm {
    stdin: Option<ChildStdin>,
}

impl Fpm {
    fn connect(net: &mut Net, dir: &TempDir, n: usize) -> Fpm {
        let log = dir.path(&format!("relay{n}.log"));
        let i = net.spawn(&net.r.clone(), &["python3", "-u", "-c", RELAY], true, &log);
        let stdin = net.children[i].stdin.take();
        wait_for(
            || {
                std::fs::read_to_string(&log)
                    .unwrap_or_default()
                    .contains("connected")
            },
            "the FPM relay to connect",
        );
        Fpm { stdin }
    }
    fn send(&mut self, msgs: &[Vec<u8>]) {
        let s = self.stdin.as_mut().unwrap();
        for m in msgs {
            s.write_all(&encode::frame(std::slice::from_ref(m)))
                .unwrap();
        }
        s.flush().unwrap();
    }
    fn raw(&mut self, bytes: &[u8]) {
        let s = self.stdin.as_mut().unwrap();
        s.write_all(bytes).unwrap();
        s.flush().unwrap();
    }
    /// Closes the connection.
    fn close(mut self) {
        self.stdin.take();
    }
}

fn wait_for(mut ok: impl FnMut() -> bool, what: &str) {
    let start = Instant::now();
    while !ok() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn v4(a: u8, b: u8, c: u8, d: u8, len: u8) -> Key {
    Key::Ipv4 {
        addr: ip(a, b, c, d),
        len,
    }
}

const GW1: [u8; 4] = [10, 0, 1, 2];
const GW2: [u8; 4] = [10, 0, 1, 3];

fn gw(g: [u8; 4]) -> u32 {
    u32::from_be_bytes(g)
}

/// The first FPM session's table: push, ECMP, a next-hop group, swap, PHP,
/// pop-and-lookup, and a prefix the routes file also names.
fn first_table() -> Vec<Vec<u8>> {
    let p = |g, labels: &[u32], w| path(gw(g), 0, labels, w);
    vec![
        encode::route(
            v4(198, 51, 100, 0, 24),
            Some(&RouteBody::Paths(vec![p(GW1, &[100, 200], 1)])),
        ),
        encode::route(
            v4(192, 0, 2, 0, 24),
            Some(&RouteBody::Paths(vec![
                p(GW1, &[300], 1),
                p(GW2, &[301], 1),
            ])),
        ),
        encode::nexthop(
            7,
            Some(&NexthopBody::Single(Path {
                gateway: Some(gw(GW2).into()),
                ifindex: 77,
                labels: vec![400],
                weight: 1,
            })),
        ),
        encode::route(v4(100, 64, 0, 0, 10), Some(&RouteBody::Group(7))),
        encode::route(
            v4(203, 0, 113, 0, 24),
            Some(&RouteBody::Paths(vec![p(GW1, &[999], 1)])),
        ),
        encode::route(
            Key::Label(1000),
            Some(&RouteBody::Paths(vec![p(GW1, &[2000], 1)])),
        ),
        encode::route(
            Key::Label(1001),
            Some(&RouteBody::Paths(vec![p(GW1, &[3], 1)])),
        ),
        encode::route(
            Key::Label(1002),
            Some(&RouteBody::Paths(vec![Path {
                gateway: None,
                ifindex: 1,
                labels: vec![],
                weight: 1,
            }])),
        ),
    ]
}

fn frame(id: u16, dst: [u8; 4], labels: &[u32]) -> Vec<u8> {
    FrameSpec {
        dst_mac: [2, 0, 0, 0, 0, 1],
        src_mac: [2, 0, 0, 0, 0, 2],
        labels: labels.iter().map(|&l| (l, 0, 64)).collect(),
        src_ip: [10, 0, 0, 2],
        dst_ip: dst,
        src_port: id,
        ..FrameSpec::default()
    }
    .build()
}

/// One round of test frames; `base` + offset identifies each (UDP source port).
fn round(base: u16) -> Vec<Vec<u8>> {
    let mut f = vec![
        frame(base, [198, 51, 100, 1], &[]),
        frame(base + 1, [203, 0, 113, 1], &[]),
        frame(base + 2, [100, 64, 0, 1], &[]),
        frame(base + 3, [198, 51, 100, 2], &[1000]),
        frame(base + 4, [198, 51, 100, 3], &[1001]),
        frame(base + 5, [198, 51, 100, 4], &[1002]),
    ];
    // ECMP: 16 flows to 192.0.2.0/24.
    f.extend((0..16).map(|i| frame(base + 10 + i, [192, 0, 2, 1 + i as u8], &[])));
    f
}

fn send_round(net: &Net, dir: &TempDir, base: u16) {
    let p = dir.path(&format!("round{base}.hex"));
    let text: String = round(base)
        .iter()
        .map(|f| f.iter().map(|b| format!("{b:02x}")).collect::<String>() + "\n")
        .collect();
    std::fs::write(&p, text).unwrap();
    net.python(&net.a, SEND, &["ha", p.to_str().unwrap()]);
}

/// What left the router for each source port: the label stack (empty for IPv4).
type Seen = std::collections::BTreeMap<u16, Vec<String>>;

fn seen(pcap: &std::path::Path) -> Seen {
    tshark(pcap, &["udp.srcport", "mpls.label", "eth.src"])
        .into_iter()
        .filter(|d| d.get("eth.src") == "02:00:00:00:01:01" && !d.get("udp.srcport").is_empty())
        .map(|d| (d.get("udp.srcport").parse().unwrap(), d.list("mpls.label")))
        .collect()
}

fn labels(v: &[u32]) -> Vec<String> {
    v.iter().map(|l| l.to_string()).collect()
}

/// The value of the series of `name` whose labels include every `k="v"` of `labels`.
fn metric(text: &str, name: &str, labels: &[&str]) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
        .find(|l| labels.iter().all(|kv| l.contains(kv)))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
        .unwrap_or(-1.0)
}

const FPM_LABELS: &[&str] = &["source=\"fpm\"", "kind=\"label\""];
const FPM_IPV4: &[&str] = &["source=\"fpm\"", "kind=\"ipv4\""];

#[test]
fn fpm_routes_forward_resync_sweeps_hold_withdraws_and_bad_input_is_counted() {
    if !is_root() {
        eprintln!("skipped: needs root for network namespaces");
        return;
    }
    let dir = TempDir::new("fpm-e2e");
    let mut net = Net::new();
    let routes = "neighbors:\n  - {ip: 10.0.1.2, mac: \"02:00:00:00:01:02\"}\n  - {ip: 10.0.1.3, mac: \"02:00:00:00:01:02\"}\n\
                  ipv4:\n  - {prefix: 203.0.113.0/24, via: 10.0.1.2, push: [777]}\n";
    std::fs::write(dir.path("routes.yaml"), routes).unwrap();
    let cfg = format!(
        "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: {r}}}\n\
         ports:\n\
         \x20 - {{name: in, vdev: \"net_af_packet_{r}0,iface=ri\", addresses: [10.0.0.1/24]}}\n\
         \x20 - {{name: out, vdev: \"net_af_packet_{r}1,iface=ro\", addresses: [10.0.1.1/24]}}\n\
         routes: {d}/routes.yaml\nmetrics_listen: 127.0.0.1:9551\nidle: {{backoff: {{}}}}\n\
         fpm: {{listen: 127.0.0.1:2620, hold_time_s: 2, resync_settle_ms: 300, resync_min_s: 0, publish_interval_ms: 5, interfaces: {{\"77\": out}}}}\n",
        r = net.r,
        d = dir.0.display()
    );
    std::fs::write(dir.path("startup.yaml"), cfg).unwrap();
    let log = dir.path("router.log");
    let cfg_path = dir.path("startup.yaml");
    let bin = bin();
    let launch = Launch::new(&cfg_path, 120.0)
        .netns(&net.r)
        .log(log.clone())
        .ready(Some("fpm: listening on"), Duration::from_secs(20));
    // Declared after `net`, so dropped (stopped) before its namespaces go.
    let mut router = Router::start(&launch);
    let out = || std::fs::read_to_string(&log).unwrap_or_default();
    let pcap = dir.path("out.pcap");
    let tcpdump = net.spawn(
        &net.b.clone(),
        &[
            "tcpdump",
            "-i",
            "hb",
            "-U",
            "-p",
            "-w",
            pcap.to_str().unwrap(),
        ],
        false,
        &dir.path("tcpdump.log"),
    );
    wait_for(
        || {
            std::fs::read_to_string(dir.path("tcpdump.err"))
                .unwrap_or_default()
                .contains("listening on")
        },
        "tcpdump",
    );
    let rns = net.r.clone();
    let scrape = || {
        sh(&[
            "ip",
            "netns",
            "exec",
            &rns,
            "python3",
            "-c",
            SCRAPE,
            "http://127.0.0.1:9551/metrics",
        ])
    };

    // 1. The first session installs the table; every kind of entry forwards.
    let mut fpm = Fpm::connect(&mut net, &dir, 1);
    fpm.send(&first_table());
    wait_for(
        || metric(&scrape(), "mplsrouter_fib_entries_by_source", FPM_LABELS) == 3.0,
        "the FPM labels",
    );
    let m = scrape();
    assert_eq!(
        metric(&m, "mplsrouter_fib_entries_by_source", FPM_IPV4),
        3.0,
        "{m}"
    );
    assert_eq!(
        metric(&m, "mplsrouter_fpm_overridden", &["kind=\"ipv4\""]),
        1.0,
        "{m}"
    );
    send_round(&net, &dir, 1000);

    // 1b. The routes file stops naming 203.0.113.0/24: the FPM route comes back; then
    // the file names it again and wins again.
    let reloads = |o: &str| o.matches("reload: generation").count();
    let before = reloads(&out());
    let without = routes.replace(
        "ipv4:\n  - {prefix: 203.0.113.0/24, via: 10.0.1.2, push: [777]}\n",
        "",
    );
    assert_ne!(without, routes);
    std::fs::write(dir.path("routes.yaml"), &without).unwrap();
    wait_for(
        || reloads(&out()) > before,
        "the reload without 203.0.113.0/24",
    );
    send_round(&net, &dir, 1500);
    std::fs::write(dir.path("routes.yaml"), routes).unwrap();
    wait_for(
        || reloads(&out()) > before + 1,
        "the reload with 203.0.113.0/24",
    );

    // 2. zebra restarts: a new connection resends only part of the table.
    fpm.close();
    wait_for(|| out().contains("fpm: disconnected"), "the disconnect");
    let mut fpm = Fpm::connect(&mut net, &dir, 2);
    fpm.send(&[
        encode::route(
            v4(198, 51, 100, 0, 24),
            Some(&RouteBody::Paths(vec![path(gw(GW1), 0, &[101], 1)])),
        ),
        encode::route(
            Key::Label(1000),
            Some(&RouteBody::Paths(vec![path(gw(GW1), 0, &[2000], 1)])),
        ),
    ]);
    wait_for(
        || out().contains("fpm: resync done"),
        "the end of the resync",
    );
    wait_for(
        || metric(&scrape(), "mplsrouter_fib_entries_by_source", FPM_LABELS) == 1.0,
        "the sweep",
    );
    send_round(&net, &dir, 2000);

    // 3. Bad input: each is skipped and counted; the session goes on, then a frame with
    // a wrong version closes it, and the routes are held.
    let deep: Vec<u32> = (500..520).collect();
    let mut truncated = encode::route(v4(10, 99, 0, 0, 16), None);
    truncated[0] = 200;
    fpm.send(&[
        truncated,
        encode::route(
            v4(10, 98, 0, 0, 16),
            Some(&RouteBody::Paths(vec![path(gw(GW1), 0, &deep, 1)])),
        ),
        encode::route(
            Key::Label(5),
            Some(&RouteBody::Paths(vec![path(gw(GW1), 0, &[], 1)])),
        ),
        encode::route(
            v4(10, 97, 0, 0, 16),
            Some(&RouteBody::Paths(vec![path(
                ip(192, 168, 99, 1),
                0,
                &[],
                1,
            )])),
        ),
    ]);
    fpm.raw(&[2, 1, 0, 8, 0, 0, 0, 0]);
    wait_for(
        || out().contains("fpm: disconnected"),
        "the close after a bad frame",
    );
    let m = scrape();
    for reason in [
        "truncated_netlink",
        "label_depth",
        "reserved_in_label",
        "no_port",
        "bad_version",
    ] {
        assert_eq!(
            metric(
                &m,
                "mplsrouter_fpm_errors_total",
                &[&format!("reason=\"{reason}\"")]
            ),
            1.0,
            "{reason}:\n{m}"
        );
    }
    assert!(
        m.contains("mplsrouter_fpm_session_state{state=\"holding\"} 1"),
        "{m}"
    );
    send_round(&net, &dir, 3000);
    fpm.close();

    // 4. No reconnect: after the hold time every FPM route is withdrawn.
    wait_for(
        || out().contains("fpm: hold time expired"),
        "the hold time to expire",
    );
    wait_for(
        || metric(&scrape(), "mplsrouter_fib_entries_by_source", FPM_IPV4) == 0.0,
        "the withdrawal",
    );
    send_round(&net, &dir, 4000);
    let stats = sh(&[
        "ip",
        "netns",
        "exec",
        &net.r,
        bin.to_str().unwrap(),
        "stats",
        "--url",
        "http://127.0.0.1:9551/metrics",
    ]);
    assert!(stats.contains("FPM: session idle, 2 connects"), "{stats}");
    assert!(stats.contains("1 hold-time withdrawals"), "{stats}");
    // The last frame out is the file's route of the last round; wait until tcpdump has
    // it (bounded: the assertions below say what is missing).
    let start = Instant::now();
    while !seen(&pcap).contains_key(&4001) && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(200));
    common::stop(&mut net.children[tcpdump]);
    router.stop();
    let s = seen(&pcap);
    let at = |id: u16| s.get(&id).cloned();

    // Session 1: push two labels; the file's 203.0.113.0/24 wins; NHG push via ifindex
    // 77; swap; PHP; pop-and-lookup then push; ECMP over both next hops.
    assert_eq!(at(1000), Some(labels(&[100, 200])), "{s:?}");
    assert_eq!(at(1001), Some(labels(&[777])));
    assert_eq!(at(1002), Some(labels(&[400])));
    assert_eq!(at(1003), Some(labels(&[2000])));
    assert_eq!(at(1004), Some(vec![]));
    assert_eq!(at(1005), Some(labels(&[100, 200])));
    let ecmp: std::collections::BTreeSet<_> = (1010..1026).filter_map(at).collect();
    assert_eq!(
        ecmp,
        [labels(&[300]), labels(&[301])].into_iter().collect(),
        "{s:?}"
    );
    // While the file did not name 203.0.113.0/24, FPM's route for it forwarded.
    assert_eq!(at(1501), Some(labels(&[999])), "{s:?}");
    assert_eq!(at(1500), Some(labels(&[100, 200])));
    // Session 2 after the resync: changed route, kept swap; the rest swept.
    assert_eq!(at(2000), Some(labels(&[101])));
    assert_eq!(at(2001), Some(labels(&[777])));
    assert_eq!(at(2003), Some(labels(&[2000])));
    for id in [2002, 2004, 2005] {
        assert_eq!(at(id), None, "{id} was swept: {s:?}");
    }
    assert!((2010..2026).all(|i| at(i).is_none()), "{s:?}");
    // Held after the bad frame closed the session: still forwarding.
    assert_eq!(at(3000), Some(labels(&[101])));
    assert_eq!(at(3003), Some(labels(&[2000])));
    // After the hold time: only the file's route.
    assert_eq!(at(4001), Some(labels(&[777])));
    for id in [4000, 4002, 4003, 4004, 4005] {
        assert_eq!(at(id), None, "{id} was withdrawn: {s:?}");
    }
    let o = out();
    assert!(o.contains("fpm: zebra connected"), "{o}");
    assert!(
        o.contains("fpm: hold time expired, 2 routes withdrawn"),
        "{o}"
    );
}

/// `2001:db8:N::/48`'s address `2001:db8:N::h`, as bytes.
fn v6addr(n: u16, h: u8) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[..6].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8, (n >> 8) as u8, n as u8]);
    a[15] = h;
    a
}

fn p6(n: u16) -> Key {
    Key::Ipv6 {
        addr: u128::from_be_bytes(v6addr(n, 0)),
        len: 48,
    }
}

/// 2001:db8:1::2, the IPv6 neighbour behind port `out`.
fn gw6() -> u128 {
    u128::from_be_bytes(v6addr(1, 2))
}

/// `::ffff:10.0.1.2`: how zebra names 6PE's IPv4 next hop.
fn mapped_gw1() -> u128 {
    0xffff << 32 | gw(GW1) as u128
}

fn frame6(id: u16, dst: [u8; 16], labels: &[u32]) -> Vec<u8> {
    traffic::Frame6Spec {
        dst_mac: [2, 0, 0, 0, 0, 1],
        src_mac: [2, 0, 0, 0, 0, 2],
        labels: labels.iter().map(|&l| (l, 0, 64)).collect(),
        src_ip: v6addr(0, 2),
        dst_ip: dst,
        src_port: id,
        ..Default::default()
    }
    .build()
}

/// One IPv6 round; `base` + offset identifies each frame (UDP source port).
fn round6(base: u16) -> Vec<Vec<u8>> {
    let mut f = vec![
        frame6(base, v6addr(0x100, 1), &[]),
        frame6(base + 1, v6addr(0x600, 1), &[]),
        frame6(base + 2, v6addr(0x300, 1), &[]),
        frame6(base + 3, v6addr(0x700, 1), &[]),
        frame6(base + 4, v6addr(0x100, 2), &[1000]),
        frame6(base + 5, v6addr(0x100, 3), &[1001]),
        frame6(base + 6, v6addr(0xf, 1), &[]),
    ];
    f.extend((0..16).map(|i| frame6(base + 10 + i, v6addr(0x200, 1 + i as u8), &[])));
    f
}

fn send_round6(net: &Net, dir: &TempDir, base: u16) {
    let p = dir.path(&format!("round6-{base}.hex"));
    let text: String = round6(base)
        .iter()
        .map(|f| f.iter().map(|b| format!("{b:02x}")).collect::<String>() + "\n")
        .collect();
    std::fs::write(&p, text).unwrap();
    net.python(&net.a, SEND, &["ha", p.to_str().unwrap()]);
}

/// IPv6 frames that left the router: source port -> (labels, IPv6 destination, MAC).
type Seen6 = std::collections::BTreeMap<u16, (Vec<String>, String, String)>;

fn seen6(pcap: &std::path::Path) -> Seen6 {
    tshark(
        pcap,
        &[
            "udp.srcport",
            "mpls.label",
            "eth.src",
            "eth.dst",
            "ipv6.dst",
        ],
    )
    .into_iter()
    .filter(|d| d.get("eth.src") == "02:00:00:00:01:01" && !d.get("udp.srcport").is_empty())
    .map(|d| {
        let v = (
            d.list("mpls.label"),
            d.get("ipv6.dst").to_string(),
            d.get("eth.dst").to_string(),
        );
        (d.get("udp.srcport").parse().unwrap(), v)
    })
    .collect()
}

/// A number under `key` anywhere in `show fpm --json`.
fn fpm_field(v: &serde_json::Value, key: &str) -> Option<u64> {
    match v {
        serde_json::Value::Object(m) => m
            .get(key)
            .and_then(|x| x.as_u64())
            .or_else(|| m.values().find_map(|x| fpm_field(x, key))),
        _ => None,
    }
}

/// IPv6 over FPM through the real binary: native routes via an IPv6 neighbour, 6PE via
/// `::ffff:10.0.1.2` with a label, a next-hop group, ECMP over an IPv6 and a 6PE member,
/// a blackhole, label entries via IPv6 (swap, PHP exposing IPv6), the routes file's
/// `ipv6:` entry winning; `show fpm` counts per family; a new session resyncs (what is
/// not resent is swept) and a delete withdraws. tshark decodes what left.
#[test]
fn fpm_ipv6_routes_native_6pe_ecmp_labels_forward_and_resync_sweeps() {
    if !is_root() {
        eprintln!("skipped: needs root for network namespaces");
        return;
    }
    let dir = TempDir::new("fpm-e2e6");
    let mut net = Net::tagged("fpm6");
    let routes = "neighbors:\n  - {ip: 10.0.1.2, mac: \"02:00:00:00:01:02\"}\n  \
                  - {ip: \"2001:db8:1::2\", mac: \"02:00:00:00:01:02\"}\n\
                  ipv6:\n  - {prefix: \"2001:db8:f::/48\", via: \"2001:db8:1::2\", push: [777]}\n";
    std::fs::write(dir.path("routes.yaml"), routes).unwrap();
    let cfg = format!(
        "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: {r}}}\n\
         ports:\n\
         \x20 - {{name: in, vdev: \"net_af_packet_{r}0,iface=ri\", addresses: [10.0.0.1/24, \"2001:db8::1/64\"]}}\n\
         \x20 - {{name: out, vdev: \"net_af_packet_{r}1,iface=ro\", addresses: [10.0.1.1/24, \"2001:db8:1::1/64\"]}}\n\
         routes: {d}/routes.yaml\nmetrics_listen: 127.0.0.1:9551\nidle: {{backoff: {{}}}}\n\
         fpm: {{listen: 127.0.0.1:2620, hold_time_s: 2, resync_settle_ms: 300, resync_min_s: 0, publish_interval_ms: 5, interfaces: {{\"77\": out}}}}\n",
        r = net.r,
        d = dir.0.display()
    );
    std::fs::write(dir.path("startup.yaml"), cfg).unwrap();
    let log = dir.path("router.log");
    let launch = Launch::new(&dir.path("startup.yaml"), 120.0)
        .netns(&net.r)
        .log(log.clone())
        .ready(Some("fpm: listening on"), Duration::from_secs(20));
    let mut router = Router::start(&launch);
    let out = || std::fs::read_to_string(&log).unwrap_or_default();
    let pcap = dir.path("out6.pcap");
    let tcpdump = net.spawn(
        &net.b.clone(),
        &[
            "tcpdump",
            "-i",
            "hb",
            "-U",
            "-p",
            "-w",
            pcap.to_str().unwrap(),
        ],
        false,
        &dir.path("tcpdump.log"),
    );
    wait_for(
        || {
            std::fs::read_to_string(dir.path("tcpdump.err"))
                .unwrap_or_default()
                .contains("listening on")
        },
        "tcpdump",
    );
    let sock = router.control_socket();
    let show_fpm = || -> serde_json::Value {
        let o = Command::new(bin())
            .args(["show", "fpm", "--json", "--socket", sock.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };

    // 1. The first session.
    let mut fpm = Fpm::connect(&mut net, &dir, 1);
    fpm.send(&[
        encode::route(
            p6(0x100),
            Some(&RouteBody::Paths(vec![path6(gw6(), 0, &[], 1)])),
        ),
        encode::route(
            p6(0x600),
            Some(&RouteBody::Paths(vec![path6(mapped_gw1(), 0, &[600], 1)])),
        ),
        encode::nexthop(
            7,
            Some(&NexthopBody::Single(path6(gw6(), 77, &[300, 301], 1))),
        ),
        encode::route(p6(0x300), Some(&RouteBody::Group(7))),
        encode::route(
            p6(0x200),
            Some(&RouteBody::Paths(vec![
                path6(gw6(), 0, &[201], 1),
                path(gw(GW1), 0, &[202], 1),
            ])),
        ),
        encode::route(p6(0x700), Some(&RouteBody::Drop)),
        encode::route(
            p6(0xf),
            Some(&RouteBody::Paths(vec![path6(gw6(), 0, &[999], 1)])),
        ),
        encode::route(
            Key::Label(1000),
            Some(&RouteBody::Paths(vec![path6(gw6(), 0, &[2000], 1)])),
        ),
        encode::route(
            Key::Label(1001),
            Some(&RouteBody::Paths(vec![path6(gw6(), 0, &[3], 1)])),
        ),
    ]);
    wait_for(
        || fpm_field(&show_fpm(), "ipv6_routes") == Some(5),
        "5 FPM IPv6 routes in show fpm",
    );
    let v = show_fpm();
    assert_eq!(fpm_field(&v, "overridden_ipv6_routes"), Some(1), "{v}");
    // `show routes` names each IPv6 route's source: FPM's, and the file's where it wins.
    let source = |addr: &str| -> String {
        let o = Command::new(bin())
            .args(["show", "routes", addr, "--json", "--socket"])
            .arg(&sock)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v.pointer("/routes/0/source")
            .and_then(|s| s.as_str())
            .unwrap_or_else(|| panic!("no source in {v}"))
            .to_string()
    };
    assert_eq!(source("2001:db8:100::5"), "fpm");
    assert_eq!(
        source("2001:db8:f::5"),
        "yaml",
        "the routes file overrides FPM"
    );
    assert_eq!(fpm_field(&v, "labels"), Some(2), "{v}");
    assert_eq!(fpm_field(&v, "ipv4_routes"), Some(0), "{v}");
    let m = sh(&[
        "ip",
        "netns",
        "exec",
        &net.r,
        "python3",
        "-c",
        SCRAPE,
        "http://127.0.0.1:9551/metrics",
    ]);
    assert_eq!(
        metric(
            &m,
            "mplsrouter_fib_entries_by_source",
            &["source=\"fpm\"", "kind=\"ipv6\""]
        ),
        5.0,
        "{m}"
    );
    send_round6(&net, &dir, 1000);

    // 2. A new session resends only 2001:db8:100::/48 (now pushing 101) and label 1000.
    fpm.close();
    wait_for(|| out().contains("fpm: disconnected"), "the disconnect");
    let mut fpm = Fpm::connect(&mut net, &dir, 2);
    fpm.send(&[
        encode::route(
            p6(0x100),
            Some(&RouteBody::Paths(vec![path6(gw6(), 0, &[101], 1)])),
        ),
        encode::route(
            Key::Label(1000),
            Some(&RouteBody::Paths(vec![path6(gw6(), 0, &[2000], 1)])),
        ),
    ]);
    wait_for(
        || out().contains("fpm: resync done"),
        "the end of the resync",
    );
    wait_for(
        || fpm_field(&show_fpm(), "ipv6_routes") == Some(1),
        "the sweep of the IPv6 routes",
    );
    send_round6(&net, &dir, 2000);

    // 3. A delete withdraws.
    fpm.send(&[encode::route(p6(0x100), None)]);
    wait_for(
        || fpm_field(&show_fpm(), "ipv6_routes") == Some(0),
        "the delete",
    );
    send_round6(&net, &dir, 3000);
    let start = Instant::now();
    while !seen6(&pcap).contains_key(&3006) && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(200));
    common::stop(&mut net.children[tcpdump]);
    fpm.close();
    router.stop();
    let s = seen6(&pcap);
    let mac = "02:00:00:00:01:02";
    let at = |id: u16| s.get(&id).map(|(l, _, m)| (l.clone(), m.as_str() == mac));
    let dst = |id: u16| s.get(&id).map(|(_, d, _)| d.clone());

    // Session 1: native, 6PE, the group's stack, blackhole, swap, PHP, the file's route.
    assert_eq!(at(1000), Some((vec![], true)), "{s:?}");
    assert_eq!(at(1001), Some((labels(&[600]), true)), "{s:?}");
    assert_eq!(at(1002), Some((labels(&[300, 301]), true)), "{s:?}");
    assert_eq!(at(1003), None, "blackholed: {s:?}");
    assert_eq!(at(1004), Some((labels(&[2000]), true)), "{s:?}");
    assert_eq!(at(1005), Some((vec![], true)), "{s:?}");
    assert_eq!(dst(1005).as_deref(), Some("2001:db8:100::3"));
    assert_eq!(at(1006), Some((labels(&[777]), true)), "{s:?}");
    let ecmp: std::collections::BTreeSet<_> = (1010..1026).filter_map(at).collect();
    assert_eq!(
        ecmp,
        [(labels(&[201]), true), (labels(&[202]), true)]
            .into_iter()
            .collect(),
        "{s:?}"
    );
    // Session 2 after the resync: the changed route and the resent label; the rest swept.
    assert_eq!(at(2000), Some((labels(&[101]), true)), "{s:?}");
    assert_eq!(at(2004), Some((labels(&[2000]), true)), "{s:?}");
    assert_eq!(at(2006), Some((labels(&[777]), true)), "{s:?}");
    for id in [2001, 2002, 2003, 2005] {
        assert_eq!(at(id), None, "{id} was swept: {s:?}");
    }
    assert!((2010..2026).all(|i| at(i).is_none()), "{s:?}");
    // After the delete.
    assert_eq!(at(3000), None, "{s:?}");
    assert_eq!(at(3004), Some((labels(&[2000]), true)), "{s:?}");
    assert_eq!(at(3006), Some((labels(&[777]), true)), "{s:?}");
}
