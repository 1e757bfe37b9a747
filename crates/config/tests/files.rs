//! The shipped files pass `check`, and compile to the table they describe.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use config::{
    check_file, compile, load_routes, render_check, CheckSummary, ConfigError, FileKind,
    RouteContext, StartupConfig,
};
use net::fib::{Fib, LabelOp, NextHop, RouteTarget, TtlMode};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn demo() -> StartupConfig {
    StartupConfig::load(&repo().join("dpdk-config/demo.yaml")).unwrap()
}

fn ip(s: &str) -> u32 {
    u32::from(s.parse::<std::net::Ipv4Addr>().unwrap())
}

fn target(fib: &Fib, dst: &str) -> RouteTarget {
    fib.route(fib.lookup_ipv4(ip(dst)).expect("a route")).target
}

/// The single adjacency a target leads to: (port, neighbor, dst mac, labels).
fn adj(fib: &Fib, t: RouteTarget) -> (u16, [u8; 4], Option<[u8; 6]>, Vec<u32>) {
    let RouteTarget::NextHop(NextHop::Adjacency(a)) = t else {
        panic!("not a single adjacency: {t:?}")
    };
    let a = fib.adjacency(a);
    (a.port, a.neighbor, a.dst_mac, a.labels().to_vec())
}

#[test]
fn demo_config_checks_and_renders() {
    let r = check_file(&repo().join("dpdk-config/demo.yaml"));
    let (text, code) = render_check(&r);
    assert_eq!(code, 0, "{text}");
    let s = r.unwrap();
    assert_eq!(s.kind, FileKind::Startup);
    assert_eq!(
        (s.ports, s.workers, s.ipv4_routes, s.labels, s.neighbors),
        (2, 1, 34, 32, 5)
    );
    // 34 file routes + 2 connected + 2 local + 5 neighbor host routes.
    assert_eq!(s.fib.unwrap().ipv4_routes, 43);
    assert!(text.contains("ipv4 routes:      34"), "{text}");
    // The pool's memory: 16383 mbufs of 128 + 2048 bytes (+ 192 per mbuf of overhead).
    assert_eq!(s.mbuf_data_room, 2176);
    assert_eq!(s.mempool_bytes, 16383 * (2176 + 192));
    assert!(
        text.contains("mempool:          16383 mbufs of 2176 bytes") && text.contains("37.0 MiB"),
        "{text}"
    );
    assert!(
        text.contains("    in: promiscuous on (default)\n"),
        "{text}"
    );
    // The demo leaves `burst_size` out: the default, the most a worker holds.
    assert!(
        text.contains("  burst size:       64 packets a poll at most\n"),
        "{text}"
    );
}

#[test]
fn check_shows_each_port_s_promiscuous_mode() {
    let r = check_file(&repo().join("dpdk-config/baremetal.example.yaml"));
    let (text, code) = render_check(&r);
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        r.unwrap().port_modes,
        [
            ("wan".to_string(), false, false),
            ("lan".to_string(), false, false)
        ]
    );
    assert!(
        text.contains("    wan: promiscuous off (default)\n"),
        "{text}"
    );
}

