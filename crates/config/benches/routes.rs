//! Routes file throughput: full-view check (parse + validate + compile) and the reload
//! of a one-line edit. Uses `<repo>/../shared/data/ipv4-fullview-2023.txt.gz` when it is
//! there, else 900k synthetic /24s.
//!
//! `cargo bench -p config --bench routes`

#[path = "../tests/common/mod.rs"]
mod common;

use common::ctx;
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use config::{compile, parse_routes, ReloadOutcome, ReloadState};
use criterion::{criterion_group, criterion_main, Criterion};

fn prefixes() -> String {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let file = manifest
        .ancestors()
        .skip(3)
        .map(|a| a.join("shared/data/ipv4-fullview-2023.txt.gz"))
        .find(|p| p.exists());
    match file {
        Some(p) => {
            let mut s = String::new();
            flate2::read::GzDecoder::new(std::fs::File::open(p).unwrap())
                .read_to_string(&mut s)
                .unwrap();
            s
        }
        None => (0..900_000u32)
            .map(|i| format!("{}.{}.{}.0/24\n", 1 + (i >> 16), (i >> 8) & 255, i & 255))
            .collect(),
    }
}

fn bench(c: &mut Criterion) {
    let nhs: Vec<std::net::Ipv4Addr> = (2..6)
        .map(|i| std::net::Ipv4Addr::new(10, 0, 1, i))
        .collect();
    let (text, _) = config::generate::fullview_routes(&prefixes(), &nhs);
    let ctx = ctx();
    let ports = ctx.ports.clone().unwrap();
    let path = Path::new("/x/fullview.yaml");

    let mut g = c.benchmark_group("fullview");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function("parse_validate", |b| {
        b.iter(|| parse_routes(path, &text, &ctx).unwrap())
    });
    let set = parse_routes(path, &text, &ctx).unwrap();
    g.bench_function("compile", |b| b.iter(|| compile(&set, &ports, 1).unwrap()));

    // A one-line edit, alternating between two versions of line 1000.
    let line = text.lines().nth(1000).unwrap();
    let other = format!("{} 10.0.1.9", line.rsplit_once(' ').unwrap().0);
    let edited = text.replacen(&format!("{line}\n"), &format!("{other}\n"), 1);
    let mut st = ReloadState::new(path, ctx.clone());
    st.apply_text(text.clone()).unwrap();
    let versions = [text.clone(), edited];
    let mut flip = 0;
    let mut run = |want_check_only: bool, iters: u64| {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            flip ^= 1;
            let t = versions[flip].clone();
            let start = Instant::now();
            let out = st.apply_text(t).unwrap();
            let all = start.elapsed();
            let ReloadOutcome::Updated { timings, .. } = out else {
                panic!("no change")
            };
            assert!(timings.fast_path);
            total += if want_check_only { timings.check } else { all };
        }
        total
    };
    g.bench_function("one_line_edit_parse_validate", |b| {
        b.iter_custom(|n| run(true, n))
    });
    g.bench_function("one_line_edit_to_new_fib", |b| {
        b.iter_custom(|n| run(false, n))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
