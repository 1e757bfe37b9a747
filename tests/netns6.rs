//! IPv6 through the real router with Linux hosts in network namespaces (issue #20): native
//! forwarding, the router's own addresses, ICMPv6 errors, NDP in both directions, and
//! 6PE across a three-router LSP. The hosts' own stacks and tools are the oracles:
//! `ping -6`, `traceroute -6`, `ip -j -6 neigh`, the kernels' ICMPv6 counters
//! (`/proc/net/snmp6`) and route cache (`ip -6 route get`).
//!
//! Every router port is `net_af_packet` over a veth; hosts' addresses are added `nodad`
//! so they are usable at once. On a failure the routers are stopped first and their stop
//! summaries (drops by reason, slow-path counts) are part of the message, to tell a
//! forwarding fault from a slow-path one.
//!
//! Needs root (as CI runs); skipped with a message otherwise.
#![forbid(unsafe_code)]

mod common;

use std::process::{Command, Output};

use common::{is_root, sh, Launch, Netns, Router, TempDir};

/// One router port: config name, veth in the router's namespace, the contents of its
/// `addresses: [...]` list (`10.1.0.1/24, "2001:db8:1::1/64"`), and more keys
/// (`, mtu: 1280`), empty for none.
struct Port<'a>(&'a str, &'a str, &'a str, &'a str);

/// Writes `<name>.yaml` and `<name>-routes.yaml` into `dir` (ports on `net_af_packet`
/// over the veths), starts the router in `ns` (at most 120 s) and waits for its first
/// table generation.
fn start_router(ns: &str, dir: &TempDir, name: &str, ports: &[Port], routes: &str) -> Router {
    let routes_path = dir.path(&format!("{name}-routes.yaml"));
    std::fs::write(&routes_path, routes).unwrap();
    let mut cfg = format!(
        "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: {ns}-{name}}}\nports:\n"
    );
    for (i, Port(pname, iface, addrs, extra)) in ports.iter().enumerate() {
        cfg += &format!(
            "  - {{name: {pname}, vdev: \"net_af_packet_{name}{i},iface={iface}\", addresses: [{addrs}]{extra}}}\n"
        );
    }
    cfg += &format!(
        "routes: {}\nmetrics_listen: 127.0.0.1:0\nidle: {{backoff: {{}}}}\n",
        routes_path.display()
    );
    let cfg_path = dir.path(&format!("{name}.yaml"));
    std::fs::write(&cfg_path, cfg).unwrap();
    Router::start(&Launch::new(&cfg_path, 120.0).netns(ns))
}

/// `addr` (nodad) on `ns`'s eth0 and a default route via `gw`.
fn host6(ns: &str, addr: &str, gw: &str) {
    sh(&["ip", "-n", ns, "addr", "add", addr, "dev", "eth0", "nodad"]);
    sh(&[
        "ip", "-n", ns, "-6", "route", "add", "default", "via", gw, "dev", "eth0",
    ]);
}

fn link(ns_a: &str, a: &str, ns_b: &str, b: &str, mtu: Option<u16>) {
    let o = common::VethOpts {
        mtu,
        ..Default::default()
    };
    common::veth(ns_a, a, ns_b, b, o);
}

/// The MAC of `iface` in `ns`.
fn mac_of(ns: &str, iface: &str) -> String {
    let out = sh(&["ip", "-n", ns, "-o", "link", "show", iface]);
    let at = out.find("link/ether ").expect("an Ethernet interface") + "link/ether ".len();
    out[at..at + 17].to_string()
}

