//! The control socket against a live router on pcap vdevs: every `show` checked field by
//! field (`--json`) against the configured table, `lookup` agreeing byte for byte with
//! what the data path sent for generated IPv4 and labelled packets (ECMP included), a
//! `trace` and `capture` (decoded by tshark) of a replayed pcap, a stale socket replaced, a second router on the same socket refused, and `show` against
//! a stopped router.
#![forbid(unsafe_code)]

mod common;
mod live;

use std::path::Path;
use std::time::{Duration, Instant};

use common::ctl::{cli, hex, json, wait_for};
use common::{pcap_config, TempDir};
use live::LiveRouter;
use router::ctlsock::proto::*;
use traffic::{read_pcap, write_pcap, FrameSpec};

const ROUTES: &str = "
neighbors:
  - {ip: 10.0.1.2, mac: \"02:00:00:00:01:02\"}
  - {ip: 10.0.1.3, mac: \"02:00:00:00:01:03\"}
ipv4:
  - {prefix: 198.51.100.0/24, via: 10.0.1.2}
  - prefix: 203.0.113.0/24
    nexthops:
      - {via: 10.0.1.2, weight: 3, push: [300]}
      - {via: 10.0.1.3, push: [301]}
  - {prefix: 192.0.2.128/25, via: 10.0.1.3, push: [77, 78], ttl_mode: pipe, pipe_ttl: 32}
mpls:
  - {in_label: 1000, action: swap, via: 10.0.1.2, push: [2000]}
  - {in_label: 1001, action: pop_and_lookup}
  - in_label: 1002
    action: swap
    nexthops:
      - {via: 10.0.1.2, push: [500]}
      - {via: 10.0.1.3, push: [501]}
";

/// One generated packet: (label, dst, sport, ttl).
type Flow = (Option<u32>, [u8; 4], u16, u8);

fn flows() -> Vec<Flow> {
    let mut f = Vec::new();
    for sport in 0..24u16 {
        f.push((None, [203, 0, 113, 9], 1000 + sport, 64));
        f.push((Some(1002), [198, 51, 100, 9], 2000 + sport, 30));
    }
    f.push((None, [198, 51, 100, 7], 7, 5));
    f.push((None, [198, 51, 100, 8], 12, 1));
    f.push((None, [192, 0, 2, 200], 8, 64));
    f.push((Some(1000), [198, 51, 100, 1], 9, 64));
    f.push((Some(1001), [203, 0, 113, 200], 10, 64));
    f.push((Some(1001), [198, 51, 100, 2], 11, 9));
    f
}

fn frame((label, dst, sport, ttl): Flow) -> Vec<u8> {
    FrameSpec {
        dst_mac: [2, 0, 0, 0, 0, 1],
        labels: label.map(|l| vec![(l, 0, ttl)]).unwrap_or_default(),
        dst_ip: dst,
        src_port: sport,
        ttl,
        ..FrameSpec::default()
    }
    .build()
}

fn hop(port: &str, via: &str, mac: &str, labels: &[u32], weight: u32) -> HopView {
    HopView {
        port: port.into(),
        via: via.into(),
        mac: Some(mac.into()),
        labels: labels.to_vec(),
        weight,
    }
}

fn check_show(sock: &Path) {
    let Reply::Routes(r) = json(sock, &["show", "routes", "192.0.2.201"]) else {
        panic!()
    };
    assert_eq!(r.matched.as_deref(), Some("192.0.2.128/25"));
    assert_eq!(
        r.routes,
        [RouteView {
            prefix: "192.0.2.128/25".into(),
            target: "forward".into(),
            port: None,
            next_hops: vec![hop("out", "10.0.1.3", "02:00:00:00:01:03", &[77, 78], 1)],
            ttl_mode: "pipe".into(),
            pipe_ttl: Some(32),
            source: Source::Yaml,
        }]
    );
    let Reply::Routes(r) = json(sock, &["show", "routes", "203.0.113.0/24"]) else {
        panic!()
    };
    assert_eq!(r.routes.len(), 1);
    assert_eq!(
        r.routes[0].next_hops,
        [
            hop("out", "10.0.1.2", "02:00:00:00:01:02", &[300], 3),
            hop("out", "10.0.1.3", "02:00:00:00:01:03", &[301], 1)
        ]
    );
    // The full view pages: 4 connected/local, 3 configured, 2 neighbour host routes.
    let Reply::Routes(r) = json(sock, &["show", "routes", "--limit", "5"]) else {
        panic!()
    };
    assert_eq!(r.routes.len(), 5);
    let next = r.next_after.expect("a next page");
    let Reply::Routes(r2) = json(sock, &["show", "routes", "--after", &next]) else {
        panic!()
    };
    assert_eq!((r2.routes.len(), r2.next_after), (4, None));

    let Reply::Mpls(m) = json(sock, &["show", "mpls"]) else {
        panic!()
    };
    let l: Vec<(u32, &str, usize)> = m
        .entries
        .iter()
        .map(|e| (e.label, e.action.as_str(), e.next_hops.len()))
        .collect();
    assert_eq!(
        l,
        [
            (1000, "swap", 1),
            (1001, "pop_and_lookup", 0),
            (1002, "swap", 2)
        ]
    );
    let Reply::Mpls(m) = json(sock, &["show", "mpls", "1000"]) else {
        panic!()
    };
    assert_eq!(
        m.entries[0].next_hops,
        [hop("out", "10.0.1.2", "02:00:00:00:01:02", &[2000], 1)]
    );

    let Reply::Neighbors { neighbors } = json(sock, &["show", "neighbors"]) else {
        panic!()
    };
    let n: Vec<(&str, &str, &str)> = neighbors
        .iter()
        .map(|n| (n.ip.as_str(), n.port.as_str(), n.state.as_str()))
        .collect();
    assert_eq!(
        n,
        [("10.0.1.2", "out", "static"), ("10.0.1.3", "out", "static")]
    );

    let Reply::Ports { ports } = json(sock, &["show", "ports"]) else {
        panic!()
    };
    let p: Vec<(&str, &str, Vec<String>, u16)> = ports
        .iter()
        .map(|p| (p.name.as_str(), p.mac.as_str(), p.addresses.clone(), p.mtu))
        .collect();
    assert_eq!(
        p,
        [
            (
                "in",
                "02:00:00:00:00:01",
                vec!["10.0.0.1/24".to_string()],
                1500
            ),
            (
                "out",
                "02:00:00:00:01:01",
                vec!["10.0.1.1/24".to_string()],
                1500
            )
        ]
    );
    assert_eq!(ports[0].rx_packets, flows().len() as u64);

    let Reply::Workers { workers } = json(sock, &["show", "workers"]) else {
        panic!()
    };
    assert_eq!(workers.len(), 1);
    assert_eq!(workers[0].queues, ["in/0", "out/0"]);
    assert_eq!(workers[0].rx_packets, flows().len() as u64);
    assert_eq!(
        workers[0].forwarded,
        flows().len() as u64 - 1,
        "one TTL expiry"
    );

    let Reply::Table(t) = json(sock, &["show", "table"]) else {
        panic!()
    };
    assert_eq!((t.ipv4_routes, t.labels, t.reloads_ok), (9, 3, 1));

    // The human tables say the same.
    let out = cli(&[
        "show",
        "routes",
        "203.0.113.5",
        "--socket",
        sock.to_str().unwrap(),
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("via 10.0.1.2 on out mac 02:00:00:00:01:02 push [300] weight 3"),
        "{text}"
    );
}

/// Looks every generated packet up; returns the frames lookup says leave, in order.
fn lookups(sock: &Path) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut members = std::collections::BTreeSet::new();
    for f in flows() {
        let (label, dst, sport, ttl) = f;
        let dst = std::net::Ipv4Addr::from(dst).to_string();
        let flow = format!("192.0.2.1,{dst},17,{sport},9");
        let (ttl, l) = (ttl.to_string(), label.map(|l| l.to_string()));
        let mut args = vec!["lookup", "--flow", &flow, "--ttl", &ttl];
        if let Some(l) = &l {
            args.extend(["--label", l]);
        }
        let r: LookupReply = json(sock, &args);
        assert_eq!(
            r.frame_in,
            hex(&frame(f)),
            "lookup built another packet for {f:?}"
        );
        match r.frame_out {
            Some(o) => {
                let h = r.next_hop.expect("a forwarded lookup names its next hop");
                members.insert((label, h.via));
                out.push(
                    (0..o.len())
                        .step_by(2)
                        .map(|i| u8::from_str_radix(&o[i..i + 2], 16).unwrap())
                        .collect(),
                );
            }
            None => assert_eq!(
                (r.verdict.as_str(), r.reason.as_deref()),
                ("slow_path", Some("ttl_expired")),
                "{f:?}"
            ),
        }
    }
    let ecmp = [
        (None, "10.0.1.2"),
        (None, "10.0.1.3"),
        (Some(1002), "10.0.1.2"),
        (Some(1002), "10.0.1.3"),
    ];
    for m in ecmp {
        assert!(
            members.contains(&(m.0, m.1.to_string())),
            "no ECMP flow reached {m:?}: {members:?}"
        );
    }
    out
}

#[test]
fn show_and_lookup_against_a_live_router() {
    let dir = TempDir::new("ctlsock");
    std::fs::write(dir.path("routes.yaml"), ROUTES).unwrap();
    let frames: Vec<Vec<u8>> = flows().into_iter().map(frame).collect();
    write_pcap(&dir.path("in.pcap"), &frames).unwrap();
    let cfg = pcap_config(&dir, "control_socket: ctl.sock\n");
    let sock = dir.path("ctl.sock");
    // What a crashed router leaves: the socket file, nobody listening.
    drop(std::os::unix::net::UnixListener::bind(&sock).unwrap());
    let router = LiveRouter::start(&cfg, 60.0);
    let t = Instant::now();
    while !router.output().contains("control socket: ") {
        assert!(t.elapsed() < Duration::from_secs(20), "{}", router.output());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        router
            .output()
            .contains("replacing the stale control socket"),
        "{}",
        router.output()
    );
    wait_for(&sock);
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&sock).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o660);
    // Let the replay finish before the counters are read.
    std::thread::sleep(Duration::from_millis(1500));
    check_show(&sock);
    let predicted = lookups(&sock);

    // A second router on the same socket stops at once, saying why.
    let second = cli(&["run", "--config", cfg.to_str().unwrap(), "--duration", "5"]);
    assert_eq!(second.status.code(), Some(1));
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains("another router answers on it"), "{err}");
    assert!(sock.exists(), "the refused router removed the live socket");

    let (status, output) = router.stop(Duration::from_secs(20));
    assert!(status.success(), "{output}");
    assert!(!sock.exists(), "the socket outlived the router");
    let sent = read_pcap(&dir.path("out.pcap")).unwrap();
    assert_eq!(sent.len(), predicted.len());
    for (i, (s, p)) in sent.iter().zip(&predicted).enumerate() {
        assert_eq!(
            hex(s),
            hex(p),
            "frame {i}: lookup disagrees with the data path"
        );
    }

    // Nothing is running now: one line, exit 1.
    let out = cli(&["show", "routes", "--socket", sock.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no router is running on"), "{err}");
}

/// `in` replays in.pcap forever; `out` is a net_null sink.
/// With a control interface on `out` when root (TAPs need it), and an FPM listener.
fn replay_config(dir: &TempDir) -> std::path::PathBuf {
    let pid = std::process::id();
    let tap = match common::is_root() {
        true => format!(", control_interface: {}", tap_name()),
        false => String::new(),
    };
    let cfg = format!(
        "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: mplsr-trace-{pid}}}\n\
         ports:\n\
         \x20 - {{name: in, vdev: \"net_pcap_tr{pid},rx_pcap={d}/in.pcap,infinite_rx=1\", mac: \"02:00:00:00:00:01\", addresses: [10.0.0.1/24]}}\n\
         \x20 - {{name: out, vdev: \"net_null_tr{pid},no-rx=1\", mac: \"02:00:00:00:01:01\", addresses: [10.0.1.1/24]{tap}}}\n\
         routes: routes.yaml\n\
         metrics_listen: 127.0.0.1:0\n\
         control_socket: ctl.sock\n\
         fpm: {{listen: 127.0.0.1:0}}\n\
         idle: {{backoff: {{}}}}\n",
        d = dir.0.display()
    );
    let p = dir.path("startup.yaml");
    std::fs::write(&p, cfg).unwrap();
    p
}

/// Who has 10.0.0.1 (the router on `in`), tell 10.0.0.2.
fn arp_request() -> Vec<u8> {
    let mac = [2, 0, 0, 0, 0, 0xfe];
    let mut f = vec![0xff; 6];
    f.extend(mac);
    f.extend([0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 1]);
    f.extend(mac);
    f.extend([10, 0, 0, 2, 0, 0, 0, 0, 0, 0, 10, 0, 0, 1]);
    f.resize(60, 0);
    f
}

/// Forwarded with a push, dropped (no route), swapped, punted (TTL 1), punted (its
/// next hop 10.0.1.9 never answers ARP).
const KNOWN: [Flow; 5] = [
    (None, [192, 0, 2, 200], 1, 64),
    (None, [100, 64, 0, 1], 2, 64),
    (Some(1000), [198, 51, 100, 1], 3, 64),
    (None, [198, 51, 100, 3], 4, 1),
    (None, [192, 0, 2, 70], 5, 64),
];

/// `trace ARGS --json`, every packet's slow-path outcome checked to be one of `allowed`
/// (a punted packet always says what the slow path did, or that it was not seen).
fn trace(sock: &Path, args: &[&str]) -> Vec<TracedPacket> {
    let mut a = vec!["trace"];
    a.extend(args);
    json(sock, &a)
}

fn check_unfiltered(sock: &Path) {
    let packets = trace(sock, &["--count", "40", "--port", "in"]);
    assert_eq!(packets.len(), 40);
    for p in &packets {
        let d = &p.decision;
        assert_eq!(d.in_port, "in");
        assert_eq!(
            p.slow_path.is_some(),
            d.verdict == "slow_path",
            "only punted packets say what the slow path did: {p:?}"
        );
        if d.frame_in == hex(&arp_request()) {
            assert_eq!(
                (d.verdict.as_str(), d.reason.as_deref()),
                ("slow_path", Some("arp"))
            );
            continue;
        }
        let i = KNOWN
            .iter()
            .position(|f| d.frame_in == hex(&frame(*f)))
            .expect("a traced frame that was never sent");
        match i {
            0 => {
                assert_eq!(d.route.as_ref().unwrap().prefix, "192.0.2.128/25");
                assert_eq!(
                    (d.verdict.as_str(), d.out_port.as_deref()),
                    ("forward", Some("out"))
                );
                let l: Vec<(u32, u8)> = d.out_labels.iter().map(|l| (l.label, l.ttl)).collect();
                assert_eq!(l, [(77, 32), (78, 32)], "pipe mode pushes with pipe_ttl");
                assert_eq!(d.next_hop.as_ref().unwrap().via, "10.0.1.3");
                assert!(p.headers[1].starts_with("ipv4 192.0.2.1 > 192.0.2.200 proto 17 ttl 64"));
            }
            1 => assert_eq!(
                (d.verdict.as_str(), d.reason.as_deref()),
                ("drop", Some("no_route"))
            ),
            2 => {
                assert_eq!(d.label_entry.as_ref().unwrap().label, 1000);
                assert_eq!((d.out_labels[0].label, d.out_labels[0].ttl), (2000, 63));
                assert_eq!(p.headers[1], "mpls label 1000 tc 0 ttl 64 bos");
            }
            3 => assert_eq!(
                (d.verdict.as_str(), d.reason.as_deref()),
                ("slow_path", Some("ttl_expired"))
            ),
            _ => assert_eq!(
                (d.verdict.as_str(), d.reason.as_deref()),
                ("slow_path", Some("arp_needed"))
            ),
        }
    }
    let mut kinds: Vec<&str> = packets
        .iter()
        .map(|p| p.decision.verdict.as_str())
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds, ["drop", "forward", "slow_path"]);
}

