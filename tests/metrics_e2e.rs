//! `/metrics` of a running router, end to end: counters only grow (across scrapes and
//! across a route reload), the set of series is fixed and bounded by ports x workers x
//! reasons, promtool accepts a live scrape, `mplsrouter stats` prints what the endpoint
//! says, and the Grafana dashboard queries only metrics the router exports.
#![forbid(unsafe_code)]

mod common;
mod live;

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{bin, promtool_check, tshark, TempDir};
use live::{samples, value, LiveRouter};
use traffic::{read_pcap, write_pcap, Frame6Spec, FrameSpec};

const ROUTES: &str = "
neighbors:
  - {ip: 10.0.1.2, mac: \"02:00:00:00:01:02\"}
  - {ip: \"2001:db8:1::2\", mac: \"02:00:00:00:01:02\"}
ipv4:
  - {prefix: 198.51.100.0/24, via: 10.0.1.2}
ipv6:
  - {prefix: \"2001:db8:100::/40\", via: \"2001:db8:1::2\"}
";

/// ROUTES plus the prefix the no_route frames go to, and one IPv6 prefix.
const ROUTES_RELOADED: &str = "
neighbors:
  - {ip: 10.0.1.2, mac: \"02:00:00:00:01:02\"}
  - {ip: \"2001:db8:1::2\", mac: \"02:00:00:00:01:02\"}
ipv4:
  - {prefix: 198.51.100.0/24, via: 10.0.1.2}
  - {prefix: 203.0.113.0/24, via: 10.0.1.2}
ipv6:
  - {prefix: \"2001:db8:100::/40\", via: \"2001:db8:1::2\"}
  - {prefix: \"2001:db8:200::/40\", via: \"2001:db8:1::2\"}
";

fn udp(dst: [u8; 4], port: u16) -> Vec<u8> {
    FrameSpec {
        dst_mac: [2, 0, 0, 0, 0, 1],
        src_mac: [2, 0, 0, 0, 0, 2],
        dst_ip: dst,
        src_port: port,
        ..FrameSpec::default()
    }
    .build()
}

/// `routed` frames to 198.51.100.0/24 and `unrouted` to 203.0.113.0/24.
fn traffic(dir: &TempDir, routed: u16, unrouted: u16) {
    let mut f: Vec<Vec<u8>> = (0..routed)
        .map(|i| udp([198, 51, 100, 1 + (i % 200) as u8], 1000 + i))
        .collect();
    f.extend((0..unrouted).map(|i| udp([203, 0, 113, 1 + (i % 200) as u8], 3000 + i)));
    write_pcap(&dir.path("in.pcap"), &f).unwrap();
}

/// Appends to in.pcap frames of the other families: `v6` IPv6 to 2001:db8:100::/40
/// (routed), `mpls` with an unknown label (no_label) and `other` of an unknown ethertype
/// (unsupported_ethertype), all to port `in`'s MAC.
fn other_families(dir: &TempDir, v6: u16, mpls: u16, other: u16) {
    let mut f = read_pcap(&dir.path("in.pcap")).unwrap();
    let mut dst6 = [0u8; 16];
    dst6[..5].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0x01]);
    dst6[15] = 5;
    f.extend((0..v6).map(|i| {
        Frame6Spec {
            dst_mac: [2, 0, 0, 0, 0, 1],
            dst_ip: dst6,
            src_port: 5000 + i,
            ..Frame6Spec::default()
        }
        .build()
    }));
    f.extend((0..mpls).map(|i| {
        FrameSpec {
            dst_mac: [2, 0, 0, 0, 0, 1],
            labels: vec![(777, 0, 64)],
            src_port: 6000 + i,
            ..FrameSpec::default()
        }
        .build()
    }));
    let mut unknown = udp([198, 51, 100, 1], 7000);
    unknown[12..14].copy_from_slice(&0x88b5u16.to_be_bytes());
    f.extend((0..other).map(|_| unknown.clone()));
    write_pcap(&dir.path("in.pcap"), &f).unwrap();
}

/// Frames of in.pcap by family, as tshark dissects them (the oracle for
/// `mplsrouter_received_packets_total`).
fn families_in_pcap(dir: &TempDir) -> BTreeMap<&'static str, f64> {
    families_of(&dir.path("in.pcap"))
}

/// Frames of `pcap` by family (ethertype), as tshark dissects them.
fn families_of(pcap: &std::path::Path) -> BTreeMap<&'static str, f64> {
    let mut n = BTreeMap::from([("ipv4", 0.0), ("ipv6", 0.0), ("mpls", 0.0), ("other", 0.0)]);
    for d in tshark(pcap, &["eth.type"]) {
        let fam = match d.list("eth.type").first().map(String::as_str) {
            Some("0x0800") => "ipv4",
            Some("0x86dd") => "ipv6",
            Some("0x8847") => "mpls",
            _ => "other",
        };
        *n.get_mut(fam).unwrap() += 1.0;
    }
    n
}

/// Port `in` replays in.pcap forever into the worker; `out` is a net_null sink.
fn infinite_config(dir: &TempDir, tag: &str) -> std::path::PathBuf {
    let pid = std::process::id();
    let cfg = format!(
        "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: mplsr-{tag}-{pid}}}\n\
         ports:\n\
         \x20 - {{name: in, vdev: \"net_pcap_{tag}{pid},rx_pcap={d}/in.pcap,infinite_rx=1\", mac: \"02:00:00:00:00:01\", addresses: [10.0.0.1/24, \"2001:db8::1/64\"]}}\n\
         \x20 - {{name: out, vdev: \"net_null_{tag}{pid},no-rx=1\", mac: \"02:00:00:00:01:01\", addresses: [10.0.1.1/24, \"2001:db8:1::1/64\"]}}\n\
         routes: routes.yaml\n\
         metrics_listen: 127.0.0.1:0\n\
         idle: {{backoff: {{}}}}\n",
        d = dir.0.display()
    );
    let p = dir.path("startup.yaml");
    std::fs::write(&p, cfg).unwrap();
    p
}

/// Series that only grow: counters and histogram parts.
fn is_monotonic(series: &str) -> bool {
    let name = series.split('{').next().unwrap();
    ["_total", "_bucket", "_count", "_sum"]
        .iter()
        .any(|s| name.ends_with(s))
}

/// Every drop reason: the pipeline's, then the runtime's (unknown_egress_port, ...).
fn drop_reasons() -> usize {
    let n = (0..).map_while(router::drop_reason_name).count();
    assert_eq!(
        n,
        net::pipeline::DropReason::ALL.len() + router::RuntimeDrop::ALL.len()
    );
    n
}

/// Upper bound on the series of each family, from its label names: `port` ranges over
/// the ports, `worker` over the workers, `reason` over the drop reasons (the pipeline's
/// and the runtime's, or the slow path's).
fn series_bound(text: &str, ports: usize, workers: usize) -> (usize, BTreeMap<String, usize>) {
    let reasons = drop_reasons();
    let icmp_types = router::metrics::IcmpKind::ALL.len();
    let mut per_family: BTreeMap<String, (String, BTreeSet<String>, usize)> = BTreeMap::new();
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            per_family.insert(name.into(), (kind.into(), BTreeSet::new(), 0));
        }
    }
    for (series, _) in samples(text) {
        let name = series.split('{').next().unwrap();
        let fam = per_family
            .keys()
            .filter(|f| name.starts_with(f.as_str()))
            .max_by_key(|f| f.len())
            .unwrap_or_else(|| panic!("{series} has no # TYPE"))
            .clone();
        let e = per_family.get_mut(&fam).unwrap();
        e.2 += 1;
        if let Some(labels) = series.split_once('{').map(|x| x.1) {
            for kv in labels.trim_end_matches('}').split(',') {
                let k = kv.split('=').next().unwrap();
                if k != "le" {
                    e.1.insert(k.to_string());
                }
            }
        }
    }
    let mut bound = 0;
    let mut seen = BTreeMap::new();
    for (fam, (kind, labels, n)) in per_family {
        let mut b = 1;
        for l in &labels {
            b *= match l.as_str() {
                "port" => ports,
                "worker" => workers,
                "reason" if fam == "mplsrouter_slow_path_dropped_total" => {
                    router::metrics::SlowDrop::COUNT
                }
                "reason" if fam == "mplsrouter_control_interface_down_dropped_total" => {
                    router::cpif::DownDrop::COUNT
                }
                // The pipeline's reasons and the runtime's (unknown egress port, ...).
                "reason" => reasons + router::RuntimeDrop::ALL.len(),
                "result" => 2,
                "direction" => 2,
                "family"
                    if fam == "mplsrouter_received_packets_total"
                        || fam == "mplsrouter_forwarded_packets_total" =>
                {
                    net::pipeline::Family::COUNT
                }
                "family" => 2, // ipv4, ipv6
                "type" => icmp_types,
                "message" => router::metrics::NdpCount::ALL.len(),
                "version" | "git_rev" | "dpdk_version" => 1,
                other => panic!("{fam}: label {other:?} has no bound here; add one"),
            };
        }
        if kind == "histogram" {
            b *= 16 + 2; // at most 16 buckets, plus _sum and _count
        }
        assert!(n <= b, "{fam}: {n} series, bound {b} (labels {labels:?})");
        bound += b;
        seen.insert(fam, n);
    }
    (bound, seen)
}

#[test]
fn counters_only_grow_across_scrapes_and_a_reload_with_a_fixed_bounded_series_set() {
    let dir = TempDir::new("metrics-e2e");
    std::fs::write(dir.path("routes.yaml"), ROUTES).unwrap();
    traffic(&dir, 48, 16);
    let router = LiveRouter::start(&infinite_config(&dir, "mono"), 25.0);
    let fwd = "mplsrouter_worker_forwarded_packets_total{worker=\"1\"}";
    let no_route = "mplsrouter_drops_total{worker=\"1\",reason=\"no_route\"}";

    let mut scrapes = Vec::new();
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(150));
        scrapes.push(router.scrape());
    }
    let before = scrapes.last().unwrap().clone();
    let gen0 = value(&before, "mplsrouter_fib_generation");
    let ok0 = value(&before, "mplsrouter_reloads_total{result=\"ok\"}");
    assert!(
        value(&before, no_route) > 0.0,
        "unrouted frames are dropped before the reload"
    );

    // Rewrite the routes file in place of the old one (rename: readers see all or nothing).
    std::fs::write(dir.path("routes.new"), ROUTES_RELOADED).unwrap();
    std::fs::rename(dir.path("routes.new"), dir.path("routes.yaml")).unwrap();
    let after = router.scrape_until("the reload is published", Duration::from_secs(5), |s| {
        value(s, "mplsrouter_fib_generation") > gen0
    });
    let no_route_at_reload = value(&after, no_route);
    scrapes.push(after);
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(150));
        scrapes.push(router.scrape());
    }
    let last = scrapes.last().unwrap().clone();
    promtool_check(&last);

    assert!(value(&last, "mplsrouter_fib_generation") > gen0);
    assert_eq!(
        value(&last, "mplsrouter_reloads_total{result=\"ok\"}"),
        ok0 + 1.0
    );
    assert_eq!(
        value(&last, "mplsrouter_reloads_total{result=\"error\"}"),
        0.0
    );
    assert_eq!(
        value(&last, "mplsrouter_fib_ipv4_routes"),
        value(&before, "mplsrouter_fib_ipv4_routes") + 1.0
    );
    // Table sizes per family: 2 connected + 2 local + the neighbour's /128 + the file's
    // IPv6 routes (1, then 2); the Lpm6 is not empty.
    assert_eq!(value(&before, "mplsrouter_fib_ipv6_routes"), 6.0);
    assert_eq!(value(&last, "mplsrouter_fib_ipv6_routes"), 7.0);
    assert!(value(&last, "mplsrouter_fib_lpm_bytes{family=\"ipv6\"}") > 0.0);
    assert!(value(&last, "mplsrouter_fib_lpm_bytes{family=\"ipv4\"}") > 0.0);
    // The new route took effect: no more no_route drops (a burst in flight at the swap
    // may still count), yet the counter did not go back to zero.
    assert!(value(&last, no_route) >= no_route_at_reload);
    assert!(
        value(&last, no_route) <= no_route_at_reload + 64.0,
        "drops continue after the reload"
    );
    assert!(
        value(&last, fwd) > value(&scrapes[0], fwd),
        "traffic flowed during the test"
    );

    // Every counter is monotonic between consecutive scrapes; the series set never changes.
    let first_set: BTreeSet<String> = samples(&scrapes[0]).into_iter().map(|s| s.0).collect();
    for (i, pair) in scrapes.windows(2).enumerate() {
        let a: BTreeMap<String, f64> = samples(&pair[0]).into_iter().collect();
        let b: BTreeMap<String, f64> = samples(&pair[1]).into_iter().collect();
        let set: BTreeSet<String> = b.keys().cloned().collect();
        assert_eq!(
            set,
            first_set,
            "scrape {} has a different series set",
            i + 1
        );
        let mut checked = 0;
        for (series, va) in &a {
            if is_monotonic(series) {
                let vb = b[series];
                assert!(
                    vb >= *va,
                    "{series} went from {va} to {vb} (scrape {i} -> {})",
                    i + 1
                );
                checked += 1;
            }
        }
        assert!(checked > 50, "only {checked} counters compared");
    }

    // No label explosion: the series count is bounded by the families' label sets.
    let (bound, per_family) = series_bound(&last, 2, 1);
    assert!(
        first_set.len() <= bound,
        "{} series > bound {bound}",
        first_set.len()
    );
    assert_eq!(
        per_family["mplsrouter_drops_total"],
        drop_reasons(),
        "one drop series per reason for the single worker"
    );
    assert_eq!(per_family["mplsrouter_port_rx_packets_total"], 2);

    let (status, out) = router.stop(Duration::from_secs(15));
    assert!(status.success(), "router failed:\n{out}");
}