/// `ping -6 EXTRA... DST` in `ns`.
fn ping6(ns: &str, dst: &str, extra: &[&str]) -> Output {
    let mut args = vec!["-6"];
    args.extend_from_slice(extra);
    common::ping(ns, dst, &args)
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn no_loss(o: &Output) -> bool {
    common::loss_line(o).contains(" 0% packet loss")
}

/// `traceroute -6 -n -q 1 -w 2 -m 6 EXTRA... DST` in `ns`: its output and the hop lines.
fn traceroute6(ns: &str, dst: &str, extra: &[&str]) -> (String, Vec<String>) {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "traceroute", "-6", "-n"])
        .args(extra)
        .args(["-q", "1", "-w", "2", "-m", "6", dst])
        .output()
        .unwrap();
    let s = text(&out);
    let hops = String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(1)
        .map(str::to_owned)
        .collect();
    (s, hops)
}

/// The hosts' kernel's ICMPv6 counter `name` (`Icmp6InNeighborSolicits`, ...) in `ns`.
fn snmp6(ns: &str, name: &str) -> u64 {
    let s = sh(&["ip", "netns", "exec", ns, "cat", "/proc/net/snmp6"]);
    s.lines()
        .find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some(name)).then(|| w.next().unwrap().parse().unwrap())
        })
        .unwrap_or_else(|| panic!("no {name} in /proc/net/snmp6"))
}

/// `ns`'s IPv6 neighbour entry for `dst` (`ip -j -6 neigh`), if any.
fn neigh6(ns: &str, dst: &str) -> Option<serde_json::Value> {
    let s = sh(&["ip", "-j", "-n", ns, "-6", "neigh", "show"]);
    let v: serde_json::Value = serde_json::from_str(&s).unwrap();
    v.as_array()?.iter().find(|e| e["dst"] == dst).cloned()
}

