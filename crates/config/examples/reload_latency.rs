//! Time from a one-line edit of a full-view routes file to the new `Fib`, split by step.
//!
//! `cargo run -p config --release --example reload_latency [-- ROUNDS [ipv6]]`
//!
//! Generates the full view (`config::generate::fullview_routes` over
//! `shared/data/ipv4-fullview-2023.txt.gz`, or `MPLSROUTER_DATA_DIR`), writes it to a temp
//! file, loads it once (full parse + compile), then alternates one `routes_compact` line
//! between two next hops ROUNDS times: write the file, `ReloadState::reload()` (read and
//! compare, check, diff, derive), and prints min / median / max of each step; once with
//! an edit of the same length, once with one a byte longer. The file write is
//! not counted (the runtime starts at the file event). Then three edits outside the
//! compact block (full parse, full diff, derive), printed one by one.
//!
//! With `ipv6`, the IPv6 full view (`ipv6-fullview-2023.txt.gz`, 160k prefixes) is in
//! the same file as one `prefix_groups` block via an IPv6 neighbor, and three edits of
//! one IPv6 prefix are timed last.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use config::{ReloadOutcome, ReloadState, RouteContext, StartupConfig};

fn prefix_list() -> String {
    data_file("ipv4-fullview-2023.txt.gz")
}

fn data_file(name: &str) -> String {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let path = [
        std::env::var_os("MPLSROUTER_DATA_DIR").map(PathBuf::from),
        Some(manifest.join("../../../shared/data")),
        Some(manifest.join("../../../../shared/data")),
    ]
    .into_iter()
    .flatten()
    .map(|d| d.join(name))
    .find(|p| p.is_file())
    .unwrap_or_else(|| panic!("{name} not found: set MPLSROUTER_DATA_DIR"));
    let mut s = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut s)
        .unwrap();
    s
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map_or(50, |s| s.parse().expect("ROUNDS"));
    let ipv6 = std::env::args().nth(2).is_some_and(|a| a == "ipv6");
    let cfg = StartupConfig::parse(
        Path::new("/x/r.yaml"),
        "ports:\n  - {name: in, vdev: net_null0, addresses: [10.0.0.1/24]}\n  - {name: out, vdev: net_null1, addresses: [10.0.1.1/24, \"2001:db8:1::1/64\"]}\n",
    )
    .unwrap();
    let ctx = RouteContext::from_startup(&cfg, |id| [2, 0, 0, 0, 0, id as u8]);
    let nhs: Vec<std::net::Ipv4Addr> = (2..6)
        .map(|i| std::net::Ipv4Addr::new(10, 0, 1, i))
        .collect();
    let (mut text, n) = config::generate::fullview_routes(&prefix_list(), &nhs);
    let v6_first = ipv6.then(|| append_ipv6_view(&mut text));
    let dir = std::env::temp_dir().join(format!("reload-latency-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("routes.yaml");
    std::fs::write(&path, &text).unwrap();
    let mut st = ReloadState::new(&path, ctx);
    let t = Instant::now();
    let ReloadOutcome::Updated { timings, .. } = st.reload().unwrap() else {
        panic!("first load")
    };
    println!(
        "{n} routes, {} MB: first load {:.0} ms ({timings:?})",
        text.len() >> 20,
        t.elapsed().as_secs_f64() * 1e3
    );
    let line = text.lines().nth(500_000).unwrap();
    let head = line.rsplit_once(' ').unwrap().0;
    // Same length (the next hop's last octet), then one byte longer: the latter moves
    // the text after the edit and shifts the recorded line starts.
    for (what, other) in [
        ("same length", format!("{head} 10.0.1.9")),
        ("one byte longer", format!("{head} 10.0.1.19")),
    ] {
        let versions = [
            text.clone(),
            text.replacen(&format!("{line}\n"), &format!("{other}\n"), 1),
        ];
        let mut steps: common::Steps = Default::default();
        let mut derived = 0;
        for i in 0..rounds {
            std::fs::write(&path, &versions[(i + 1) % 2]).unwrap();
            let t = Instant::now();
            let out = st.reload().unwrap();
            let all = t.elapsed();
            // As the router does once the table is live (not part of the latency).
            st.settle();
            let ReloadOutcome::Updated { timings, fib, .. } = out else {
                panic!("no change")
            };
            drop(fib);
            derived += usize::from(timings.derived && timings.fast_path);
            common::record(&mut steps, &timings, all);
        }
        println!("{rounds} one-line edits ({what}), {derived} on the fast path and derived:");
        for (name, v) in [
            "read + compare",
            "check (fast path)",
            "diff",
            "derive",
            "reload() total",
        ]
        .iter()
        .zip(steps.iter_mut())
        {
            common::summary(name, v, 3);
        }
        if rounds % 2 == 1 {
            // Back to the original text for the next series.
            std::fs::write(&path, &text).unwrap();
            st.reload().unwrap();
        }
    }
    // The general path: a change outside `routes_compact` is fully parsed, diffed
    // against the running set (hash maps over 900k prefixes), then derived.
    for i in 0..3 {
        let mut t = text.clone();
        t += &format!(
            "mpls:\n  - {{in_label: {}, action: pop_and_lookup}}\n",
            100 + i
        );
        std::fs::write(&path, &t).unwrap();
        let ReloadOutcome::Updated { timings, .. } = st.reload().unwrap() else {
            panic!("no change")
        };
        println!("label added (full parse): {timings:?}");
    }
    if let Some(first) = v6_first {
        // An IPv6 prefix changed: full parse, diff of both families, derive (the first
        // IPv6 edit of a derivation copies the Lpm6).
        for i in 0..3 {
            let t = text.replacen(&first, &format!("2001:db8:{:x}::/48", 0x100 + i), 1);
            std::fs::write(&path, &t).unwrap();
            let t0 = Instant::now();
            let ReloadOutcome::Updated { timings, .. } = st.reload().unwrap() else {
                panic!("no change")
            };
            println!(
                "ipv6 prefix changed (full parse): {:.0} ms {timings:?}",
                t0.elapsed().as_secs_f64() * 1e3
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Appends the IPv6 full view as one prefix group; returns its first prefix.
fn append_ipv6_view(text: &mut String) -> String {
    let raw = data_file("ipv6-fullview-2023.txt.gz");
    let set: std::collections::BTreeSet<&str> = raw
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    text.push_str("prefix_groups:\n  - via: \"2001:db8:1::2\"\n    prefixes: |\n");
    for p in &set {
        text.push_str("      ");
        text.push_str(p);
        text.push('\n');
    }
    println!("ipv6 view: {} prefixes in one prefix group", set.len());
    set.iter().next().unwrap().to_string()
}
