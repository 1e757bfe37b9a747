//! Linux hosts routing through the real router: network namespaces, veth pairs, router
//! ports on `net_af_packet`. The hosts are real Linux network stacks, so ping,
//! traceroute and ARP are answered by an independent implementation.
//!
//! Needs root (as CI runs); skipped with a message otherwise.
#![forbid(unsafe_code)]

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{ip_in, is_root, Launch, Router, TempDir};

/// Namespaces created by one test, removed on drop (their veths go with them).
struct Topo {
    ns: common::Netns,
}

impl Topo {
    fn new(tag: &str) -> Topo {
        Topo {
            ns: common::Netns::new(tag),
        }
    }
    fn ns(&mut self, n: &str) -> String {
        self.ns.add(n)
    }
    /// A veth pair `a`@`ns_a` <-> `b`@`ns_b`, both up, with checksum offload off so
    /// af_packet sees complete checksums.
    fn link(&self, ns_a: &str, a: &str, ns_b: &str, b: &str) {
        common::veth(ns_a, a, ns_b, b, Default::default());
    }
    fn host(&self, ns: &str, iface: &str, addr: &str, gw: &str) {
        common::host_addr(ns, iface, addr, gw);
    }
}

/// The router of namespace `ns`: ports `(name, iface, address, extra keys)` on
/// af_packet, `routes` as its routes file; started and ready (its first table).
fn start_router(
    ns: &str,
    dir: &TempDir,
    name: &str,
    ports: &[(&str, &str, &str, &str)],
    routes: &str,
) -> Router {
    let mut cfg = format!(
        "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: {ns}-{name}}}\nports:\n"
    );
    for (i, (pname, iface, addr, extra)) in ports.iter().enumerate() {
        cfg += &format!(
            "  - {{name: {pname}, vdev: \"net_af_packet_{name}{i},iface={iface}\", addresses: [{addr}]{extra}}}\n"
        );
    }
    cfg += "routes: ROUTES\nmetrics_listen: 127.0.0.1:0\nidle: {backoff: {}}\n";
    let routes_path = dir.path(&format!("{name}-routes.yaml"));
    std::fs::write(&routes_path, routes).unwrap();
    let cfg = cfg.replace("ROUTES", &routes_path.display().to_string());
    let cfg_path = dir.path(&format!("{name}.yaml"));
    std::fs::write(&cfg_path, cfg).unwrap();
    Router::start(&Launch::new(&cfg_path, 120.0).netns(ns))
}

/// [`start_router`] with no extra keys on any port.
fn start(
    ns: &str,
    dir: &TempDir,
    name: &str,
    ports: &[(&str, &str, &str)],
    routes: &str,
) -> Router {
    let ports: Vec<_> = ports.iter().map(|&(p, i, a)| (p, i, a, "")).collect();
    start_router(ns, dir, name, &ports, routes)
}

#[test]
fn two_hosts_ping_through_one_router_and_the_router_answers() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    let dir = TempDir::new("netns-a");
    let mut t = Topo::new("ma");
    let (h1, h2, r) = (t.ns("h1"), t.ns("h2"), t.ns("r"));
    t.link(&h1, "eth0", &r, "r-h1");
    t.link(&h2, "eth0", &r, "r-h2");
    t.host(&h1, "eth0", "10.1.0.2/24", "10.1.0.1");
    t.host(&h2, "eth0", "10.2.0.2/24", "10.2.0.1");
    let mut router = start(
        &r,
        &dir,
        "r",
        &[("h1", "r-h1", "10.1.0.1/24"), ("h2", "r-h2", "10.2.0.1/24")],
        "{}\n",
    );

    // Across the router: ARP for the router's address, glean for the far host.
    let out = common::ping(&h1, "10.2.0.2", &["-c", "5", "-i", "0.2", "-W", "2"]);
    assert!(
        common::loss_line(&out).contains(" 0% packet loss"),
        "{}\n{}",
        common::loss_line(&out),
        router.output()
    );
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("ttl=63"),
        "the router must decrement TTL once:\n{s}"
    );
    // The router's own addresses answer ping.
    let out = common::ping(&h2, "10.2.0.1", &["-c", "2", "-i", "0.2", "-W", "2"]);
    assert!(
        common::loss_line(&out).contains(" 0% packet loss"),
        "{}",
        common::loss_line(&out)
    );
    // TTL 1 towards the far host: time exceeded from the router.
    let out = common::ping(&h1, "10.2.0.2", &["-c", "1", "-t", "1", "-W", "2"]);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("From 10.1.0.1") && s.contains("Time to live exceeded"),
        "{s}"
    );

    let log = router.stop();
    assert!(log.contains("mbufs not returned to the pool: 0"), "{log}");
}

