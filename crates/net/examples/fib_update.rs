//! One-route changes on a full-view `Fib`, from request to publish through `net::rcu`.
//!
//! `cargo run -p net --release --example fib_update [-- ROUNDS]`
//!
//! Builds a `Fib` from `shared/data/ipv4-fullview-2023.txt.gz` (901,899 prefixes over 300
//! adjacencies, 20 ECMP groups, 1000 labels), publishes it in an `Rcu` read by one
//! thread that looks up and reports quiescent states in a loop (a worker), then times, per change:
//! `derive` (clone of the running snapshot), the edit, `build`, `publish` (request ->
//! published), and `reclaim` separately. Changes cycle through: re-point an existing
//! prefix, add a /28 inside it, remove that /28, rebind a label. Prints min, median,
//! p99 and max in wall time, and request -> published in this thread's CPU time too (on a
//! loaded 2-core box the reader and other jobs preempt the publisher; min and median are
//! the figures to quote).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use net::fib::prefix_list::{parse_prefix_list, spread_values};
use net::fib::{
    Adjacency, Fib, FibBuilder, Ipv4Route, LabelEntry, LabelOp, NextHop, RouteTarget, TtlMode,
};
use net::rcu::Rcu;

fn prefixes() -> Vec<(u32, u8, u32)> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let path = [
        std::env::var_os("MPLSROUTER_DATA_DIR").map(PathBuf::from),
        Some(manifest.join("../../../shared/data")),
        Some(manifest.join("../../shared/data")),
    ]
    .into_iter()
    .flatten()
    .map(|d| d.join("ipv4-fullview-2023.txt.gz"))
    .find(|p| p.is_file());
    match path {
        Some(p) => spread_values(&parse_prefix_list(&std::fs::read(p).unwrap()).unwrap(), 320),
        None => {
            eprintln!("full view not found: 900k synthetic /24s");
            (0..900_000u32)
                .map(|i| ((i + 0x010000) << 8, 24, i % 320))
                .collect()
        }
    }
}

fn route(v: u32) -> Ipv4Route {
    let target = if v < 300 {
        NextHop::Adjacency(v)
    } else {
        NextHop::Ecmp(v - 300)
    };
    Ipv4Route {
        target: RouteTarget::NextHop(target),
        ttl_mode: TtlMode::Uniform,
    }
}

fn full_fib(table: &[(u32, u8, u32)]) -> Fib {
    let mut b = FibBuilder::new();
    for i in 0..300u32 {
        let n = [10, (i >> 8) as u8, i as u8, 2];
        b.add_adjacency(Adjacency::new(
            (i % 4) as u16,
            1500,
            n,
            Some([2; 6]),
            [4; 6],
            &[1000 + i],
        ));
    }
    for g in 0..20u32 {
        b.add_ecmp(&[(g, 1), (g + 1, 2), (g + 2, 1)]).unwrap();
    }
    for &(a, l, v) in table {
        b.add_ipv4_route(a, l, route(v)).unwrap();
    }
    for l in 0..1000u32 {
        let e = LabelEntry {
            op: LabelOp::Swap,
            next_hop: Some(NextHop::Adjacency(l % 300)),
            ttl_mode: TtlMode::Uniform,
        };
        b.add_label(16 + l, e).unwrap();
    }
    b.build(1)
}

/// CPU time of this thread: not inflated when a busy machine preempts us.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only the timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn summary(name: &str, v: &mut [Duration]) {
    v.sort_unstable();
    let q = |p: f64| v[((v.len() - 1) as f64 * p) as usize].as_secs_f64() * 1e6;
    println!(
        "{name:24} min {:8.1} us  median {:8.1} us  p99 {:8.1} us  max {:8.1} us",
        q(0.0),
        q(0.5),
        q(0.99),
        q(1.0)
    );
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map_or(2000, |s| s.parse().expect("ROUNDS"));
    let table = prefixes();
    let t = Instant::now();
    let fib = full_fib(&table);
    println!(
        "full build of {} prefixes: {:.0} ms, {:?}",
        table.len(),
        t.elapsed().as_secs_f64() * 1e3,
        fib.stats()
    );
    let rcu = Arc::new(Rcu::new(fib, 4));
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..1u32)
        .map(|k| {
            let (rcu, stop) = (rcu.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut r = rcu.register().unwrap();
                let mut x = k.wrapping_mul(0x9e37_79b9);
                let mut hits = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let f = r.load();
                    for _ in 0..64 {
                        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                        hits += u64::from(f.lookup_ipv4(x).is_some());
                    }
                    r.quiescent();
                }
                hits
            })
        })
        .collect();
    let (mut derive, mut edit, mut build, mut publish, mut reclaim, mut total) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut cpu = vec![];
    for i in 0..rounds {
        let (a, l, v) = table[(i / 4 * 7919) % table.len()];
        let c0 = thread_cpu();
        let t0 = Instant::now();
        let mut d = rcu.with_current(Fib::derive);
        let t1 = Instant::now();
        match i % 4 {
            0 => {
                d.replace_ipv4_route(a, l, route((v + 1) % 320)).unwrap();
            }
            1 if l <= 28 => {
                d.replace_ipv4_route(a | 0x10, 28, route(7)).unwrap();
            }
            2 if l <= 28 => {
                d.remove_ipv4_route(a | 0x10, 28).unwrap();
            }
            _ => {
                let e = LabelEntry {
                    op: LabelOp::Swap,
                    next_hop: Some(NextHop::Ecmp((i % 20) as u32)),
                    ttl_mode: TtlMode::Pipe(64),
                };
                d.replace_label(16 + (i % 1000) as u32, e).unwrap();
            }
        }
        let t2 = Instant::now();
        let next = d.build(2 + i as u64);
        let t3 = Instant::now();
        rcu.publish(next);
        let t4 = Instant::now();
        cpu.push(thread_cpu() - c0);
        rcu.reclaim();
        let t5 = Instant::now();
        derive.push(t1 - t0);
        edit.push(t2 - t1);
        build.push(t3 - t2);
        publish.push(t4 - t3);
        total.push(t4 - t0);
        reclaim.push(t5 - t4);
    }
    stop.store(true, Ordering::Relaxed);
    let hits: u64 = readers.into_iter().map(|h| h.join().unwrap()).sum();
    println!("{rounds} one-route changes, 1 reader online ({hits} reader hits):");
    summary("derive (clone)", &mut derive);
    summary("edit", &mut edit);
    summary("build", &mut build);
    summary("publish", &mut publish);
    summary("request -> published", &mut total);
    summary("  same, thread CPU time", &mut cpu);
    summary("reclaim (after)", &mut reclaim);
    rcu.synchronize();
    rcu.reclaim();
}
