//! A real FRR drives the router: zebra (`-M dplane_fpm_nl`) and staticd in a network
//! namespace of their own (tests/frr/harness.rs), FRR's own `show ... json` as the oracle.
//!
//! Needs root and Debian's frr (scripts/install-deps.sh installs it; CI runs as root);
//! skipped with a message otherwise.
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

use std::process::Stdio;
use std::time::{Duration, Instant};

use harness::{unavailable, wait_until, Frr, FrrConfig, Iface};
use hosts::Hosts;
use oracle::Expect;
use scenario::{
    all_dropped, converge, frr_settled, lab, oracle, ports, round, world, Lab, TARGETS,
};

/// The FRR tests run one at a time: two routers and a ping flood at once on a 2-CPU
/// machine would measure the machine, not the router.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn skip() -> bool {
    if let Some(why) = unavailable() {
        eprintln!("SKIPPED: FRR tests {why}");
        return true;
    }
    false
}

/// `skip()`, and also when the router cannot take routes from FPM yet.
fn skip_router() -> bool {
    if skip() {
        return true;
    }
    if let Some(why) = router::fpm_unsupported() {
        eprintln!("SKIPPED: FRR -> router tests: {why}");
        return true;
    }
    false
}

/// The next hops of `prefix` in `show ip route json`, as (ip, interface), when FRR selected
/// and installed it.
fn installed_nexthops(routes: &serde_json::Value, prefix: &str) -> Option<Vec<(String, String)>> {
    let entry = routes
        .get(prefix)?
        .as_array()?
        .iter()
        .find(|r| r["selected"] == true)?;
    if entry["installed"] != true {
        return None;
    }
    let hops = entry["nexthops"].as_array()?;
    Some(
        hops.iter()
            .filter(|h| h["fib"] == true)
            .map(|h| {
                (
                    h["ip"].as_str().unwrap_or("").to_string(),
                    h["interfaceName"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect(),
    )
}

/// The harness itself: zebra and staticd start in their namespace, zebra keeps MPLS on
/// (the fake /proc/sys/net/mpls), FRR installs the configured static routes and LSP, and a
/// labelled route and an LSP reach FPM (they would not without the netlink shim: the
/// kernel here rejects both, and zebra then never hands them to FPM).
/// staticd's routes of the probe layout: one route out of each port, an ECMP pair over
/// both, and a labelled one.
const STATICS: &[&str] = &[
    "ip route 192.0.2.0/24 10.0.1.2",
    "ip route 198.51.100.0/24 10.0.1.2",
    "ip route 198.51.100.0/24 10.0.2.2",
    "ip route 203.0.113.0/24 10.0.2.2 label 100/200",
];

#[test]
fn harness_runs_zebra_and_staticd_and_fpm_sees_labelled_routes() {
    let _serial = serial();
    if skip() {
        return;
    }
    let mut frr = Frr::new(
        "h",
        &ports(),
        FrrConfig {
            fpm_port: 2620,
            next_hop_groups: false,
            zebra: "mpls lsp 100 10.0.1.2 200".into(),
            staticd: "ip route 192.0.2.0/24 10.0.1.2\n\
                      ip route 198.51.100.0/24 10.0.1.2\n\
                      ip route 198.51.100.0/24 10.0.2.2\n\
                      ip route 203.0.113.0/24 10.0.1.2 label 300"
                .into(),
        },
    );
    let capture = frr.path("cap");
    let recorder = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/frr/fpm_recorder.py");
    let rec = frr
        .exec(&["python3", recorder, "127.0.0.1", "2620"])
        .arg(&capture)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    frr.others.push(rec);
    frr.start_zebra();
    frr.start_staticd();

    let status = frr.vtysh(&["show mpls status"]);
    assert!(status.contains("MPLS support enabled: yes"), "{status}");

    let routes = wait_until(
        "FRR installs the static routes",
        Duration::from_secs(20),
        || {
            let r = frr.json("show ip route json");
            match installed_nexthops(&r, "198.51.100.0/24") {
                Some(h) if h.len() == 2 && installed_nexthops(&r, "203.0.113.0/24").is_some() => {
                    Ok(r)
                }
                _ => Err(format!("{r}")),
            }
        },
    );
    assert_eq!(
        installed_nexthops(&routes, "192.0.2.0/24").unwrap(),
        vec![("10.0.1.2".to_string(), "port1".to_string())]
    );
    let mut ecmp = installed_nexthops(&routes, "198.51.100.0/24").unwrap();
    ecmp.sort();
    assert_eq!(
        ecmp,
        vec![
            ("10.0.1.2".to_string(), "port1".to_string()),
            ("10.0.2.2".to_string(), "port2".to_string())
        ]
    );
    let lsp = frr.json("show mpls table json");
    assert_eq!(lsp["100"]["nexthops"][0]["outLabel"], 200, "{lsp}");
    assert_eq!(lsp["100"]["installed"], true, "{lsp}");

    // What zebra sent over FPM, decoded by the independent Python dump.
    let dump = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/frr/fpm_dump.py");
    let bin = format!("{}.1.0.bin", capture.display());
    let text = wait_until(
        "zebra sends the routes over FPM",
        Duration::from_secs(20),
        || {
            let out = std::process::Command::new("python3")
                .args([dump, &bin])
                .output()
                .unwrap();
            let t = String::from_utf8_lossy(&out.stdout).into_owned();
            let want = [
            "dst=192.0.2.0 priority=20 gateway=10.0.1.2",
            "dst=203.0.113.0 priority=20 encap_type=1 encap{mpls_dst=[300/S]} gateway=10.0.1.2",
            "mpls dst_len=20 table=254 proto=196 scope=0 type=unicast dst=[100/S] newdst=[200/S] via=inet:10.0.1.2",
        ];
            match want.iter().find(|w| !t.contains(*w)) {
                None => Ok(t),
                Some(w) => Err(format!("missing {w:?} in:\n{t}\n{}", frr.logs())),
            }
        },
    );
    assert!(text.contains("multipath="), "{text}");
}

/// FRR's static routes (one next hop, ECMP, `label` push) and static LSPs (swap, pop,
/// ECMP) forward through the router exactly as zebra selected them; deletes and a
/// changed ECMP set are followed; after a zebra kill the routes are kept for the hold
/// time, then withdrawn; a restarted zebra resyncs them; a restart of all FRR daemons
/// within the hold time never interrupts them.
#[test]
fn frr_routes_forward_through_router_and_follow_zebra() {
    let _serial = serial();
    if skip_router() {
        return;
    }
    let t0 = Instant::now();
    let hold = Duration::from_secs(6);
    let Lab {
        mut router,
        mut prober,
        hosts: _hosts,
        mut frr,
    } = lab("e", hold, true, router::PROBE_ROUTES);
    let n = TARGETS.len();

    // 1. Routes appear (the LSPs came with zebra's config).
    frr.configure(STATICS);
    let full = frr_settled(&frr, "FRR installs everything", |e| {
        e.iter()
            .all(|x| matches!(x, Expect::Forward(h) if !h.is_empty()))
            && e.iter()
                .filter(|x| matches!(x, Expect::Forward(h) if h.len() == 2))
                .count()
                == 2
    });
    let t_add = converge(
        &mut prober,
        &full,
        "the router forwards FRR's routes",
        Duration::from_secs(15),
    );

    // 2. Deletes, and one ECMP set shrinks.
    frr.configure(&[
        "no ip route 192.0.2.0/24 10.0.1.2",
        "no ip route 198.51.100.0/24 10.0.2.2",
        "no mpls lsp 100",
        "no mpls lsp 102 10.0.2.2",
    ]);
    let after = frr_settled(&frr, "FRR applies the deletes", |e| {
        e[0] == Expect::Dropped
            && e[3] == Expect::Dropped
            && matches!(&e[1], Expect::Forward(h) if h.len() == 1)
            && matches!(&e[5], Expect::Forward(h) if h.len() == 1)
    });
    let t_del = converge(
        &mut prober,
        &after,
        "the router follows FRR's deletes",
        Duration::from_secs(15),
    );

    // 3. zebra killed: routes held for the hold time, then withdrawn.
    let killed = Instant::now();
    frr.stop_zebra(true);
    round(&mut prober, &after)
        .unwrap_or_else(|e| panic!("routes lost right after zebra died: {e}"));
    let withdrawn = converge(
        &mut prober,
        &all_dropped(n),
        "withdraw after the hold time",
        hold + Duration::from_secs(10),
    );
    let t_withdraw = killed.elapsed();
    assert!(
        t_withdraw >= hold,
        "withdrawn {t_withdraw:?} after zebra died, before the hold time {hold:?}"
    );

    // 4. zebra restarted: its table (the LSPs of its config at once, so LSP 100 and
    //    LSP 102's second next hop are back; staticd's routes once staticd has
    //    reconnected, ~10 s later) is installed again.
    frr.start_zebra();
    let mut want: Vec<Expect> = after[..3].to_vec();
    want.extend_from_slice(&full[3..]);
    let again = frr_settled(&frr, "FRR has its routes again", |e| *e == want);
    let t_resync = converge(
        &mut prober,
        &again,
        "the router resyncs from the new zebra",
        Duration::from_secs(25),
    );

    // 5. All FRR daemons restarted within the hold time: unchanged routes never stop.
    //    staticd starts with the routes it has now.
    frr.cfg.staticd = [
        "ip route 198.51.100.0/24 10.0.1.2",
        "ip route 203.0.113.0/24 10.0.2.2 label 100/200",
    ]
    .join("\n");
    let restart = Instant::now();
    // zebra first: a staticd stopped while zebra runs would withdraw its routes.
    frr.stop_zebra(true);
    frr.stop_staticd();
    frr.start_zebra();
    frr.start_staticd();
    let mut rounds = 0;
    while restart.elapsed() < hold + Duration::from_secs(2) {
        round(&mut prober, &again).unwrap_or_else(|e| {
            panic!(
                "round {rounds}, {:?} into the restart: {e}\n{}",
                restart.elapsed(),
                router.output()
            )
        });
        rounds += 1;
    }
    assert_eq!(oracle(&frr), again, "FRR after its restart");

    let out = router.stop();
    eprintln!(
        "frr e2e: add {t_add:?}, delete {t_del:?}, withdraw {t_withdraw:?} after the kill ({withdrawn:?} of polling), \
         resync {t_resync:?}, {rounds} clean rounds through the restart, total {:?}",
        t0.elapsed()
    );
    assert!(!out.contains("panicked"), "{out}");
}

/// Parses ping's summary: (transmitted, received).
fn ping_counts(out: &str) -> (u64, u64) {
    let line = out
        .lines()
        .find(|l| l.contains("packets transmitted"))
        .unwrap_or_else(|| panic!("no ping summary in: {out}"));
    let num = |word: &str| -> u64 {
        let at = line.find(word).unwrap();
        line[..at]
            .trim_end()
            .rsplit([' ', ','])
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    (num("packets transmitted"), num("received"))
}

/// A ping flood from a Linux host through the router to a prefix that FRR's staticd
/// gives it loses nothing while zebra is killed and restarted: the router keeps the FPM
/// route through the hold time, takes zebra's resync (its own routes at once, staticd's
/// ~10 s later when staticd reconnects) without withdrawing the unchanged route, and the
/// sweep after the resync leaves it alone.
#[test]
fn ping_flood_loses_nothing_through_zebra_kill_and_restart() {
    let _serial = serial();
    if skip_router() {
        return;
    }
    let t0 = Instant::now();
    let ifaces: Vec<Iface> = ports().into_iter().take(2).collect();
    let mut frr = Frr::new(
        "p",
        &ifaces,
        FrrConfig {
            fpm_port: 2620,
            next_hop_groups: true,
            zebra: String::new(),
            staticd: "ip route 192.0.2.0/24 10.0.1.2".into(),
        },
    );
    let mut hosts = Hosts::new("frrp");
    let (h1, h2) = (hosts.add("h1"), hosts.add("h2"));
    hosts::link(&frr.ns, "r0", &h1, "h1");
    hosts::link(&frr.ns, "r1", &h2, "h2");
    for i in ["r0", "r1"] {
        // The router's namespace holds 10.0.x.1 on zebra's interfaces: its kernel must not
        // answer ARP for them on the router's ports.
        let knob = format!("net.ipv4.conf.{i}.arp_ignore=1");
        harness::sh(&["ip", "netns", "exec", &frr.ns, "sysctl", "-qw", &knob]);
    }
    hosts::host(&h1, "h1", "10.0.0.2/24", "10.0.0.1");
    hosts::host(&h2, "h2", "10.0.1.2/24", "10.0.1.1");
    harness::sh(&["ip", "-n", &h2, "addr", "add", "192.0.2.1/32", "dev", "lo"]);
    let n = std::process::id();
    let ports = format!(
        "  - {{name: in, vdev: \"net_af_packet_pi{n},iface=r0\", addresses: [10.0.0.1/24]}}\n\
         \x20 - {{name: out1, vdev: \"net_af_packet_po{n},iface=r1\", addresses: [10.0.1.1/24]}}\n"
    );
    // The router's resync defaults: they must cover staticd's reconnect (~10 s).
    let hold_s = 20;
    let fpm = format!(
        "{{listen: 127.0.0.1:2620, hold_time_s: {hold_s}, interfaces: {{port0: in, port1: out1}}}}"
    );
    let dir = frr.dir.clone();
    let mut router = router::start(&frr.ns, &dir, &ports, &fpm, "neighbors: []\n");
    frr.start_zebra();
    frr.start_staticd();
    wait_until(
        "a ping through the FPM route",
        Duration::from_secs(20),
        || {
            let p = std::process::Command::new("ip")
                .args([
                    "netns",
                    "exec",
                    &h1,
                    "ping",
                    "-c",
                    "1",
                    "-W",
                    "1",
                    "192.0.2.1",
                ])
                .output()
                .unwrap();
            if p.status.success() {
                Ok(())
            } else {
                Err(format!(
                    "{}\n{}",
                    String::from_utf8_lossy(&p.stdout),
                    router.output()
                ))
            }
        },
    );

    // 500 packets/s for 24 s: the kill, the restart, staticd's reconnect (~10 s after
    // zebra's start) and the end of the resync (the sweep) all fall inside.
    let flood = std::process::Command::new("ip")
        .args([
            "netns", "exec", &h1, "ping", "-q", "-i", "0.002", "-c", "12000", "-W", "1",
        ])
        .arg("192.0.2.1")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    frr.stop_zebra(true);
    std::thread::sleep(Duration::from_secs(1));
    frr.start_zebra();
    let back = wait_until(
        "staticd's route back in the new zebra",
        Duration::from_secs(25),
        || {
            let routes = frr.json("show ip route json");
            match world().ipv4(&routes, "192.0.2.0/24") {
                Expect::Forward(_) => Ok(t0.elapsed()),
                e => Err(format!("{e:?}")),
            }
        },
    );
    let out = flood.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (sent, received) = ping_counts(&text);
    let log = router.stop();
    eprintln!("ping flood: {received}/{sent} through the zebra restart (route back in FRR at {back:?}), total {:?}", t0.elapsed());
    assert!(sent >= 11_000, "{text}");
    assert_eq!(
        received, sent,
        "lost pings through the zebra restart:\n{text}\n{log}"
    );
}

/// The routes file's static neighbours serve FPM routes' next hops too: the hosts behind
/// the router do not answer ARP here, so FRR's routes forward only with those MACs.
#[test]
fn static_neighbours_serve_fpm_next_hops() {
    let _serial = serial();
    if skip_router() {
        return;
    }
    let mut routes = String::from("neighbors:\n");
    for (ip, mac) in router::NEIGHBORS {
        routes += &format!("  - {{ip: {ip}, mac: \"{mac}\"}}\n");
    }
    routes += router::PROBE_ROUTES.trim_start_matches("neighbors: []\n");
    let Lab {
        router: _router,
        mut prober,
        hosts: _hosts,
        frr,
    } = lab("n", Duration::from_secs(6), false, &routes);
    frr.configure(STATICS);
    let full = frr_settled(&frr, "FRR installs everything", |e| {
        e.iter()
            .all(|x| matches!(x, Expect::Forward(h) if !h.is_empty()))
    });
    converge(
        &mut prober,
        &full,
        "FPM routes over static neighbours",
        Duration::from_secs(15),
    );
}

/// The example router config of the README's "Running with FRR" is valid.
#[test]
fn example_fpm_router_config_checks() {
    if let Some(why) = router::fpm_unsupported() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let out = std::process::Command::new(common::bin())
        .args(["check", "dpdk-config/frr/mplsrouter-fpm.yaml"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
