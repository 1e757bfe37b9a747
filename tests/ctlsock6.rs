//! The control socket's IPv6 side against a live router on pcap vdevs: `show routes`
//! (one address, a family, paging), `show table` and `show neighbors` checked against the
//! routes file below, and `lookup` of each replayed IPv6 frame (native, 6PE, PHP to an
//! IPv6 neighbour) agreeing byte for byte with what the data path sent on `out`; `trace`
//! and `capture` with IPv6 filters on a replay mixing both families, decoded by tshark,
//! a traced solicitation answered by the slow path.
#![forbid(unsafe_code)]

mod common;
mod live;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::ctl::{cli, hex, json, replay_config, unhex, wait_for};
use common::{bin, pcap_config, TempDir};
use live::LiveRouter;
use router::ctlsock::proto::*;
use traffic::{read_pcap, write_pcap, Frame6Spec};

const ROUTES: &str = r#"
neighbors:
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"}
  - {ip: "2001:db8:1::2", mac: "02:00:00:00:01:06"}
ipv6:
  - {prefix: "2001:db8:100::/40", via: "2001:db8:1::2"}
  - {prefix: "2001:db8:400::/40", via: 10.0.1.2, push: [300]}
  - {prefix: "2001:db8:500::/40", blackhole: true}
mpls:
  - {in_label: 1000, action: pop, via: "2001:db8:1::2"}
"#;

/// (label, destination, source port) of each replayed frame.
const FLOWS: [(Option<u32>, &str, u16); 4] = [
    (None, "2001:db8:100::5", 1001),
    (None, "2001:db8:400::5", 1002),
    (Some(1000), "2001:db8:100::9", 1003),
    (None, "2001:db8:500::1", 1004), // blackholed: nothing on `out`
];

fn frame((label, dst, sport): (Option<u32>, &str, u16)) -> Vec<u8> {
    Frame6Spec {
        dst_mac: [2, 0, 0, 0, 0, 1],
        labels: label.map(|l| vec![(l, 0, 64)]).unwrap_or_default(),
        dst_ip: dst.parse::<std::net::Ipv6Addr>().unwrap().octets(),
        src_port: sport,
        ..Frame6Spec::default()
    }
    .build()
}

fn check_show(sock: &Path) {
    let Reply::Routes(r) = json(sock, &["show", "routes", "--family", "ipv6"]) else {
        panic!()
    };
    let p: Vec<&str> = r.routes.iter().map(|x| x.prefix.as_str()).collect();
    assert_eq!(
        p,
        [
            "2001:db8::/64",
            "2001:db8::1/128",
            "2001:db8:1::/64",
            "2001:db8:1::1/128",
            "2001:db8:1::2/128",
            "2001:db8:100::/40",
            "2001:db8:400::/40",
            "2001:db8:500::/40",
        ]
    );
    let Reply::Routes(r) = json(sock, &["show", "routes", "2001:db8:400::77"]) else {
        panic!()
    };
    assert_eq!(r.matched.as_deref(), Some("2001:db8:400::/40"));
    let h = &r.routes[0].next_hops[0];
    assert_eq!(
        (h.via.as_str(), h.labels.as_slice()),
        ("10.0.1.2", &[300][..])
    );
    let Reply::Routes(r) = json(
        sock,
        &["show", "routes", "--family", "ipv6", "--limit", "5"],
    ) else {
        panic!()
    };
    assert_eq!(r.next_after.as_deref(), Some("2001:db8:1::2/128"));
    let Reply::Table(t) = json(sock, &["show", "table"]) else {
        panic!()
    };
    assert_eq!(t.ipv6_routes, 8);
    assert!(t.lpm6_bytes > 0 && t.lpm4_bytes > 0, "{t:?}");
    let Reply::Neighbors { neighbors } = json(sock, &["show", "neighbors"]) else {
        panic!()
    };
    let n: Vec<(&str, &str)> = neighbors
        .iter()
        .map(|n| (n.ip.as_str(), n.state.as_str()))
        .collect();
    assert!(n.contains(&("2001:db8:1::2", "static")), "{n:?}");
    // The human table lists IPv6 too.
    let out = Command::new(bin())
        .args(["show", "routes", "2001:db8:100::5", "--socket"])
        .arg(sock)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("2001:db8:100::/40  forward") && text.contains("via 2001:db8:1::2 on out"),
        "{text}"
    );
}

