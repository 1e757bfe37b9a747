//! Feeds a running router over FPM, the way zebra does, and measures it from outside:
//!
//! 1. the full view (one route per prefix of a prefix list, through 4 next-hop groups
//!    pushing labels): time from the last byte sent to the table holding every route;
//! 2. single-change latency: one route moves to another group; time until the table
//!    with it is published (`mplsrouter_fpm_publishes_total` steps);
//! 3. churn: N route changes per second for S seconds on prefixes the traffic does not
//!    use; the drops counters before and after show whether the data path lost anything.
//!
//! ```text
//! cargo run -p router --release --example fpm_feed -- \
//!     --prefixes ../shared/data/ipv4-fullview-2023.txt.gz --fpm 127.0.0.1:2620 \
//!     --metrics 127.0.0.1:9550 [--churn-rate 100000] [--churn-secs 10] \
//!     [--write-traffic in.pcap]
//! ```
//! `--write-traffic` only writes a pcap of frames to the first 1000 prefixes (never
//! churned) for the router's input port and exits. Next hops: 10.0.1.2-5 (the `out`
//! port's subnet in the bench configs).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use fpm::encode;
use fpm::msg::{Key, NexthopBody, Path, RouteBody};

struct Args {
    prefixes: String,
    fpm: String,
    metrics: String,
    churn_rate: u64,
    churn_secs: u64,
    write_traffic: Option<String>,
}

fn args() -> Args {
    let mut a = Args {
        prefixes: "../shared/data/ipv4-fullview-2023.txt.gz".into(),
        fpm: "127.0.0.1:2620".into(),
        metrics: "127.0.0.1:9550".into(),
        churn_rate: 100_000,
        churn_secs: 10,
        write_traffic: None,
    };
    let v: Vec<String> = std::env::args().skip(1).collect();
    for p in v.chunks(2) {
        let val = p.get(1).cloned().unwrap_or_default();
        match p[0].as_str() {
            "--prefixes" => a.prefixes = val,
            "--fpm" => a.fpm = val,
            "--metrics" => a.metrics = val,
            "--churn-rate" => a.churn_rate = val.parse().expect("--churn-rate N"),
            "--churn-secs" => a.churn_secs = val.parse().expect("--churn-secs N"),
            "--write-traffic" => a.write_traffic = Some(val),
            o => panic!("unknown option {o}"),
        }
    }
    a
}

