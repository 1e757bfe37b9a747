//! The `/metrics` exposition, checked by Prometheus' own `promtool` and over HTTP.
#![forbid(unsafe_code)]

#[path = "../../../tests/common/oracles.rs"]
mod oracles;

use std::io::{Read, Write};
use std::sync::Arc;

use router::counters_for_tests::{bump_worker, stage_burst};
use router::metrics::{
    render, BuildInfo, ControlStats, IcmpKind, MetricsServer, NdpCount, RouterCollector,
};
use router::WorkerCounters;

use oracles::promtool_check;

fn registry(workers: &[Arc<WorkerCounters>], control: Arc<ControlStats>) -> prometheus::Registry {
    let r = prometheus::Registry::new();
    let c = RouterCollector::new(
        vec![("in".into(), 30), ("out".into(), 31)],
        workers.to_vec(),
        vec!["no_route", "bad_checksum"],
        control.clone(),
        BuildInfo {
            version: "0.1.0".into(),
            git_rev: "abc".into(),
            dpdk_version: "22.11".into(),
        },
    );
    r.register(Box::new(c)).unwrap();
    r.register(Box::new(control.reload_duration.clone()))
        .unwrap();
    r
}

fn value(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series).and_then(|v| v.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("series {series} missing in:\n{text}"))
        .parse()
        .unwrap()
}

#[test]
fn exposition_passes_promtool_and_sums_worker_counters() {
    let w1 = Arc::new(WorkerCounters::new(1));
    let w2 = Arc::new(WorkerCounters::new(2));
    bump_worker(&w1, 100, 3, 32);
    bump_worker(&w2, 50, 1, 8);
    // Nine quiet bursts of 64 at 22 cycles a packet, one at 40 (exactly: above le 40).
    for _ in 0..9 {
        stage_burst(&w1, 64, 22 * 64);
    }
    stage_burst(&w1, 64, 40 * 64);
    let control = Arc::new(ControlStats::new());
    control.record_reload(true, 0.02);
    control.record_reload(false, 0.001);
    control.icmp(IcmpKind::TimeExceeded, false);
    control.icmp(IcmpKind::TimeExceeded, true);
    control.icmp(IcmpKind::PacketTooBig, true);
    control.neighbors[1].store(5, std::sync::atomic::Ordering::Relaxed);
    control.resolving[0].store(2, std::sync::atomic::Ordering::Relaxed);
    control.slow.ndp(NdpCount::ResolutionFailed);
    let text = render(&registry(&[w1, w2], control));

    promtool_check(&text);

    assert_eq!(
        value(&text, "mplsrouter_worker_rx_packets_total{worker=\"1\"}"),
        100.0
    );
    assert_eq!(
        value(&text, "mplsrouter_worker_rx_packets_total{worker=\"2\"}"),
        50.0
    );
    assert_eq!(
        value(
            &text,
            "mplsrouter_drops_total{worker=\"1\",reason=\"no_route\"}"
        ),
        3.0
    );
    assert_eq!(value(&text, "mplsrouter_reloads_total{result=\"ok\"}"), 1.0);
    assert_eq!(
        value(&text, "mplsrouter_reloads_total{result=\"error\"}"),
        1.0
    );
    assert_eq!(
        value(&text, "mplsrouter_icmp_sent_total{type=\"time_exceeded\"}"),
        2.0
    );
    // Per family: the ICMPv6 ones, the neighbours of each family, NDP resolutions.
    for (series, v) in [
        ("mplsrouter_icmpv6_sent_total{type=\"time_exceeded\"}", 1.0),
        ("mplsrouter_icmpv6_sent_total{type=\"packet_too_big\"}", 1.0),
        ("mplsrouter_icmpv6_sent_total{type=\"echo_reply\"}", 0.0),
        ("mplsrouter_neighbors{family=\"ipv4\"}", 0.0),
        ("mplsrouter_neighbors{family=\"ipv6\"}", 5.0),
        ("mplsrouter_neighbor_resolutions{family=\"ipv4\"}", 2.0),
        ("mplsrouter_neighbor_resolutions{family=\"ipv6\"}", 0.0),
        (
            "mplsrouter_slow_path_ndp_total{message=\"resolution_failed\"}",
            1.0,
        ),
        ("mplsrouter_slow_path_ndp_total{message=\"resolved\"}", 0.0),
        ("mplsrouter_fib_lpm_bytes{family=\"ipv6\"}", 0.0),
    ] {
        assert_eq!(value(&text, series), v, "{series}");
    }
    assert_eq!(
        value(&text, "mplsrouter_worker_burst_size_count{worker=\"1\"}"),
        1.0
    );
    assert_eq!(
        value(
            &text,
            "mplsrouter_worker_burst_size_bucket{worker=\"1\",le=\"16\"}"
        ),
        0.0
    );
    assert_eq!(
        value(
            &text,
            "mplsrouter_worker_burst_size_bucket{worker=\"1\",le=\"32\"}"
        ),
        1.0
    );
    let stage = |s: &str| {
        value(
            &text,
            &format!("mplsrouter_worker_forwarding_burst_cycles_per_packet{s}"),
        )
    };
    assert_eq!(stage("_count{worker=\"1\"}"), 10.0);
    assert_eq!(stage("_sum{worker=\"1\"}"), 9.0 * 22.125 + 40.125);
    assert_eq!(stage("_bucket{worker=\"1\",le=\"20\"}"), 0.0);
    assert_eq!(stage("_bucket{worker=\"1\",le=\"25\"}"), 9.0);
    assert_eq!(stage("_bucket{worker=\"1\",le=\"40\"}"), 9.0);
    assert_eq!(stage("_bucket{worker=\"1\",le=\"50\"}"), 10.0);
    assert_eq!(stage("_count{worker=\"2\"}"), 0.0);
    // Series count is bounded by ports x workers x reasons and the histograms' fixed
    // buckets, whatever the traffic.
    let series = text.lines().filter(|l| !l.starts_with('#')).count();
    assert!(series < 250, "{series} series");
}

#[test]
fn http_server_serves_metrics_and_refuses_the_rest() {
    let control = Arc::new(ControlStats::new());
    let srv = MetricsServer::start("127.0.0.1:0".parse().unwrap(), registry(&[], control)).unwrap();
    let get = |req: &str| {
        let mut s = std::net::TcpStream::connect(srv.addr()).unwrap();
        s.write_all(req.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    };
    let ok = get("GET /metrics HTTP/1.0\r\n\r\n");
    assert!(ok.starts_with("HTTP/1.0 200"), "{ok}");
    assert!(ok.contains("mplsrouter_build_info{"), "{ok}");
    assert!(get("GET /nope HTTP/1.0\r\n\r\n").starts_with("HTTP/1.0 404"));
    assert!(
        get("POST /metrics HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc").starts_with("HTTP/1.0 413")
    );
    let long = format!("GET /{} HTTP/1.0\r\n\r\n", "a".repeat(1000));
    assert!(get(&long).starts_with("HTTP/1.0 413"));
    // A second server on the same port is a clear error, not a panic.
    let err = MetricsServer::start(srv.addr(), prometheus::Registry::new())
        .err()
        .unwrap();
    assert!(err.to_string().contains("cannot listen on"), "{err}");
}