/// Writes `files` (name, text) into a fresh temporary folder named after `tag`, checks
/// the first one and removes the folder: the check's result, its text and exit status.
fn check_written(
    tag: &str,
    files: &[(&str, &str)],
) -> (Result<CheckSummary, ConfigError>, String, i32) {
    let dir = std::env::temp_dir().join(format!("config-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let r = check_file(&dir.join(files[0].0));
    let (text, code) = render_check(&r);
    std::fs::remove_dir_all(&dir).unwrap();
    (r, text, code)
}

#[test]
fn check_shows_the_burst_size_set() {
    let (r, text, code) = check_written(
        "burst",
        &[(
            "r.yaml",
            "ports:\n  - {name: a, vdev: net_null0, addresses: [10.0.0.1/24]}\nburst_size: 16\n",
        )],
    );
    assert_eq!(code, 0, "{text}");
    assert_eq!(r.unwrap().burst_size, 16);
    assert!(
        text.contains("  burst size:       16 packets a poll at most\n"),
        "{text}"
    );
}

#[test]
fn example_routes_check_standalone() {
    let r = check_file(&repo().join("dpdk-config/routes.example.yaml"));
    let (text, code) = render_check(&r);
    assert_eq!(code, 0, "{text}");
    let s = r.unwrap();
    assert_eq!(s.kind, FileKind::Routes);
    assert!(!s.ports_checked);
    assert!(text.contains("checked without ports"), "{text}");
}

#[test]
fn example_routes_compile_to_what_they_say() {
    let cfg = demo();
    let ctx = RouteContext::from_startup(&cfg, |_| unreachable!("demo sets every MAC"));
    let set = load_routes(&repo().join("dpdk-config/routes.example.yaml"), &ctx).unwrap();
    let fib = compile(&set, ctx.ports.as_deref().unwrap(), 7).unwrap();
    assert_eq!(fib.generation(), 7);
    let out_mac = [2, 0, 0, 0, 1, 1];
    let n2 = Some([2, 0, 0, 0, 1, 2]);

    assert_eq!(
        adj(&fib, target(&fib, "192.0.2.9")),
        (1, [10, 0, 1, 2], n2, vec![])
    );
    let r = fib.route(fib.lookup_ipv4(ip("198.51.100.7")).unwrap());
    assert_eq!(r.ttl_mode, TtlMode::Pipe(64));
    assert_eq!(
        adj(&fib, r.target),
        (1, [10, 0, 1, 2], n2, vec![1000, 2000])
    );
    let RouteTarget::NextHop(NextHop::Adjacency(a)) = r.target else {
        unreachable!()
    };
    assert_eq!(&fib.adjacency(a).header_template()[6..12], &out_mac);

    // Weighted ECMP: 3/4 of the buckets to 10.0.1.3 (unresolved: no neighbor entry).
    let RouteTarget::NextHop(NextHop::Ecmp(g)) = target(&fib, "100.64.1.1") else {
        panic!()
    };
    let to_13 = (0..256u32)
        .filter(|&h| fib.adjacency(fib.ecmp_group(g).select(h)).neighbor == [10, 0, 1, 3])
        .count();
    assert_eq!(to_13, 192);
    assert!(fib
        .ecmp_group(g)
        .members()
        .iter()
        .all(|&(a, _)| !fib.adjacency(a).is_resolved()));

    assert_eq!(target(&fib, "203.0.113.5"), RouteTarget::Blackhole);
    assert_eq!(target(&fib, "192.168.255.1"), RouteTarget::Local);
    assert_eq!(target(&fib, "10.0.0.1"), RouteTarget::Local);
    assert_eq!(
        target(&fib, "10.0.0.77"),
        RouteTarget::Connected { port: 0 }
    );
    assert_eq!(target(&fib, "10.0.1.3"), RouteTarget::Connected { port: 1 });
    assert_eq!(
        adj(&fib, target(&fib, "10.0.0.2")).2,
        Some([2, 0, 0, 0, 0, 2])
    );
    assert!(fib.lookup_ipv4(ip("8.8.8.8")).is_none());
    assert_eq!(fib.port_address(1), Some([10, 0, 1, 1]));

    // Compact lines and prefix groups.
    let RouteTarget::NextHop(NextHop::Ecmp(g)) = target(&fib, "1.0.5.1") else {
        panic!()
    };
    assert_eq!(fib.ecmp_group(g).members().len(), 2);
    assert_eq!(
        fib.route(fib.lookup_ipv4(ip("1.0.5.1")).unwrap()).ttl_mode,
        TtlMode::Pipe(64)
    );
    assert_eq!(target(&fib, "1.0.17.1"), RouteTarget::Blackhole);
    assert_eq!(adj(&fib, target(&fib, "2.1.3.4")).3, vec![1000]);
    assert!(matches!(
        target(&fib, "4.200.0.1"),
        RouteTarget::NextHop(NextHop::Ecmp(_))
    ));

    // Labels.
    let e = fib.lookup_label(100).unwrap();
    assert_eq!(e.op, LabelOp::Swap);
    assert_eq!(
        adj(&fib, RouteTarget::NextHop(e.next_hop.unwrap())).3,
        vec![200]
    );
    let e = fib.lookup_label(101).unwrap();
    assert_eq!(
        adj(&fib, RouteTarget::NextHop(e.next_hop.unwrap())).3,
        vec![9001, 201]
    );
    assert_eq!(fib.lookup_label(102).unwrap().op, LabelOp::Pop);
    let e = fib.lookup_label(103).unwrap();
    assert_eq!(e.op, LabelOp::Pop, "swap to implicit null is a pop");
    assert_eq!(
        adj(&fib, RouteTarget::NextHop(e.next_hop.unwrap())).3,
        Vec::<u32>::new()
    );
    assert_eq!(fib.lookup_label(104).unwrap().op, LabelOp::PopAndLookup);
    assert_eq!(fib.lookup_label(104).unwrap().next_hop, None);
    let e = fib.lookup_label(105).unwrap();
    assert_eq!(e.ttl_mode, TtlMode::Pipe(net::fib::DEFAULT_PIPE_TTL));
    assert!(matches!(e.next_hop, Some(NextHop::Ecmp(_))));
    assert!(fib.lookup_label(106).is_none());

    // Adjacencies are shared by (port, neighbor, labels).
    let mut keys: Vec<_> = (0..fib.stats().adjacencies as u32)
        .map(|a| {
            let a = fib.adjacency(a);
            (a.port, a.neighbor, a.labels().to_vec())
        })
        .collect();
    let n = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), n);
}

