//! The operator's view of one scrape (and rates since the previous one), laid out like
//! VPP's `show runtime`: ports, workers, drops by reason, tables, reloads, slow path.
//!
//! Reads metrics by the names the collector exports (crates/router/src/metrics); a metric
//! missing from the scrape shows as 0, so an older router still gets a table.

use std::fmt::Write;

use super::exposition::Exposition;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Port {
    pub name: String,
    pub rx: f64,
    pub tx: f64,
    pub rx_bytes: f64,
    pub tx_bytes: f64,
    pub missed: f64,
    pub nombuf: f64,
    pub rx_errors: f64,
    pub tx_errors: f64,
    pub link_up: bool,
    pub speed_bytes: f64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Worker {
    pub name: String,
    pub rx: f64,
    pub forwarded: f64,
    pub refused: f64,
    pub slow_path: f64,
    pub busy_cycles: f64,
    pub idle_cycles: f64,
    pub bursts: f64,
    pub burst_packets: f64,
}

/// What `stats` shows, read from one scrape.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    pub build: Option<(String, String, String)>,
    pub ports: Vec<Port>,
    pub workers: Vec<Worker>,
    /// Summed over workers, in exposition order.
    pub drops: Vec<(String, f64)>,
    /// Received packets by family, summed over workers (none from an older router).
    pub families: Vec<(String, f64)>,
    /// Forwarded packets by the family they were received as (likewise).
    pub forwarded: Vec<(String, f64)>,
    pub fib: [f64; 9],
    pub reloads_ok: f64,
    pub reloads_error: f64,
    pub last_good_reload: f64,
    pub reload_seconds_sum: f64,
    pub reload_count: f64,
    pub slow_path: [f64; 4],
    pub icmp_sent: Vec<(String, f64)>,
    pub arp: [f64; 2],
    /// The FPM session, when the router has one.
    pub fpm: Option<super::fpm::Fpm>,
}

const FIB: [(&str, &str); 9] = [
    ("generation", "mplsrouter_fib_generation"),
    ("ipv4 routes", "mplsrouter_fib_ipv4_routes"),
    ("labels", "mplsrouter_fib_labels"),
    ("next hops", "mplsrouter_fib_next_hops"),
    ("ecmp groups", "mplsrouter_fib_ecmp_groups"),
    ("bytes", "mplsrouter_fib_bytes"),
    ("ipv6 routes", "mplsrouter_fib_ipv6_routes"),
    ("lpm4 bytes", "mplsrouter_fib_lpm_bytes{family=ipv4}"),
    ("lpm6 bytes", "mplsrouter_fib_lpm_bytes{family=ipv6}"),
];

const SLOW: [(&str, &str); 4] = [
    ("packets", "mplsrouter_slow_path_packets_total"),
    ("dropped", "mplsrouter_slow_path_dropped_total"),
    ("queue drops", "mplsrouter_slow_path_queue_drops_total"),
    ("icmp rate-limited", "mplsrouter_icmp_rate_limited_total"),
];

/// Distinct values of `label` over the series of `name`, in exposition order.
fn label_values(e: &Exposition, name: &str, label: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in e.series(name) {
        if let Some(v) = s.label(label) {
            if !out.iter().any(|o| o == v) {
                out.push(v.to_string());
            }
        }
    }
    out
}

/// Sum of the series of `name` whose labels include `want`.
fn sum(e: &Exposition, name: &str, want: &[(&str, &str)]) -> f64 {
    e.series(name)
        .filter(|s| want.iter().all(|(k, v)| s.label(k) == Some(v)))
        .map(|s| s.value)
        .sum()
}

