//! The worker loop on real DPDK bursts (a `net_ring` loopback feeds it, `net_null` sinks
//! its TX): every mbuf that comes in, received or injected, leaves counted under a named
//! outcome. Needs no hugepages; the EAL is initialised once for this test binary.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dpdk::{Eal, Mbuf, Mempool, Port, PortConfig, TxBuffer};
use net::packet::PacketBuf;
use net::pipeline::{DropReason, PuntReason, Verdict};

use super::{Forwarder, Injected, Punted, Worker};
use crate::counters::{RuntimeDrop, WorkerCounters};
use crate::punt::budget::{Budget, Rate};
use crate::punt::{Budgets, Mark, NeighborMarks, PuntQueues};
use crate::spec::IdlePolicy;

/// Decides by the first byte: 0 forward to port 1, 1 forward to port 9 (none), 2 drop
/// (no route), 3 slow path (ARP: control), 4 slow path (TTL expired: data), 5 slow path
/// (glean on port 0).
struct ByFirstByte;

impl Forwarder for ByFirstByte {
    fn decide(
        &mut self,
        _in_port: u16,
        pkts: &mut [Mbuf],
        verdicts: &mut [Verdict],
        _families: &mut net::pipeline::FamilyCounts,
    ) {
        for (m, v) in pkts.iter().zip(verdicts.iter_mut()) {
            *v = match m.data()[0] {
                0 => Verdict::Forward { port: 1 },
                1 => Verdict::Forward { port: 9 },
                2 => Verdict::Drop(DropReason::NoRoute),
                4 => Verdict::SlowPath(PuntReason::TtlExpired { in_port: 0 }),
                5 => Verdict::SlowPath(PuntReason::Glean { port: 0 }),
                _ => Verdict::SlowPath(PuntReason::Arp),
            };
        }
    }
}

fn eal() -> Eal {
    let prefix = format!("--file-prefix=router-worker-test-{}", std::process::id());
    Eal::init(&[
        "router-worker-test",
        "-l",
        "0",
        "--no-huge",
        "--no-pci",
        "--no-shconf",
        "--no-telemetry",
        "-m",
        "128",
        prefix.as_str(),
        "--log-level=lib.eal:error",
        "--vdev=net_ring_wloop0",
        "--vdev=net_null_wsink0",
    ])
    .expect("EAL init with --no-huge and vdevs")
}

fn frame(first: u8) -> Vec<u8> {
    let mut f = vec![0u8; 64];
    f[0] = first;
    f
}

/// An IPv4 frame to `dst` whose first byte picks its verdict (see [`ByFirstByte`]).
fn ipv4_frame(first: u8, dst: [u8; 4]) -> Vec<u8> {
    let mut f = frame(first);
    f[12..15].copy_from_slice(&[0x08, 0x00, 0x45]);
    f[30..34].copy_from_slice(&dst);
    f
}

