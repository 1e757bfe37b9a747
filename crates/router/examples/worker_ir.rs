//! Instructions per packet of the whole worker loop (issue #21), for callgrind: one
//! [`Worker::poll`] per burst of 32 (RX burst, pipeline, verdict dispatch, counters, TX
//! buffers flushed into `net_null`, drops freed), on real mbufs (EAL without hugepages
//! or PCI). Each burst is fed into a `net_ring` loopback port before the poll, outside
//! what is counted; the packets and table are the pipeline fixture's
//! (`crates/net/benches/fixture`), so the pipeline's share matches `pipeline_ir`.
//!
//! ```text
//! cargo build --release -p router --example worker_ir
//! valgrind --tool=callgrind --toggle-collect='worker_ir::poll_once*' \
//!     target/release/examples/worker_ir mpls_swap 2000
//! ```
//! `scripts/bench/worker-ir.sh` prints, per packet: Ir in all, in the pipeline (`net::`),
//! in DPDK (ring RX, null TX, mempool) and in the worker's own code (the rest).
//! Cases: the fixture's (mpls_swap, ipv4_forward, ecmp4: four egress ports, ...) and
//! `half_drop` (ipv4_forward interleaved with packets without a route).

#[path = "../../net/benches/fixture/mod.rs"]
mod fixture;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use dpdk::{Eal, Mempool, Port, PortConfig, TxBuffer};
use net::packet::PacketBuf;
use net::rcu::Rcu;
use router::punt::budget::{rates, Budgets};
use router::punt::{NeighborMarks, PuntQueues};
use router::{IdlePolicy, PipelineForwarder, PollState, Worker, WorkerCounters};

/// The counted part: one loop iteration of the real worker.
#[inline(never)]
fn poll_once(w: &mut Worker<PipelineForwarder>, s: &mut PollState) -> bool {
    w.poll(s)
}

fn frames(case: &str) -> Vec<Vec<u8>> {
    let ip = |dst, i| fixture::frame(0x0800, &[], &fixture::ipv4(dst, i));
    match case {
        "half_drop" => (0..fixture::BURST)
            .map(|i| {
                ip(
                    if i % 2 == 0 {
                        [203, 0, 113, 9]
                    } else {
                        [198, 18, 0, 1]
                    },
                    i,
                )
            })
            .collect(),
        _ => fixture::case(case)
            .unwrap_or_else(|| panic!("unknown case {case}"))
            .iter()
            .map(|b| b.data().to_vec())
            .collect(),
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let case = args.next().unwrap_or_else(|| "mpls_swap".into());
    let rounds: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(2000);
    let frames = frames(&case);
    let prefix = format!("--file-prefix=worker-ir-{}", std::process::id());
    let eal = Eal::init(&[
        "worker_ir",
        "-l",
        "0",
        "--no-huge",
        "--no-pci",
        "--no-shconf",
        "--no-telemetry",
        "-m",
        "256",
        prefix.as_str(),
        "--log-level=lib.eal:error",
        "--vdev=net_ring_irsrc0",
        "--vdev=net_null_irsink0",
    ])
    .expect("EAL init with --no-huge and vdevs");
    let pool = Mempool::new("worker_ir", 8191, 256, -1).expect("mempool");
    let src = eal.port_by_name("net_ring_irsrc0").unwrap();
    let sink = eal.port_by_name("net_null_irsink0").unwrap();
    let mut ports: Vec<Port> = [src, sink]
        .iter()
        .map(|&id| {
            let mut p = Port::configure(id, &PortConfig::default(), &pool).unwrap();
            p.start().unwrap();
            p
        })
        .collect();

    // Port index 0 is the source; the fixture's egress ports 1..=4 all go to the sink.
    let rcu = Arc::new(Rcu::new(fixture::fib(), 2));
    let counters = Arc::new(WorkerCounters::new(0));
    let (control, _c) = crossbeam_channel::bounded(64);
    let (data, _d) = crossbeam_channel::bounded(64);
    let rates = rates(&Default::default(), &Default::default());
    let mut worker = Worker {
        rx: vec![(0, src, 0)],
        tx: (0..5)
            .map(|i| TxBuffer::new(if i == 0 { src } else { sink }, 0))
            .collect(),
        counters: counters.clone(),
        stop: Arc::new(AtomicBool::new(false)),
        idle: IdlePolicy::BusyPoll,
        burst: fixture::BURST,
        forwarder: PipelineForwarder::new(fixture::pipeline(), &rcu).unwrap(),
        punt: PuntQueues {
            control,
            data,
            budgets: Budgets::new(&rates, dpdk::tsc_hz(), 1),
            marks: Arc::new(NeighborMarks::default()),
        },
        inject: None,
        inject_control: None,
        trace: None,
    };
    let mut s = worker.poll_state();
    let mut feed = TxBuffer::new(src, 0);
    let mut polls = 0;
    for _ in 0..rounds {
        for f in &frames {
            feed.push(pool.alloc_with(f).expect("mbuf"));
        }
        assert_eq!(
            feed.flush(),
            frames.len(),
            "the loopback ring took the burst"
        );
        // One poll takes the whole burst (the worker's burst size is the fixture's).
        assert!(poll_once(&mut worker, &mut s), "the burst came in");
        polls += 1;
    }
    let w = counters.snapshot();
    println!(
        "{case}: {rounds} bursts of {} in {polls} polls: rx {} forwarded {} tx {} refused {} \
         dropped {} slow path {} unaccounted {}",
        frames.len(),
        w.rx_packets,
        w.forwarded,
        w.tx_packets,
        w.tx_refused,
        w.drops.iter().sum::<u64>(),
        w.slow_path,
        w.unaccounted()
    );
    assert_eq!(w.unaccounted(), 0, "{w:?}");
    drop(worker);
    for p in &mut ports {
        p.stop().unwrap();
    }
}