/// Stops every router and returns their outputs, after the non-zero drop, slow-path,
/// NDP and ICMP counters of their live metrics: the context of a failed assertion.
fn logs(routers: &mut [Router]) -> String {
    const WORDS: &[&str] = &["drop", "slow", "punt", "ndp", "icmp", "neigh"];
    routers
        .iter_mut()
        .enumerate()
        .map(|(i, r)| format!("--- router {} ---\n{}", i + 1, r.report(WORDS)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Stops every router and checks each returned all its mbufs.
fn stop_clean(routers: &mut [Router]) {
    for r in routers {
        let log = r.stop();
        assert!(log.contains("mbufs not returned to the pool: 0"), "{log}");
    }
}

/// h1 (2001:db8:1::2) - R - h2 (2001:db8:2::2). Fields drop in order: the router stops
/// before its namespaces go.
struct OneRouter {
    r: Vec<Router>,
    _ns: Netns,
    _dir: TempDir,
    h1: String,
    h2: String,
    rns: String,
}

/// The one-router topology with `routes`; `h2_mtu` sets the h2 link's MTU on both ends
/// (host and router port).
fn one_router_with(tag: &str, h2_mtu: Option<u16>, routes: &str) -> OneRouter {
    let dir = TempDir::new(tag);
    let mut ns = Netns::new(tag);
    let (h1, h2, r) = (ns.add("h1"), ns.add("h2"), ns.add("r"));
    link(&h1, "eth0", &r, "r-h1", None);
    link(&h2, "eth0", &r, "r-h2", h2_mtu);
    host6(&h1, "2001:db8:1::2/64", "2001:db8:1::1");
    host6(&h2, "2001:db8:2::2/64", "2001:db8:2::1");
    let mtu = h2_mtu.map(|m| format!(", mtu: {m}")).unwrap_or_default();
    let router = start_router(
        &r,
        &dir,
        "r",
        &[
            Port("h1", "r-h1", "10.1.0.1/24, \"2001:db8:1::1/64\"", ""),
            Port("h2", "r-h2", "10.2.0.1/24, \"2001:db8:2::1/64\"", &mtu),
        ],
        routes,
    );
    OneRouter {
        r: vec![router],
        _ns: ns,
        _dir: dir,
        h1,
        h2,
        rns: r,
    }
}

fn one_router(tag: &str, h2_mtu: Option<u16>) -> OneRouter {
    one_router_with(tag, h2_mtu, "{}\n")
}

#[test]
fn ping6_and_traceroute6_through_one_router_and_the_router_answers() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    let mut t = one_router("sa", None);

    // Across the router: NDP for the router's address, NS for the far host (the first
    // request waits in the router's queue for the answer), hop limit decremented once.
    let out = ping6(&t.h1, "2001:db8:2::2", &["-c", "5", "-i", "0.2", "-W", "2"]);
    assert!(no_loss(&out), "{}\n{}", text(&out), logs(&mut t.r));
    assert!(
        text(&out).contains("ttl=63"),
        "the router must decrement the hop limit once:\n{}",
        text(&out)
    );
    // The router's own addresses answer echo requests, on either port.
    for (h, a) in [
        (&t.h2, "2001:db8:2::1"),
        (&t.h1, "2001:db8:1::1"),
        (&t.h1, "2001:db8:2::1"),
    ] {
        let out = ping6(h, a, &["-c", "2", "-i", "0.2", "-W", "2"]);
        assert!(
            no_loss(&out),
            "ping {a}: {}\n{}",
            text(&out),
            logs(&mut t.r)
        );
    }
    // Hop limit 1 towards the far host: time exceeded from the router's h1 address.
    let out = ping6(&t.h1, "2001:db8:2::2", &["-c", "1", "-t", "1", "-W", "2"]);
    let s = text(&out);
    assert!(
        s.contains("From 2001:db8:1::1") && s.contains("Time exceeded"),
        "{s}\n{}",
        logs(&mut t.r)
    );
    // traceroute (UDP probes): the router is hop 1, the destination hop 2.
    let (s, hops) = traceroute6(&t.h1, "2001:db8:2::2", &[]);
    eprintln!("{s}");
    assert!(hops.len() >= 2, "{s}\n{}", logs(&mut t.r));
    assert!(
        hops[0].contains("2001:db8:1::1"),
        "hop 1 is the router:\n{s}\n{}",
        logs(&mut t.r)
    );
    assert!(
        hops[1].contains("2001:db8:2::2"),
        "hop 2 is the destination:\n{s}\n{}",
        logs(&mut t.r)
    );
    stop_clean(&mut t.r);
}

#[test]
fn ipv6_errors_unreachable_without_a_route_and_packet_too_big_at_a_smaller_mtu() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    // The h2 link (both ends) has the IPv6 minimum MTU, 1280.
    let mut t = one_router("su", Some(1280));
    let out = ping6(&t.h1, "2001:db8:2::2", &["-c", "2", "-i", "0.2", "-W", "2"]);
    assert!(no_loss(&out), "{}\n{}", text(&out), logs(&mut t.r));

    // No route: destination unreachable from the router.
    let out = ping6(&t.h1, "2001:db8:99::1", &["-c", "1", "-W", "2"]);
    let s = text(&out);
    assert!(
        s.contains("From 2001:db8:1::1") && s.contains("Destination unreachable"),
        "{s}\n{}",
        logs(&mut t.r)
    );

    // 1348-byte packets, not to be fragmented: packet too big (mtu 1280) from the router,
    // which h1's kernel takes into its route cache...
    let big = ["-c", "1", "-W", "2", "-s", "1300", "-M", "do"];
    let out = ping6(&t.h1, "2001:db8:2::2", &big);
    let cached = sh(&["ip", "-n", &t.h1, "-6", "route", "get", "2001:db8:2::2"]);
    assert!(
        cached.contains("mtu 1280"),
        "h1 learned no path MTU of 1280 (ping said: {})\nroute: {cached}\n{}",
        text(&out),
        logs(&mut t.r)
    );
    // ... so that the same size now crosses, fragmented by h1 to fit.
    let out = ping6(
        &t.h1,
        "2001:db8:2::2",
        &["-c", "2", "-W", "2", "-s", "1300"],
    );
    assert!(no_loss(&out), "{}\n{}", text(&out), logs(&mut t.r));
    stop_clean(&mut t.r);
}

#[test]
fn ndp_the_host_resolves_the_router_and_the_router_resolves_the_host() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    let mut t = one_router("sn", None);
    // h2 knows the router statically, so it never solicits it: the router can only
    // learn 2001:db8:2::2's MAC by soliciting it.
    let r_h2 = mac_of(&t.rns, "r-h2");
    sh(&[
        "ip",
        "-n",
        &t.h2,
        "-6",
        "neigh",
        "add",
        "2001:db8:2::1",
        "lladdr",
        &r_h2,
        "dev",
        "eth0",
        "nud",
        "permanent",
    ]);
    assert!(neigh6(&t.h1, "2001:db8:1::1").is_none());
    let ns_in = snmp6(&t.h2, "Icmp6InNeighborSolicits");
    let na_out = snmp6(&t.h2, "Icmp6OutNeighborAdvertisements");

    let out = ping6(&t.h1, "2001:db8:2::2", &["-c", "3", "-i", "0.2", "-W", "2"]);
    assert!(no_loss(&out), "{}\n{}", text(&out), logs(&mut t.r));

    // The router solicited h2 and h2 answered (h2's kernel counted both).
    let (ns_in2, na_out2) = (
        snmp6(&t.h2, "Icmp6InNeighborSolicits"),
        snmp6(&t.h2, "Icmp6OutNeighborAdvertisements"),
    );
    assert!(
        ns_in2 > ns_in && na_out2 > na_out,
        "h2 saw no NS from the router ({ns_in} -> {ns_in2}) or sent no NA ({na_out} -> {na_out2})\n{}",
        logs(&mut t.r)
    );
    // h1 resolved the router: the router's MAC for its address, in a usable state.
    let r_h1 = mac_of(&t.rns, "r-h1");
    let e = neigh6(&t.h1, "2001:db8:1::1");
    let ok = e.as_ref().is_some_and(|e| {
        e["lladdr"] == r_h1.as_str()
            && ["REACHABLE", "STALE", "DELAY", "PROBE"]
                .iter()
                .any(|s| e["state"][0] == *s)
    });
    assert!(
        ok,
        "h1's entry for the router: {e:?} (want lladdr {r_h1}, reachable or stale)\n{}",
        logs(&mut t.r)
    );
    // RFC 4861 7.2.4: a router sets the Router flag in its advertisements.
    assert!(
        e.as_ref().is_some_and(|e| e.get("router").is_some()),
        "the router's NA lacks the Router flag: {e:?}"
    );
    // The router counted its resolution of h2, and holds learned IPv6 neighbours.
    let m = t.r[0].metrics_nonzero(&["resolved", "mplsrouter_neighbors"]);
    assert!(
        m.contains("mplsrouter_slow_path_ndp_total{message=\"resolved\"}")
            && m.contains("mplsrouter_neighbors{family=\"ipv6\"}"),
        "{m}"
    );
    stop_clean(&mut t.r);
}

