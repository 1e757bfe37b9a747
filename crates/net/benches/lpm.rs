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

    if std::env::var_os("LPM_BENCH_QUICK").is_some() {
        quick(short, &lpm, &keys);
        churn(short, &lpm, &routes);
    }
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
            Lpm4::from_prefixes,
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
    // Request to publish: derive, publish through the Rcu, reclaim the old table.
    let rcu = net::rcu::Rcu::new(lpm.clone(), 1);
    g.bench_function("change_one_publish_reclaim", |b| {
        b.iter(|| {
            i = (i + 7919) % routes.len();
            let (a, l, v) = routes[i];
            let mut next = rcu.with_current(Lpm4::clone);
            next.insert(a, l, v + 1);
            rcu.publish(next);
            rcu.reclaim()
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

/// Best of 15 rounds over all keys, single and batched: robust on a busy machine where
/// criterion's means wander (`LPM_BENCH_QUICK=1`).
fn quick(name: &str, lpm: &Lpm4, keys: &[u32]) {
    let mut best = [f64::MAX; 2];
    let mut out = vec![0u32; BURST];
    for _ in 0..15 {
        let t = Instant::now();
        let mut acc = 0u32;
        for &k in keys {
            acc = acc.wrapping_add(lpm.lookup(black_box(k)).unwrap_or(0));
        }
        black_box(acc);
        best[0] = best[0].min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for burst in keys.chunks(BURST) {
            lpm.lookup_batch(black_box(burst), &mut out);
            black_box(&out);
        }
        best[1] = best[1].min(t.elapsed().as_secs_f64());
    }
    for (what, secs) in ["single", "batch64"].iter().zip(best) {
        let ns = secs * 1e9 / keys.len() as f64;
        eprintln!(
            "{name} best-of-15 {what:8} {ns:6.2} ns/lookup {:7.1} Mlookups/s",
            1e3 / ns
        );
    }
}

/// CPU time of this thread: unlike wall time, not inflated when a busy machine preempts us.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only the timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Latency distribution (thread CPU time) of one-route changes applied in sequence, each to a clone of the
/// previous table (as successive published snapshots would be): includes the occasional
/// block compaction that the criterion cases above (always from a fresh table) never hit.
fn churn(name: &str, lpm: &Lpm4, routes: &[(u32, u8, u32)]) {
    let mut cur = lpm.clone();
    let mut lat = Vec::with_capacity(20_000);
    let mut slow = Vec::new();
    let mut i = 0;
    for j in 0..20_000u32 {
        i = (i + 7919) % routes.len();
        let (a, l, v) = routes[i];
        let t = thread_cpu_ns();
        let mut next = cur.clone();
        if j % 2 == 0 {
            next.insert(a, l, v + 1 + j % 5);
        } else {
            next.insert(a | 0x10, 28, 9);
        }
        lat.push(thread_cpu_ns() - t);
        cur = next;
        if *lat.last().unwrap() > 1_000_000 {
            slow.push((l, j % 2, *lat.last().unwrap() / 1000));
        }
    }
    if !slow.is_empty() {
        eprintln!("{name} changes over 1 ms (len, kind, us): {slow:?}");
    }
    lat.sort_unstable();
    let q = |p: f64| lat[((lat.len() - 1) as f64 * p) as usize] as f64 / 1e3;
    eprintln!(
        "{name} sequential one-route changes (thread CPU time): p50 {:.1} us, p99 {:.1} us, p99.9 {:.1} us, max {:.1} us",
        q(0.5),
        q(0.99),
        q(0.999),
        q(1.0)
    );
}

fn benches(c: &mut Criterion) {
    bench_table(c, "ipv4-fullview-2023.txt.gz", "fullview2023");
    if std::env::var_os("LPM_BENCH_ALL").is_some() {
        bench_table(c, "ipv4-rib-2014.txt.gz", "rib2014");
    }
}

criterion_group!(lpm, benches);
criterion_main!(lpm);