/// The cells of the row that starts with `first` in the section titled `title`.
fn row(table: &str, title: &str, first: &str) -> Vec<String> {
    table
        .lines()
        .skip_while(|l| *l != title)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .find(|c| c.first().map(String::as_str) == Some(first))
        .unwrap_or_else(|| panic!("no row {first:?} under {title:?}:\n{table}"))
}

#[test]
fn stats_prints_the_live_counters_and_explains_an_unreachable_endpoint() {
    let dir = TempDir::new("stats-e2e");
    std::fs::write(dir.path("routes.yaml"), ROUTES).unwrap();
    traffic(&dir, 100, 20); // played once: 100 forwarded, 20 dropped (no route)
    other_families(&dir, 6, 5, 3); // 6 forwarded, 5 no_label, 3 unsupported_ethertype
    let families = families_in_pcap(&dir);
    assert_eq!(families.values().sum::<f64>(), 134.0, "{families:?}");
    let cfg = common::pcap_config(&dir, "");
    // The ports' IPv6 subnets, for ROUTES' IPv6 neighbour.
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        "addresses: [10.0.1.1/24]",
        "addresses: [10.0.1.1/24, \"2001:db8:1::1/64\"]",
    );
    std::fs::write(&cfg, text).unwrap();
    let router = LiveRouter::start(&cfg, 25.0);
    let url = format!("http://{}/metrics", router.metrics);
    let scrape = router.scrape_until("the pcap is played", Duration::from_secs(5), |s| {
        value(s, "mplsrouter_worker_rx_packets_total{worker=\"1\"}") == 134.0
    });
    for (fam, n) in &families {
        let series = format!("mplsrouter_received_packets_total{{worker=\"1\",family=\"{fam}\"}}");
        assert_eq!(value(&scrape, &series), *n, "{series}");
    }
    // Forwarded by family: checked against out.pcap once the router is stopped.
    let sent = router.scrape_until("the forwarded are sent", Duration::from_secs(5), |s| {
        value(s, "mplsrouter_port_tx_packets_total{port=\"out\"}") == 106.0
    });

    let out = Command::new(bin())
        .args(["stats", "--url", &url])
        .output()
        .unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{table}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(row(&table, "Ports", "in")[1..3], ["up", "134"]);
    assert_eq!(row(&table, "Ports", "out")[3], "106");
    let w = row(&table, "Workers", "1");
    assert_eq!(
        w[1..5],
        ["134", "106", "0", "0"],
        "rx, forwarded, slow path, refused"
    );
    for (fam, n) in &families {
        assert_eq!(row(&table, "Received by family", fam)[1], n.to_string());
    }

    assert_eq!(row(&table, "Drops by reason", "no_route")[1], "20");
    assert_eq!(row(&table, "Drops by reason", "no_label")[1], "5");
    assert_eq!(
        row(&table, "Drops by reason", "unsupported_ethertype")[1],
        "3"
    );
    let t = row(&table, "Tables", "1");
    assert_eq!(
        t[1],
        format!("{}", value(&scrape, "mplsrouter_fib_ipv4_routes"))
    );

    // --watch refreshes with rates: the second screen has numbers where the first had "-".
    let mut watch = live::KillOnDrop(Some(
        Command::new(bin())
            .args(["stats", "--url", &url, "--watch", "0.3"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    ));
    std::thread::sleep(Duration::from_millis(1200));
    let mut child = watch.0.take().unwrap();
    child.kill().unwrap();
    let shown = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    let screens: Vec<&str> = shown
        .split("\x1b[H\x1b[2J")
        .filter(|s| !s.is_empty())
        .collect();
    assert!(screens.len() >= 2, "{shown}");
    assert_eq!(row(screens[0], "Ports", "in")[4], "-");
    assert_eq!(
        row(screens[1], "Ports", "in")[4],
        "0.000",
        "idle after the pcap"
    );

    let (status, log) = router.stop(Duration::from_secs(15));
    assert!(status.success(), "router failed:\n{log}");
    // What tshark finds on `out`, by ethertype (no route here changes a packet's
    // family: no push, no PHP).
    let forwarded = families_of(&dir.path("out.pcap"));
    assert_eq!(forwarded.values().sum::<f64>(), 106.0, "{forwarded:?}");
    for (fam, n) in &forwarded {
        let series = format!("mplsrouter_forwarded_packets_total{{worker=\"1\",family=\"{fam}\"}}");
        assert_eq!(value(&sent, &series), *n, "{series}");
        assert_eq!(row(&table, "Forwarded by family", fam)[1], n.to_string());
    }
    let out = Command::new(bin())
        .args(["stats", "--url", &url])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("cannot connect to {url}")), "{err}");
    assert!(
        err.contains("is the router running?") && err.contains("metrics_listen"),
        "{err}"
    );
}