#[test]
fn every_received_or_injected_mbuf_is_counted_under_a_named_outcome() {
    let eal = eal();
    let pool = Mempool::new("worker_test", 1023, 0, -1).unwrap();
    let ring = eal.port_by_name("net_ring_wloop0").unwrap();
    let sink = eal.port_by_name("net_null_wsink0").unwrap();
    let mut ports: Vec<Port> = [ring, sink]
        .iter()
        .map(|&id| {
            let mut p = Port::configure(id, &PortConfig::default(), &pool).unwrap();
            p.start().unwrap();
            p
        })
        .collect();
    let baseline = pool.in_use();

    // Into the loopback ring: 3 to forward, 2 for a port that does not exist, 2 without
    // a route, a flood of 4 punted data packets (whose budget admits 3 and whose queue
    // holds 1) ahead of 2 punted control packets (whose queue holds 2), 2 gleans to a
    // neighbour marked incomplete and one to another, and one two-segment chain.
    let mut feed = TxBuffer::new(ring, 0);
    for first in [0, 0, 0, 1, 1, 2, 2, 4, 4, 4, 4, 3, 3] {
        feed.push(pool.alloc_with(&frame(first)).unwrap());
    }
    for dst in [[10, 1, 0, 9], [10, 1, 0, 9], [10, 1, 0, 8]] {
        feed.push(pool.alloc_with(&ipv4_frame(5, dst)).unwrap());
    }
    let head = pool.alloc_with(&frame(0)).unwrap();
    let tail = pool.alloc_with(&frame(0)).unwrap();
    let chain = head.chain(tail).map_err(|_| "chain").unwrap();
    assert_eq!(chain.nb_segs(), 2);
    feed.push(chain);
    assert_eq!(feed.flush(), 17);

    let (data_tx, data_rx) = crossbeam_channel::bounded::<Punted>(1);
    let (control_tx, control_rx) = crossbeam_channel::bounded::<Punted>(2);
    let (inject_tx, inject_rx) = crossbeam_channel::bounded::<Injected>(8);
    for port in [1, 7] {
        let mbuf = pool.alloc_with(&frame(0)).unwrap();
        inject_tx.send(Injected { port, mbuf }).unwrap();
    }
    // And one frame from a control interface, on its own queue.
    let (control_inject_tx, control_inject_rx) = crossbeam_channel::bounded::<Injected>(1);
    let mbuf = pool.alloc_with(&frame(0)).unwrap();
    control_inject_tx.send(Injected { port: 1, mbuf }).unwrap();
    // Generous budgets but TTL expiry's: a burst of 3 (1 pps: no refill in this test).
    let mut rates = [Rate {
        pps: 1000,
        burst: 100,
    }; Budget::ALL.len()];
    rates[Budget::TtlExpired as usize] = Rate { pps: 1, burst: 3 };
    let marks = Arc::new(NeighborMarks::default());
    marks.insert(Mark::Addr {
        port: 0,
        ip: u32::from_be_bytes([10, 1, 0, 9]),
    });
    let counters = Arc::new(WorkerCounters::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let worker = Worker {
        rx: vec![(0, ring, 0)],
        tx: vec![TxBuffer::new(sink, 0), TxBuffer::new(sink, 0)],
        counters: counters.clone(),
        stop: stop.clone(),
        idle: IdlePolicy::BusyPoll,
        burst: 32,
        forwarder: ByFirstByte,
        punt: PuntQueues {
            control: control_tx,
            data: data_tx,
            budgets: Budgets::new(&rates, dpdk::tsc_hz(), 1),
            marks: marks.clone(),
        },
        inject: Some(inject_rx),
        inject_control: Some(control_inject_rx),
        trace: None,
    };
    let t = std::thread::spawn(move || worker.run());
    let deadline = Instant::now() + Duration::from_secs(10);
    let wait_for = |rx: u64| {
        while counters.snapshot().rx_packets < rx || counters.snapshot().injected < 3 {
            assert!(Instant::now() < deadline, "{:?}", counters.snapshot());
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    wait_for(17);
    // Then bursts of one verdict each (the single-port path): 5 to forward, then 3 for
    // the port that does not exist, then a full burst to forward (one ring enqueue, seen
    // by one RX burst: the only burst the stage histogram counts).
    for (first, k, total) in [(0, 5, 22), (1, 3, 25), (0, 32, 57)] {
        for _ in 0..k {
            feed.push(pool.alloc_with(&frame(first)).unwrap());
        }
        assert_eq!(feed.flush(), k);
        wait_for(total);
    }
    stop.store(true, Ordering::SeqCst);
    let w = t.join().unwrap().snapshot();

    assert_eq!(w.rx_packets, 57);
    assert_eq!(w.forwarded, 3 + 5 + 32);
    assert_eq!(w.bursts, 4);
    assert_eq!(w.forwarding_bursts.count(), 1, "full bursts only");
    assert_eq!(w.drops[RuntimeDrop::UnknownEgressPort.index()], 2 + 3);
    assert_eq!(w.drops[DropReason::NoRoute.index()], 2);
    assert_eq!(w.drops[RuntimeDrop::MultiSegment.index()], 1);
    assert_eq!(
        w.drops[DropReason::Truncated.index()],
        0,
        "no drop counted as truncated"
    );
    assert_eq!(w.drops[RuntimeDrop::TtlExpiredThrottled.index()], 1);
    assert_eq!(w.drops[RuntimeDrop::NeighborIncomplete.index()], 2);
    assert_eq!((w.slow_path, w.punt_overflow), (3, 3));
    assert_eq!(w.punt_overflow_control, 0);
    // The data flood came first and overflowed its own queue; control lost nothing.
    let control: Vec<PuntReason> = control_rx.try_iter().map(|p| p.reason).collect();
    assert_eq!(control, [PuntReason::Arp, PuntReason::Arp]);
    assert_eq!(data_rx.len(), 1);
    assert_eq!(w.injected, 3);
    assert_eq!(w.drops[RuntimeDrop::InjectUnknownPort.index()], 1);
    assert_eq!(
        w.tx_packets + w.tx_refused,
        40 + 2,
        "40 forwarded, 2 injected"
    );
    assert_eq!(w.unaccounted(), 0, "{w:?}");
    drop(data_rx);
    drop(inject_tx);
    drop(control_inject_tx);
    for p in &mut ports {
        p.stop().unwrap();
    }
    assert_eq!(pool.in_use(), baseline, "every mbuf is back in the pool");
}