impl Snapshot {
    pub fn from_exposition(e: &Exposition) -> Snapshot {
        let build = e.series("mplsrouter_build_info").next().map(|s| {
            let l = |k| s.label(k).unwrap_or("?").to_string();
            (l("version"), l("git_rev"), l("dpdk_version"))
        });
        let ports = label_values(e, "mplsrouter_port_rx_packets_total", "port")
            .into_iter()
            .map(|name| {
                let g = |m: &str| sum(e, m, &[("port", &name)]);
                Port {
                    rx: g("mplsrouter_port_rx_packets_total"),
                    tx: g("mplsrouter_port_tx_packets_total"),
                    rx_bytes: g("mplsrouter_port_rx_bytes_total"),
                    tx_bytes: g("mplsrouter_port_tx_bytes_total"),
                    missed: g("mplsrouter_port_rx_missed_total"),
                    nombuf: g("mplsrouter_port_rx_nombuf_total"),
                    rx_errors: g("mplsrouter_port_rx_errors_total"),
                    tx_errors: g("mplsrouter_port_tx_errors_total"),
                    link_up: g("mplsrouter_port_link_up") > 0.0,
                    speed_bytes: g("mplsrouter_port_link_speed_bytes_per_second"),
                    name,
                }
            })
            .collect();
        let workers = label_values(e, "mplsrouter_worker_rx_packets_total", "worker")
            .into_iter()
            .map(|name| {
                let g = |m: &str| sum(e, m, &[("worker", &name)]);
                Worker {
                    rx: g("mplsrouter_worker_rx_packets_total"),
                    forwarded: g("mplsrouter_worker_forwarded_packets_total"),
                    refused: g("mplsrouter_worker_tx_refused_packets_total"),
                    slow_path: g("mplsrouter_worker_slow_path_packets_total"),
                    busy_cycles: g("mplsrouter_worker_busy_cycles_total"),
                    idle_cycles: g("mplsrouter_worker_idle_cycles_total"),
                    bursts: g("mplsrouter_worker_burst_size_count"),
                    burst_packets: g("mplsrouter_worker_burst_size_sum"),
                    name,
                }
            })
            .collect();
        let drops = label_values(e, "mplsrouter_drops_total", "reason")
            .into_iter()
            .map(|r| {
                let v = sum(e, "mplsrouter_drops_total", &[("reason", &r)]);
                (r, v)
            })
            .collect();
        let by_family = |m: &str| -> Vec<(String, f64)> {
            label_values(e, m, "family")
                .into_iter()
                .map(|f| {
                    let v = sum(e, m, &[("family", &f)]);
                    (f, v)
                })
                .collect()
        };
        let families = by_family("mplsrouter_received_packets_total");
        let forwarded = by_family("mplsrouter_forwarded_packets_total");
        let icmp_sent = label_values(e, "mplsrouter_icmp_sent_total", "type")
            .into_iter()
            .map(|t| {
                let v = sum(e, "mplsrouter_icmp_sent_total", &[("type", &t)]);
                (t, v)
            })
            .collect();
        let one = |m: &str| sum(e, m, &[]);
        Snapshot {
            build,
            ports,
            workers,
            drops,
            families,
            forwarded,
            // `+ 0.0`: a sum over no series is -0, shown as 0 (an older router).
            fib: FIB.map(|(_, m)| match m.split_once("{family=") {
                Some((name, f)) => sum(e, name, &[("family", f.trim_end_matches('}'))]) + 0.0,
                None => one(m) + 0.0,
            }),
            reloads_ok: sum(e, "mplsrouter_reloads_total", &[("result", "ok")]),
            reloads_error: sum(e, "mplsrouter_reloads_total", &[("result", "error")]),
            last_good_reload: one("mplsrouter_last_good_reload_timestamp_seconds"),
            reload_seconds_sum: one("mplsrouter_reload_duration_seconds_sum"),
            reload_count: one("mplsrouter_reload_duration_seconds_count"),
            slow_path: SLOW.map(|(_, m)| one(m)),
            icmp_sent,
            arp: [one("mplsrouter_arp_entries"), one("mplsrouter_arp_pending")],
            fpm: super::fpm::Fpm::from_exposition(e),
        }
    }
}

/// Increase of a counter; a decrease means the router restarted (as Prometheus' rate()).
fn delta(cur: f64, prev: f64) -> f64 {
    if cur >= prev {
        cur - prev
    } else {
        cur
    }
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.prec$}"))
}

/// Left-aligned first column, right-aligned numbers, two spaces between columns.
fn table(out: &mut String, title: &str, header: &[&str], rows: &[Vec<String>]) {
    let _ = writeln!(out, "{title}");
    let mut w: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.len());
        }
    }
    let line = |out: &mut String, cells: Vec<&str>| {
        let mut l = String::from(" ");
        for (i, c) in cells.iter().enumerate() {
            if i == 0 {
                let _ = write!(l, " {c:<width$}", width = w[0]);
            } else {
                let _ = write!(l, "  {c:>width$}", width = w[i]);
            }
        }
        let _ = writeln!(out, "{}", l.trim_end());
    };
    line(out, header.to_vec());
    for r in rows {
        line(out, r.iter().map(String::as_str).collect());
    }
    let _ = writeln!(out);
}

fn int(v: f64) -> String {
    format!("{v:.0}")
}

