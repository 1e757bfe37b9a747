//! Request handling on bytes: every request shape against a table compiled from YAML,
//! checked field by field; malformed requests answered with an error, never a panic.

use std::path::Path;
use std::sync::Arc;

use net::fib::Fib;
use net::pipeline::{Pipeline, PipelineConfig};

use super::book::SourceBook;
use super::handle::{Handler, Live};
use super::proto::*;
use crate::slowpath::StaticNeighbors;

const ROUTES: &str = "
neighbors:
  - {ip: 10.0.1.2, mac: \"02:00:00:00:01:02\"}
  - {ip: 10.0.1.3, mac: \"02:00:00:00:01:03\"}
ipv4:
  - {prefix: 198.51.100.0/24, via: 10.0.1.2}
  - {prefix: 198.51.100.128/25, via: 10.0.1.3, push: [77], ttl_mode: pipe, pipe_ttl: 64}
  - prefix: 203.0.113.0/24
    nexthops:
      - {via: 10.0.1.2, weight: 3, push: [300]}
      - {via: 10.0.1.3, push: [301]}
  - {prefix: 10.9.0.0/16, via: 10.0.1.4}
mpls:
  - {in_label: 1000, action: swap, via: 10.0.1.2, push: [2000]}
  - {in_label: 1001, action: pop_and_lookup}
  - {in_label: 1002, action: pop, via: 10.0.1.3}
";

struct NoLive;
impl Live for NoLive {
    fn ports(&self) -> Vec<PortView> {
        Vec::new()
    }
    fn workers(&self) -> Vec<WorkerView> {
        Vec::new()
    }
    fn table(&self) -> TableView {
        TableView {
            generation: 7,
            ipv4_routes: 0,
            ipv6_routes: 0,
            lpm4_bytes: 0,
            lpm6_bytes: 0,
            labels: 0,
            next_hops: 0,
            ecmp_groups: 0,
            bytes: 0,
            reloads_ok: 1,
            reloads_error: 0,
            last_good_reload_ms: 0,
            rcu_pending: 0,
        }
    }
}

fn setup() -> (Handler, Fib) {
    let cfg = config::StartupConfig::parse(
        Path::new("/x/r.yaml"),
        "ports:\n  - {name: in, vdev: net_null0, addresses: [10.0.0.1/24]}\n  \
         - {name: out, vdev: net_null1, addresses: [10.0.1.1/24]}\n",
    )
    .unwrap();
    let ctx = config::RouteContext::from_startup(&cfg, |id| [2, 0, 0, 0, id as u8, 1]);
    let set = config::parse_routes(Path::new("/x/routes.yaml"), ROUTES, &ctx).unwrap();
    let ports = ctx.ports.clone().unwrap();
    let fib = config::compile(&set, &ports, 3).unwrap();
    let statics = Arc::new(StaticNeighbors::default());
    statics.set([((1, 0x0a00_0102), [2, 0, 0, 0, 1, 2])]);
    let h = Handler {
        port_names: vec!["in".into(), "out".into()],
        port_macs: ports.iter().map(|p| p.mac).collect(),
        pipeline: Pipeline::new(
            PipelineConfig::default(),
            net::pipeline::LocalAddrs::new(
                &ports.iter().map(|p| p.mac).collect::<Vec<_>>(),
                ports
                    .iter()
                    .flat_map(|p| &p.addresses)
                    .map(|a| a.addr.to_be_bytes()),
            ),
        ),
        book: Arc::new(SourceBook::default()),
        statics,
    };
    (h, fib)
}

fn ask(h: &Handler, fib: &Fib, line: &str) -> Response {
    let r = h.handle(line.as_bytes(), fib, &NoLive);
    // Every response survives the wire.
    let text = serde_json::to_string(&r).unwrap();
    assert!(!text.contains('\n'));
    assert_eq!(serde_json::from_str::<Response>(&text).unwrap(), r);
    r
}

fn routes(r: Response) -> RoutesReply {
    match r.result {
        Some(Reply::Routes(x)) => x,
        other => panic!("not routes: {other:?} ({:?})", r.error),
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

#[test]
fn an_address_gets_its_longest_match_with_every_field() {
    let (h, fib) = setup();
    let r = routes(ask(
        &h,
        &fib,
        r#"{"cmd":"show_routes","prefix":"198.51.100.200"}"#,
    ));
    assert_eq!(r.generation, 3);
    assert_eq!(r.matched.as_deref(), Some("198.51.100.128/25"));
    assert_eq!(
        r.routes,
        [RouteView {
            prefix: "198.51.100.128/25".into(),
            target: "forward".into(),
            port: None,
            next_hops: vec![hop("out", "10.0.1.3", Some("02:00:00:00:01:03"), &[77], 1)],
            ttl_mode: "pipe".into(),
            pipe_ttl: Some(64),
            source: Source::Yaml,
        }]
    );
    let r = routes(ask(
        &h,
        &fib,
        r#"{"cmd":"show_routes","prefix":"203.0.113.9"}"#,
    ));
    assert_eq!(
        r.routes[0].next_hops,
        [
            hop("out", "10.0.1.2", Some("02:00:00:00:01:02"), &[300], 3),
            hop("out", "10.0.1.3", Some("02:00:00:00:01:03"), &[301], 1)
        ]
    );
    let r = routes(ask(&h, &fib, r#"{"cmd":"show_routes","prefix":"8.8.8.8"}"#));
    assert_eq!((r.matched, r.routes.len()), (None, 0));
}

#[test]
fn a_prefix_lists_what_is_under_it_and_pages() {
    let (h, fib) = setup();
    let r = routes(ask(
        &h,
        &fib,
        r#"{"cmd":"show_routes","prefix":"198.51.100.0/24"}"#,
    ));
    let p: Vec<&str> = r.routes.iter().map(|x| x.prefix.as_str()).collect();
    assert_eq!(p, ["198.51.100.0/24", "198.51.100.128/25"]);
    assert_eq!(r.next_after, None);

    // The whole table, two at a time, ends where one listing ends.
    let all = routes(ask(&h, &fib, r#"{"cmd":"show_routes"}"#)).routes;
    assert_eq!(
        all.len(),
        4 + 4 + 2,
        "4 connected/local, 4 configured, 2 static neighbours' host routes"
    );
    let mut paged = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let req = Request::ShowRoutes {
            prefix: None,
            family: None,
            source: None,
            limit: Some(2),
            after: after.clone(),
        };
        let r = routes(ask(&h, &fib, &serde_json::to_string(&req).unwrap()));
        assert!(r.routes.len() <= 2);
        paged.extend(r.routes);
        match r.next_after {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    assert_eq!(paged, all);
    let r = routes(ask(&h, &fib, r#"{"cmd":"show_routes","source":"fpm"}"#));
    assert!(r.routes.is_empty());
}

#[test]
fn routes_fpm_installed_say_so_and_filter_by_source() {
    let (h, fib) = setup();
    h.book.set_fpm(
        fpm::Key::Ipv4 {
            addr: 0xcb00_7100,
            len: 24,
        },
        true,
    );
    let r = routes(ask(&h, &fib, r#"{"cmd":"show_routes","source":"fpm"}"#));
    let p: Vec<(&str, Source)> = r
        .routes
        .iter()
        .map(|x| (x.prefix.as_str(), x.source))
        .collect();
    assert_eq!(p, [("203.0.113.0/24", Source::Fpm)]);
    let r = routes(ask(&h, &fib, r#"{"cmd":"show_routes","source":"yaml"}"#));
    assert_eq!(r.routes.len(), 9);
}

#[test]
fn label_entries_one_and_all() {
    let (h, fib) = setup();
    let r = ask(&h, &fib, r#"{"cmd":"show_mpls","label":1000}"#);
    let m = mpls(r);
    assert_eq!(
        m.entries,
        [LabelView {
            label: 1000,
            action: "swap".into(),
            next_hops: vec![hop(
                "out",
                "10.0.1.2",
                Some("02:00:00:00:01:02"),
                &[2000],
                1
            )],
            ttl_mode: "uniform".into(),
            pipe_ttl: None,
            payload: "labelled".into(),
            source: Source::Yaml,
        }]
    );
    let r = ask(&h, &fib, r#"{"cmd":"show_mpls"}"#);
    let m = mpls(r);
    let l: Vec<(u32, &str)> = m
        .entries
        .iter()
        .map(|e| (e.label, e.action.as_str()))
        .collect();
    assert_eq!(l, [(1000, "swap"), (1001, "pop_and_lookup"), (1002, "pop")]);
    let r = ask(&h, &fib, r#"{"cmd":"show_mpls","limit":1,"after":1000}"#);
    let m = mpls(r);
    assert_eq!((m.entries[0].label, m.next_after), (1001, Some(1001)));
}

#[test]
fn neighbours_static_resolved_and_incomplete() {
    let (h, fib) = setup();
    let r = ask(&h, &fib, r#"{"cmd":"show_neighbors"}"#);
    let neighbors = neighbors(r);
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
            ("10.0.1.2", Some("02:00:00:00:01:02"), "out", "static"),
            ("10.0.1.3", Some("02:00:00:00:01:03"), "out", "resolved"),
            ("10.0.1.4", None, "out", "incomplete"),
        ]
    );
}

/// A router whose slow path published its neighbours.
struct WithBoard(Vec<super::NeighborEntry>);
impl Live for WithBoard {
    fn ports(&self) -> Vec<PortView> {
        Vec::new()
    }
    fn workers(&self) -> Vec<WorkerView> {
        Vec::new()
    }
    fn table(&self) -> TableView {
        NoLive.table()
    }
    fn neighbors(&self) -> Option<Arc<Vec<super::NeighborEntry>>> {
        Some(Arc::new(self.0.clone()))
    }
}

#[test]
fn neighbours_of_the_slow_path_with_state_and_age() {
    use super::{NeighborEntry, NeighborState::*};
    use std::time::{Duration, Instant};
    let (h, fib) = setup();
    let t = Instant::now();
    let e = |ip: u32, mac: Option<[u8; 6]>, state, ago: u64| NeighborEntry {
        port: 1,
        ip: std::net::Ipv4Addr::from(ip).into(),
        mac,
        state,
        since: t - Duration::from_secs(ago),
    };
    let live = WithBoard(vec![
        e(0x0a00_0103, Some([2, 0, 0, 0, 1, 3]), Resolved, 5),
        e(0x0a00_0109, Some([2, 0, 0, 0, 1, 9]), Stale, 40),
        e(0x0a00_0104, None, Incomplete, 2),
        // The routes file wins over what ARP said.
        e(0x0a00_0102, Some([2, 0, 0, 0, 9, 9]), Resolved, 1),
    ]);
    let r = h.handle(br#"{"cmd":"show_neighbors"}"#, &fib, &live);
    let neighbors = neighbors(r);
    let n: Vec<(&str, Option<&str>, &str, &str, u64)> = neighbors
        .iter()
        .map(|n| {
            (
                n.ip.as_str(),
                n.mac.as_deref(),
                n.port.as_str(),
                n.state.as_str(),
                n.age_s.map_or(u64::MAX, |a| a as u64),
            )
        })
        .collect();
    assert_eq!(
        n,
        [
            (
                "10.0.1.2",
                Some("02:00:00:00:01:02"),
                "out",
                "static",
                u64::MAX
            ),
            ("10.0.1.3", Some("02:00:00:00:01:03"), "out", "resolved", 5),
            ("10.0.1.4", None, "out", "incomplete", 2),
            ("10.0.1.9", Some("02:00:00:00:01:09"), "out", "stale", 40),
        ]
    );
}

fn lookup(h: &Handler, fib: &Fib, req: LookupRequest) -> LookupReply {
    let line = serde_json::to_string(&Request::Lookup(req)).unwrap();
    match ask(h, fib, &line) {
        Response {
            result: Some(Reply::Lookup(l)),
            ..
        } => *l,
        r => panic!("{r:?}"),
    }
}

/// A lookup of a plain IPv4 packet to `dst`.
fn to_dst(dst: &str) -> LookupRequest {
    LookupRequest {
        dst: Some(dst.into()),
        ..Default::default()
    }
}

/// A lookup of a packet under the single label `label`.
fn to_label(label: u32) -> LookupRequest {
    LookupRequest {
        label: Some(label),
        ..Default::default()
    }
}

fn mpls(r: Response) -> MplsReply {
    match r.result {
        Some(Reply::Mpls(m)) => m,
        other => panic!("not label entries: {other:?} ({:?})", r.error),
    }
}

fn neighbors(r: Response) -> Vec<NeighborView> {
    match r.result {
        Some(Reply::Neighbors { neighbors }) => neighbors,
        other => panic!("not neighbours: {other:?} ({:?})", r.error),
    }
}

#[test]
fn lookup_names_route_member_rewrite_and_port() {
    let (h, fib) = setup();
    let l = lookup(
        &h,
        &fib,
        LookupRequest {
            ttl: Some(10),
            ..to_dst("198.51.100.200")
        },
    );
    assert_eq!(l.verdict, "forward");
    assert_eq!(l.route.as_ref().unwrap().prefix, "198.51.100.128/25");
    assert_eq!(l.out_port.as_deref(), Some("out"));
    assert_eq!(l.dst_mac.as_deref(), Some("02:00:00:00:01:03"));
    assert_eq!(l.src_mac.as_deref(), Some("02:00:00:00:01:01"));
    // Pipe mode: the label carries the configured TTL, the IP header one hop less.
    assert_eq!(
        l.out_labels,
        [LabelOut {
            label: 77,
            tc: 0,
            bos: true,
            ttl: 64
        }]
    );
    assert_eq!(l.out_ip_ttl, Some(9));
    assert_eq!(l.next_hop.unwrap().via, "10.0.1.3");

    // ECMP: flows spread over both members, each named with its own out-label.
    let mut seen = std::collections::BTreeSet::new();
    for sport in 0..64u16 {
        let l = lookup(
            &h,
            &fib,
            LookupRequest {
                sport: Some(sport),
                ..to_dst("203.0.113.9")
            },
        );
        let hop = l.next_hop.expect("the member is named");
        assert_eq!(l.out_labels[0].label, hop.labels[0]);
        seen.insert(hop.via);
    }
    assert_eq!(seen.len(), 2, "64 flows all hashed to one member");
}

#[test]
fn lookup_of_labels_drops_and_punts() {
    let (h, fib) = setup();
    let l = lookup(&h, &fib, to_label(1000));
    assert_eq!(l.label_entry.unwrap().label, 1000);
    assert_eq!((l.out_labels[0].label, l.out_labels[0].ttl), (2000, 63));
    let l = lookup(
        &h,
        &fib,
        LookupRequest {
            dst: Some("198.51.100.7".into()),
            ..to_label(1001)
        },
    );
    assert_eq!(l.route.unwrap().prefix, "198.51.100.0/24");
    assert_eq!((l.out_labels.len(), l.out_ip_ttl), (0, Some(63)));
    let l = lookup(&h, &fib, to_label(5000));
    assert_eq!(
        (l.verdict.as_str(), l.reason.as_deref()),
        ("drop", Some("no_label"))
    );
    let l = lookup(&h, &fib, to_dst("8.8.8.8"));
    assert_eq!(l.reason.as_deref(), Some("no_route"));
    let l = lookup(&h, &fib, to_dst("10.9.1.1"));
    assert_eq!(
        (l.verdict.as_str(), l.reason.as_deref()),
        ("slow_path", Some("arp_needed"))
    );
    let l = lookup(
        &h,
        &fib,
        LookupRequest {
            ttl: Some(1),
            ..to_dst("198.51.100.7")
        },
    );
    assert_eq!(l.reason.as_deref(), Some("ttl_expired"));
}

#[test]
fn malformed_requests_get_an_error_never_a_panic() {
    let (h, fib) = setup();
    for bad in [
        "",
        "hello",
        "{}",
        "[1,2]",
        r#"{"cmd":"reboot"}"#,
        r#"{"cmd":"show_table","extra":1}"#,
        r#"{"cmd":"show_routes","prefix":"1.2.3.4/40"}"#,
        r#"{"cmd":"show_routes","prefix":"300.1.1.1"}"#,
        r#"{"cmd":"show_routes","limit":0}"#,
        r#"{"cmd":"show_routes","limit":100000000}"#,
        r#"{"cmd":"show_mpls","label":-1}"#,
        r#"{"cmd":"lookup"}"#,
        r#"{"cmd":"lookup","dst":"x"}"#,
        r#"{"cmd":"lookup","label":2000000}"#,
        r#"{"cmd":"lookup","dst":"1.2.3.4","in_port":"nope"}"#,
        "\u{0}\u{1}\u{ff}",
    ] {
        let r = ask(&h, &fib, bad);
        assert!(
            !r.ok && r.error.is_some() && r.result.is_none(),
            "{bad:?} -> {r:?}"
        );
    }
    let r = h.handle(&[0xff, 0xfe, b'{'], &fib, &NoLive);
    assert!(!r.ok);
    let r = ask(&h, &fib, r#"{"cmd":"show_table"}"#);
    assert!(matches!(r.result, Some(Reply::Table(t)) if t.generation == 7));
}

#[test]
fn fpm_and_interfaces_of_a_router_without_them() {
    let (h, fib) = setup();
    let r = ask(&h, &fib, r#"{"cmd":"show_fpm"}"#);
    let Some(Reply::Fpm(f)) = r.result else {
        panic!("{r:?}")
    };
    assert_eq!(
        (f.enabled, f.state.as_str(), f.peer),
        (false, "disabled", None)
    );
    assert_eq!(
        f.routes_by_source,
        [(Source::Yaml, 10), (Source::Fpm, 0), (Source::Arp, 0)],
        "every route of the table, by source"
    );
    let r = ask(&h, &fib, r#"{"cmd":"show_interfaces"}"#);
    assert_eq!(
        r.result,
        Some(Reply::Interfaces {
            interfaces: Vec::new()
        })
    );
    let r = ask(&h, &fib, r#"{"cmd":"show_fpm","x":1}"#);
    assert!(r.error.unwrap().contains("unknown field"));
}