#[test]
fn show_and_lookup_of_ipv6_against_a_live_router() {
    let dir = TempDir::new("ctlsock6");
    std::fs::write(dir.path("routes.yaml"), ROUTES).unwrap();
    let frames: Vec<Vec<u8>> = FLOWS.into_iter().map(frame).collect();
    write_pcap(&dir.path("in.pcap"), &frames).unwrap();
    let cfg = pcap_config(&dir, "control_socket: ctl.sock\n");
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace(
            "addresses: [10.0.0.1/24]",
            "addresses: [10.0.0.1/24, \"2001:db8::1/64\"]",
        )
        .replace(
            "addresses: [10.0.1.1/24]",
            "addresses: [10.0.1.1/24, \"2001:db8:1::1/64\"]",
        );
    std::fs::write(&cfg, text).unwrap();
    let sock = dir.path("ctl.sock");
    let router = LiveRouter::start(&cfg, 60.0);
    let t = Instant::now();
    while !sock.exists() {
        assert!(t.elapsed() < Duration::from_secs(20), "{}", router.output());
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(1500));
    check_show(&sock);
    let mut predicted = Vec::new();
    for (f, bytes) in FLOWS.into_iter().zip(&frames) {
        let (label, dst, sport) = f;
        let flow = format!("2001:db8:ffff::1,{dst},17,{sport},9");
        let l = label.map(|l| l.to_string());
        let mut args = vec!["lookup", "--flow", &flow];
        if let Some(l) = &l {
            args.extend(["--label", l]);
        }
        let r: LookupReply = json(&sock, &args);
        assert_eq!(
            unhex(&r.frame_in),
            *bytes,
            "lookup built another packet: {f:?}"
        );
        match r.frame_out {
            Some(o) => predicted.push(unhex(&o)),
            None => assert_eq!(r.verdict, "drop", "{f:?}: {r:?}"),
        }
    }
    let (status, output) = router.stop(Duration::from_secs(20));
    assert!(status.success(), "{output}");
    let sent = read_pcap(&dir.path("out.pcap")).unwrap();
    assert_eq!(sent.len(), 3, "native, 6PE, PHP");
    assert_eq!(sent, predicted, "lookup predicts the data path's bytes");
}

/// The replay of the trace test: (what it is, frame).
fn mixed() -> Vec<(&'static str, Vec<u8>)> {
    let v6 = |dst: &str, sport, dport, labels: Vec<(u32, u8, u8)>| Frame6Spec {
        dst_mac: [2, 0, 0, 0, 0, 1],
        labels,
        dst_ip: dst.parse::<std::net::Ipv6Addr>().unwrap().octets(),
        src_port: sport,
        dst_port: dport,
        ..Frame6Spec::default()
    };
    let native = v6("2001:db8:100::5", 1001, 9, vec![]).build();
    let six_pe = v6("2001:db8:400::5", 1002, 9, vec![]).build();
    let php = v6("2001:db8:100::9", 1003, 9, vec![(1000, 0, 64)]).build();
    // UDP to port 53 behind a destination-options header (8 bytes of PadN).
    let mut opts = v6("2001:db8:100::7", 1004, 53, vec![]).build();
    opts[14 + 6] = 60;
    opts[14 + 5] += 8;
    opts.splice(54..54, [17, 0, 1, 4, 0, 0, 0, 0]);
    // An echo request (RFC 4443), its checksum over the pseudo-header.
    let mut echo = v6("2001:db8:100::5", 0, 0, vec![]).build();
    echo[14 + 6] = 58;
    echo[54..62].copy_from_slice(&[128, 0, 0, 0, 0x12, 0x34, 0, 1]);
    let mut pseudo = echo[22..54].to_vec();
    pseudo.extend([0, 0, 0, 8, 0, 0, 0, 58]);
    pseudo.extend(&echo[54..62]);
    let c = common::checksum(&pseudo);
    echo[56..58].copy_from_slice(&c.to_be_bytes());
    // IPv4 with the native frame's ports: only the family tells them apart.
    let v4 = traffic::FrameSpec {
        dst_mac: [2, 0, 0, 0, 0, 1],
        dst_ip: [10, 0, 1, 2],
        src_port: 1001,
        dst_port: 9,
        ..traffic::FrameSpec::default()
    }
    .build();
    vec![
        // A solicitation for the router's address on `in`, which it answers.
        ("ns", common::frames6::ns("2001:db8::7", "2001:db8::1")),
        ("native", native),
        ("6pe", six_pe),
        ("php", php),
        ("opts", opts),
        ("echo", echo),
        ("v4", v4),
    ]
}