/// Metric names the router exports: the collector's FAMILIES table and the reload
/// histogram (control.rs), histograms expanded to their _bucket/_sum/_count series.
fn exported_names() -> BTreeSet<String> {
    let root = env!("CARGO_MANIFEST_DIR");
    let src =
        |f: &str| std::fs::read_to_string(format!("{root}/crates/router/src/metrics/{f}")).unwrap();
    let collector = src("collector.rs");
    let families = collector
        .split("const FAMILIES")
        .nth(1)
        .and_then(|s| s.split("\n];").next())
        .expect("FAMILIES table in collector.rs");
    let mut names = BTreeSet::new();
    let mut add = |name: &str, histogram: bool| {
        if histogram {
            for s in ["_bucket", "_sum", "_count"] {
                names.insert(format!("{name}{s}"));
            }
        } else {
            names.insert(name.to_string());
        }
    };
    for entry in families.split("\"mplsrouter_").skip(1) {
        let name = format!("mplsrouter_{}", entry.split('"').next().unwrap());
        let kind = entry
            .split("MetricType::")
            .nth(1)
            .expect("a MetricType per family");
        add(&name, kind.starts_with("HISTOGRAM"));
    }
    let control = src("control.rs");
    let hist = control
        .split("HistogramOpts::new(")
        .nth(1)
        .and_then(|s| s.split('"').nth(1))
        .expect("the reload histogram in control.rs");
    add(hist, true);
    assert!(names.len() > 30, "{names:?}");
    names
}

