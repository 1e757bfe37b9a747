//! OSPFv3 and BGP over IPv6 through the router's control interfaces with real FRR:
//! namespaces A and B run zebra and ospf6d on veths (A also bgpd); namespace R runs
//! mplsrouter (af_packet ports facing A and B, control interfaces `mr-a` and `mr-b`
//! carrying the ports' IPv6 addresses and link-local ones) and its own zebra, ospf6d and
//! bgpd on those interfaces. OSPFv3 hellos to ff02::5 go up as link-local multicast,
//! its unicast packets to R's link-local address as local delivery, R's go down the TAP;
//! BGP runs over TCP between global addresses, the kernel resolving A by the NDP the
//! router mirrors up. R's zebra feeds the router over FPM, and the router forwards by
//! those IPv6 routes. FRR's `show ... json` and the hosts' `ping -6` are the oracles.
//!
//! Needs root and Debian's frr (tests/frr/harness.rs); skipped with a message otherwise.
#![forbid(unsafe_code)]

mod common;
#[path = "frr/harness.rs"]
mod harness;

use std::time::{Duration, Instant};

use common::{ip_in, sysctl};
use harness::{unavailable, Frr, FrrConfig};

const FPM_PORT: u16 = 2626;
/// The prefix A announces to R by BGP.
const ANNOUNCED: &str = "2001:db8:99::/48";

fn frr_config() -> FrrConfig {
    FrrConfig {
        fpm_port: FPM_PORT,
        next_hop_groups: true,
        zebra: String::new(),
        staticd: String::new(),
    }
}

/// zebra.conf lines: RAs every second on mr-b, announcing B's link prefix.
const RA_ON_B: &str = "interface mr-b\n no ipv6 nd suppress-ra\n ipv6 nd ra-interval 1\n \
                       ipv6 nd prefix 2001:db8:2::/64\n!\n";

/// The first router advertisement B's veth receives within 5 s: its source and the
/// prefixes it announces (tshark, capture filter on ICMPv6 type 134).
fn ra_seen_by_b(b: &Frr) -> Option<(String, String)> {
    let out = b
        .exec(&[
            "tshark",
            "-n",
            "-i",
            "b-r",
            "-a",
            "duration:5",
            "-c",
            "1",
            "-f",
            "icmp6 and ip6[40] == 134",
            "-T",
            "fields",
            "-e",
            "ipv6.src",
            "-e",
            "icmpv6.opt.prefix",
        ])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| !l.trim().is_empty())?;
    let mut f = line.split('\t');
    Some((f.next()?.to_string(), f.next().unwrap_or("").to_string()))
}

fn ospf6d_conf(rid: &str, ifs: &[&str]) -> String {
    let mut s = "hostname ospf6d\n".to_string();
    for i in ifs {
        s += &format!("interface {i}\n ipv6 ospf6 area 0\n");
        if *i != "lo" {
            s += " ipv6 ospf6 network point-to-point\n ipv6 ospf6 hello-interval 1\n \
                  ipv6 ospf6 dead-interval 4\n";
        }
        s += "!\n";
    }
    s + &format!("router ospf6\n ospf6 router-id {rid}\n log-adjacency-changes detail\n")
}

fn bgpd_conf(asn: u32, rid: &str, peer: &str, peer_as: u32, network: Option<&str>) -> String {
    let mut s = format!(
        "hostname bgpd\nrouter bgp {asn}\n bgp router-id {rid}\n no bgp ebgp-requires-policy\n \
         no bgp default ipv4-unicast\n no bgp network import-check\n \
         neighbor {peer} remote-as {peer_as}\n neighbor {peer} timers 1 3\n \
         neighbor {peer} timers connect 1\n address-family ipv6 unicast\n  neighbor {peer} activate\n"
    );
    if let Some(n) = network {
        s += &format!("  network {n}\n");
    }
    s + " exit-address-family\n"
}

