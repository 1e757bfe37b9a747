//! Hostile routes files given to a running router (issue 16, items 2 and 7), through the
//! real binary: an alias bomb, 40,000-deep lists, a megabyte of `[`, a FIFO, a symlink
//! to `/dev/zero` and a file over `max_routes_file_bytes` are each refused with a
//! message and counted as a rejected reload, while the router stays up and keeps
//! forwarding on the last good table; and a writer that stalls mid-file never has its
//! partial file published, only the whole file at its close.
#![forbid(unsafe_code)]

mod common;
mod live;

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{run_for, TempDir};
use live::{samples, value, LiveRouter};

const NEIGHBOR: &str = "neighbors:\n  - {ip: 10.0.1.2, mac: \"02:00:00:00:01:02\"}\n";
const ROUTES: &str = "neighbors:\n  - {ip: 10.0.1.2, mac: \"02:00:00:00:01:02\"}\n\
                      ipv4:\n  - {prefix: 198.51.100.0/24, via: 10.0.1.2}\n";
const OK: &str = "mplsrouter_reloads_total{result=\"ok\"}";
const REJECTED: &str = "mplsrouter_reloads_total{result=\"error\"}";
const GENERATION: &str = "mplsrouter_fib_generation";
const IPV4: &str = "mplsrouter_fib_ipv4_routes";
const FORWARDED: &str = "mplsrouter_worker_forwarded_packets_total";

/// Two ports: `in` replays `in.pcap` forever (when `pcap`), `out` is a sink.
fn config(dir: &TempDir, tag: &str, pcap: bool, extra: &str) -> std::path::PathBuf {
    let n = format!("{}{tag}", std::process::id());
    let input = if pcap {
        common::flows_pcap(dir);
        format!(
            "net_pcap_hi{n},rx_pcap={}/in.pcap,infinite_rx=1",
            dir.0.display()
        )
    } else {
        format!("net_null_hi{n},no-rx=1")
    };
    let cfg = format!(
        "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: mplsr-hostile-{n}}}\n\
         ports:\n\
         \x20 - {{name: in, vdev: \"{input}\", mac: \"02:00:00:00:00:01\", addresses: [10.0.0.1/24]}}\n\
         \x20 - {{name: out, vdev: \"net_null_ho{n},no-rx=1\", mac: \"02:00:00:00:01:01\", addresses: [10.0.1.1/24]}}\n\
         routes: routes.yaml\n\
         metrics_listen: 127.0.0.1:0\n\
         idle: {{backoff: {{}}}}\n{extra}"
    );
    let p = dir.path("startup.yaml");
    std::fs::write(&p, cfg).unwrap();
    p
}

/// The sum of every series of `name` (any labels).
fn sum(text: &str, name: &str) -> f64 {
    samples(text)
        .into_iter()
        .filter(|(s, _)| s == name || s.starts_with(&format!("{name}{{")))
        .map(|(_, v)| v)
        .sum()
}

fn bomb() -> String {
    let mut s = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for (p, c) in "abcdefgh".chars().zip("bcdefghi".chars()) {
        s += &format!("{c}: &{c} [{}]\n", vec![format!("*{p}"); 9].join(","));
    }
    s
}

/// How a hostile file is put in place: written in place (reloaded at its close) or
/// made beside it and renamed over it.
enum Put {
    InPlace(String),
    Renamed(fn(&Path)),
}

fn mkfifo(p: &Path) {
    let st = Command::new("mkfifo").arg(p).status().unwrap();
    assert!(st.success());
}

fn dev_zero(p: &Path) {
    std::os::unix::fs::symlink("/dev/zero", p).unwrap();
}

fn too_big(p: &Path) {
    // Valid, but over the config's 2 MiB limit.
    std::fs::write(p, format!("{ROUTES}{}", "# padding\n".repeat(300_000))).unwrap();
}

#[test]
fn hostile_routes_files_are_refused_while_the_router_keeps_forwarding() {
    let dir = TempDir::new("hostile-live");
    let path = dir.path("routes.yaml");
    std::fs::write(&path, ROUTES).unwrap();
    let r = LiveRouter::start(
        &config(&dir, "a", true, "max_routes_file_bytes: 2097152\n"),
        60.0,
    );
    let first = r.scrape();
    let gen0 = value(&first, GENERATION);
    let cases: Vec<(&str, Put, &str)> = vec![
        (
            "alias bomb",
            Put::InPlace(bomb()),
            "anchors and aliases expand to more than",
        ),
        (
            "40,000-deep block lists",
            Put::InPlace(format!("ipv4:\n{}x\n", "- ".repeat(40_000))),
            "routes.yaml:2:127: lists and mappings nest more than 64 deep",
        ),
        (
            "a megabyte of [",
            Put::InPlace(format!("ipv4: {}\n", "[".repeat(1 << 20))),
            "lists and mappings nest more than 64 deep",
        ),
        (
            "a FIFO",
            Put::Renamed(mkfifo),
            "it is a FIFO (named pipe), not a regular file",
        ),
        (
            "a symlink to /dev/zero",
            Put::Renamed(dev_zero),
            "it is a character device, not a regular file",
        ),
        (
            "a file over max_routes_file_bytes",
            Put::Renamed(too_big),
            "larger than the limit of 2097152 bytes",
        ),
    ];
    for (what, put, message) in cases {
        let before = r.scrape();
        match put {
            Put::InPlace(text) => std::fs::write(&path, text).unwrap(),
            Put::Renamed(make) => {
                let tmp = dir.path(".routes.yaml.new");
                make(&tmp);
                std::fs::rename(&tmp, &path).unwrap();
            }
        }
        let t = Instant::now();
        let after = r.scrape_until(&format!("{what} rejected"), Duration::from_secs(10), |s| {
            value(s, REJECTED) > value(&before, REJECTED)
        });
        println!("{what}: rejected in {:.0?}", t.elapsed());
        assert_eq!(value(&after, GENERATION), gen0, "{what}: table unchanged");
        // The counter can move before the router's stderr has been read: wait (bounded)
        // for the message too.
        let deadline = Instant::now() + Duration::from_secs(5);
        while !r.output().contains(message) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            r.output().contains(message),
            "{what}: {message:?} in\n{}",
            r.output()
        );
        assert!(
            r.output()
                .contains("reload rejected, still serving generation 1"),
            "{what}"
        );
        // Still forwarding on the last good table.
        let f0 = sum(&after, FORWARDED);
        let later = r.scrape_until(
            &format!("{what}: forwarding"),
            Duration::from_secs(5),
            |s| sum(s, FORWARDED) > f0,
        );
        assert_eq!(value(&later, GENERATION), gen0);
    }
    // SIGHUP with the FIFO in place: refused again, the control thread is not stuck in
    // open(2) (it would be without O_NONBLOCK).
    std::fs::remove_file(&path).unwrap();
    mkfifo(&path);
    let before = r.scrape();
    assert!(common::signal(r.pid(), "HUP"));
    r.scrape_until("SIGHUP on a FIFO rejected", Duration::from_secs(10), |s| {
        value(s, REJECTED) > value(&before, REJECTED)
    });
    // A good file is taken again.
    let tmp = dir.path(".routes.yaml.new");
    std::fs::write(&tmp, ROUTES.replace("/24", "/25")).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    r.scrape_until("the good file applied", Duration::from_secs(10), |s| {
        value(s, GENERATION) > gen0
    });
    let (status, out) = r.stop(Duration::from_secs(20));
    assert!(status.success(), "{out}");
}