fn scrape(addr: &str) -> String {
    let mut s = TcpStream::connect(addr).expect("connect to the metrics endpoint");
    write!(s, "GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut body = String::new();
    s.read_to_string(&mut body).unwrap();
    body
}

/// Sum of the series of `name` whose line contains every `want`.
fn metric(text: &str, name: &str, want: &[&str]) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(name) && !l.starts_with('#'))
        .filter(|l| l[name.len()..].starts_with(['{', ' ']))
        .filter(|l| want.iter().all(|w| l.contains(w)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

const FPM_V4: &[&str] = &["source=\"fpm\"", "kind=\"ipv4\""];

fn group(i: usize) -> u32 {
    1 + (i % 4) as u32
}

/// The next group for a prefix now in `cur` (always another one).
fn next(cur: &mut u32) -> u32 {
    *cur = *cur % 4 + 1;
    *cur
}

fn route(addr: u32, len: u8, nh: u32) -> Vec<u8> {
    encode::frame(&[encode::route(
        Key::Ipv4 { addr, len },
        Some(&RouteBody::Group(nh)),
    )])
}

fn wait(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) -> Duration {
    let t = Instant::now();
    while !ok() {
        assert!(t.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_micros(200));
    }
    t.elapsed()
}

/// Median, p90 and max of milliseconds.
fn show(v: &mut [f64]) -> String {
    v.sort_by(f64::total_cmp);
    format!(
        "median {:.2} ms, p90 {:.2} ms, max {:.2} ms over {}",
        v[v.len() / 2],
        v[v.len() * 9 / 10],
        v[v.len() - 1],
        v.len()
    )
}

fn main() {
    let a = args();
    let bytes = std::fs::read(&a.prefixes).expect("read the prefix list");
    let mut prefixes =
        net::fib::prefix_list::parse_prefix_list(&bytes).expect("parse the prefix list");
    prefixes.sort_unstable();
    prefixes.dedup();
    if let Some(p) = a.write_traffic {
        let frames: Vec<Vec<u8>> = prefixes[..1000]
            .iter()
            .enumerate()
            .map(|(i, &(addr, len))| {
                let host = if len < 32 { addr | 1 } else { addr };
                traffic::FrameSpec {
                    dst_mac: [2, 0, 0, 0, 0, 1],
                    dst_ip: host.to_be_bytes(),
                    src_port: 1000 + i as u16,
                    ..Default::default()
                }
                .build()
            })
            .collect();
        traffic::write_pcap(std::path::Path::new(&p), &frames).unwrap();
        println!("wrote {} frames to {p}", frames.len());
        return;
    }
    let n = prefixes.len();
    let mut s = TcpStream::connect(&a.fpm).expect("connect to the router's FPM port");
    s.set_nodelay(true).unwrap();
    // Four next-hop objects, each pushing a label, as zebra sends them first.
    let mut buf = Vec::new();
    for g in 1..=4u32 {
        let nh = Path {
            gateway: Some(u32::from_be_bytes([10, 0, 1, 1 + g as u8]).into()),
            ifindex: 0,
            labels: vec![1000 + g],
            weight: 1,
        };
        buf.extend(encode::frame(&[encode::nexthop(
            g,
            Some(&NexthopBody::Single(nh)),
        )]));
    }
    let mut cur: Vec<u32> = (0..prefixes.len()).map(group).collect();
    for (i, &(addr, len)) in prefixes.iter().enumerate() {
        buf.extend(route(addr, len, cur[i]));
    }
    println!(
        "full view: {n} prefixes, {} MB of FPM frames",
        buf.len() / 1_000_000
    );
    let t0 = Instant::now();
    s.write_all(&buf).unwrap();
    let sent = t0.elapsed();
    let installed = wait("the full view", Duration::from_secs(300), || {
        metric(
            &scrape(&a.metrics),
            "mplsrouter_fib_entries_by_source",
            FPM_V4,
        ) >= n as f64
    });
    println!(
        "full view: sent in {:.2} s, all {n} routes installed {:.2} s after the last byte ({:.2} s in all)",
        sent.as_secs_f64(),
        installed.as_secs_f64(),
        (sent + installed).as_secs_f64()
    );

    // Single changes, one at a time. Seen from the router (read off the socket ->
    // table published) and from here (a scrape waits up to the metrics server's 10 ms
    // poll, so this one is an upper bound).
    let mut lat = Vec::new();
    let mut inside = Vec::new();
    for k in 0..50 {
        let i = 500_000 % n + k;
        let (addr, len) = prefixes[i];
        let before = metric(&scrape(&a.metrics), "mplsrouter_fpm_publishes_total", &[]);
        let t = Instant::now();
        s.write_all(&route(addr, len, next(&mut cur[i]))).unwrap();
        let mut m = String::new();
        wait("one change", Duration::from_secs(5), || {
            m = scrape(&a.metrics);
            metric(&m, "mplsrouter_fpm_publishes_total", &[]) > before
        });
        lat.push(t.elapsed().as_secs_f64() * 1e3);
        inside.push(metric(&m, "mplsrouter_fpm_last_publish_latency_seconds", &[]) * 1e3);
        std::thread::sleep(Duration::from_millis(20));
    }
    println!(
        "single change, read off the socket -> table published (router): {}",
        show(&mut inside)
    );
    println!(
        "single change, sent -> publish seen on /metrics (includes the scrape): {}",
        show(&mut lat)
    );

    // Churn on prefixes 100k.. (the traffic uses the first 1000).
    let m0 = scrape(&a.metrics);
    let changes0 = metric(&m0, "mplsrouter_fpm_changes_total", &[]);
    let drops0 = metric(&m0, "mplsrouter_drops_total", &[]);
    let fwd0 = metric(&m0, "mplsrouter_worker_forwarded_packets_total", &[]);
    let pubs0 = metric(&m0, "mplsrouter_fpm_publishes_total", &[]);
    let lat_sum0 = metric(&m0, "mplsrouter_fpm_publish_latency_seconds_sum", &[]);
    let first = 100_000.min(n / 2);
    let churn = &prefixes[first..];
    let per_ms = (a.churn_rate / 1000).max(1) as usize;
    // Encoded in advance, one block per millisecond, so the feeder's own work does not
    // limit the rate.
    let ticks = a.churn_secs as usize * 1000;
    let blocks: Vec<Vec<u8>> = (0..ticks)
        .map(|t| {
            let mut b = Vec::with_capacity(per_ms * 60);
            for k in 0..per_ms {
                let j = first + (t * per_ms + k) % churn.len();
                let (addr, len) = prefixes[j];
                b.extend(route(addr, len, next(&mut cur[j])));
            }
            b
        })
        .collect();
    let sent = ticks * per_ms;
    let t = Instant::now();
    for (tick, b) in blocks.iter().enumerate() {
        s.write_all(b).unwrap();
        let due = t + Duration::from_millis(tick as u64 + 1);
        if let Some(d) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(d);
        }
    }
    let send_secs = t.elapsed().as_secs_f64();
    let mut last_print = Instant::now();
    let applied = wait("the churn to be applied", Duration::from_secs(120), || {
        let m = scrape(&a.metrics);
        let got = metric(&m, "mplsrouter_fpm_changes_total", &[]) - changes0;
        let msgs = metric(&m, "mplsrouter_fpm_messages_total", &["route_add"]);
        if last_print.elapsed() > Duration::from_secs(2) {
            println!("  ... {got:.0} of {sent} changes applied ({msgs:.0} route messages in all)");
            last_print = Instant::now();
        }
        got >= sent as f64
    });
    std::thread::sleep(Duration::from_millis(50));
    let m1 = scrape(&a.metrics);
    let pubs = metric(&m1, "mplsrouter_fpm_publishes_total", &[]) - pubs0;
    println!(
        "churn: mean read -> published latency {:.2} ms over {pubs:.0} publishes",
        (metric(&m1, "mplsrouter_fpm_publish_latency_seconds_sum", &[]) - lat_sum0) / pubs * 1e3
    );
    println!(
        "churn: {sent} changes in {send_secs:.2} s ({:.0}/s offered), all applied {:.2} s after the last; \
         {:.0} publishes; data path: {:.0} forwarded, {:.0} dropped during the churn",
        sent as f64 / send_secs,
        applied.as_secs_f64(),
        metric(&m1, "mplsrouter_fpm_publishes_total", &[]) - pubs0,
        metric(&m1, "mplsrouter_worker_forwarded_packets_total", &[]) - fwd0,
        metric(&m1, "mplsrouter_drops_total", &[]) - drops0,
    );
}