fn router_config(dir: &std::path::Path, prefix: &str) -> std::path::PathBuf {
    let routes = dir.join("routes.yaml");
    std::fs::write(&routes, "{}\n").unwrap();
    let cfg = format!(
        "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: {prefix}}}\n\
         ports:\n\
         \x20 - {{name: a, vdev: \"net_af_packet_{prefix}a,iface=r-a\", addresses: [10.0.1.2/24, \"2001:db8:1::2/64\"], control_interface: mr-a}}\n\
         \x20 - {{name: b, vdev: \"net_af_packet_{prefix}b,iface=r-b\", addresses: [10.0.0.2/24, \"2001:db8:2::2/64\"], control_interface: mr-b}}\n\
         metrics_listen: 127.0.0.1:0\nidle: {{backoff: {{}}}}\n\
         fpm: {{listen: 127.0.0.1:{FPM_PORT}}}\n\
         routes: {}\n",
        routes.display()
    );
    let p = dir.join("router.yaml");
    std::fs::write(&p, cfg).unwrap();
    p
}

/// A - R - B with addresses, the router running in R; no FRR daemon yet. (Bind the
/// router last: it drops, and stops, before the namespaces go.)
fn topology() -> (Frr, Frr, Frr, common::Router) {
    let a = Frr::new("6a", &[], frr_config());
    let b = Frr::new("6b", &[], frr_config());
    // R's zebra sends router advertisements on mr-b (the router itself never does; a
    // network that wants RAs configures them in FRR, and they go down the TAP).
    let r = Frr::new(
        "6r",
        &[],
        FrrConfig {
            zebra: RA_ON_B.to_string(),
            ..frr_config()
        },
    );
    for f in [&a, &b] {
        // The hosts' link-local addresses are usable at once (no DAD).
        sysctl(&f.ns, &["net.ipv6.conf.default.accept_dad=0"]);
    }
    common::veth(&a.ns, "a-r", &r.ns, "r-a", Default::default());
    common::veth(&b.ns, "b-r", &r.ns, "r-b", Default::default());
    for (f, i, ip, lo, gw) in [
        (
            &a,
            "a-r",
            "2001:db8:1::1/64",
            "2001:db8:ff::1/128",
            "2001:db8:1::2",
        ),
        (
            &b,
            "b-r",
            "2001:db8:2::1/64",
            "2001:db8:ff::3/128",
            "2001:db8:2::2",
        ),
    ] {
        ip_in(&f.ns, &["addr", "add", ip, "dev", i, "nodad"]);
        ip_in(&f.ns, &["addr", "add", lo, "dev", "lo"]);
        if f.ns == a.ns {
            // A answers for an address of the prefix it announces by BGP.
            ip_in(&f.ns, &["addr", "add", "2001:db8:99::1/128", "dev", "lo"]);
        }
        // zebra's kernel writes are swallowed by the shim: a kernel default route.
        ip_in(&f.ns, &["-6", "route", "add", "default", "via", gw]);
    }
    // The veths the af_packet ports wrap are kernel interfaces of R too: without IPv6
    // they neither answer NDP nor take packets for the control interfaces' addresses
    // (a NIC bound to DPDK has no such twin).
    for i in ["r-a", "r-b"] {
        sysctl(&r.ns, &[&format!("net.ipv6.conf.{i}.disable_ipv6=1")]);
    }
    let launch = common::Launch::new(&router_config(&r.dir, &r.ns), 90.0)
        .netns(&r.ns)
        .log(r.path("router.out"))
        .ready(Some("fpm: listening"), Duration::from_secs(20));
    let router = common::Router::start(&launch);
    (a, b, r, router)
}

