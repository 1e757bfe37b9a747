//! IPv6 from a real FRR: staticd's `ipv6 route`s (one next hop, ECMP, a label stack, 6PE
//! through `::ffff:10.0.1.2` with a label, a blackhole) reach the router over zebra's
//! `dplane_fpm_nl` and forward exactly as zebra selected them (`show ipv6 route json`,
//! parsed, is the oracle; tshark decodes what left the router); deletes and a shrinking
//! ECMP set are followed; the router's `show fpm` counts what zebra installed.
//!
//! Needs root and Debian's frr (as tests/frr.rs); skipped with a message otherwise.
#![forbid(unsafe_code)]

mod common;
#[path = "frr/harness.rs"]
mod harness;
#[path = "frr/hosts.rs"]
mod hosts;
#[path = "frr/oracle.rs"]
mod oracle;
#[path = "frr/probe.rs"]
mod probe;
#[path = "frr/router.rs"]
mod router;
#[path = "frr/scenario.rs"]
mod scenario;

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harness::{unavailable, wait_until, Frr, FrrConfig};
use hosts::Hosts;
use oracle::{check, Expect, World};
use probe::{Seen, ROUTER_IN_MAC};

/// The IPv6 prefixes probed (2001:db8:N::/48, probed at 2001:db8:N::1).
const PREFIXES: [u16; 5] = [0x100, 0x200, 0x300, 0x600, 0x700];

const STATICS: &[&str] = &[
    "ipv6 route 2001:db8:100::/48 2001:db8:1::2",
    "ipv6 route 2001:db8:200::/48 2001:db8:1::2",
    "ipv6 route 2001:db8:200::/48 2001:db8:2::2",
    "ipv6 route 2001:db8:300::/48 2001:db8:2::2 label 300/301",
    // 6PE: zebra resolves an IPv4-mapped gateway only with its interface.
    "ipv6 route 2001:db8:600::/48 ::ffff:10.0.1.2 port1 label 600",
    "ipv6 route 2001:db8:700::/48 blackhole",
];

fn prefix(n: u16) -> String {
    format!("2001:db8:{n:x}::/48")
}

fn addr(n: u16, h: u8) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[..6].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8, (n >> 8) as u8, n as u8]);
    a[15] = h;
    a
}

/// zebra's names -> the router's: interfaces, and each gateway's MAC (the routes file's
/// static neighbours; 6PE's `::ffff:10.0.1.2` is the IPv4 neighbour 10.0.1.2, whose MAC
/// differs from 2001:db8:1::2's on the same link, so the two cannot be confused; the
/// host captures promiscuously).
fn world() -> World {
    let mut w = scenario::world();
    for (gw, mac) in [
        ("2001:db8:1::2", "02:00:00:00:01:62"),
        ("2001:db8:2::2", "02:00:00:00:02:02"),
        // FRR writes ::ffff:10.0.1.2 in hex.
        ("::ffff:a00:102", "02:00:00:00:01:02"),
    ] {
        w.macs.insert(gw.into(), mac.into());
    }
    w
}

/// zebra's IPv6 routes (parsed JSON) as the expectation per probed prefix.
fn oracle(frr: &Frr) -> Vec<Expect> {
    let routes = frr.json("show ipv6 route json");
    let w = world();
    let blackhole = |p: &str| {
        routes[p].as_array().is_some_and(|a| {
            a.iter().any(|r| {
                r["selected"] == true
                    && r["nexthops"]
                        .as_array()
                        .is_some_and(|h| h.iter().any(|h| h["blackhole"] == true))
            })
        })
    };
    PREFIXES
        .iter()
        .map(|&n| match prefix(n) {
            p if blackhole(&p) => Expect::Dropped,
            p => w.ipv4(&routes, &p),
        })
        .collect()
}

/// IPv6 routes zebra selected and installed, link-local ones aside.
fn installed_count(frr: &Frr) -> u64 {
    let routes = frr.json("show ipv6 route json");
    let map = routes.as_object().expect("an object");
    map.iter()
        .filter(|(p, _)| !p.starts_with("fe80:"))
        .filter(|(_, v)| {
            v.as_array().is_some_and(|a| {
                a.iter()
                    .any(|r| r["selected"] == true && r["installed"] == true)
            })
        })
        .count() as u64
}

