//! `stats` on a scrape captured from a running router (testdata/live-scrape.txt: the demo
//! traffic on net_pcap -> net_null, debug build).

use super::exposition::Exposition;
use super::table::{render, Snapshot};

const LIVE: &str = include_str!("testdata/live-scrape.txt");

fn live() -> (Exposition, Snapshot) {
    let e = Exposition::parse(LIVE).expect("the captured scrape parses");
    let s = Snapshot::from_exposition(&e);
    (e, s)
}

/// The lines of one titled section of the rendered table.
fn section<'a>(out: &'a str, title: &str) -> Vec<&'a str> {
    out.lines()
        .skip_while(|l| *l != title)
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect()
}

fn cells(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

#[test]
fn snapshot_reads_every_section_of_a_live_scrape() {
    let (e, s) = live();
    let names: Vec<_> = s.ports.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["in", "out"]);
    let v = |n: &str, l: &[(&str, &str)]| e.get(n, l).unwrap();
    assert_eq!(
        s.ports[0].rx,
        v("mplsrouter_port_rx_packets_total", &[("port", "in")])
    );
    assert_eq!(
        s.ports[1].tx,
        v("mplsrouter_port_tx_packets_total", &[("port", "out")])
    );
    assert!(s.ports.iter().all(|p| p.link_up));
    assert_eq!(s.workers.len(), 1);
    let w = &s.workers[0];
    assert_eq!(w.name, "1");
    assert_eq!(
        w.forwarded,
        v("mplsrouter_worker_forwarded_packets_total", &[])
    );
    // Consistency of the capture itself: what the worker forwarded left by the ports.
    assert_eq!(w.forwarded, s.ports[0].tx + s.ports[1].tx);
    // Every drop reason is listed (zeros too); the three this traffic provokes are not 0.
    let reasons = e.series("mplsrouter_drops_total").count();
    assert_eq!(s.drops.len(), reasons);
    let nonzero: Vec<_> = s
        .drops
        .iter()
        .filter(|d| d.1 > 0.0)
        .map(|d| d.0.as_str())
        .collect();
    assert_eq!(nonzero, ["bad_checksum", "no_label", "no_route"]);
    assert_eq!(s.fib[0], v("mplsrouter_fib_generation", &[]));
    assert_eq!(s.fib[1], 43.0);
    assert_eq!((s.reloads_ok, s.reloads_error), (1.0, 0.0));
    assert_eq!(s.build.as_ref().unwrap().2, "22.11.11");
}

#[test]
fn one_shot_table_shows_totals_and_since_start_ratios() {
    let (e, s) = live();
    let out = render(&s, None, s.last_good_reload + 30.0);
    let ports = section(&out, "Ports");
    assert_eq!(cells(ports[0])[..4], ["port", "link", "rx", "packets"]);
    let in_row = cells(ports[1]);
    assert_eq!(in_row[..3], ["in", "up", "479232"]);
    assert_eq!(
        in_row[4..6],
        ["-", "-"],
        "no rate without a previous sample"
    );
    // Right-aligned columns: every row as wide as the header.
    assert!(ports.iter().all(|l| l.len() == ports[0].len()), "{out}");

    let workers = section(&out, "Workers");
    let row = cells(workers[1]);
    // cycles/pkt since start is the router's own gauge, computed independently.
    let cpp = e.get("mplsrouter_worker_cycles_per_packet", &[]).unwrap();
    assert_eq!(row[6], format!("{cpp:.1}"));
    assert_eq!(row[7], "32.0", "burst avg: 479232 packets in 14976 bursts");
    assert_eq!(row[8], "100.0", "busy %: no idle cycles in the capture");

    let drops = section(&out, "Drops by reason");
    assert_eq!(drops.len(), 4, "header + only the non-zero reasons:\n{out}");
    assert!(!out.contains("truncated"), "zero reasons are hidden");
    assert_eq!(cells(drops[3])[..2], ["no_route", "53231"]);

    assert_eq!(
        cells(section(&out, "Tables")[1]),
        // The capture predates the per-family sizes: they read as 0.
        ["1", "43", "32", "37", "1", "54108", "0", "0", "0"]
    );
    let reloads = cells(section(&out, "Reloads")[1]).join(" ");
    assert_eq!(reloads, "1 0 30 s ago 9.49");
    assert!(out.starts_with("mplsrouter 0.1.0 (git 687cdfc93c0b, DPDK 22.11.11)"));
}

#[test]
fn watch_mode_rates_and_ratios_are_per_interval() {
    let (_, prev) = live();
    let mut cur = prev.clone();
    cur.ports[0].rx += 1_000_000.0;
    cur.ports[1].tx += 250_000.0;
    let w = &mut cur.workers[0];
    w.rx += 1_000_000.0;
    w.busy_cycles += 50_000_000.0;
    w.idle_cycles += 150_000_000.0;
    w.bursts += 50_000.0;
    w.burst_packets += 1_000_000.0;
    cur.drops[0].1 += 2_000_000.0;
    let out = render(&cur, Some((&prev, 2.0)), 0.0);
    let ports = section(&out, "Ports");
    assert_eq!(cells(ports[1])[4], "0.500", "{out}");
    assert_eq!(cells(ports[2])[5], "0.125", "{out}");
    let row = cells(section(&out, "Workers")[1]);
    assert_eq!(row[5..], ["0.500", "50.0", "20.0", "25.0"], "{out}");
    let drops = section(&out, "Drops by reason");
    let first = cells(drops[1]);
    assert_eq!(
        (first[0], first[2]),
        (cur.drops[0].0.as_str(), "1.000"),
        "{out}"
    );

    // A router restart (counters went down) counts from zero, as Prometheus' rate() does.
    let mut restarted = prev.clone();
    restarted.ports[0].rx = 400_000.0;
    let out = render(&restarted, Some((&prev, 1.0)), 0.0);
    assert_eq!(cells(section(&out, "Ports")[1])[4], "0.400", "{out}");
}

#[test]
fn missing_families_render_as_zeros_not_a_panic() {
    let e = Exposition::parse("mplsrouter_port_rx_packets_total{port=\"p0\"} 5\n").unwrap();
    let s = Snapshot::from_exposition(&e);
    let out = render(&s, None, 0.0);
    assert_eq!(cells(section(&out, "Ports")[1])[..3], ["p0", "down", "5"]);
    assert!(out.contains("Drops: none"), "{out}");
    assert!(section(&out, "Reloads")[1].contains("never"), "{out}");
}

#[test]
fn per_family_table_sizes_are_read_by_family() {
    let text = "\
# TYPE mplsrouter_fib_ipv6_routes gauge
mplsrouter_fib_ipv6_routes 160151
# TYPE mplsrouter_fib_lpm_bytes gauge
mplsrouter_fib_lpm_bytes{family=\"ipv4\"} 9000000
mplsrouter_fib_lpm_bytes{family=\"ipv6\"} 3830000
";
    let e = Exposition::parse(text).unwrap();
    let s = Snapshot::from_exposition(&e);
    assert_eq!(s.fib[6..], [160151.0, 9000000.0, 3830000.0]);
}