/// Traces with filters: only the packets that pass, and what the slow path did with
/// the punted ones (a replay floods the slow path, so a packet may also have been
/// rate limited, dropped for a full inject queue, or lost to a full punt queue).
fn check_filtered(sock: &Path) {
    for p in trace(sock, &["--count", "5", "--filter", "label 1000 and udp"]) {
        assert_eq!(p.decision.frame_in, hex(&frame(KNOWN[2])));
    }
    for p in trace(
        sock,
        &[
            "--count",
            "5",
            "--filter",
            "not mpls and dst 198.51.100.0/29",
        ],
    ) {
        assert_eq!(p.decision.frame_in, hex(&frame(KNOWN[3])));
        let s = p.slow_path.expect("a punted packet's slow-path outcome");
        assert!(
            matches!(
                (s.action.as_str(), s.detail.as_deref()),
                ("icmp_error_sent", Some("time_exceeded"))
                    | ("rate_limited", Some("icmp_rate_limited"))
                    | ("dropped", Some("inject_full"))
                    | ("not_seen", None)
            ),
            "{s:?}"
        );
    }
    for p in trace(
        sock,
        &["--count", "5", "--filter", "dst 192.0.2.70 and sport 5"],
    ) {
        assert_eq!(p.decision.frame_in, hex(&frame(KNOWN[4])));
        let s = p.slow_path.expect("a punted packet's slow-path outcome");
        assert!(
            matches!(
                (s.action.as_str(), s.detail.as_deref()),
                ("queued_for_resolution", _)
                    | ("dropped", Some("arp_hold_full"))
                    | ("not_seen", None)
            ),
            "{s:?}"
        );
    }
    // ARP is answered (control traffic goes first); retried, as a flood may lose some.
    let mut answered = false;
    for _ in 0..5 {
        for p in trace(sock, &["--count", "10", "--filter", "arp"]) {
            assert_eq!(p.decision.frame_in, hex(&arp_request()));
            let s = p.slow_path.expect("a punted ARP's slow-path outcome");
            assert!(
                ["arp_answered", "arp_accepted", "dropped", "not_seen"]
                    .contains(&s.action.as_str()),
                "{s:?}"
            );
            answered |= s.action == "arp_answered";
        }
        if answered {
            break;
        }
    }
    assert!(answered, "no traced ARP request was answered");
    let out = cli(&[
        "trace",
        "--count",
        "2",
        "--filter",
        "arp",
        "--socket",
        sock.to_str().unwrap(),
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.matches("slow path: ").count(), 2, "{text}");
    assert!(
        text.contains("eth 02:00:00:00:00:fe > ff:ff:ff:ff:ff:ff type 0x0806"),
        "{text}"
    );
    let out = cli(&[
        "trace",
        "--filter",
        "dst 10.0.0.0/33",
        "--socket",
        sock.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("filter: `10.0.0.0/33` is not an IPv4"),
        "{err}"
    );
}

fn capture(sock: &Path, pcap: &Path, args: &[&str]) -> serde_json::Value {
    let mut a = vec!["capture", "--out", pcap.to_str().unwrap()];
    a.extend(args);
    json(sock, &a)
}

/// Captures: received frames as received, transmitted ones as rewritten, a snap length,
/// a pps limit with what it skipped counted; tshark decodes each pcap.
fn check_capture(dir: &TempDir, sock: &Path) {
    let pcap = dir.path("cap.pcap");
    let s = capture(sock, &pcap, &["--port", "in", "--count", "8"]);
    assert_eq!(s["frames"], 8);
    let got = read_pcap(&pcap).unwrap();
    assert_eq!(got.len(), 8);
    for f in &got {
        assert!(
            KNOWN.iter().any(|k| frame(*k) == *f) || *f == arp_request(),
            "captured a frame never sent"
        );
    }
    let d = common::tshark(&pcap, &["ip.dst", "mpls.label", "arp.dst.proto_ipv4"]);
    assert_eq!(d.len(), 8);
    for x in &d {
        assert!(
            [
                "192.0.2.200",
                "192.0.2.70",
                "100.64.0.1",
                "198.51.100.1",
                "198.51.100.3",
                ""
            ]
            .contains(&x.get("ip.dst")),
            "{x:?}"
        );
        match x.get("ip.dst") {
            "198.51.100.1" => assert_eq!(x.get("mpls.label"), "1000"),
            "" => assert_eq!(x.get("arp.dst.proto_ipv4"), "10.0.0.1"),
            _ => {}
        }
    }

    // Transmitted on `out`: the forwarded frames as rewritten, cut at 40 bytes.
    let s = capture(
        sock,
        &pcap,
        &[
            "--port",
            "out",
            "--direction",
            "tx",
            "--snaplen",
            "40",
            "--count",
            "6",
            "--filter",
            "mpls",
        ],
    );
    assert_eq!(
        (s["frames"].as_u64(), s["snaplen"].as_u64()),
        (Some(6), Some(40))
    );
    let d = common::tshark(&pcap, &["frame.cap_len", "frame.len", "mpls.label"]);
    assert_eq!(d.len(), 6);
    for x in &d {
        assert_eq!(x.get("frame.cap_len"), "40", "{x:?}");
        assert!(x.get("frame.len").parse::<u32>().unwrap() > 40, "{x:?}");
        assert!(["77,78", "2000"].contains(&x.get("mpls.label")), "{x:?}");
    }
    // What the slow path sends out of `out` is transmitted too: its ICMP errors for
    // the TTL-1 packets (routed back via 10.0.1.2) and its requests for 10.0.1.9.
    let s = capture(
        sock,
        &pcap,
        &[
            "--port",
            "out",
            "--direction",
            "tx",
            "--filter",
            "icmp",
            "--count",
            "2",
        ],
    );
    assert_eq!(s["frames"], 2);
    for x in common::tshark(&pcap, &["eth.dst", "ip.dst", "icmp.type"]) {
        assert_eq!(
            (x.get("eth.dst"), x.get("ip.dst"), x.get("icmp.type")),
            ("02:00:00:00:01:02", "192.0.2.1,198.51.100.3", "11"),
            "to the sender, quoting the expired packet"
        );
    }
    let s = capture(
        sock,
        &pcap,
        &[
            "--port",
            "out",
            "--direction",
            "tx",
            "--filter",
            "arp",
            "--count",
            "1",
        ],
    );
    assert_eq!(s["frames"], 1);
    let d = common::tshark(&pcap, &["arp.opcode", "arp.dst.proto_ipv4"]);
    assert_eq!(
        (d[0].get("arp.opcode"), d[0].get("arp.dst.proto_ipv4")),
        ("1", "10.0.1.9")
    );

    // Both ways on `in`, at most 50 frames a second: the rest are counted as skipped.
    let s = capture(
        sock,
        &pcap,
        &[
            "--port",
            "in",
            "--direction",
            "both",
            "--pps",
            "50",
            "--count",
            "1000",
            "--timeout",
            "1",
        ],
    );
    let n = s["frames"].as_u64().unwrap();
    assert!((1..=50 + 32 + 10).contains(&n), "{s}");
    assert!(s["skipped_rate"].as_u64().unwrap() > 0, "{s}");
    assert_eq!(common::tshark(&pcap, &["eth.type"]).len() as u64, n);
}

/// The slow path's neighbours: 10.0.0.2 learned from its (replayed) request, 10.0.1.9
/// being resolved for the packets routed to it, the routes file's two.
fn check_neighbors(sock: &Path) {
    let Reply::Neighbors { neighbors } = json(sock, &["show", "neighbors"]) else {
        panic!()
    };
    let n: Vec<(&str, Option<&str>, &str, &str)> = neighbors
        .iter()
        .map(|n| {
            (
                n.ip.as_str(),
                n.mac.as_deref(),
                n.port.as_str(),
                n.state.as_str(),
            )
        })
        .collect();
    assert_eq!(
        n,
        [
            ("10.0.0.2", Some("02:00:00:00:00:fe"), "in", "resolved"),
            ("10.0.1.2", Some("02:00:00:00:01:02"), "out", "static"),
            ("10.0.1.3", Some("02:00:00:00:01:03"), "out", "static"),
            ("10.0.1.9", None, "out", "incomplete"),
        ]
    );
    let age = |i: usize| neighbors[i].age_s;
    // Refreshed by every replayed request; asked for again at least every 3 s.
    assert!(
        age(0).is_some_and(|a| (0.0..10.0).contains(&a)),
        "{:?}",
        neighbors[0]
    );
    assert_eq!(
        (age(1), age(2)),
        (None, None),
        "static neighbours have no age"
    );
    assert!(
        age(3).is_some_and(|a| (0.0..10.0).contains(&a)),
        "{:?}",
        neighbors[3]
    );
    let text =
        String::from_utf8(cli(&["show", "neighbors", "--socket", sock.to_str().unwrap()]).stdout)
            .unwrap();
    assert!(
        text.contains("incomplete") && text.contains("resolved"),
        "{text}"
    );
}

fn tap_name() -> String {
    format!("mrc{}", std::process::id())
}

/// What the kernel sends down the control interface leaves by the port and is in a
/// capture of the port's transmitted frames: UDP from the TAP's kernel side to a
/// neighbour the kernel has a permanent entry for (no ARP first), sent every 100 ms
/// until the capture (armed meanwhile) has one.
fn check_capture_of_the_kernels_frames(dir: &TempDir, sock: &Path) {
    if !common::is_root() {
        return;
    }
    let tap = tap_name();
    common::sh(&[
        "ip",
        "neigh",
        "replace",
        "10.0.1.77",
        "lladdr",
        "02:00:00:00:01:77",
        "dev",
        &tap,
        "nud",
        "permanent",
    ]);
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sender = {
        let done = done.clone();
        std::thread::spawn(move || {
            let s = std::net::UdpSocket::bind("10.0.1.1:0").unwrap();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = s.send_to(b"from the kernel", "10.0.1.77:9");
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let pcap = dir.path("kernel.pcap");
    let args = [
        "--port",
        "out",
        "--direction",
        "tx",
        "--filter",
        "udp and dst 10.0.1.77",
        "--count",
        "1",
        "--timeout",
        "10",
    ];
    let s = capture(sock, &pcap, &args);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    sender.join().unwrap();
    assert_eq!(s["frames"], 1, "{s}");
    let d = common::tshark(&pcap, &["eth.src", "eth.dst", "ip.src", "udp.dstport"]);
    assert_eq!(
        (
            d[0].get("eth.src"),
            d[0].get("eth.dst"),
            d[0].get("ip.src"),
            d[0].get("udp.dstport")
        ),
        ("02:00:00:00:01:01", "02:00:00:00:01:77", "10.0.1.1", "9"),
        "the kernel's datagram, with the TAP's (the port's) MAC"
    );
}

/// `show fpm`: listening, idle, then a connection's peer; routes by source.
fn check_fpm(sock: &Path) {
    let Reply::Fpm(f) = json(sock, &["show", "fpm"]) else {
        panic!()
    };
    assert!(f.enabled);
    assert_eq!(
        (f.state.as_str(), f.peer.as_deref(), f.connects),
        ("idle", None, 0)
    );
    assert_eq!(
        (f.ipv4_routes, f.labels, f.resyncs, f.last_resync_ms),
        (0, 0, 0, 0)
    );
    // 4 connected/local, 5 configured, 2 static neighbours' and one learned host route.
    assert_eq!(
        f.routes_by_source,
        [(Source::Yaml, 11), (Source::Fpm, 0), (Source::Arp, 1)]
    );
    let listen = f.listen.expect("the listening address");
    assert!(listen.starts_with("127.0.0.1:"), "{listen}");
    let zebra = std::net::TcpStream::connect(&listen).unwrap();
    let me = zebra.local_addr().unwrap().to_string();
    let t = Instant::now();
    loop {
        let Reply::Fpm(f) = json(sock, &["show", "fpm"]) else {
            panic!()
        };
        if f.connects == 1 && f.peer.as_deref() == Some(me.as_str()) {
            assert_ne!(f.state, "idle");
            let out = cli(&["show", "fpm", "--socket", sock.to_str().unwrap()]);
            let text = String::from_utf8(out.stdout).unwrap();
            assert!(text.contains(&format!("peer {me}")), "{text}");
            assert!(text.contains("yaml 11, fpm 0, arp 1"), "{text}");
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{f:?}, peer should be {me}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `show interfaces`: the TAP twin of `out`, as the kernel has it.
fn check_interfaces(sock: &Path) {
    let Reply::Interfaces { interfaces } = json(sock, &["show", "interfaces"]) else {
        panic!()
    };
    if !common::is_root() {
        assert!(interfaces.is_empty());
        return;
    }
    assert_eq!(interfaces.len(), 1, "{interfaces:?}");
    let i = &interfaces[0];
    let ifindex: u32 = std::fs::read_to_string(format!("/sys/class/net/{}/ifindex", tap_name()))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(
        (i.name.clone(), i.ifindex, i.port.as_str(), i.up),
        (tap_name(), ifindex, "out", true)
    );
    assert_eq!(
        (i.mac.as_str(), i.mtu, i.addresses.clone()),
        ("02:00:00:00:01:01", 1500, vec!["10.0.1.1/24".to_string()])
    );
    let out = cli(&["show", "interfaces", "--socket", sock.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    let row = format!("{}  {ifindex}", tap_name());
    assert!(text.contains(&row) && text.contains(" up "), "{text}");
}

#[test]
fn trace_and_capture_of_a_replayed_pcap() {
    let dir = TempDir::new("ctltrace");
    // A route back to the sender, for the slow path's ICMP; one via a silent next hop.
    let routes = ROUTES.replace(
        "ipv4:\n",
        "ipv4:\n  - {prefix: 192.0.2.0/25, via: 10.0.1.2}\n  \
         - {prefix: 192.0.2.64/26, via: 10.0.1.9}\n",
    );
    std::fs::write(dir.path("routes.yaml"), routes).unwrap();
    let mut frames: Vec<Vec<u8>> = KNOWN.map(frame).to_vec();
    frames.push(arp_request());
    write_pcap(&dir.path("in.pcap"), &frames).unwrap();
    let cfg = replay_config(&dir);
    let sock = dir.path("ctl.sock");
    let router = LiveRouter::start(&cfg, 90.0);
    wait_for(&sock);
    check_unfiltered(&sock);
    check_filtered(&sock);
    // No packet is traced from a port that receives nothing.
    let none = trace(
        &sock,
        &["--count", "1", "--port", "out", "--timeout", "0.5"],
    );
    assert!(none.is_empty());
    check_capture(&dir, &sock);
    check_neighbors(&sock);
    check_interfaces(&sock);
    check_capture_of_the_kernels_frames(&dir, &sock);
    check_fpm(&sock);
    let (status, output) = router.stop(Duration::from_secs(20));
    assert!(status.success(), "{output}");
}

/// A `show neighbors --json` row: (ip, mac, port, state, age).
type Row = (String, Option<String>, String, String, Option<f64>);

/// The rows of `show neighbors --json`.
fn neighbor_rows(sock: &Path) -> Vec<Row> {
    let Reply::Neighbors { neighbors } = json(sock, &["show", "neighbors"]) else {
        panic!()
    };
    neighbors
        .into_iter()
        .map(|n| (n.ip, n.mac, n.port, n.state, n.age_s))
        .collect()
}

#[test]
fn a_learned_neighbour_goes_stale_then_away() {
    let dir = TempDir::new("ctlnei");
    std::fs::write(dir.path("routes.yaml"), "ipv4: []\n").unwrap();
    // One request from 10.0.0.2, never again: learned, stale after 1 s, then probed
    // three times (0.5 s apart, unanswered) and removed ("gone": absent, or only the
    // table's unresolved next hop left).
    write_pcap(&dir.path("in.pcap"), &[arp_request()]).unwrap();
    let cfg = pcap_config(
        &dir,
        "control_socket: ctl.sock\narp: {reachable_ms: 1000}\n",
    );
    let sock = dir.path("ctl.sock");
    let router = LiveRouter::start(&cfg, 60.0);
    wait_for(&sock);
    let mac = Some("02:00:00:00:00:fe".to_string());
    let mut seen = Vec::new();
    let t = Instant::now();
    loop {
        let rows = neighbor_rows(&sock);
        assert!(rows.len() <= 1, "{rows:?}");
        let state = match rows.first() {
            Some((ip, m, port, state, age)) if state == "incomplete" => {
                // Forgotten by ARP; the table's next hop for it stays, unresolved.
                assert_eq!(
                    (ip.as_str(), m, port.as_str(), age),
                    ("10.0.0.2", &None, "in", &None)
                );
                "gone".to_string()
            }
            Some((ip, m, port, state, age)) => {
                assert_eq!((ip.as_str(), m, port.as_str()), ("10.0.0.2", &mac, "in"));
                let age = age.expect("a learned neighbour has an age");
                match state.as_str() {
                    // Within the reachable time, give or take one publication (0.5 s).
                    "resolved" => assert!(age < 1.6, "{rows:?}"),
                    "stale" => assert!(age >= 0.9, "{rows:?}"),
                    _ => panic!("{rows:?}"),
                }
                state.clone()
            }
            None => "gone".to_string(),
        };
        if seen.last() != Some(&state) {
            seen.push(state);
        }
        if seen.len() > 1 && seen.last().map(String::as_str) == Some("gone") {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{seen:?}\n{}",
            router.output()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Before the router learned it, nothing; then resolved, stale, gone, in that order.
    if seen[0] == "gone" {
        seen.remove(0);
    }
    assert_eq!(seen, ["resolved", "stale", "gone"], "{}", router.output());
    let (status, output) = router.stop(Duration::from_secs(20));
    assert!(status.success(), "{output}");
}
