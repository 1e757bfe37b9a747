//! The router's threads: one poll-mode worker per planned lcore, the slow path, and the
//! control interfaces' down thread, all owned by [`Threads`].
//!
//! [`Threads`] exists before the first launch, and dropping it (normal teardown, an error
//! mid-start, unwinding) stops and joins every thread, so no lcore keeps polling ports that
//! are being closed and `rte_eal_cleanup` never waits forever. Must never hand a thread
//! anything it could use after the ports stop.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};
use dpdk::lcore::{self, LcoreHandle};
use dpdk::{Mempool, TxBuffer};
use net::fib::Fib;
use net::pipeline::{LocalAddrs, Pipeline, PipelineConfig};
use net::rcu::Rcu;

use crate::counters::WorkerCounters;
use crate::cpif::down::Down;
use crate::cpif::ControlIfaces;
use crate::error::{RouterError, ThreadDeath};
use crate::forward::PipelineForwarder;
use crate::punt::{Budgets, NeighborMarks, PuntQueues, CONTROL_QUEUE};
use crate::slowpath::{PuntReceivers, SlowPath, SlowPathEvent};
use crate::spec::{RuntimeSpec, TestFault, WorkerSpec};
use crate::worker::{Injected, Punted, Worker};

/// Capacity of the workers' queue to the slow path.
const PUNT_QUEUE: usize = 1024;

/// Capacity of the slow path's queue of frames for the workers to send.
const INJECT_QUEUE: usize = 1024;

/// Capacity of the queue of frames the control interfaces' kernel sent, for the worker.
const CONTROL_INJECT_QUEUE: usize = 256;

/// Capacity of the slow path's queue of events for the control loop.
const EVENT_QUEUE: usize = 256;

/// The worker and slow-path threads (see the module docs).
pub(super) struct Threads {
    pub worker_stop: Arc<AtomicBool>,
    pub slow_stop: Arc<AtomicBool>,
    workers: Vec<LcoreHandle<Arc<WorkerCounters>>>,
    slow: Option<std::thread::JoinHandle<()>>,
    /// The control interfaces' down thread (stopped with the slow path).
    cpif: Option<std::thread::JoinHandle<()>>,
}

/// The queues between the workers, the slow path and the control interfaces.
pub(super) struct Queues {
    pub punt: PuntQueues,
    pub punted: PuntReceivers,
    pub events: (Sender<SlowPathEvent>, Receiver<SlowPathEvent>),
    pub inject: (Sender<Injected>, Receiver<Injected>),
    pub cpif_inject: (Sender<Injected>, Receiver<Injected>),
}

impl Queues {
    pub fn new(budgets: Budgets, marks: Arc<NeighborMarks>) -> Queues {
        let (punt_tx, punt_rx) = crossbeam_channel::bounded::<Punted>(PUNT_QUEUE);
        let (control_tx, control_rx) = crossbeam_channel::bounded::<Punted>(CONTROL_QUEUE);
        Queues {
            punt: PuntQueues {
                control: control_tx,
                data: punt_tx,
                budgets,
                marks,
            },
            punted: PuntReceivers {
                control: control_rx,
                data: punt_rx,
                data_delay: None,
            },
            events: crossbeam_channel::bounded(EVENT_QUEUE),
            inject: crossbeam_channel::bounded(INJECT_QUEUE),
            cpif_inject: crossbeam_channel::bounded(CONTROL_INJECT_QUEUE),
        }
    }
}

impl Threads {
    pub fn new() -> Threads {
        Threads {
            worker_stop: Arc::new(AtomicBool::new(false)),
            slow_stop: Arc::new(AtomicBool::new(false)),
            workers: Vec::new(),
            slow: None,
            cpif: None,
        }
    }

    /// The first thread that ended while it should still run.
    pub fn first_death(&self) -> Option<ThreadDeath> {
        if let Some(w) = self.workers.iter().find(|w| w.is_finished()) {
            return Some(ThreadDeath::Worker(w.lcore()));
        }
        if self.cpif.as_ref().is_some_and(|c| c.is_finished()) {
            return Some(ThreadDeath::ControlInterface);
        }
        match &self.slow {
            Some(s) if s.is_finished() => Some(ThreadDeath::SlowPath),
            _ => None,
        }
    }

    /// Stops the workers (each flushes its TX buffers as it ends), then the slow path
    /// (which feeds them), joining each; returns why any of them ended abnormally.
    /// Joining twice is a no-op.
    pub fn stop_and_join(&mut self) -> Vec<RouterError> {
        let mut failures = Vec::new();
        self.worker_stop.store(true, Ordering::SeqCst);
        for h in self.workers.drain(..) {
            if let Err(e) = h.join() {
                failures.push(RouterError::Worker(e));
            }
        }
        self.slow_stop.store(true, Ordering::SeqCst);
        if let Some(s) = self.slow.take() {
            if let Err(p) = s.join() {
                let message = lcore::panic_message(p.as_ref());
                failures.push(RouterError::SlowPath { message });
            }
        }
        if let Some(c) = self.cpif.take() {
            if let Err(p) = c.join() {
                let message = lcore::panic_message(p.as_ref());
                failures.push(RouterError::ControlInterfaceThread { message });
            }
        }
        failures
    }
}

