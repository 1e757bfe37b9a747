//! A real FRR drives the router: zebra (`-M dplane_fpm_nl`) and staticd in a network
//! namespace of their own (tests/frr/harness.rs), FRR's own `show ... json` as the oracle.
//!
//! Needs root and Debian's frr (scripts/install-deps.sh installs it; CI runs as root);
//! skipped with a message otherwise.

mod common;
#[path = "frr/harness.rs"]
mod harness;

use std::process::Stdio;
use std::time::Duration;

use harness::{unavailable, wait_until, Frr, FrrConfig, Iface};

fn skip() -> bool {
    if let Some(why) = unavailable() {
        eprintln!("SKIPPED: FRR tests {why}");
        return true;
    }
    false
}

fn ports() -> Vec<Iface> {
    (0..3)
        .map(|i| Iface {
            name: format!("port{i}"),
            addr: format!("10.0.{i}.1/24"),
        })
        .collect()
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
#[test]
fn harness_runs_zebra_and_staticd_and_fpm_sees_labelled_routes() {
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