#[test]
fn eal_args_for_the_demo() {
    let a = demo().eal_args("mplsrouter");
    let s = a.join(" ");
    assert!(
        s.starts_with("mplsrouter -l 0-1 -m 512 --no-huge --no-pci"),
        "{s}"
    );
    let vdevs: Vec<&String> = a
        .windows(2)
        .filter(|w| w[0] == "--vdev")
        .map(|w| &w[1])
        .collect();
    assert_eq!(vdevs.len(), 2);
    assert!(vdevs[0].starts_with("net_pcap0,"));
    assert!(vdevs[1].starts_with("net_null0,"));
}

#[test]
fn check_reports_errors_of_both_files_with_exit_1() {
    let (_, text, code) = check_written(
        "check",
        &[
            (
                "r.yaml",
                "ports:\n  - {name: a, vdev: net_null0, addresses: [10.0.0.1/24], mtu: 1}\nroutes: routes.yaml\n",
            ),
            ("routes.yaml", "ipv4:\n  - {prefix: 1.0.0.0/8, via: 10.9.0.1}\n"),
        ],
    );
    assert_eq!(code, 1);
    assert!(
        text.contains("r.yaml:2:63: ports[0].mtu: mtu 1 is out of range"),
        "{text}"
    );
    assert!(
        text.contains("routes.yaml:2:30: ipv4[0].via: 10.9.0.1 is not on any connected subnet"),
        "{text}"
    );
    assert!(text.contains("2 errors found"), "{text}");
    let missing = std::env::temp_dir().join(format!("config-missing-{}.yaml", std::process::id()));
    let (text, code) = render_check(&check_file(&missing));
    assert_eq!(code, 1);
    assert!(text.contains("cannot read"), "{text}");
}

#[test]
fn connected_only_table() {
    let cfg = demo();
    let ports = cfg.port_ifaces(|_| [0; 6]);
    let fib = config::connected_only(&ports, 1).unwrap();
    assert_eq!(fib.stats().ipv4_routes, 4);
    assert_eq!(
        target(&fib, "10.0.1.200"),
        RouteTarget::Connected { port: 1 }
    );
    assert_eq!(target(&fib, "10.0.1.1"), RouteTarget::Local);
    assert!(fib.lookup_ipv4(ip("192.0.2.1")).is_none());
}
