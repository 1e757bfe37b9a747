//! Human tables for `show` and `lookup`: aligned columns, one entry per line, next hops
//! indented under their route.

use std::fmt::Write;

use router::ctlsock::proto::*;

/// Left-aligned columns, widths from the widest cell.
pub fn columns(head: &[&str], rows: &[Vec<String>]) -> String {
    let mut w: Vec<usize> = head.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.len());
        }
    }
    let line = |cells: Vec<&str>| {
        let s: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<0$}", w[i]))
            .collect();
        s.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(head.to_vec());
    for r in rows {
        out += &line(r.iter().map(String::as_str).collect());
    }
    out
}

fn src(s: Source) -> &'static str {
    match s {
        Source::Yaml => "yaml",
        Source::Fpm => "fpm",
        Source::Arp => "arp",
    }
}

fn ttl(mode: &str, pipe: Option<u8>) -> String {
    match pipe {
        Some(t) => format!("{mode}({t})"),
        None => mode.to_string(),
    }
}

pub fn hop(h: &HopView) -> String {
    let labels = if h.labels.is_empty() {
        String::new()
    } else {
        let l: Vec<String> = h.labels.iter().map(u32::to_string).collect();
        format!(" push [{}]", l.join(" "))
    };
    format!(
        "via {} on {} mac {}{labels} weight {}",
        h.via,
        h.port,
        h.mac.as_deref().unwrap_or("(unresolved)"),
        h.weight
    )
}

pub fn route(out: &mut String, r: &RouteView) {
    let what = match (r.target.as_str(), &r.port) {
        ("connected", Some(p)) => format!("connected on {p}"),
        (t, _) => t.to_string(),
    };
    let _ = writeln!(
        out,
        "{}  {what}  ttl {}  source {}",
        r.prefix,
        ttl(&r.ttl_mode, r.pipe_ttl),
        src(r.source)
    );
    for h in &r.next_hops {
        let _ = writeln!(out, "    {}", hop(h));
    }
}

pub fn routes(r: &RoutesReply) -> String {
    let mut out = format!("table generation {}\n", r.generation);
    if let Some(m) = &r.matched {
        let _ = writeln!(out, "longest match: {m}");
    }
    if r.routes.is_empty() {
        out += "no route\n";
    }
    for x in &r.routes {
        route(&mut out, x);
    }
    if let Some(n) = &r.next_after {
        let _ = writeln!(out, "... more: add --after {n}");
    }
    out
}

pub fn label(out: &mut String, e: &LabelView) {
    let _ = writeln!(
        out,
        "{}  {}  payload {}  ttl {}  source {}",
        e.label,
        e.action,
        e.payload,
        ttl(&e.ttl_mode, e.pipe_ttl),
        src(e.source)
    );
    for h in &e.next_hops {
        let _ = writeln!(out, "    {}", hop(h));
    }
}

pub fn mpls(m: &MplsReply) -> String {
    let mut out = format!("table generation {}\n", m.generation);
    if m.entries.is_empty() {
        out += "no label entry\n";
    }
    for e in &m.entries {
        label(&mut out, e);
    }
    if let Some(n) = m.next_after {
        let _ = writeln!(out, "... more: add --after {n}");
    }
    out
}

pub fn neighbors(n: &[NeighborView]) -> String {
    let rows: Vec<Vec<String>> = n
        .iter()
        .map(|x| {
            vec![
                x.ip.clone(),
                x.mac.clone().unwrap_or_else(|| "-".into()),
                x.port.clone(),
                x.state.clone(),
                x.age_s.map_or("-".into(), |a| format!("{a:.1}s")),
            ]
        })
        .collect();
    columns(&["IP", "MAC", "PORT", "STATE", "AGE"], &rows)
}

fn rate(pps: f64, bps: f64) -> String {
    format!("{:.0} pps {:.1} Mbit/s", pps, bps / 1e6)
}

pub fn ports(p: &[PortView]) -> String {
    let rows: Vec<Vec<String>> = p
        .iter()
        .map(|x| {
            vec![
                x.name.clone(),
                if x.link_up {
                    format!("up {}M", x.speed_mbps)
                } else {
                    "down".into()
                },
                x.mac.clone(),
                x.addresses.join(","),
                x.mtu.to_string(),
                format!("{}/{}", x.rx_queues, x.tx_queues),
                format!("{}/{}", x.rx_packets, x.tx_packets),
                format!("{}/{}/{}", x.rx_missed, x.rx_errors, x.tx_errors),
                rate(x.rx_pps, x.rx_bps),
                rate(x.tx_pps, x.tx_bps),
            ]
        })
        .collect();
    columns(
        &[
            "PORT",
            "LINK",
            "MAC",
            "ADDRESSES",
            "MTU",
            "RXQ/TXQ",
            "RX/TX PKTS",
            "MISS/RXERR/TXERR",
            "RX RATE",
            "TX RATE",
        ],
        &rows,
    )
}