/// Sends 16 flows per prefix (UDP source port `base + 16 * i + k`) into the router.
fn send(frr: &Frr, base: u16) {
    let mut hex = String::new();
    for (i, &n) in PREFIXES.iter().enumerate() {
        for k in 0..16u16 {
            let f = traffic::Frame6Spec {
                dst_mac: ROUTER_IN_MAC,
                src_mac: [2, 0, 0, 0, 0, 2],
                src_ip: addr(0, 2),
                dst_ip: addr(n, 1 + k as u8),
                src_port: base + 16 * i as u16 + k,
                ..Default::default()
            }
            .build();
            hex += &f.iter().map(|b| format!("{b:02x}")).collect::<String>();
            hex.push('\n');
        }
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/frr/send_frames.py");
    let mut c = frr
        .exec(&["python3", script, "inj0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(hex.as_bytes()).unwrap();
    assert!(c.wait().unwrap().success());
}

/// What left the router's output ports, by UDP source port.
fn seen(frr: &Frr) -> BTreeMap<u16, Vec<Seen>> {
    let mut all: BTreeMap<u16, Vec<Seen>> = BTreeMap::new();
    for port in ["out1", "out2"] {
        let pcap = frr.path(&format!("{port}.pcap"));
        if std::fs::metadata(&pcap).map_or(0, |m| m.len()) < 24 {
            continue;
        }
        let fields = [
            "udp.srcport",
            "eth.src",
            "eth.dst",
            "mpls.label",
            "ipv6.dst",
        ];
        for d in common::tshark(&pcap, &fields) {
            if !d.get("eth.src").ends_with(":01") || d.get("ipv6.dst").is_empty() {
                continue;
            }
            let Ok(sport) = d.get("udp.srcport").parse() else {
                continue;
            };
            all.entry(sport).or_default().push(Seen {
                port: port.into(),
                eth_dst: d.get("eth.dst").into(),
                labels: d
                    .list("mpls.label")
                    .iter()
                    .filter_map(|l| l.parse().ok())
                    .collect(),
                ip_dst: d.get("ipv6.dst").into(),
            });
        }
    }
    all
}

/// One round checked against `expect`: sends, then waits (bounded) until every flow
/// expected out is out, and checks each prefix's flows with the IPv4 tests' checker.
fn round(frr: &Frr, base: u16, expect: &[Expect]) -> Result<(), String> {
    send(frr, base);
    let want = expect
        .iter()
        .filter(|e| matches!(e, Expect::Forward(_)))
        .count()
        * 16;
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut s = seen(frr);
    loop {
        let got = (base..base + 16 * PREFIXES.len() as u16)
            .filter(|p| s.contains_key(p))
            .count();
        if got >= want || Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        s = seen(frr);
    }
    let mut errors = Vec::new();
    for (i, e) in expect.iter().enumerate() {
        let flows: Vec<Vec<Seen>> = (0..16)
            .map(|k| {
                s.get(&(base + 16 * i as u16 + k))
                    .cloned()
                    .unwrap_or_default()
            })
            .collect();
        if let Err(m) = check(&prefix(PREFIXES[i]), e, &flows) {
            errors.push(m);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

/// A number under `key` anywhere in the router's `show fpm --json`.
fn fpm_field(sock: &std::path::Path, key: &str) -> u64 {
    let o = Command::new(common::bin())
        .args(["show", "fpm", "--json", "--socket", sock.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    fn find(v: &serde_json::Value, key: &str) -> Option<u64> {
        let m = v.as_object()?;
        m.get(key)
            .and_then(|x| x.as_u64())
            .or_else(|| m.values().find_map(|x| find(x, key)))
    }
    find(&v, key).unwrap_or_else(|| panic!("no {key} in {v}"))
}

#[test]
fn frr_ipv6_static_routes_and_6pe_forward_through_the_router() {
    if let Some(why) = unavailable().or_else(router::fpm_unsupported) {
        eprintln!("SKIPPED: FRR IPv6 test {why}");
        return;
    }
    let t0 = Instant::now();
    let mut frr = Frr::new(
        "6",
        &scenario::ports(),
        FrrConfig {
            fpm_port: 2620,
            next_hop_groups: true,
            zebra: String::new(),
            staticd: String::new(),
        },
    );
    // zebra resolves IPv6 gateways through its interfaces' IPv6 subnets.
    for i in 0..3 {
        let a = format!("2001:db8:{i}::1/64");
        let dev = format!("port{i}");
        harness::sh(&["ip", "-n", &frr.ns, "addr", "add", &a, "dev", &dev, "nodad"]);
    }
    let fpm = "{listen: 127.0.0.1:2620, hold_time_s: 6, resync_settle_ms: 1500, \
               interfaces: {port0: in, port1: out1, port2: out2}}";
    let dir = frr.dir.clone();
    let mut hosts = Hosts::new("frr6");
    let ports = router::probe_ports(&frr.ns, &dir, &mut hosts, &mut frr.others, false);
    let ports = ports
        .replace("[10.0.1.1/24]", "[10.0.1.1/24, \"2001:db8:1::1/64\"]")
        .replace("[10.0.2.1/24]", "[10.0.2.1/24, \"2001:db8:2::1/64\"]");
    let mut routes = String::from("neighbors:\n");
    for (ip, mac) in [
        ("10.0.1.2", "02:00:00:00:01:02"),
        ("\"2001:db8:1::2\"", "02:00:00:00:01:62"),
        ("\"2001:db8:2::2\"", "02:00:00:00:02:02"),
    ] {
        routes += &format!("  - {{ip: {ip}, mac: \"{mac}\"}}\n");
    }
    let mut router = router::start(&frr.ns, &dir, &ports, fpm, &routes);
    frr.start_zebra();
    frr.start_staticd();

    // 1. Routes appear as zebra installs them.
    frr.configure(STATICS);
    let full = wait_until(
        "FRR installs the IPv6 routes",
        Duration::from_secs(20),
        || {
            let e = oracle(&frr);
            let fwd = e
                .iter()
                .filter(|x| matches!(x, Expect::Forward(h) if !h.is_empty()));
            if fwd.count() == 4 && e[4] == Expect::Dropped && installed_count(&frr) >= 8 {
                Ok(e)
            } else {
                Err(format!("{e:?}\n{}", frr.logs()))
            }
        },
    );
    assert!(
        matches!(&full[1], Expect::Forward(h) if h.len() == 2),
        "{full:?}"
    );
    let mut base = 1000;
    wait_until(
        "the router forwards FRR's IPv6 routes",
        Duration::from_secs(15),
        || {
            base += 100;
            round(&frr, base, &full)
        },
    );
    // What zebra installed (statics and connected subnets) is what the router holds,
    // less what its own port subnets override.
    let zebra_has = installed_count(&frr);
    let sock = router.control_socket();
    wait_until(
        "show fpm counts zebra's IPv6 routes",
        Duration::from_secs(5),
        || {
            let n = fpm_field(&sock, "ipv6_routes") + fpm_field(&sock, "overridden_ipv6_routes");
            if n == zebra_has {
                Ok(())
            } else {
                Err(format!("router {n}, zebra {zebra_has}"))
            }
        },
    );
    assert_eq!(
        fpm_field(&sock, "overridden_ipv6_routes"),
        2,
        "out1's and out2's /64"
    );

    // 2. A delete and a shrinking ECMP set.
    frr.configure(&[
        "no ipv6 route 2001:db8:100::/48 2001:db8:1::2",
        "no ipv6 route 2001:db8:200::/48 2001:db8:2::2",
    ]);
    let after = wait_until("FRR applies the deletes", Duration::from_secs(20), || {
        let e = oracle(&frr);
        if e[0] == Expect::Dropped && matches!(&e[1], Expect::Forward(h) if h.len() == 1) {
            Ok(e)
        } else {
            Err(format!("{e:?}"))
        }
    });
    wait_until(
        "the router follows the deletes",
        Duration::from_secs(15),
        || {
            base += 100;
            round(&frr, base, &after)
        },
    );
    let out = router.stop();
    assert!(!out.contains("panicked"), "{out}");
    eprintln!(
        "frr ipv6: zebra's {full:?} then {after:?}; total {:?}",
        t0.elapsed()
    );
}
