//! IPv6 in the config: every route form compiles to the table it describes, 6PE
//! included, and a reload that changes IPv6 routes derives the same table a full
//! compile builds.

use std::net::Ipv6Addr;
use std::path::Path;

use config::{compile, parse_routes, ReloadOutcome, ReloadState, RouteContext, StartupConfig};
use net::fib::{Family, Fib, LabelOp, NextHop, RouteTarget, TtlMode};

const PORTS: &str = "ports:
  - {name: in, vdev: net_null0, addresses: [10.0.0.1/24, \"2001:db8::1/64\", \"fe80::1/64\"]}
  - {name: out, vdev: net_null1, addresses: [10.0.1.1/24, \"2001:db8:1::1/64\"]}
";

const ROUTES: &str = r#"
neighbors:
  - {ip: "2001:db8:1::2", mac: "02:00:00:00:01:02"}
  - {ip: "fe80::9", port: in, mac: "02:00:00:00:00:09"}
ipv6:
  - {prefix: "2001:db8:100::/40", via: "2001:db8:1::2"}
  - prefix: "2001:db8:200::/40"
    nexthops:
      - {via: "2001:db8:1::2", weight: 3}
      - {via: "fe80::9", port: in}
  - {prefix: "2001:db8:300::/40", via: "2001:db8:1::3", push: [100, 200], ttl_mode: pipe}
  - {prefix: "2001:db8:400::/40", via: 10.0.1.2, push: [300]}
  - {prefix: "2001:db8:500::/40", blackhole: true}
  - {prefix: "2001:db8:ffff::1/128", local: true}
ipv4:
  - {prefix: 192.0.2.0/24, via: 10.0.1.2, push: [300]}
mpls:
  - {in_label: 1000, action: pop, via: "2001:db8:1::2"}
  - {in_label: 1001, action: pop, via: 10.0.1.2, payload: ipv6}
  - {in_label: 1002, action: pop, via: 10.0.1.2}
  - {in_label: 1003, action: swap, via: "2001:db8:1::2", push: [17]}
routes_compact:
  - 2001:db8:600::/40 via 2001:db8:1::2 push 16
  - 198.51.100.0/24 via 10.0.1.2
prefix_groups:
  - via: 10.0.1.2
    push: [400]
    prefixes: |
      203.0.113.0/24
      2001:db8:700::/40
"#;

fn ctx() -> RouteContext {
    let cfg = StartupConfig::parse(Path::new("/x/r.yaml"), PORTS).unwrap();
    RouteContext::from_startup(&cfg, |id| [2, 0, 0, 0, 0, id as u8])
}

fn v6(s: &str) -> u128 {
    u128::from(s.parse::<Ipv6Addr>().unwrap())
}

fn target(fib: &Fib, dst: &str) -> RouteTarget {
    fib.route(fib.lookup_ipv6(v6(dst)).expect("a route")).target
}

/// (port, IPv6 neighbor, IPv4 neighbor, dst mac, labels, payload) of a single adjacency.
type AdjView = (
    u16,
    Option<[u8; 16]>,
    [u8; 4],
    Option<[u8; 6]>,
    Vec<u32>,
    Family,
);

fn adj_of(fib: &Fib, a: u32) -> AdjView {
    let a = fib.adjacency(a);
    let l = a.labels().to_vec();
    (a.port, a.neighbor6, a.neighbor, a.dst_mac, l, a.payload)
}

fn adj(fib: &Fib, t: RouteTarget) -> AdjView {
    let RouteTarget::NextHop(NextHop::Adjacency(a)) = t else {
        panic!("not a single adjacency: {t:?}")
    };
    adj_of(fib, a)
}

fn build(routes: &str) -> Fib {
    let c = ctx();
    let set = parse_routes(Path::new("/x/routes.yaml"), routes, &c).unwrap();
    compile(&set, c.ports.as_deref().unwrap(), 1).unwrap()
}

#[test]
fn every_ipv6_form_compiles_to_its_table() {
    let fib = build(ROUTES);
    let nb = v6("2001:db8:1::2").to_be_bytes();
    let mac = Some([2, 0, 0, 0, 1, 2]);
    let plain = (1, Some(nb), [0; 4], mac, vec![], Family::Ipv6);
    assert_eq!(adj(&fib, target(&fib, "2001:db8:100::1")), plain);
    // The neighbor's own /128, and the connected and local routes of the ports.
    assert_eq!(adj(&fib, target(&fib, "2001:db8:1::2")), plain);
    assert_eq!(
        target(&fib, "2001:db8:1::77"),
        RouteTarget::Connected { port: 1 }
    );
    assert_eq!(target(&fib, "2001:db8::1"), RouteTarget::Local);
    assert_eq!(target(&fib, "fe80::1"), RouteTarget::Local);
    assert_eq!(fib.lookup_ipv6(v6("fe80::2")), None, "no fe80::/64 route");
    // ICMPv6 sources: the first global address, else none for a port without IPv6.
    assert_eq!(fib.port_address6(0), Some(v6("2001:db8::1").to_be_bytes()));
    assert_eq!(
        fib.port_address6(1),
        Some(v6("2001:db8:1::1").to_be_bytes())
    );
    // ECMP with weights, one member link-local on the named port.
    let RouteTarget::NextHop(NextHop::Ecmp(g)) = target(&fib, "2001:db8:200::1") else {
        panic!()
    };
    let m = fib.ecmp_group(g).members().to_vec();
    assert_eq!(m.len(), 2);
    assert_eq!((adj_of(&fib, m[0].0), m[0].1), (plain.clone(), 3));
    let ll = adj_of(&fib, m[1].0);
    assert_eq!(
        (ll.0, ll.1, ll.3),
        (
            0,
            Some(v6("fe80::9").to_be_bytes()),
            Some([2, 0, 0, 0, 0, 9])
        )
    );
    // LER push with pipe TTL.
    let id = fib.lookup_ipv6(v6("2001:db8:300::1")).unwrap();
    assert_eq!(fib.route(id).ttl_mode, TtlMode::Pipe(255));
    assert_eq!(adj(&fib, fib.route(id).target).4, vec![100, 200]);
    // 6PE: an IPv4 neighbor with a label, the same adjacency (and route) as the IPv4
    // route through that LSP.
    let six_pe = fib.lookup_ipv6(v6("2001:db8:400::1")).unwrap();
    assert_eq!(Some(six_pe), fib.lookup_ipv4(0xc0000201));
    let a = adj(&fib, fib.route(six_pe).target);
    assert_eq!((a.1, a.2, a.4), (None, [10, 0, 1, 2], vec![300]));
    assert_eq!(target(&fib, "2001:db8:500::1"), RouteTarget::Blackhole);
    assert_eq!(target(&fib, "2001:db8:ffff::1"), RouteTarget::Local);
    assert_eq!(fib.lookup_ipv6(v6("2001:db8:ffff::2")), None);
    // Compact lines and prefix groups of both families.
    assert_eq!(adj(&fib, target(&fib, "2001:db8:600::1")).4, vec![16]);
    assert_eq!(adj(&fib, target(&fib, "2001:db8:700::1")).4, vec![400]);
    assert!(fib.lookup_ipv4(0xcb007101).is_some());
    assert!(fib.lookup_ipv4(0xc6336401).is_some());
    // Label entries: the payload a pop exposes picks the ethertype.
    let pop = |l| {
        let e = fib.lookup_label(l).unwrap();
        assert_eq!(e.op, LabelOp::Pop);
        let Some(NextHop::Adjacency(a)) = e.next_hop else {
            panic!()
        };
        let a = fib.adjacency(a);
        (a.payload, a.header_template()[12..14].to_vec())
    };
    assert_eq!(pop(1000), (Family::Ipv6, vec![0x86, 0xdd]));
    assert_eq!(pop(1001), (Family::Ipv6, vec![0x86, 0xdd]));
    assert_eq!(pop(1002), (Family::Ipv4, vec![0x08, 0x00]));
    assert_eq!(fib.lookup_label(1003).unwrap().op, LabelOp::Swap);
    let s = fib.stats();
    // 6 ipv6 + 1 compact + 1 group; 2 connected, 3 local, 1 neighbor (not fe80::9).
    assert_eq!(s.ipv6_routes, 8 + 2 + 3 + 1);
    assert!(s.lpm6_bytes > 0);
}

fn derived(o: ReloadOutcome) -> (Fib, bool) {
    match o {
        ReloadOutcome::Updated { fib, timings, .. } => (*fib, timings.derived),
        ReloadOutcome::Unchanged { .. } => panic!("expected a new table"),
    }
}

fn same_ipv6_answers(a: &Fib, b: &Fib, probes: &[&str]) {
    for p in probes {
        let ra = a.lookup_ipv6(v6(p)).map(|id| a.route(id).target);
        let rb = b.lookup_ipv6(v6(p)).map(|id| b.route(id).target);
        match (ra, rb) {
            (Some(RouteTarget::NextHop(x)), Some(RouteTarget::NextHop(y))) => {
                let res = |f: &Fib, n| adj_of(f, f.resolve(n, 0));
                assert_eq!(res(a, x), res(b, y), "{p}");
            }
            (x, y) => assert_eq!(x, y, "{p}"),
        }
    }
}

#[test]
fn ipv6_reload_derives_what_a_full_compile_builds() {
    let mut st = ReloadState::new("/x/routes.yaml", ctx());
    derived(st.apply_text(ROUTES.to_string()).unwrap());
    let edited = ROUTES
        .replace(
            "{prefix: \"2001:db8:100::/40\", via: \"2001:db8:1::2\"}",
            "{prefix: \"2001:db8:100::/40\", via: \"2001:db8:1::3\"}",
        )
        .replace("  - {prefix: \"2001:db8:500::/40\", blackhole: true}\n", "")
        .replace(
            "  - 2001:db8:600::/40 via 2001:db8:1::2 push 16\n",
            "  - 2001:db8:600::/40 via 2001:db8:1::2 push 16\n  - 2001:db8:800::/40 blackhole\n  - 2001:db8:1::2/128 blackhole\n",
        );
    assert_ne!(edited, ROUTES);
    let (fib, was_derived) = derived(st.apply_text(edited.clone()).unwrap());
    assert!(was_derived, "a few IPv6 edits derive the table");
    let probes = [
        "2001:db8:100::1",
        "2001:db8:500::1",
        "2001:db8:800::1",
        "2001:db8:1::2",
        "2001:db8:600::1",
        "2001:db8:400::1",
        "2001:db8:1::9",
    ];
    same_ipv6_answers(&fib, &build(&edited), &probes);
    assert_eq!(fib.stats().ipv6_routes, build(&edited).stats().ipv6_routes);
    // Removing the user /128 gives the static neighbor its own host route back.
    let (fib, was_derived) = derived(st.apply_text(ROUTES.to_string()).unwrap());
    assert!(was_derived);
    same_ipv6_answers(&fib, &build(ROUTES), &probes);
    assert_eq!(
        adj(&fib, target(&fib, "2001:db8:1::2")).1,
        Some(v6("2001:db8:1::2").to_be_bytes())
    );
}

#[test]
fn check_reports_ipv6_sizes() {
    let dir = std::env::temp_dir().join(format!("mplsr-ipv6-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("routes.yaml"), ROUTES).unwrap();
    let startup = format!("{PORTS}routes: routes.yaml\n");
    std::fs::write(dir.join("startup.yaml"), startup).unwrap();
    let r = config::check_file(&dir.join("startup.yaml"));
    let (text, code) = config::render_check(&r);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("  ipv6 routes:      8\n"), "{text}");
    assert!(
        text.contains("  fib ipv6:         14 prefixes (with connected/local), lpm6 "),
        "{text}"
    );
    let s = r.unwrap();
    assert_eq!((s.ipv6_routes, s.fib.unwrap().ipv6_routes), (8, 14));
}

#[test]
fn a_configured_link_local_comes_first_and_becomes_the_icmpv6_fallback_source() {
    let text = "ports:
  - {name: in, vdev: net_null0, link_local6: \"fe80::77\", addresses: [\"fe80::1/64\"]}
  - {name: out, vdev: net_null1, addresses: [10.0.1.1/24]}
";
    let cfg = StartupConfig::parse(Path::new("/x/s.yaml"), text).unwrap();
    let ports = cfg.port_ifaces(|_| [0; 6]);
    let a6: Vec<String> = ports[0].addresses6.iter().map(|c| c.to_string()).collect();
    assert_eq!(a6, ["fe80::77/64", "fe80::1/64"]);
    assert!(
        ports[1].addresses6.is_empty(),
        "no override: the EUI-64 one, derived later"
    );
    let ctx = RouteContext::from_startup(&cfg, |_| [0; 6]);
    let set = parse_routes(Path::new("/x/r.yaml"), "{}", &ctx).unwrap();
    let fib = compile(&set, ctx.ports.as_deref().unwrap(), 1).unwrap();
    assert_eq!(
        fib.port_address6(0),
        Some("fe80::77".parse::<Ipv6Addr>().unwrap().octets()),
        "without a global address, ICMPv6 leaves from the configured link-local"
    );
}

/// The forms the first test does not write in IPv6: compact blackhole, local, ECMP with
/// weights and pipe TTL, compact 6PE; prefix groups via an IPv6 neighbour, with an ECMP
/// set, blackholed; 6PE ECMP and a set mixing a native and a 6PE member; a single
/// link-local `via` with its port; a label entry whose ECMP members are IPv6.
const MORE: &str = r#"
neighbors:
  - {ip: "2001:db8:1::2", mac: "02:00:00:00:01:02"}
  - {ip: "2001:db8:1::3", mac: "02:00:00:00:01:03"}
  - {ip: "fe80::9", port: in, mac: "02:00:00:00:00:09"}
ipv6:
  - {prefix: "2001:db8:100::/40", via: "fe80::9", port: in, ttl_mode: uniform}
  - prefix: "2001:db8:200::/40"
    nexthops:
      - {via: 10.0.1.2, push: [300], weight: 2}
      - {via: 10.0.1.3, push: [301]}
  - prefix: "2001:db8:300::/40"
    nexthops:
      - {via: "2001:db8:1::2"}
      - {via: 10.0.1.2, push: [302]}
mpls:
  - in_label: 1000
    action: swap
    nexthops:
      - {via: "2001:db8:1::2", push: [20]}
      - {via: "2001:db8:1::3", push: [21], weight: 4}
routes_compact:
  - 2001:db8:a00::/48 blackhole
  - 2001:db8:a10::1/128 local
  - 2001:db8:a20::/48 via 2001:db8:1::2 weight 2 via fe80::9 port in ttl pipe 7
  - 2001:db8:a30::/48 via 10.0.1.2 push 500
prefix_groups:
  - via: "2001:db8:1::3"
    prefixes: |
      2001:db8:b00::/48
      2001:db8:b10::/48
  - nexthops:
      - {via: "2001:db8:1::2"}
      - {via: "2001:db8:1::3", weight: 3}
    prefixes: ["2001:db8:c00::/40"]
  - blackhole: true
    prefixes: ["2001:db8:d00::/40"]
"#;

/// (neighbour, labels, weight) of each member of an ECMP next hop, in order.
fn members(fib: &Fib, t: RouteTarget) -> Vec<(String, Vec<u32>, u32)> {
    let nh = match t {
        RouteTarget::NextHop(nh) => nh,
        other => panic!("not a next hop: {other:?}"),
    };
    let m = match nh {
        NextHop::Ecmp(g) => fib.ecmp_group(g).members().to_vec(),
        NextHop::Adjacency(a) => vec![(a, 1)],
    };
    m.into_iter()
        .map(|(a, w)| {
            let (_, n6, n4, _, l, _) = adj_of(fib, a);
            let n = match n6 {
                Some(n) => Ipv6Addr::from(n).to_string(),
                None => std::net::Ipv4Addr::from(n4).to_string(),
            };
            (n, l, w)
        })
        .collect()
}

fn m(n: &str, l: &[u32], w: u32) -> (String, Vec<u32>, u32) {
    (n.to_string(), l.to_vec(), w)
}

#[test]
fn the_other_ipv6_forms_compile_too() {
    let fib = build(MORE);
    let t = |d: &str| target(&fib, d);
    let id = fib.lookup_ipv6(v6("2001:db8:100::1")).unwrap();
    assert_eq!(fib.route(id).ttl_mode, TtlMode::Uniform);
    let ll = adj(&fib, fib.route(id).target);
    assert_eq!(
        (ll.0, ll.3),
        (0, Some([2, 0, 0, 0, 0, 9])),
        "port in, its MAC"
    );
    assert_eq!(
        members(&fib, t("2001:db8:200::1")),
        [m("10.0.1.2", &[300], 2), m("10.0.1.3", &[301], 1)],
        "6PE over two LSPs"
    );
    assert_eq!(
        members(&fib, t("2001:db8:300::1")),
        [m("2001:db8:1::2", &[], 1), m("10.0.1.2", &[302], 1)],
        "a native and a 6PE member"
    );
    let e = fib.lookup_label(1000).unwrap();
    assert_eq!(
        members(&fib, RouteTarget::NextHop(e.next_hop.unwrap())),
        [m("2001:db8:1::2", &[20], 1), m("2001:db8:1::3", &[21], 4)]
    );
    // routes_compact.
    assert_eq!(t("2001:db8:a00::1"), RouteTarget::Blackhole);
    assert_eq!(t("2001:db8:a10::1"), RouteTarget::Local);
    assert_eq!(fib.lookup_ipv6(v6("2001:db8:a10::2")), None);
    let id = fib.lookup_ipv6(v6("2001:db8:a20::1")).unwrap();
    assert_eq!(fib.route(id).ttl_mode, TtlMode::Pipe(7));
    assert_eq!(
        members(&fib, fib.route(id).target),
        [m("2001:db8:1::2", &[], 2), m("fe80::9", &[], 1)]
    );
    assert_eq!(
        members(&fib, t("2001:db8:a30::1")),
        [m("10.0.1.2", &[500], 1)]
    );
    // prefix_groups.
    for d in ["2001:db8:b00::1", "2001:db8:b10:ffff::1"] {
        assert_eq!(members(&fib, t(d)), [m("2001:db8:1::3", &[], 1)], "{d}");
    }
    assert_eq!(fib.lookup_ipv6(v6("2001:db8:b20::1")), None, "outside both");
    assert_eq!(
        members(&fib, t("2001:db8:c00::1")),
        [m("2001:db8:1::2", &[], 1), m("2001:db8:1::3", &[], 3)]
    );
    assert_eq!(t("2001:db8:d00::1"), RouteTarget::Blackhole);
}