/// Promiscuous mode only where the config asks for it; and an ICMP error the router
/// originates towards a host it has no ARP entry for is sent once ARP resolves it (the
/// slow path holds it as the router's own packet, not as one received from outside).
#[test]
fn promiscuous_only_where_configured_and_held_icmp_is_sent_after_arp() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    let dir = TempDir::new("netns-p");
    let mut t = Topo::new("mp");
    let (h1, h2, r) = (t.ns("h1"), t.ns("h2"), t.ns("r"));
    t.link(&h1, "eth0", &r, "r-h1");
    t.link(&h2, "eth0", &r, "r-h2");
    t.host(&h1, "eth0", "10.1.0.2/24", "10.1.0.1");
    t.host(&h2, "eth0", "10.2.0.2/24", "10.2.0.1");
    let mut router = start_router(
        &r,
        &dir,
        "r",
        &[
            ("h1", "r-h1", "10.1.0.1/24", ", promiscuous: false"),
            ("h2", "r-h2", "10.2.0.1/24", ", promiscuous: true"),
        ],
        "{}\n",
    );
    let flags = |i: &str| ip_in(&r, &["-o", "link", "show", i]);
    assert!(!flags("r-h1").contains("PROMISC"), "{}", flags("r-h1"));
    assert!(flags("r-h2").contains("PROMISC"), "{}", flags("r-h2"));

    // h1 knows the router's MAC statically, so the router never hears from it by ARP:
    // the time exceeded it sends back needs a glean of 10.1.0.2 first.
    let mac = common::mac_of(&r, "r-h1");
    ip_in(
        &h1,
        &["neigh", "add", "10.1.0.1", "lladdr", &mac, "dev", "eth0"],
    );
    let out = common::ping(&h1, "10.2.0.2", &["-c", "1", "-t", "1", "-W", "3"]);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("From 10.1.0.1") && s.contains("Time to live exceeded"),
        "{s}\n{}",
        router.output()
    );
    // Through the non-promiscuous port and back.
    let out = common::ping(&h1, "10.2.0.2", &["-c", "3", "-i", "0.2", "-W", "2"]);
    assert!(
        common::loss_line(&out).contains(" 0% packet loss"),
        "{}\n{}",
        common::loss_line(&out),
        router.output()
    );
    let log = router.stop();
    assert!(log.contains("mbufs not returned to the pool: 0"), "{log}");
}

/// h1 - R1 (ingress LER) - R2 (LSR) - R3 (egress LER) - h2, labels both ways.
struct Lsp {
    _dir: TempDir,
    t: Topo,
    h1: String,
    h2: String,
    routers: Vec<Router>,
    r1_routes: std::path::PathBuf,
}

const R1_ROUTES: &str = "ipv4:\n  - {prefix: 10.2.0.0/24, via: 10.12.0.2, push: [100]}\nmpls:\n  - {in_label: 400, action: pop_and_lookup}\n";
const R2_ROUTES: &str = "mpls:\n  - {in_label: 100, action: swap, via: 10.23.0.2, push: [200]}\n  - {in_label: 300, action: swap, via: 10.12.0.1, push: [400]}\n";
const R3_ROUTES: &str = "ipv4:\n  - {prefix: 10.1.0.0/24, via: 10.23.0.1, push: [300]}\nmpls:\n  - {in_label: 200, action: pop_and_lookup}\n";