/// The whole table. `prev` is the previous scrape and the seconds since it (watch mode):
/// rates and per-interval ratios come from the difference, otherwise ratios are since start.
pub fn render(cur: &Snapshot, prev: Option<(&Snapshot, f64)>, now_unix: f64) -> String {
    let mut out = String::new();
    if let Some((v, rev, dpdk)) = &cur.build {
        let _ = writeln!(out, "mplsrouter {v} (git {rev}, DPDK {dpdk})\n");
    }
    let dt = prev.map(|(_, s)| s).filter(|s| *s > 0.0);
    let rate = |c: f64, p: Option<f64>| -> String {
        match (dt, p) {
            (Some(dt), Some(p)) => format!("{:.3}", delta(c, p) / dt / 1e6),
            _ => "-".into(),
        }
    };

    let rows: Vec<Vec<String>> = cur
        .ports
        .iter()
        .map(|p| {
            let pp = prev.and_then(|(s, _)| s.ports.iter().find(|x| x.name == p.name));
            vec![
                p.name.clone(),
                if p.link_up { "up" } else { "down" }.into(),
                int(p.rx),
                int(p.tx),
                rate(p.rx, pp.map(|x| x.rx)),
                rate(p.tx, pp.map(|x| x.tx)),
                int(p.missed),
                int(p.nombuf),
                int(p.rx_errors),
                int(p.tx_errors),
            ]
        })
        .collect();
    table(
        &mut out,
        "Ports",
        &[
            "port",
            "link",
            "rx packets",
            "tx packets",
            "rx Mpps",
            "tx Mpps",
            "missed",
            "no mbuf",
            "rx errors",
            "tx errors",
        ],
        &rows,
    );

    let rows: Vec<Vec<String>> = cur
        .workers
        .iter()
        .map(|w| {
            let pw = prev.and_then(|(s, _)| s.workers.iter().find(|x| x.name == w.name));
            // Per-interval figures in watch mode, since start otherwise.
            let base = pw.cloned().unwrap_or_default();
            let d = |c: f64, p: f64| if pw.is_some() { delta(c, p) } else { c };
            let busy = d(w.busy_cycles, base.busy_cycles);
            let idle = d(w.idle_cycles, base.idle_cycles);
            let rx = d(w.rx, base.rx);
            vec![
                w.name.clone(),
                int(w.rx),
                int(w.forwarded),
                int(w.slow_path),
                int(w.refused),
                rate(w.rx, pw.map(|x| x.rx)),
                opt(ratio(busy, rx), 1),
                opt(
                    ratio(
                        d(w.burst_packets, base.burst_packets),
                        d(w.bursts, base.bursts),
                    ),
                    1,
                ),
                opt(ratio(busy * 100.0, busy + idle), 1),
            ]
        })
        .collect();
    table(
        &mut out,
        "Workers",
        &[
            "worker",
            "rx packets",
            "forwarded",
            "slow path",
            "tx refused",
            "rx Mpps",
            "cycles/pkt",
            "burst avg",
            "busy %",
        ],
        &rows,
    );

    type Of = fn(&Snapshot) -> &Vec<(String, f64)>;
    let by_family: [(&str, Of); 2] = [
        ("Received by family", |s| &s.families),
        ("Forwarded by family", |s| &s.forwarded),
    ];
    for (title, of) in by_family {
        let rows: Vec<Vec<String>> = of(cur)
            .iter()
            .map(|(f, v)| {
                let p = prev.and_then(|(s, _)| of(s).iter().find(|x| &x.0 == f).map(|x| x.1));
                vec![f.clone(), int(*v), rate(*v, p)]
            })
            .collect();
        if !rows.is_empty() {
            table(&mut out, title, &["family", "packets", "Mpps"], &rows);
        }
    }

    let rows: Vec<Vec<String>> = cur
        .drops
        .iter()
        .filter(|(_, v)| *v > 0.0)
        .map(|(r, v)| {
            let p = prev.and_then(|(s, _)| s.drops.iter().find(|x| &x.0 == r).map(|x| x.1));
            vec![r.clone(), int(*v), rate(*v, p)]
        })
        .collect();
    if rows.is_empty() {
        let _ = writeln!(out, "Drops: none\n");
    } else {
        table(
            &mut out,
            "Drops by reason",
            &["reason", "packets", "Mpps"],
            &rows,
        );
    }

    let header: Vec<&str> = FIB.iter().map(|(h, _)| *h).collect();
    table(
        &mut out,
        "Tables",
        &header,
        &[cur.fib.iter().map(|v| int(*v)).collect()],
    );

    let ago = if cur.last_good_reload > 0.0 {
        format!("{:.0} s ago", (now_unix - cur.last_good_reload).max(0.0))
    } else {
        "never".into()
    };
    table(
        &mut out,
        "Reloads",
        &["ok", "error", "last good", "avg duration ms"],
        &[vec![
            int(cur.reloads_ok),
            int(cur.reloads_error),
            ago,
            opt(ratio(cur.reload_seconds_sum * 1e3, cur.reload_count), 2),
        ]],
    );

    let mut header: Vec<String> = SLOW.iter().map(|(h, _)| h.to_string()).collect();
    let mut row: Vec<String> = cur.slow_path.iter().map(|v| int(*v)).collect();
    for (t, v) in &cur.icmp_sent {
        header.push(format!("icmp {t}"));
        row.push(int(*v));
    }
    header.extend(["arp entries".into(), "arp pending".into()]);
    row.extend(cur.arp.iter().map(|v| int(*v)));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    table(&mut out, "Slow path", &header, &[row]);
    if let Some(f) = &cur.fpm {
        f.render(&mut out, now_unix);
    }
    out
}