/// `trace --filter EXPR --count N`: the kinds of the traced packets (each one of the
/// replayed frames), with their packets.
fn traced(sock: &Path, expr: &str, n: &str) -> Vec<(&'static str, TracedPacket)> {
    let frames = mixed();
    let packets: Vec<TracedPacket> = json(
        sock,
        &["trace", "--count", n, "--port", "in", "--filter", expr],
    );
    assert!(!packets.is_empty(), "{expr}: nothing traced");
    packets
        .into_iter()
        .map(|p| {
            let (kind, _) = frames
                .iter()
                .find(|(_, f)| hex(f) == p.decision.frame_in)
                .expect("a traced frame that was never sent");
            (*kind, p)
        })
        .collect()
}

fn check_traces(sock: &Path) {
    for (kind, p) in traced(sock, "ip6 and dst 2001:db8:100::/40 and dport 53", "4") {
        assert_eq!(kind, "opts");
        assert_eq!(
            p.headers[1..],
            [
                "ipv6 2001:db8:ffff::1 > 2001:db8:100::7 next 60 hlim 64 len 16",
                "udp 1004 > 53"
            ]
        );
        assert_eq!(
            (p.decision.verdict.as_str(), p.decision.out_port.as_deref()),
            ("forward", Some("out"))
        );
    }
    for (kind, p) in traced(sock, "label 1000 and ip6 and not ip", "4") {
        assert_eq!(kind, "php");
        assert_eq!(p.headers[1], "mpls label 1000 tc 0 ttl 64 bos");
    }
    // The IPv4 frame has the same ports: the address and family terms keep it out.
    for (kind, _) in traced(sock, "src 2001:db8:ffff::/48 and sport 1001", "4") {
        assert_eq!(kind, "native");
    }
    let mut kinds: Vec<&str> = traced(sock, "sport 1001 and dport 9", "24")
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds, ["native", "v4"], "ports over both families");
    for (kind, _) in traced(sock, "not ip6", "6") {
        assert_eq!(kind, "v4");
    }
    // The slow path says what it did with a solicitation (answered; or, under the
    // replay's flood, dropped or not seen): retried until one is answered.
    let mut answered = false;
    for _ in 0..5 {
        for (kind, p) in traced(sock, "icmp6 and dst ff02::1:ff00:0/104", "5") {
            assert_eq!(kind, "ns");
            let s = p
                .slow_path
                .expect("a punted solicitation's slow-path outcome");
            assert!(
                ["ndp_answered", "dropped", "not_seen"].contains(&s.action.as_str()),
                "{s:?}"
            );
            answered |= s.action == "ndp_answered";
        }
        if answered {
            break;
        }
    }
    assert!(answered, "no traced solicitation was answered");
    let out = cli(&[
        "trace",
        "--filter",
        "dst 2001:db8::/129",
        "--socket",
        sock.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("filter: `2001:db8::/129` is not an IPv6 prefix (at most /128)"),
        "{err}"
    );
}

