//! Bringing the router up, running it, and taking it down cleanly.
//!
//! Order matters and is the reverse on the way down: EAL -> mempool -> ports -> workers;
//! stop workers (they flush their TX buffers) -> stop ports (vdev outputs are flushed) ->
//! check every mbuf is back in the pool -> free the pool -> EAL cleanup.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dpdk::{lcore, Eal, Mempool, Port, PortConfig, PortStats, TxBuffer};

use crate::counters::{WorkerCounters, WorkerTotals, MAX_DROP_REASONS};
use crate::error::RouterError;
use crate::metrics::{ControlStats, MetricsServer, RouterCollector};
use crate::report::Reporter;
use crate::signals::SignalFlags;
use crate::spec::{RuntimeSpec, WorkerSpec};
use crate::worker::{Forwarder, Worker};

/// What a finished run reports.
#[derive(Clone, Debug)]
pub struct RunSummary {
    /// Final ethdev counters per port, in port-index order.
    pub ports: Vec<(String, PortStats)>,
    /// Totals over all workers.
    pub workers: WorkerTotals,
    /// Mbufs still allocated after shutdown (0 unless something leaked).
    pub mbufs_leaked: u32,
    /// How long the workers ran.
    pub elapsed: Duration,
}

/// Runs the router until SIGINT/SIGTERM or `spec.duration`.
///
/// `make_forwarder(worker_index)` builds each worker's [`Forwarder`];
/// `drop_reason_name(i)` names drop reason index `i` in reports.
pub fn run<F, M>(
    spec: &RuntimeSpec,
    mut make_forwarder: M,
    drop_reason_name: fn(usize) -> Option<&'static str>,
) -> Result<RunSummary, RouterError>
where
    F: Forwarder + 'static,
    M: FnMut(usize) -> F,
{
    let signals = SignalFlags::install()?;
    let eal = Eal::init(&spec.eal_args).map_err(RouterError::Eal)?;

    let worker_lcores = eal.worker_lcores();
    let workers: Vec<WorkerSpec> = if spec.workers.is_empty() {
        let lcore = *worker_lcores.first().ok_or_else(|| {
            RouterError::Spec(
                "no worker lcore: give the EAL at least two lcores (e.g. -l 0,1); \
                 the first runs the control side"
                    .into(),
            )
        })?;
        let rx = spec
            .ports
            .iter()
            .enumerate()
            .flat_map(|(i, p)| (0..p.rx_queues).map(move |q| (i as u16, q)))
            .collect();
        vec![WorkerSpec { lcore, rx }]
    } else {
        spec.workers.clone()
    };
    for w in &workers {
        if !worker_lcores.contains(&w.lcore) {
            return Err(RouterError::Spec(format!(
                "worker lcore {} is not an enabled worker lcore (enabled: {:?})",
                w.lcore, worker_lcores
            )));
        }
    }

    let pool = Mempool::new(
        "mplsrouter_mbufs",
        spec.mempool_size,
        spec.mempool_cache,
        -1,
    )
    .map_err(RouterError::Mempool)?;

    // Ports, in index order; each worker gets its own TX queue on every port.
    let mut ports: Vec<Port> = Vec::with_capacity(spec.ports.len());
    for p in &spec.ports {
        let err = |source| RouterError::Port {
            name: p.name.clone(),
            device: p.device.clone(),
            source,
        };
        let id = eal.port_by_name(&p.device).map_err(err)?;
        let cfg = PortConfig {
            rx_queues: p.rx_queues,
            tx_queues: workers.len() as u16,
            rx_desc: p.rx_desc,
            tx_desc: p.tx_desc,
            mtu: p.mtu,
            promiscuous: true,
        };
        let mut port = Port::configure(id, &cfg, &pool).map_err(err)?;
        port.start().map_err(err)?;
        ports.push(port);
    }
    let dev_ids: Vec<u16> = ports.iter().map(|p| p.id()).collect();
    for w in &workers {
        for &(pi, q) in &w.rx {
            let p = spec.ports.get(pi as usize).ok_or_else(|| {
                RouterError::Spec(format!(
                    "worker on lcore {} polls unknown port index {pi}",
                    w.lcore
                ))
            })?;
            if q >= p.rx_queues {
                return Err(RouterError::Spec(format!(
                    "worker on lcore {} polls queue {q} of port {:?}, which has {} rx queues",
                    w.lcore, p.name, p.rx_queues
                )));
            }
        }
    }
    let baseline_in_use = pool.in_use();

    let stop = signals.stop.clone();
    stop.store(false, Ordering::SeqCst);
    let worker_stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut counters: Vec<Arc<WorkerCounters>> = Vec::new();
    let mut handles = Vec::new();
    for (wi, w) in workers.iter().enumerate() {
        let c = Arc::new(WorkerCounters::new(w.lcore));
        counters.push(c.clone());
        let worker = Worker {
            rx: w
                .rx
                .iter()
                .map(|&(pi, q)| (pi, dev_ids[pi as usize], q))
                .collect(),
            tx: dev_ids
                .iter()
                .map(|&d| TxBuffer::new(d, wi as u16))
                .collect(),
            counters: c,
            stop: worker_stop.clone(),
            idle: spec.idle,
            burst: spec.burst,
            forwarder: make_forwarder(wi),
        };
        let h = lcore::launch(w.lcore, move || worker.run()).map_err(|e| RouterError::Worker {
            lcore: w.lcore,
            msg: e.to_string(),
        })?;
        handles.push(h);
    }

    let control = Arc::new(ControlStats::new());
    let _metrics = match spec.metrics_listen {
        Some(addr) => {
            let registry = prometheus::Registry::new();
            let names: Vec<&'static str> =
                (0..MAX_DROP_REASONS).map_while(drop_reason_name).collect();
            let collector = RouterCollector::new(
                spec.ports
                    .iter()
                    .map(|p| p.name.clone())
                    .zip(dev_ids.iter().copied())
                    .collect(),
                counters.clone(),
                names,
                control.clone(),
                spec.build.clone(),
            );
            registry
                .register(Box::new(collector))
                .expect("collector descriptors are unique");
            registry
                .register(Box::new(control.reload_duration.clone()))
                .expect("histogram descriptor is unique");
            match MetricsServer::start(addr, registry) {
                Ok(s) => {
                    println!("metrics: http://{}/metrics", s.addr());
                    Some(s)
                }
                Err(e) => {
                    // Workers are running: stop them before reporting the error.
                    worker_stop.store(true, Ordering::SeqCst);
                    for h in handles {
                        let _ = h.join();
                    }
                    return Err(e.into());
                }
            }
        }
        None => None,
    };

    let started = Instant::now();
    let names: Vec<String> = spec.ports.iter().map(|p| p.name.clone()).collect();
    let mut reporter = Reporter::new(names, dev_ids.clone(), drop_reason_name);
    let mut next_report = spec.stats_interval.map(|i| started + i);
    loop {
        std::thread::sleep(Duration::from_millis(20));
        if signals.stop_requested() {
            break;
        }
        if let Some(d) = spec.duration {
            if started.elapsed() >= d {
                break;
            }
        }
        if let (Some(at), Some(iv)) = (next_report, spec.stats_interval) {
            if Instant::now() >= at {
                reporter.line(started.elapsed(), &counters);
                next_report = Some(at + iv);
            }
        }
        let _ = signals.take_reload();
    }

    worker_stop.store(true, Ordering::SeqCst);
    let mut failures = Vec::new();
    for h in handles {
        let lcore = h.lcore();
        if let Err(e) = h.join() {
            failures.push(RouterError::Worker {
                lcore,
                msg: e.to_string(),
            });
        }
    }
    let elapsed = started.elapsed();
    let mut totals = WorkerTotals::default();
    for c in &counters {
        totals.add(&c.snapshot());
    }
    let mut port_stats = Vec::new();
    for (p, spec_p) in ports.iter_mut().zip(&spec.ports) {
        let st = p.stats().unwrap_or_default();
        let _ = p.stop();
        port_stats.push((spec_p.name.clone(), st));
    }
    drop(ports);
    let mbufs_leaked = pool.in_use().saturating_sub(baseline_in_use);
    reporter.summary(elapsed, &totals, &port_stats, mbufs_leaked);
    drop(pool);
    drop(eal);
    if let Some(e) = failures.into_iter().next() {
        return Err(e);
    }
    Ok(RunSummary {
        ports: port_stats,
        workers: totals,
        mbufs_leaked,
        elapsed,
    })
}