fn start_frr(a: &mut Frr, b: &mut Frr, r: &mut Frr) {
    for (f, rid, link) in [
        (&mut *a, "10.255.0.1", "a-r"),
        (&mut *b, "10.255.0.3", "b-r"),
    ] {
        f.start_zebra();
        f.start_daemon("ospf6d", &ospf6d_conf(rid, &[link, "lo"]));
    }
    a.start_daemon(
        "bgpd",
        &bgpd_conf(65001, "10.255.0.1", "2001:db8:1::2", 65000, Some(ANNOUNCED)),
    );
    r.start_zebra();
    r.start_daemon("ospf6d", &ospf6d_conf("10.255.0.2", &["mr-a", "mr-b"]));
    r.start_daemon(
        "bgpd",
        &bgpd_conf(65000, "10.255.0.2", "2001:db8:1::1", 65001, None),
    );
}

fn all_logs(frrs: &[&Frr]) -> String {
    let mut s = String::new();
    for f in frrs {
        s += &format!("===== {}\n{}", f.ns, f.logs());
    }
    let r = frrs[frrs.len() - 1];
    for f in ["router.out", "router.err"] {
        let t = std::fs::read_to_string(r.path(f)).unwrap_or_default();
        let tail: Vec<&str> = t.lines().rev().take(40).collect();
        s += &format!(
            "--- {f}\n{}\n",
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    s
}

/// Router ids of `f`'s OSPFv3 neighbours in state Full, with their interfaces
/// (`show ipv6 ospf6 neighbor json`, FRR 8.4: `neighbors: [{neighborId, state,
/// interfaceName}]`).
fn ospf6_full(f: &Frr) -> Vec<String> {
    let j = f.json("show ipv6 ospf6 neighbor json");
    let mut full: Vec<String> = j["neighbors"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|n| n["state"].as_str() == Some("Full"))
        .map(|n| {
            let id = n["neighborId"].as_str().unwrap_or("?");
            format!("{id} {}", n["interfaceName"].as_str().unwrap_or("?"))
        })
        .collect();
    full.sort();
    full
}

/// R's BGP session with `peer` (IPv6 unicast): its state and the prefixes received.
fn bgp6(r: &Frr, peer: &str) -> (String, u64) {
    let j = r.json("show bgp summary json");
    let p = &j["ipv6Unicast"]["peers"][peer];
    let state = p["state"].as_str().unwrap_or("none").to_string();
    (state, p["pfxRcd"].as_u64().unwrap_or(0))
}

/// The interfaces of the OSPFv3 routes to `prefix` in R's zebra, with their next hops
/// (`show ipv6 route PREFIX json`).
fn ospf6_route(r: &Frr, prefix: &str) -> Vec<String> {
    let j = r.json(&format!("show ipv6 route {prefix} json"));
    let routes = j[prefix].as_array().cloned().unwrap_or_default();
    routes
        .iter()
        .filter(|x| x["protocol"] == "ospf6")
        .flat_map(|x| x["nexthops"].as_array().cloned().unwrap_or_default())
        .map(|n| {
            let ip = n["ip"].as_str().unwrap_or("?");
            format!("{} {ip}", n["interfaceName"].as_str().unwrap_or("?"))
        })
        .collect()
}

/// `ping -6 -c COUNT -I SRC DST` in `from`'s namespace (1 s per reply at most).
fn ping6(from: &Frr, src: &str, dst: &str, count: &str) -> std::process::Output {
    let args = [
        "ping", "-6", "-c", count, "-i", "0.2", "-W", "1", "-I", src, dst,
    ];
    from.exec(&args).output().unwrap()
}

/// Polls `f` every 250 ms until it returns Some or `limit` passes.
fn poll<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn ospf6_and_bgp_over_ipv6_through_the_control_interfaces() {
    if let Some(why) = unavailable() {
        eprintln!("SKIPPED: FRR tests {why}");
        return;
    }
    let t0 = Instant::now();
    let (mut a, mut b, mut r, mut router) = topology();
    start_frr(&mut a, &mut b, &mut r);
    let logs = |a: &Frr, b: &Frr, r: &Frr| all_logs(&[a, b, r]);

    // OSPFv3 Full with A and B, seen from R and from each host.
    let want = ["10.255.0.1 mr-a", "10.255.0.3 mr-b"].map(String::from);
    let got = poll(Duration::from_secs(30), || {
        let got = ospf6_full(&r);
        (got == want).then_some(got)
    });
    assert!(
        got.is_some(),
        "OSPFv3 never Full with A and B: {:?}\n{}",
        ospf6_full(&r),
        logs(&a, &b, &r)
    );
    assert_eq!(ospf6_full(&a), ["10.255.0.2 a-r"], "{}", logs(&a, &b, &r));
    assert_eq!(ospf6_full(&b), ["10.255.0.2 b-r"], "{}", logs(&a, &b, &r));
    eprintln!("OSPFv3 Full after {:?}", t0.elapsed());
    // The databases were exchanged: R's zebra has A's and B's loopbacks by OSPFv3, via
    // their link-local addresses on the control interfaces.
    for (lo, via) in [
        ("2001:db8:ff::1/128", "mr-a"),
        ("2001:db8:ff::3/128", "mr-b"),
    ] {
        let nh = poll(Duration::from_secs(10), || {
            let nh = ospf6_route(&r, lo);
            (!nh.is_empty()).then_some(nh)
        })
        .unwrap_or_else(|| panic!("no OSPFv3 route to {lo} in R\n{}", logs(&a, &b, &r)));
        assert!(
            nh.iter().all(|n| n.starts_with(&format!("{via} fe80::"))),
            "{lo}: {nh:?}"
        );
    }

    // BGP over IPv6 between R's and A's global addresses; A's prefix received.
    let est = poll(Duration::from_secs(30), || {
        let s = bgp6(&r, "2001:db8:1::1");
        (s.0 == "Established" && s.1 >= 1).then_some(s)
    });
    assert!(
        est.is_some(),
        "BGP R <-> A over IPv6: {:?}\n{}",
        bgp6(&r, "2001:db8:1::1"),
        logs(&a, &b, &r)
    );
    eprintln!("BGP Established after {:?}", t0.elapsed());

    // zebra's routes reach the router over FPM and it forwards by them: A's loopback to
    // B's (OSPFv3 routes via link-local next hops), B to A's BGP prefix (via A's global
    // address). The hosts' ping -6 is the oracle.
    for (from, src, dst) in [
        (&a, "2001:db8:ff::1", "2001:db8:ff::3"),
        (&b, "2001:db8:2::1", "2001:db8:99::1"),
    ] {
        let ok = poll(Duration::from_secs(20), || {
            ping6(from, src, dst, "1").status.success().then_some(())
        });
        let out = ping6(from, src, dst, "3");
        assert!(
            ok.is_some() && out.status.success(),
            "ping -6 -I {src} {dst} through R: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            logs(&a, &b, &r)
        );
    }
    eprintln!("forwarded by FRR's IPv6 routes after {:?}", t0.elapsed());

    // zebra's RAs on mr-b leave by port b, from the port's link-local address.
    let (src, prefixes) = ra_seen_by_b(&b)
        .unwrap_or_else(|| panic!("no router advertisement reached B\n{}", logs(&a, &b, &r)));
    let tap = r
        .exec(&[
            "ip", "-6", "-j", "addr", "show", "dev", "mr-b", "scope", "link",
        ])
        .output()
        .unwrap();
    let tap: serde_json::Value = serde_json::from_slice(&tap.stdout).unwrap();
    let link_local = tap[0]["addr_info"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|a| a["local"].as_str())
        .unwrap_or("none");
    assert_eq!(src, link_local, "RA from {src}, mr-b has {tap}");
    assert!(
        prefixes.split(',').any(|p| p == "2001:db8:2::"),
        "RA prefixes {prefixes:?}"
    );

    let out = router.stop();
    for l in out.lines().filter(|l| l.starts_with("control interfaces:")) {
        eprintln!("router: {l}");
    }
    assert!(out.contains("mbufs not returned to the pool: 0"), "{out}");
    assert!(
        out.contains("mbufs unaccounted for by the workers: 0"),
        "{out}"
    );
}