/// `capture ARGS --out PCAP` with an IPv6 filter, decoded by tshark with `fields`.
fn captured(sock: &Path, pcap: &Path, args: &[&str], fields: &[&str]) -> Vec<common::Decoded> {
    let mut a = vec!["capture", "--out", pcap.to_str().unwrap()];
    a.extend(args);
    let s: serde_json::Value = json(sock, &a);
    let d = common::tshark(pcap, fields);
    assert_eq!(s["frames"].as_u64(), Some(d.len() as u64), "{a:?}: {s}");
    assert!(!d.is_empty(), "{a:?}: nothing captured");
    d
}

fn check_captures(dir: &TempDir, sock: &Path) {
    let pcap = dir.path("cap6.pcap");
    let rx = |expr| ["--port", "in", "--count", "12", "--filter", expr];
    let fields = [
        "eth.type",
        "ipv6.dst",
        "ipv6.nxt",
        "udp.dstport",
        "icmpv6.type",
    ];
    for x in captured(sock, &pcap, &rx("ip6 and not mpls"), &fields) {
        assert_eq!(x.get("eth.type"), "0x86dd", "{x:?}");
        assert!(
            [
                "2001:db8:100::5",
                "2001:db8:400::5",
                "2001:db8:100::7",
                "ff02::1:ff00:1",
            ]
            .contains(&x.get("ipv6.dst")),
            "{x:?}"
        );
    }
    // Past the destination-options header.
    for x in captured(sock, &pcap, &rx("udp and port 53"), &fields) {
        assert_eq!(
            (x.get("ipv6.dst"), x.get("ipv6.nxt"), x.get("udp.dstport")),
            ("2001:db8:100::7", "60", "53"),
            "{x:?}"
        );
    }
    for x in captured(sock, &pcap, &rx("icmp6 and dst 2001:db8:100::5"), &fields) {
        assert_eq!(
            (x.get("ipv6.nxt"), x.get("icmpv6.type")),
            ("58", "128"),
            "{x:?}"
        );
    }
    // Transmitted on `out`: the 6PE frames as pushed (IPv6 under label 300) match
    // `mpls and ip6`; the PHP'd and native ones are plain IPv6.
    let tx = |expr| {
        [
            "--port",
            "out",
            "--direction",
            "tx",
            "--count",
            "6",
            "--filter",
            expr,
        ]
    };
    let f = ["mpls.label", "ipv6.dst", "udp.srcport"];
    for x in captured(
        sock,
        &pcap,
        &tx("mpls and ip6 and dst 2001:db8:400::/40"),
        &f,
    ) {
        assert_eq!(
            (x.get("mpls.label"), x.get("ipv6.dst"), x.get("udp.srcport")),
            ("300", "2001:db8:400::5", "1002"),
            "{x:?}"
        );
    }
    for x in captured(sock, &pcap, &tx("not mpls and host 2001:db8:100::9"), &f) {
        assert_eq!(
            (x.get("mpls.label"), x.get("udp.srcport")),
            ("", "1003"),
            "popped before it left: {x:?}"
        );
    }
}

#[test]
fn trace_and_capture_with_ipv6_filters() {
    let dir = TempDir::new("ctltrace6");
    std::fs::write(dir.path("routes.yaml"), ROUTES).unwrap();
    let frames: Vec<Vec<u8>> = mixed().into_iter().map(|(_, f)| f).collect();
    write_pcap(&dir.path("in.pcap"), &frames).unwrap();
    let cfg = replay_config(
        &dir,
        "tr6",
        "10.0.0.1/24, \"2001:db8::1/64\"",
        "10.0.1.1/24, \"2001:db8:1::1/64\"",
    );
    let sock = dir.path("ctl.sock");
    let router = LiveRouter::start(&cfg, 90.0);
    wait_for(&sock);
    check_traces(&sock);
    check_captures(&dir, &sock);
    let (status, output) = router.stop(Duration::from_secs(20));
    assert!(status.success(), "{output}");
}