pub fn workers(w: &[WorkerView]) -> String {
    let rows: Vec<Vec<String>> = w
        .iter()
        .map(|x| {
            let bursts: Vec<String> = x
                .burst_sizes
                .iter()
                .filter(|b| b.1 > 0)
                .map(|(le, n)| format!("<={le}:{n}"))
                .collect();
            vec![
                x.lcore.to_string(),
                x.queues.join(","),
                x.rx_packets.to_string(),
                x.forwarded.to_string(),
                x.dropped.to_string(),
                x.slow_path.to_string(),
                format!("{:.1}%", 100.0 * x.busy_share),
                format!("{:.1}", x.cycles_per_packet),
                format!("{:.1}", x.packets_per_burst),
                bursts.join(" "),
            ]
        })
        .collect();
    columns(
        &[
            "LCORE",
            "QUEUES",
            "RX",
            "FORWARDED",
            "DROPPED",
            "PUNTED",
            "BUSY",
            "CYC/PKT",
            "PKT/BURST",
            "BURSTS",
        ],
        &rows,
    )
}

pub fn table(t: &TableView) -> String {
    format!(
        "generation {}\nipv4 routes {} (lpm {} KiB)\nipv6 routes {} (lpm {} KiB)\nlabels {}\n\
         next hops {}\necmp groups {}\nmemory {} KiB\n\
         reloads ok {} failed {}\nlast good load {} (unix ms)\nretired snapshots pending {}\n",
        t.generation,
        t.ipv4_routes,
        t.lpm4_bytes / 1024,
        t.ipv6_routes,
        t.lpm6_bytes / 1024,
        t.labels,
        t.next_hops,
        t.ecmp_groups,
        t.bytes / 1024,
        t.reloads_ok,
        t.reloads_error,
        t.last_good_reload_ms,
        t.rcu_pending
    )
}

fn unix_ms(ms: u64) -> String {
    if ms == 0 {
        return "never".into();
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    format!("{:.1} s ago", now.saturating_sub(ms) as f64 / 1000.0)
}

pub fn fpm(f: &FpmView) -> String {
    let mut o = String::new();
    if !f.enabled {
        o += "FPM: not configured (no `fpm:` in the startup config)\n";
    } else {
        let _ = writeln!(
            o,
            "FPM on {}: {}{}",
            f.listen.as_deref().unwrap_or("?"),
            f.state,
            f.peer
                .as_deref()
                .map(|p| format!(", peer {p}"))
                .unwrap_or_default()
        );
        let _ = writeln!(
            o,
            "  connects {}  messages {}  errors {}  publishes {}  rejected {}",
            f.connects, f.messages, f.errors, f.publishes, f.rejected
        );
        let _ = writeln!(
            o,
            "  installed: {} ipv4 routes, {} ipv6 routes, {} labels (overridden by the routes file: {}, {}, {})",
            f.ipv4_routes,
            f.ipv6_routes,
            f.labels,
            f.overridden_ipv4_routes,
            f.overridden_ipv6_routes,
            f.overridden_labels
        );
        let _ = writeln!(
            o,
            "  resyncs {} (last {}), swept {}",
            f.resyncs,
            unix_ms(f.last_resync_ms),
            f.swept
        );
    }
    let by: Vec<String> = f
        .routes_by_source
        .iter()
        .map(|(s, n)| format!("{} {n}", src(*s)))
        .collect();
    let _ = writeln!(o, "routes in the table by source: {}", by.join(", "));
    o
}

pub fn interfaces(i: &[InterfaceView]) -> String {
    if i.is_empty() {
        return "no control interfaces (no `control_interfaces:` in the startup config)\n".into();
    }
    let rows: Vec<Vec<String>> = i
        .iter()
        .map(|x| {
            vec![
                x.name.clone(),
                x.ifindex.to_string(),
                x.port.clone(),
                if x.up { "up" } else { "down" }.into(),
                x.mac.clone(),
                x.mtu.to_string(),
                x.addresses.join(","),
                x.to_kernel_packets.to_string(),
                x.from_kernel_packets.to_string(),
            ]
        })
        .collect();
    columns(
        &[
            "NAME",
            "IFINDEX",
            "PORT",
            "LINK",
            "MAC",
            "MTU",
            "ADDRESSES",
            "UP_PKTS",
            "DOWN_PKTS",
        ],
        &rows,
    )
}