/// What, how to make it at a path, and the message it must be refused with.
type Case = (&'static str, fn(&Path), &'static str);

#[test]
fn hostile_routes_files_stop_the_router_at_startup_with_a_message() {
    let dir = TempDir::new("hostile-start");
    let path = dir.path("routes.yaml");
    let cfg = config(&dir, "b", false, "max_routes_file_bytes: 2097152\n");
    let cases: [Case; 5] = [
        (
            "a FIFO",
            mkfifo,
            "it is a FIFO (named pipe), not a regular file",
        ),
        (
            "/dev/zero",
            dev_zero,
            "it is a character device, not a regular file",
        ),
        ("too big", too_big, "larger than the limit of 2097152 bytes"),
        (
            "an alias bomb",
            |p| std::fs::write(p, bomb()).unwrap(),
            "anchors and aliases expand to more than",
        ),
        (
            "40,000-deep lists",
            |p| std::fs::write(p, format!("ipv4:\n{}x\n", "- ".repeat(40_000))).unwrap(),
            "routes.yaml:2:127: lists and mappings nest more than 64 deep",
        ),
    ];
    for (what, make, message) in cases {
        let _ = std::fs::remove_file(&path);
        make(&path);
        let t = Instant::now();
        // Bounded: run_for kills the router and fails if it outlives 31 s.
        let out = run_for(&cfg, 1.0);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{what}: {err}");
        assert!(err.contains(message), "{what}: {message:?} in\n{err}");
        assert!(err.contains("mplsrouter: error:"), "{what}: {err}");
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{what}: {:?}",
            t.elapsed()
        );
    }
}

fn routes(n: u32) -> String {
    let mut s = format!("{NEIGHBOR}ipv4:\n");
    for i in 0..n {
        s += &format!("  - {{prefix: 20.0.{i}.0/24, via: 10.0.1.2}}\n");
    }
    s += "mpls:\n  - {in_label: 1000, action: swap, via: 10.0.1.2, push: [2000]}\n";
    s
}

#[test]
fn a_slow_in_place_writer_is_published_only_at_close() {
    let dir = TempDir::new("hostile-slow");
    let path = dir.path("routes.yaml");
    std::fs::write(&path, routes(43)).unwrap();
    let r = LiveRouter::start(&config(&dir, "s", false, ""), 60.0);
    let first = r.scrape();
    let (gen0, full) = (value(&first, GENERATION), value(&first, IPV4));
    assert_eq!(gen0, 1.0);

    // The new version has 44 routes; the writer writes its first 11 (a valid file on
    // its own: no labels), holds the file open for 1.5 s (past any settle delay), then
    // writes the rest and closes.
    let text = routes(44);
    let cut = text.match_indices('\n').nth(2 + 1 + 11).unwrap().0 + 1;
    let (head, tail) = text.split_at(cut);
    let mut w = std::fs::File::create(&path).unwrap();
    w.write_all(head.as_bytes()).unwrap();
    let stall_end = Instant::now() + Duration::from_millis(1500);
    let mut samples = 0;
    while Instant::now() < stall_end {
        let s = r.scrape();
        assert_eq!(
            (value(&s, GENERATION), value(&s, IPV4)),
            (gen0, full),
            "a half-written file was published:\n{}",
            r.output()
        );
        samples += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(samples > 20, "only {samples} scrapes during the stall");
    w.write_all(tail.as_bytes()).unwrap();
    drop(w);
    let after = r.scrape_until("the whole file applied", Duration::from_secs(10), |s| {
        value(s, GENERATION) > gen0
    });
    assert_eq!(value(&after, IPV4), full + 1.0, "the whole file, 44 routes");
    assert_eq!(value(&after, REJECTED), 0.0);
    assert_eq!(value(&after, OK), value(&first, OK) + 1.0, "one reload");
    let (status, out) = r.stop(Duration::from_secs(20));
    assert!(status.success(), "{out}");
    assert_eq!(out.matches("reload: generation").count(), 1, "{out}");
}
