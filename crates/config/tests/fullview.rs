//! Full-view scale: generate a routes file from the real 2023 table, parse + validate +
//! compile it, then time a one-line edit through [`ReloadState`]. Prints timings (speed
//! is not asserted); skipped with a message when the data set is absent.
//!
//! Figures in release: `cargo test -p config --release --test fullview -- --nocapture`.
#![forbid(unsafe_code)]

mod common;

use common::ctx;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use config::{ReloadOutcome, ReloadState};
use net::fib::{NextHop, RouteTarget};

/// `<repo>/../shared/data/...`, looked up through the ancestors so that git worktrees
/// nested one level deeper find it too.
fn data() -> Option<String> {
    const FILE: &str = "shared/data/ipv4-fullview-2023.txt.gz";
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(p): Option<PathBuf> = manifest
        .ancestors()
        .skip(3)
        .map(|a| a.join(FILE))
        .find(|p| p.exists())
    else {
        eprintln!(
            "SKIP full-view test: {FILE} not found above {}",
            manifest.display()
        );
        return None;
    };
    let f = std::fs::File::open(&p).unwrap();
    let mut s = String::new();
    flate2::read::GzDecoder::new(f)
        .read_to_string(&mut s)
        .unwrap();
    Some(s)
}

#[test]
fn full_view_parse_check_compile_and_one_line_edit() {
    let Some(list) = data() else { return };
    let nhs: Vec<std::net::Ipv4Addr> = (2..6)
        .map(|i| std::net::Ipv4Addr::new(10, 0, 1, i))
        .collect();
    let t = Instant::now();
    let (text, n) = config::generate::fullview_routes(&list, &nhs);
    eprintln!(
        "generate: {n} routes, {} bytes in {:?}",
        text.len(),
        t.elapsed()
    );
    assert!(n > 900_000, "{n}");

    let mut st = ReloadState::new("/x/fullview.yaml", ctx());
    let t = Instant::now();
    let out = st.apply_text(text.clone()).unwrap();
    let total = t.elapsed();
    let ReloadOutcome::Updated { fib, diff, timings } = out else {
        panic!()
    };
    eprintln!(
        "initial load: total {total:?} (parse+validate {:?}, diff {:?}, compile {:?})",
        timings.check, timings.diff, timings.compile
    );
    assert_eq!(diff.ipv4_added, n);
    assert_eq!(fib.stats().ipv4_routes, n + 4);

    // Spot-check against the input: every 1000th prefix routes to its own next hop.
    let set = st.current().unwrap();
    for (c, _) in set.ipv4.iter().step_by(1000) {
        let id = fib.lookup_ipv4(c.addr).unwrap();
        let RouteTarget::NextHop(NextHop::Adjacency(a)) = fib.route(id).target else {
            panic!()
        };
        assert!((2..6).contains(&fib.adjacency(a).neighbor[3]));
    }

    // One-line edit: move one prefix to another next hop.
    let line = text.lines().nth(1000).unwrap().to_string();
    let edited_line = line
        .rsplit_once(' ')
        .map(|(a, _)| format!("{a} 10.0.1.9"))
        .unwrap();
    let edited = text.replacen(&format!("{line}\n"), &format!("{edited_line}\n"), 1);
    let t = Instant::now();
    let out = st.apply_text(edited).unwrap();
    let total = t.elapsed();
    let ReloadOutcome::Updated { fib, diff, timings } = out else {
        panic!()
    };
    eprintln!(
        "one-line edit: total {total:?} (parse+validate {:?}, diff {:?}, compile {:?})",
        timings.check, timings.diff, timings.compile
    );
    assert_eq!(
        (diff.ipv4_changed, diff.ipv4_added, diff.ipv4_removed),
        (1, 0, 0)
    );
    assert_eq!(fib.generation(), 2);
    let prefix: config::types::Cidr = line
        .trim_start_matches("  - ")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let RouteTarget::NextHop(NextHop::Adjacency(a)) =
        fib.route(fib.lookup_ipv4(prefix.addr).unwrap()).target
    else {
        panic!()
    };
    assert_eq!(fib.adjacency(a).neighbor, [10, 0, 1, 9]);
}