#[test]
fn the_router_resolves_a_link_local_next_hop() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    let routes = "ipv6:\n  - {prefix: \"2001:db8:99::/64\", via: \"fe80::2\", port: h2}\n";
    let mut t = one_router_with("sk", None, routes);
    // h2 owns fe80::2 (the next hop) and 2001:db8:99::1 behind it.
    sh(&[
        "ip",
        "-n",
        &t.h2,
        "addr",
        "add",
        "fe80::2/64",
        "dev",
        "eth0",
        "nodad",
    ]);
    sh(&[
        "ip",
        "-n",
        &t.h2,
        "addr",
        "add",
        "2001:db8:99::1/128",
        "dev",
        "lo",
    ]);
    let out = ping6(
        &t.h1,
        "2001:db8:99::1",
        &["-c", "3", "-i", "0.2", "-W", "2"],
    );
    assert!(no_loss(&out), "{}\n{}", text(&out), logs(&mut t.r));
    stop_clean(&mut t.r);
}

/// Waits (at most 5 s) until `ns`'s eth0 link-local address has passed duplicate address
/// detection, so a ping from it has a source.
fn link_local_ready(ns: &str) {
    let start = std::time::Instant::now();
    loop {
        let a = sh(&[
            "ip", "-n", ns, "-6", "addr", "show", "dev", "eth0", "scope", "link",
        ]);
        if a.contains("fe80::") && !a.contains("tentative") {
            return;
        }
        assert!(
            start.elapsed().as_secs() < 5,
            "link-local never ready:\n{a}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The modified EUI-64 link-local address (RFC 4291 appendix A) of a MAC.
fn eui64_link_local(mac: &str) -> String {
    let b: Vec<u8> = mac
        .split(':')
        .map(|x| u8::from_str_radix(x, 16).unwrap())
        .collect();
    format!(
        "fe80::{:x}:{:x}:{:x}:{:x}",
        u16::from_be_bytes([b[0] ^ 2, b[1]]),
        u16::from_be_bytes([b[2], 0xff]),
        u16::from_be_bytes([0xfe, b[3]]),
        u16::from_be_bytes([b[4], b[5]])
    )
}

#[test]
fn the_router_answers_on_its_eui64_link_local_address() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    let mut t = one_router("sl", None);
    let ll = eui64_link_local(&mac_of(&t.rns, "r-h1"));
    link_local_ready(&t.h1);
    let out = ping6(
        &t.h1,
        &format!("{ll}%eth0"),
        &["-c", "2", "-i", "0.2", "-W", "2"],
    );
    assert!(
        no_loss(&out),
        "ping {ll}: {}\n{}",
        text(&out),
        logs(&mut t.r)
    );
    stop_clean(&mut t.r);
}

/// How the 6PE LSP ends at R3.
#[derive(Clone, Copy, PartialEq)]
enum Egress {
    /// One label; R3 pops it and looks the IPv6 packet up.
    PopAndLookup,
    /// Two labels, IPv6 explicit null (2) at the bottom; R3 pops both.
    ExplicitNull,
    /// R2 swaps the one label to IPv6 explicit null (2), as a penultimate hop does when
    /// the egress asks for explicit null; R3 pops it and looks the packet up.
    ExplicitNullTop,
    /// R2 pops the last label (PHP, payload IPv6); R3 routes the bare IPv6 packet.
    Php,
}

/// R1/R2/R3 routes for the LSP h1 - R1 - R2 - R3 - h2: IPv6 prefixes at the LERs
/// reached through the far side's IPv4 core address with labels (6PE, RFC 4798); the
/// core switches labels only and has no IPv6 routes (its ports carry an IPv6 address
/// only as the source of the ICMPv6 errors they send along the LSP).
fn routes_6pe(e: Egress) -> [String; 3] {
    let bottom = if e == Egress::ExplicitNull { ", 2" } else { "" };
    let r1 = format!(
        "ipv6:\n  - {{prefix: \"2001:db8:2::/64\", via: 10.12.0.2, push: [100{bottom}]}}\n\
         mpls:\n  - {{in_label: 400, action: pop_and_lookup}}\n"
    );
    let r3 = format!(
        "ipv6:\n  - {{prefix: \"2001:db8:1::/64\", via: 10.23.0.1, push: [300{bottom}]}}\n\
         mpls:\n  - {{in_label: 200, action: pop_and_lookup}}\n"
    );
    let r2 = match e {
        Egress::Php => {
            "mpls:\n  - {in_label: 100, action: pop, via: 10.23.0.2, payload: ipv6}\n  \
             - {in_label: 300, action: pop, via: 10.12.0.1, payload: ipv6}\n"
        }
        Egress::ExplicitNullTop => {
            "mpls:\n  - {in_label: 100, action: swap, via: 10.23.0.2, push: [2]}\n  \
             - {in_label: 300, action: swap, via: 10.12.0.1, push: [2]}\n"
        }
        _ => {
            "mpls:\n  - {in_label: 100, action: swap, via: 10.23.0.2, push: [200]}\n  \
             - {in_label: 300, action: swap, via: 10.12.0.1, push: [400]}\n"
        }
    };
    [r1, r2.to_string(), r3]
}

/// The three-router 6PE LSP, IPv6 hosts at both ends.
fn lsp6(tag: &str, e: Egress) -> OneRouter {
    lsp6_mtu(tag, e, None)
}

/// [`lsp6`] with `core_mtu` on the R1-R2 link (both veth ends and both router ports).
fn lsp6_mtu(tag: &str, e: Egress, core_mtu: Option<u16>) -> OneRouter {
    let mtu = core_mtu.map(|m| format!(", mtu: {m}")).unwrap_or_default();
    let dir = TempDir::new(tag);
    let mut ns = Netns::new(tag);
    let (h1, h2) = (ns.add("h1"), ns.add("h2"));
    let (r1, r2, r3) = (ns.add("r1"), ns.add("r2"), ns.add("r3"));
    link(&h1, "eth0", &r1, "r1-h1", None);
    link(&r1, "r1-r2", &r2, "r2-r1", core_mtu);
    link(&r2, "r2-r3", &r3, "r3-r2", None);
    link(&r3, "r3-h2", &h2, "eth0", None);
    host6(&h1, "2001:db8:1::2/64", "2001:db8:1::1");
    host6(&h2, "2001:db8:2::2/64", "2001:db8:2::1");
    let [t1, t2, t3] = routes_6pe(e);
    let routers = vec![
        start_router(
            &r1,
            &dir,
            "r1",
            &[
                Port("h1", "r1-h1", "10.1.0.1/24, \"2001:db8:1::1/64\"", ""),
                Port("core", "r1-r2", "10.12.0.1/30, \"2001:db8:12::1/64\"", &mtu),
            ],
            &t1,
        ),
        start_router(
            &r2,
            &dir,
            "r2",
            &[
                Port("west", "r2-r1", "10.12.0.2/30, \"2001:db8:12::2/64\"", &mtu),
                Port("east", "r2-r3", "10.23.0.1/30, \"2001:db8:23::1/64\"", ""),
            ],
            &t2,
        ),
        start_router(
            &r3,
            &dir,
            "r3",
            &[
                Port("core", "r3-r2", "10.23.0.2/30, \"2001:db8:23::2/64\"", ""),
                Port("h2", "r3-h2", "10.2.0.1/24, \"2001:db8:2::1/64\"", ""),
            ],
            &t3,
        ),
    ];
    OneRouter {
        r: routers,
        _ns: ns,
        _dir: dir,
        h1,
        h2,
        rns: r2,
    }
}

/// `ping -6` both ways across the LSP, no loss.
fn ping_both_ways(t: &mut OneRouter) {
    let out = ping6(&t.h1, "2001:db8:2::2", &["-c", "5", "-i", "0.2", "-W", "2"]);
    assert!(no_loss(&out), "{}\n{}", text(&out), logs(&mut t.r));
    let out = ping6(&t.h2, "2001:db8:1::2", &["-c", "3", "-i", "0.2", "-W", "2"]);
    assert!(no_loss(&out), "{}\n{}", text(&out), logs(&mut t.r));
}

#[test]
fn six_pe_lsp_through_three_routers_carries_ping6_and_traceroute6_sees_every_lsr() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    let mut t = lsp6("s6", Egress::PopAndLookup);
    ping_both_ways(&mut t);

    // R1 by the IPv6 hop limit, R2 and R3 by the label TTL (uniform mode); the LSRs'
    // time exceeded travels on along the LSP with the RFC 4950 label stack (-e).
    let (s, hops) = traceroute6(&t.h1, "2001:db8:2::2", &["-e"]);
    eprintln!("{s}");
    let ctx = |t: &mut OneRouter| format!("{s}\n{}", logs(&mut t.r));
    assert!(hops.len() >= 4, "{}", ctx(&mut t));
    assert!(
        hops[0].contains("2001:db8:1::1"),
        "hop 1 is R1:\n{}",
        ctx(&mut t)
    );
    assert!(
        hops[1].contains("2001:db8:12::2") && hops[1].contains("MPLS:L=100"),
        "hop 2 is R2 with label 100:\n{}",
        ctx(&mut t)
    );
    assert!(
        hops[2].contains("2001:db8:23::2") && hops[2].contains("MPLS:L=200"),
        "hop 3 is R3 with label 200:\n{}",
        ctx(&mut t)
    );
    assert!(
        hops[3].contains("2001:db8:2::2"),
        "hop 4 is the destination:\n{}",
        ctx(&mut t)
    );
    stop_clean(&mut t.r);
}

#[test]
fn six_pe_with_ipv6_explicit_null_at_the_bottom_of_the_stack() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    let mut t = lsp6("se", Egress::ExplicitNull);
    ping_both_ways(&mut t);
    stop_clean(&mut t.r);
}