fn metric_names(expr: &str) -> Vec<String> {
    expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("mplsrouter_"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn grafana_dashboard_is_valid_json_querying_only_exported_metrics() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/grafana/mplsrouter-dashboard.json"
    );
    // Python's json module (strict: no NaN/Infinity, no trailing commas) as the parser.
    let walk = r#"
import json, sys
def strict(c): raise ValueError("non-JSON constant " + c)
d = json.load(open(sys.argv[1]), parse_constant=strict)
ids = []
def panels(ps):
    for p in ps:
        ids.append(p["id"])
        yield p
        yield from panels(p.get("panels", []))
for p in panels(d["panels"]):
    for t in p.get("targets", []):
        print("expr\t" + p["title"] + "\t" + json.dumps(t["expr"]))
assert len(ids) == len(set(ids)), "duplicate panel ids"
for v in d["templating"]["list"]:
    if v["type"] == "query":
        print("var\t" + v["name"] + "\t" + json.dumps(v["definition"]))
"#;
    let out = Command::new("python3")
        .args(["-c", walk, path])
        .output()
        .expect("python3 runs the JSON check");
    assert!(
        out.status.success(),
        "{path} is not a valid dashboard: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let known = exported_names();
    let mut exprs = Vec::new();
    let mut used = BTreeSet::new();
    for line in text.lines() {
        let mut f = line.splitn(3, '\t');
        let (kind, title, json) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap());
        let names = metric_names(json);
        assert!(
            !names.is_empty(),
            "{title}: {json} queries no mplsrouter metric"
        );
        for n in names {
            assert!(
                known.contains(&n),
                "{title}: {n} is not exported by the router"
            );
            used.insert(n);
        }
        if kind == "expr" {
            exprs.push(json.to_string());
        }
    }
    for must in [
        "mplsrouter_port_rx_packets_total",
        "mplsrouter_port_tx_packets_total",
        "mplsrouter_drops_total",
        "mplsrouter_worker_busy_cycles_total",
        "mplsrouter_reloads_total",
        "mplsrouter_fib_generation",
        "mplsrouter_slow_path_packets_total",
        "mplsrouter_icmp_sent_total",
    ] {
        assert!(used.contains(must), "the dashboard does not chart {must}");
    }
    assert!(exprs.len() >= 10, "{} queries", exprs.len());

    // Every query is valid PromQL: promtool parses them as recording rules (Grafana's
    // variables replaced by what they expand to).
    let dir = TempDir::new("dashboard");
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    for (i, e) in exprs.iter().enumerate() {
        let e = e
            .replace("$__rate_interval", "1m")
            .replace("$instance", ".*");
        rules.push_str(&format!(
            "      - record: dashboard:query_{i}\n        expr: {e}\n"
        ));
    }
    std::fs::write(dir.path("rules.yml"), &rules).unwrap();
    let out = Command::new("promtool")
        .args(["check", "rules"])
        .arg(dir.path("rules.yml"))
        .output()
        .expect("promtool must be installed");
    assert!(
        out.status.success(),
        "promtool rejects a dashboard query:\n{}{}\n{rules}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