impl Drop for Threads {
    fn drop(&mut self) {
        let _ = self.stop_and_join();
    }
}

/// What the workers are built from.
pub(super) struct WorkerParts<'a> {
    pub spec: &'a RuntimeSpec,
    pub plan: &'a [WorkerSpec],
    pub dev_ids: &'a [u16],
    pub pipeline: (&'a PipelineConfig, &'a LocalAddrs),
    pub rcu: &'a Arc<Rcu<Fib>>,
    pub punt: PuntQueues,
    /// The slow path's frames, then the control interfaces' (both to worker 0).
    pub inject: [Receiver<Injected>; 2],
    pub taps: Vec<crate::trace::TraceTap>,
}

/// Step: one worker per planned lcore, each owned by `threads` as soon as it runs.
pub(super) fn launch_workers(
    p: WorkerParts,
    threads: &mut Threads,
) -> Result<Vec<Arc<WorkerCounters>>, RouterError> {
    let [inject, inject_control] = p.inject;
    let (mut inject, mut inject_control) = (Some(inject), Some(inject_control));
    let mut taps = p.taps.into_iter();
    let mut counters = Vec::with_capacity(p.plan.len());
    for (wi, w) in p.plan.iter().enumerate() {
        let c = Arc::new(WorkerCounters::new(w.lcore));
        counters.push(c.clone());
        let pipeline = Pipeline::new(*p.pipeline.0, p.pipeline.1.clone());
        let worker = Worker {
            rx: w
                .rx
                .iter()
                .map(|&(pi, q)| (pi, p.dev_ids[pi as usize], q))
                .collect(),
            tx: p
                .dev_ids
                .iter()
                .map(|&d| TxBuffer::new(d, wi as u16))
                .collect(),
            counters: c,
            stop: threads.worker_stop.clone(),
            idle: p.spec.idle,
            burst: p.spec.burst,
            forwarder: PipelineForwarder::new(pipeline, p.rcu)?,
            punt: p.punt.clone(),
            inject: inject.take(),
            inject_control: inject_control.take(),
            trace: taps.next(),
        };
        let fault = wi == 0 && p.spec.test_fault == Some(TestFault::WorkerPanic);
        let h = lcore::launch(w.lcore, move || {
            if fault {
                panic!("test fault injected (MPLSROUTER_TEST_FAULT=worker-panic)");
            }
            worker.run()
        })
        .map_err(|source| RouterError::Launch {
            lcore: w.lcore,
            source,
        })?;
        threads.workers.push(h);
    }
    Ok(counters)
}

/// Step: the slow-path thread (ARP, ICMP, local delivery), owned by `threads`.
pub(super) fn spawn_slow_path(
    slow: SlowPath,
    punts: PuntReceivers,
    fault: Option<TestFault>,
    threads: &mut Threads,
) -> Result<(), RouterError> {
    let fault = fault == Some(TestFault::SlowPathPanic);
    let h = std::thread::Builder::new()
        .name("slowpath".into())
        .spawn(move || {
            if fault {
                panic!("test fault injected (MPLSROUTER_TEST_FAULT=slowpath-panic)");
            }
            slow.run(punts)
        })
        .map_err(|source| RouterError::Spawn {
            thread: "the slow path",
            source,
        })?;
    threads.slow = Some(h);
    Ok(())
}

/// Step: the thread that sends down what the kernel writes to the control interfaces,
/// owned by `threads` (stopped with the slow path).
pub(super) fn spawn_cpif_down(
    ifs: &Arc<ControlIfaces>,
    pool: &Arc<Mempool>,
    inject: Sender<Injected>,
    dev_ids: &[u16],
    capture: Option<crate::trace::TraceTap>,
    threads: &mut Threads,
) -> Result<(), RouterError> {
    let d = Down {
        capture: std::cell::RefCell::new(capture),
        ifs: ifs.clone(),
        pool: Arc::clone(pool),
        inject,
        stop: threads.slow_stop.clone(),
        dev_ids: dev_ids.to_vec(),
    };
    let h = std::thread::Builder::new()
        .name("cpif-down".into())
        .spawn(move || d.run())
        .map_err(|source| RouterError::Spawn {
            thread: "the control-interface thread",
            source,
        })?;
    threads.cpif = Some(h);
    Ok(())
}
