//! Lpm4 on the real full view: build time, bytes, lookups per second (single and batched,
//! uniformly random keys inside the announced space) and one-route update latency.
//!
//! `cargo bench -p net --bench lpm`; the table is read from `<repo>/../shared/data`,
//! `<repo>/shared/data` or `MPLSROUTER_DATA_DIR`. Criterion prints Melem/s = Mlookups/s.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use net::fib::prefix_list::{parse_prefix_list, random_keys_in, spread_values};
use net::fib::Lpm4;

const KEYS: usize = 1 << 20;
const BURST: usize = 64;

fn table(name: &str) -> Option<Vec<(u32, u8, u32)>> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dirs = [
        std::env::var_os("MPLSROUTER_DATA_DIR").map(PathBuf::from),
        Some(manifest.join("../../../shared/data")),
        Some(manifest.join("../../shared/data")),
    ];
    let path = dirs
        .into_iter()
        .flatten()
        .map(|d| d.join(name))
        .find(|p| p.is_file());
    let Some(path) = path else {
        eprintln!("SKIP: {name} not found (set MPLSROUTER_DATA_DIR)");
        return None;
    };
    let prefixes = parse_prefix_list(&std::fs::read(path).unwrap()).unwrap();
    Some(spread_values(&prefixes, 300))
}

fn bench_table(c: &mut Criterion, name: &str, short: &str) {
    let Some(routes) = table(name) else { return };
    let t = Instant::now();
    let lpm = Lpm4::from_prefixes(routes.iter().copied());
    eprintln!(
        "{short}: {} prefixes, first build {:?}, lookup bytes {} ({:.2} MiB), control bytes {}",
        lpm.len(),
        t.elapsed(),
        lpm.memory_bytes(),
        lpm.memory_bytes() as f64 / (1 << 20) as f64,
        lpm.control_bytes()
    );
    let plain: Vec<(u32, u8)> = routes.iter().map(|&(a, l, _)| (a, l)).collect();
    let keys = random_keys_in(&plain, KEYS, 42);

    let mut g = c.benchmark_group(format!("lpm4/{short}"));
    g.throughput(Throughput::Elements(KEYS as u64));
    g.sample_size(20);
    g.bench_function("lookup_single", |b| {
        b.iter(|| {
            let mut acc = 0u32;
            for &k in &keys {
                acc = acc.wrapping_add(lpm.lookup(black_box(k)).unwrap_or(0));
            }
            acc
        })
    });
    let mut out = vec![0u32; BURST];
    g.bench_function("lookup_batch64", |b| {
        b.iter(|| {
            let mut acc = 0u32;
            for burst in keys.chunks(BURST) {
                lpm.lookup_batch(black_box(burst), &mut out);
                acc = acc.wrapping_add(out[0]);
            }
            acc
        })
    });
    g.finish();

    let mut g = c.benchmark_group(format!("lpm4/{short}/update"));
    g.sample_size(10);
    g.bench_function("build_full", |b| {
        b.iter_batched(
            || routes.clone(),
            |r| Lpm4::from_prefixes(r),
            BatchSize::PerIteration,
        )
    });
    // One-route change of the running table, as the control thread would do it: clone
    // the published table (shares all blocks) and apply the change (copies one block).
    let mut i = 0;
    g.bench_function("clone_and_change_one_24", |b| {
        b.iter(|| {
            i = (i + 7919) % routes.len();
            let (a, l, v) = routes[i];
            let mut next = lpm.clone();
            next.insert(a, l, v + 1);
            next
        })
    });
    g.bench_function("clone_and_add_one_28", |b| {
        b.iter(|| {
            i = (i + 7919) % routes.len();
            let (a, _, _) = routes[i];
            let mut next = lpm.clone();
            next.insert(a, 28, 7);
            next
        })
    });
    g.bench_function("clone_and_remove_one", |b| {
        b.iter(|| {
            i = (i + 7919) % routes.len();
            let (a, l, _) = routes[i];
            let mut next = lpm.clone();
            next.remove(a, l);
            next
        })
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    bench_table(c, "ipv4-fullview-2023.txt.gz", "fullview2023");
    if std::env::var_os("LPM_BENCH_ALL").is_some() {
        bench_table(c, "ipv4-rib-2014.txt.gz", "rib2014");
    }
}

criterion_group!(lpm, benches);
criterion_main!(lpm);