#[test]
fn six_pe_with_ipv6_explicit_null_swapped_in_at_the_penultimate_hop() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    let mut t = lsp6("sx", Egress::ExplicitNullTop);
    ping_both_ways(&mut t);
    stop_clean(&mut t.r);
}

#[test]
fn six_pe_with_php_to_an_ipv6_payload() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    let mut t = lsp6("sp", Egress::Php);
    ping_both_ways(&mut t);
    stop_clean(&mut t.r);
}

/// `ping -6 -M do -s 1400` from `from` to `to` (a 1448-byte packet), then the path MTU
/// `from`'s kernel cached for `to` (`ip -6 route get`), if any.
fn learned_pmtu(from: &str, to: &str) -> (String, Option<u32>) {
    let out = ping6(from, to, &["-c", "1", "-W", "2", "-s", "1400", "-M", "do"]);
    let route = sh(&["ip", "-n", from, "-6", "route", "get", to]);
    let mtu = route
        .split_whitespace()
        .skip_while(|w| *w != "mtu")
        .nth(1)
        .and_then(|v| v.parse().ok());
    (format!("{}{route}", text(&out)), mtu)
}

/// A 1400-byte core link: the ingress LER's packet too big gives the core MTU minus the
/// one label it pushes (1396), which h1's kernel caches; a packet that fits still crosses
/// (1348 bytes both ways).
#[test]
fn six_pe_packet_too_big_at_the_ingress_counts_the_pushed_label() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    let mut t = lsp6_mtu("sm", Egress::PopAndLookup, Some(1400));
    ping_both_ways(&mut t);
    let (s, mtu) = learned_pmtu(&t.h1, "2001:db8:2::2");
    assert_eq!(mtu, Some(1396), "{s}\n{}", logs(&mut t.r));
    let out = ping6(
        &t.h1,
        "2001:db8:2::2",
        &["-c", "1", "-W", "2", "-s", "1300"],
    );
    assert!(no_loss(&out), "{}\n{}", text(&out), logs(&mut t.r));
    stop_clean(&mut t.r);
}

/// The same link seen from h2: the packet too big comes from R2, an LSR, which sends it
/// on along the LSP (as its time exceeded) with the MTU less the label it carries.
#[test]
fn six_pe_packet_too_big_from_an_lsr_reaches_the_sender() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    let mut t = lsp6_mtu("sq", Egress::PopAndLookup, Some(1400));
    ping_both_ways(&mut t);
    let (s, mtu) = learned_pmtu(&t.h2, "2001:db8:1::2");
    assert_eq!(mtu, Some(1396), "{s}\n{}", logs(&mut t.r));
    stop_clean(&mut t.r);
}
