//! The control socket's IPv6 side against a live router on pcap vdevs: `show routes`
//! (one address, a family, paging), `show table` and `show neighbors` checked against the
//! routes file below, and `lookup` of each replayed IPv6 frame (native, 6PE, PHP to an
//! IPv6 neighbour) agreeing byte for byte with what the data path sent on `out`.
#![forbid(unsafe_code)]

mod common;
mod live;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

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

fn json<T: serde::de::DeserializeOwned>(sock: &Path, args: &[&str]) -> T {
    let mut a = args.to_vec();
    a.extend(["--json", "--socket", sock.to_str().unwrap()]);
    let out = Command::new(bin()).args(&a).output().unwrap();
    assert!(
        out.status.success(),
        "{a:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
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
