//! Reload cost of the soak's churn, split by step: the route tables of `scripts/soak.sh`
//! (two full views differing in a few thousand routes, and a broken file) applied in the
//! soak's order, B, broken, A, B, ...
//!
//! `scripts/soak.sh --tables-only DIR` writes the tables, then
//! `cargo run -p config --release --example churn_reload -- DIR/a.yaml DIR/b.yaml DIR/bad.yaml [ROUNDS]`
//!
//! Prints min / median / max of read, check (parse and validate, or the fast path),
//! diff, build (derive or full compile) and the whole `reload()`, for the good writes;
//! and the time to reject the broken one. Publishing (RCU swap, learned neighbors) is not
//! included: the router's `reload: generation N live in X ms` line has the total.

mod common;

use std::path::{Path, PathBuf};
use std::time::Instant;

use config::{ReloadOutcome, ReloadState, RouteContext, StartupConfig};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [a, b, bad, rest @ ..] = args.as_slice() else {
        eprintln!("usage: churn_reload A.yaml B.yaml BAD.yaml [ROUNDS (10)]");
        std::process::exit(2);
    };
    let rounds: usize = rest.first().map_or(10, |s| s.parse().expect("ROUNDS"));
    // The soak's ports (scripts/soak.sh startup.yaml).
    let cfg = StartupConfig::parse(
        Path::new("/x/startup.yaml"),
        "ports:\n  - {name: in, vdev: net_null0, addresses: [10.0.0.1/24]}\n  - {name: out, vdev: net_null1, addresses: [10.0.1.1/24]}\n",
    )
    .unwrap();
    let ctx = RouteContext::from_startup(&cfg, |id| [2, 0, 0, 0, 0, id as u8]);
    let texts: Vec<String> = [b, bad, a]
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{p}: {e}")))
        .collect();
    let dir = std::env::temp_dir().join(format!("churn-reload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join("routes.yaml");
    let write = |text: &str| {
        let tmp = dir.join("routes.tmp");
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
    };
    write(&std::fs::read_to_string(a).unwrap());
    let mut st = ReloadState::new(&path, ctx);
    let t = Instant::now();
    let first = st.reload().expect("table A loads");
    println!("first load (A): {:.0} ms", t.elapsed().as_secs_f64() * 1e3);
    drop(first);
    let mut steps: common::Steps = Default::default();
    let mut rejected = Vec::new();
    let (mut fast, mut derived) = (0, 0);
    for i in 0..rounds * 3 {
        write(&texts[i % 3]);
        let t = Instant::now();
        let out = st.reload();
        let all = t.elapsed();
        match out {
            Err(_) => {
                assert_eq!(i % 3, 1, "a good table was rejected (write {i})");
                rejected.push(all);
            }
            Ok(ReloadOutcome::Updated { timings, fib, diff }) => {
                assert_ne!(i % 3, 1, "the broken file was accepted");
                drop(fib);
                if i < 3 {
                    println!("write {i}: {diff:?}");
                }
                fast += usize::from(timings.fast_path);
                derived += usize::from(timings.derived);
                common::record(&mut steps, &timings, all);
            }
            Ok(ReloadOutcome::Unchanged { .. }) => panic!("write {i}: no change"),
        }
    }
    println!(
        "{} good writes ({fast} on the fast path, {derived} derived), {} broken rejected:",
        steps[0].len(),
        rejected.len()
    );
    for (name, v) in ["read", "check", "diff", "build", "reload() total"]
        .iter()
        .zip(steps.iter_mut())
    {
        common::summary(name, v, 1);
    }
    common::summary("reject broken", &mut rejected, 1);
    std::fs::remove_dir_all(&dir).unwrap();
}
