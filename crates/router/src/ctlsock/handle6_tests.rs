//! `show` of the IPv6 side of a table compiled from YAML: routes of every form (6PE
//! included) by longest match, under a prefix and paged, label entries with IPv6 next
//! hops, static and learned IPv6 neighbours, and the table's per-family sizes. The
//! oracle is the routes file below, read by hand.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use net::fib::Fib;
use net::pipeline::{LocalAddrs, Pipeline, PipelineConfig};

use super::book::SourceBook;
use super::handle::{Handler, Live};
use super::proto::*;
use crate::slowpath::StaticNeighbors;

const PORTS: &str = "ports:
  - {name: in, vdev: net_null0, addresses: [10.0.0.1/24, \"2001:db8::1/64\"]}
  - {name: out, vdev: net_null1, addresses: [10.0.1.1/24, \"2001:db8:1::1/64\"]}
";

const ROUTES: &str = r#"
neighbors:
  - {ip: "2001:db8:1::2", mac: "02:00:00:00:01:02"}
  - {ip: "fe80::9", port: in, mac: "02:00:00:00:00:09"}
  - {ip: 10.0.1.2, mac: "02:00:00:00:02:02"}
ipv6:
  - {prefix: "2001:db8:100::/40", via: "2001:db8:1::2"}
  - {prefix: "2001:db8:100::/48", via: "2001:db8:1::3", push: [100], ttl_mode: pipe, pipe_ttl: 9}
  - prefix: "2001:db8:200::/40"
    nexthops:
      - {via: "2001:db8:1::2", weight: 3}
      - {via: "fe80::9", port: in}
  - {prefix: "2001:db8:400::/40", via: 10.0.1.2, push: [300]}
  - {prefix: "2001:db8:500::/40", blackhole: true}
  - {prefix: "2001:db8:ffff::1/128", local: true}
mpls:
  - {in_label: 1000, action: pop, via: "2001:db8:1::2"}
  - {in_label: 1001, action: swap, via: "fe80::9", port: in, push: [17]}
"#;

struct Sizes;
impl Live for Sizes {
    fn ports(&self) -> Vec<PortView> {
        Vec::new()
    }
    fn workers(&self) -> Vec<WorkerView> {
        Vec::new()
    }
    fn table(&self) -> TableView {
        // What `LiveRouter` reads from the control stats; the JSON must carry both families.
        serde_json::from_str(
            r#"{"generation":1,"ipv4_routes":5,"ipv6_routes":13,"lpm4_bytes":10,
            "lpm6_bytes":20,"labels":2,"next_hops":5,"ecmp_groups":1,"bytes":0,
            "reloads_ok":1,"reloads_error":0,"last_good_reload_ms":0,"rcu_pending":0}"#,
        )
        .unwrap()
    }
}

fn setup() -> (Handler, Fib) {
    let cfg = config::StartupConfig::parse(Path::new("/x/r.yaml"), PORTS).unwrap();
    let ctx = config::RouteContext::from_startup(&cfg, |id| [2, 0, 0, 0, id as u8, 1]);
    let set = config::parse_routes(Path::new("/x/routes.yaml"), ROUTES, &ctx).unwrap();
    let ports = ctx.ports.clone().unwrap();
    let fib = config::compile(&set, &ports, 4).unwrap();
    // As the control side does on every load (`Control::set_statics`).
    let statics = Arc::new(StaticNeighbors::default());
    statics.set(set.neighbors.iter().map(|n| ((n.port, n.ip), n.mac)));
    statics.set6(set.neighbors6.iter().map(|n| ((n.port, n.ip), n.mac)));
    let macs: Vec<[u8; 6]> = ports.iter().map(|p| p.mac).collect();
    let h = Handler {
        port_names: vec!["in".into(), "out".into()],
        port_macs: macs.clone(),
        pipeline: Pipeline::new(
            PipelineConfig::default(),
            LocalAddrs::new(&macs, std::iter::empty()),
        ),
        book: Arc::new(SourceBook::default()),
        statics,
    };
    (h, fib)
}

fn ask(h: &Handler, fib: &Fib, line: &str) -> Reply {
    let r = h.handle(line.as_bytes(), fib, &Sizes);
    let text = serde_json::to_string(&r).unwrap();
    assert_eq!(serde_json::from_str::<Response>(&text).unwrap(), r);
    r.result.unwrap_or_else(|| panic!("{line}: {:?}", r.error))
}

fn error(h: &Handler, fib: &Fib, line: &str) -> String {
    let r = h.handle(line.as_bytes(), fib, &Sizes);
    assert!(!r.ok, "{line} should fail");
    r.error.unwrap()
}

fn routes(h: &Handler, fib: &Fib, line: &str) -> RoutesReply {
    match ask(h, fib, line) {
        Reply::Routes(r) => r,
        other => panic!("not routes: {other:?}"),
    }
}

fn hop(port: &str, via: &str, mac: Option<&str>, labels: &[u32], weight: u32) -> HopView {
    HopView {
        port: port.into(),
        via: via.into(),
        mac: mac.map(Into::into),
        labels: labels.to_vec(),
        weight,
    }
}

fn one(r: &RoutesReply) -> (&str, &str, &[HopView], &str, Option<u8>) {
    assert_eq!(r.routes.len(), 1, "{r:?}");
    let v = &r.routes[0];
    (
        v.prefix.as_str(),
        v.target.as_str(),
        &v.next_hops,
        v.ttl_mode.as_str(),
        v.pipe_ttl,
    )
}

#[test]
fn an_ipv6_address_gets_its_longest_match_of_every_form() {
    let (h, fib) = setup();
    let q = |a: &str| {
        routes(
            &h,
            &fib,
            &format!(r#"{{"cmd":"show_routes","prefix":"{a}"}}"#),
        )
    };
    let nb = hop("out", "2001:db8:1::2", Some("02:00:00:00:01:02"), &[], 1);
    let r = q("2001:db8:1ff::1");
    assert_eq!(r.matched.as_deref(), Some("2001:db8:100::/40"));
    assert_eq!(
        one(&r),
        (
            "2001:db8:100::/40",
            "forward",
            &[nb.clone()][..],
            "uniform",
            None
        )
    );
    let r = q("2001:db8:100::1");
    let lsp = hop("out", "2001:db8:1::3", None, &[100], 1);
    assert_eq!(
        one(&r),
        ("2001:db8:100::/48", "forward", &[lsp][..], "pipe", Some(9))
    );
    let r = q("2001:db8:200::1");
    let ll = hop("in", "fe80::9", Some("02:00:00:00:00:09"), &[], 1);
    let nb3 = HopView { weight: 3, ..nb };
    assert_eq!(one(&r).2, [nb3, ll]);
    // 6PE: the next hop is the LSP's IPv4 neighbour, with the label.
    let r = q("2001:db8:400::1");
    let six_pe = hop("out", "10.0.1.2", Some("02:00:00:00:02:02"), &[300], 1);
    assert_eq!(one(&r).2, [six_pe]);
    assert_eq!(one(&q("2001:db8:500::1")).1, "blackhole");
    assert_eq!(one(&q("2001:db8:ffff::1")).1, "local");
    assert_eq!(one(&q("2001:db8::1")).1, "local");
    let r = q("2001:db8:1::99");
    assert_eq!(
        (r.routes[0].target.as_str(), r.routes[0].port.as_deref()),
        ("connected", Some("out"))
    );
    let r = q("2001:db9::1");
    assert_eq!((r.matched, r.routes.len()), (None, 0));
}

#[test]
fn ipv6_prefixes_list_and_page_like_ipv4() {
    let (h, fib) = setup();
    let r = routes(
        &h,
        &fib,
        r#"{"cmd":"show_routes","prefix":"2001:db8:100::/40"}"#,
    );
    let p: Vec<&str> = r.routes.iter().map(|x| x.prefix.as_str()).collect();
    assert_eq!(p, ["2001:db8:100::/40", "2001:db8:100::/48"]);
    let all = routes(&h, &fib, r#"{"cmd":"show_routes","family":"ipv6"}"#).routes;
    let p: Vec<&str> = all.iter().map(|x| x.prefix.as_str()).collect();
    assert_eq!(
        p,
        [
            "2001:db8::/64",
            "2001:db8::1/128",
            "2001:db8:1::/64",
            "2001:db8:1::1/128",
            "2001:db8:1::2/128",
            "2001:db8:100::/40",
            "2001:db8:100::/48",
            "2001:db8:200::/40",
            "2001:db8:400::/40",
            "2001:db8:500::/40",
            "2001:db8:ffff::1/128",
        ],
        "connected and local of both ports, the static neighbour's /128, the file's routes"
    );
    let mut paged = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let req = Request::ShowRoutes {
            prefix: None,
            family: Some(AddrFamily::Ipv6),
            source: None,
            limit: Some(3),
            after: after.clone(),
        };
        let r = routes(&h, &fib, &serde_json::to_string(&req).unwrap());
        paged.extend(r.routes);
        match r.next_after {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    assert_eq!(paged, all);
    // Without a family the listing stays IPv4, as before IPv6.
    let v4 = routes(&h, &fib, r#"{"cmd":"show_routes"}"#).routes;
    assert!(v4.iter().all(|r| !r.prefix.contains(':')), "{v4:?}");
    assert!(!v4.is_empty());
    let e = error(
        &h,
        &fib,
        r#"{"cmd":"show_routes","prefix":"10.0.0.0/8","family":"ipv6"}"#,
    );
    assert!(e.contains("not a prefix of family"), "{e}");
    let e = error(
        &h,
        &fib,
        r#"{"cmd":"show_routes","family":"ipv6","after":"10.0.0.0/8"}"#,
    );
    assert!(e.contains("after"), "{e}");
    let e = error(
        &h,
        &fib,
        r#"{"cmd":"show_routes","prefix":"2001:db8::/129"}"#,
    );
    assert!(e.contains("neither an address nor a prefix"), "{e}");
}

#[test]
fn a_neighbour_learned_by_ndp_has_its_host_route_marked_and_its_age() {
    let (h, fib) = setup();
    let r = routes(
        &h,
        &fib,
        r#"{"cmd":"show_routes","prefix":"2001:db8:1::2"}"#,
    );
    assert_eq!(r.routes[0].source, Source::Yaml, "static: from the file");
    let ip = u128::from("2001:db8:1::2".parse::<std::net::Ipv6Addr>().unwrap());
    h.book.learned6(1, ip, Instant::now());
    let r = routes(
        &h,
        &fib,
        r#"{"cmd":"show_routes","prefix":"2001:db8:1::2"}"#,
    );
    assert_eq!(r.routes[0].source, Source::Arp);
    let r = routes(
        &h,
        &fib,
        r#"{"cmd":"show_routes","family":"ipv6","source":"arp"}"#,
    );
    assert_eq!(r.routes.len(), 1);
    h.book.forgotten6(1, ip);
    let r = routes(
        &h,
        &fib,
        r#"{"cmd":"show_routes","family":"ipv6","source":"arp"}"#,
    );
    assert!(r.routes.is_empty());
}

#[test]
fn label_entries_name_their_ipv6_next_hops() {
    let (h, fib) = setup();
    let Reply::Mpls(m) = ask(&h, &fib, r#"{"cmd":"show_mpls"}"#) else {
        panic!()
    };
    let v: Vec<(u32, &str, &[HopView])> = m
        .entries
        .iter()
        .map(|e| (e.label, e.action.as_str(), &e.next_hops[..]))
        .collect();
    assert_eq!(
        v,
        [
            (
                1000,
                "pop",
                &[hop(
                    "out",
                    "2001:db8:1::2",
                    Some("02:00:00:00:01:02"),
                    &[],
                    1
                )][..]
            ),
            (
                1001,
                "swap",
                &[hop("in", "fe80::9", Some("02:00:00:00:00:09"), &[17], 1)][..]
            ),
        ]
    );
}

#[test]
fn static_ipv6_neighbours_say_static_and_the_table_has_both_families() {
    let (h, fib) = setup();
    let Reply::Neighbors { neighbors } = ask(&h, &fib, r#"{"cmd":"show_neighbors"}"#) else {
        panic!()
    };
    let n: Vec<(&str, &str, &str)> = neighbors
        .iter()
        .map(|n| (n.ip.as_str(), n.port.as_str(), n.state.as_str()))
        .collect();
    assert_eq!(
        n,
        [
            ("fe80::9", "in", "static"),
            ("10.0.1.2", "out", "static"),
            ("2001:db8:1::2", "out", "static"),
            ("2001:db8:1::3", "out", "incomplete"),
        ]
    );
    let Reply::Table(t) = ask(&h, &fib, r#"{"cmd":"show_table"}"#) else {
        panic!()
    };
    assert_eq!(
        (t.ipv4_routes, t.ipv6_routes, t.lpm4_bytes, t.lpm6_bytes),
        (5, 13, 10, 20)
    );
}

fn lookup(h: &Handler, fib: &Fib, req: LookupRequest) -> LookupReply {
    let line = serde_json::to_string(&Request::Lookup(req)).unwrap();
    match ask(h, fib, &line) {
        Reply::Lookup(l) => *l,
        other => panic!("{other:?}"),
    }
}

fn to6(dst: &str, ttl: u8) -> LookupRequest {
    LookupRequest {
        dst: Some(dst.into()),
        src: Some("2001:db8::7".into()),
        ttl: Some(ttl),
        ..Default::default()
    }
}

#[test]
fn lookup_of_ipv6_native_6pe_label_and_expiry() {
    let (h, fib) = setup();
    // Native: the /40's neighbour, hop limit one less, the frame's own bytes agree.
    let l = lookup(&h, &fib, to6("2001:db8:1ff::1", 64));
    assert_eq!(
        (l.verdict.as_str(), l.out_port.as_deref()),
        ("forward", Some("out"))
    );
    assert_eq!(l.route.as_ref().unwrap().prefix, "2001:db8:100::/40");
    assert_eq!(l.next_hop.as_ref().unwrap().via, "2001:db8:1::2");
    assert_eq!(l.dst_mac.as_deref(), Some("02:00:00:00:01:02"));
    assert_eq!((l.out_ip_ttl, l.out_labels.len()), (Some(63), 0));
    let out = l.frame_out.unwrap();
    assert_eq!(&out[24..28], "86dd", "IPv6 ethertype");
    assert_eq!(&out[28..29], "6", "version");
    assert_eq!(
        &l.frame_in[(14 + 7) * 2..(14 + 8) * 2],
        "40",
        "hop limit 64 in"
    );
    assert_eq!(&out[(14 + 7) * 2..(14 + 8) * 2], "3f", "hop limit 63 out");
    // 6PE: the IPv4 LSP's label (uniform TTL: the hop limit less one), IPv6 below it.
    let l = lookup(&h, &fib, to6("2001:db8:400::1", 64));
    assert_eq!(l.next_hop.as_ref().unwrap().via, "10.0.1.2");
    let lab: Vec<(u32, bool, u8)> = l
        .out_labels
        .iter()
        .map(|x| (x.label, x.bos, x.ttl))
        .collect();
    assert_eq!(lab, [(300, true, 63)]);
    assert_eq!(l.out_ip_ttl, Some(63));
    // PHP by label 1000 to the IPv6 neighbour: no route lookup, the label entry named.
    let l = lookup(
        &h,
        &fib,
        LookupRequest {
            label: Some(1000),
            ..to6("2001:db8:100::9", 30)
        },
    );
    assert_eq!(l.label_entry.as_ref().unwrap().action, "pop");
    assert!(l.route.is_none());
    assert_eq!((l.out_labels.len(), l.out_ip_ttl), (0, Some(29)));
    assert_eq!(l.next_hop.as_ref().unwrap().via, "2001:db8:1::2");
    // Hop limit 1: punted for ICMPv6 time exceeded; blackhole: dropped.
    let l = lookup(&h, &fib, to6("2001:db8:1ff::1", 1));
    assert_eq!(
        (l.verdict.as_str(), l.reason.as_deref()),
        ("slow_path", Some("ttl_expired"))
    );
    let l = lookup(&h, &fib, to6("2001:db8:500::1", 64));
    assert_eq!(l.verdict, "drop");
    assert_eq!(l.route.unwrap().target, "blackhole");
    // Mixed families are refused.
    let e = error(
        &h,
        &fib,
        r#"{"cmd":"lookup","dst":"2001:db8::9","src":"10.0.0.9"}"#,
    );
    assert!(e.contains("not an IPv6 address"), "{e}");
}