fn lsp(tag: &str) -> Lsp {
    let dir = TempDir::new(tag);
    let mut t = Topo::new(tag);
    let (h1, h2, r1, r2, r3) = (t.ns("h1"), t.ns("h2"), t.ns("r1"), t.ns("r2"), t.ns("r3"));
    t.link(&h1, "eth0", &r1, "r1-h1");
    t.link(&r1, "r1-r2", &r2, "r2-r1");
    t.link(&r2, "r2-r3", &r3, "r3-r2");
    t.link(&r3, "r3-h2", &h2, "eth0");
    t.host(&h1, "eth0", "10.1.0.2/24", "10.1.0.1");
    t.host(&h2, "eth0", "10.2.0.2/24", "10.2.0.1");
    let routers = vec![
        start(
            &r1,
            &dir,
            "r1",
            &[
                ("h1", "r1-h1", "10.1.0.1/24"),
                ("core", "r1-r2", "10.12.0.1/30"),
            ],
            R1_ROUTES,
        ),
        start(
            &r2,
            &dir,
            "r2",
            &[
                ("west", "r2-r1", "10.12.0.2/30"),
                ("east", "r2-r3", "10.23.0.1/30"),
            ],
            R2_ROUTES,
        ),
        start(
            &r3,
            &dir,
            "r3",
            &[
                ("core", "r3-r2", "10.23.0.2/30"),
                ("h2", "r3-h2", "10.2.0.1/24"),
            ],
            R3_ROUTES,
        ),
    ];
    let r1_routes = dir.path("r1-routes.yaml");
    Lsp {
        _dir: dir,
        t,
        h1,
        h2,
        routers,
        r1_routes,
    }
}

#[test]
fn lsp_through_three_routers_carries_ping_and_traceroute_sees_every_lsr() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    let mut l = lsp("mb");
    let _ = &l.t;
    let out = common::ping(&l.h1, "10.2.0.2", &["-c", "5", "-i", "0.2", "-W", "2"]);
    assert!(
        common::loss_line(&out).contains(" 0% packet loss"),
        "{}\n{}",
        common::loss_line(&out),
        l.routers
            .iter()
            .map(|r| r.output())
            .collect::<Vec<_>>()
            .join("\n")
    );
    let out = common::ping(&l.h2, "10.1.0.2", &["-c", "3", "-i", "0.2", "-W", "2"]);
    assert!(
        common::loss_line(&out).contains(" 0% packet loss"),
        "{}",
        common::loss_line(&out)
    );

    // traceroute (UDP probes): R1 by its IPv4 TTL, R2 and R3 by the label TTL; the LSRs'
    // replies travel on along the LSP and carry the RFC 4950 label stack (-e shows it).
    let out = Command::new("ip")
        .args([
            "netns",
            "exec",
            &l.h1,
            "traceroute",
            "-n",
            "-e",
            "-q",
            "1",
            "-w",
            "2",
            "-m",
            "6",
            "10.2.0.2",
        ])
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    let hops: Vec<&str> = s.lines().skip(1).collect();
    assert!(hops.len() >= 4, "{s}");
    assert!(hops[0].contains("10.1.0.1"), "hop 1 is R1:\n{s}");
    assert!(
        hops[1].contains("10.12.0.2") && hops[1].contains("MPLS:L=100"),
        "hop 2 is R2 with label 100:\n{s}"
    );
    assert!(
        hops[2].contains("10.23.0.2") && hops[2].contains("MPLS:L=200"),
        "hop 3 is R3 with label 200:\n{s}"
    );
    assert!(
        hops[3].contains("10.2.0.2"),
        "hop 4 is the destination:\n{s}"
    );

    for r in &mut l.routers {
        let log = r.stop();
        assert!(log.contains("mbufs not returned to the pool: 0"), "{log}");
    }
}

#[test]
fn routes_reload_during_a_ping_flood_loses_nothing() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    let mut l = lsp("mc");
    // Warm up ARP on every hop.
    let out = common::ping(&l.h1, "10.2.0.2", &["-c", "3", "-i", "0.2", "-W", "2"]);
    assert!(
        common::loss_line(&out).contains(" 0% packet loss"),
        "{}",
        common::loss_line(&out)
    );

    let flood = Command::new("ip")
        .args([
            "netns", "exec", &l.h1, "ping", "-f", "-c", "3000", "-W", "1", "10.2.0.2",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Rewrite R1's routes file (by rename, as editors do) with an extra route each time.
    for i in 0..20 {
        let text = format!("{R1_ROUTES}  # rewrite {i}\n").replace(
            "ipv4:\n",
            &format!("ipv4:\n  - {{prefix: 172.16.{i}.0/24, via: 10.12.0.2, push: [100]}}\n"),
        );
        let tmp = l.r1_routes.with_extension("tmp");
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, &l.r1_routes).unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = flood.wait_with_output().unwrap();
    let r1 = l.routers[0].stop();
    assert!(
        common::loss_line(&out).contains(" 0% packet loss"),
        "{}\n{r1}",
        common::loss_line(&out)
    );
    let reloads = r1.matches("reload: generation").count();
    assert!(
        reloads >= 10,
        "expected the rewrites to be applied ({reloads}):\n{r1}"
    );
}
