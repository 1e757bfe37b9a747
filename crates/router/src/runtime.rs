//! Bringing the router up, running it, and taking it down cleanly.
//!
//! Order matters and is the reverse on the way down: EAL -> mempool -> ports -> workers;
//! stop workers (they flush their TX buffers) -> stop ports (vdev outputs are flushed) ->
//! check every mbuf is back in the pool -> free the pool -> EAL cleanup.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dpdk::{lcore, Eal, Mempool, Port, PortConfig, PortStats, TxBuffer};

use crate::control::{ControlPlane, WATCH_INTERVAL};
use crate::counters::{WorkerCounters, WorkerTotals, MAX_DROP_REASONS};
use crate::error::RouterError;
use crate::forward::PipelineForwarder;
use crate::metrics::{ControlStats, MetricsServer, RouterCollector};
use crate::report::Reporter;
use crate::signals::SignalFlags;
use crate::slowpath::{SlowPath, SlowPathEvent};
use crate::spec::{RuntimeSpec, WorkerSpec};
use crate::watch::{ControlInput, FileWatcher, SignalWaker};
use crate::worker::{Injected, Punted, Worker};
use config::StartupConfig;
use net::icmp::IcmpConfig;
use net::pipeline::{DropReason, Pipeline, PipelineConfig};
use net::rcu::Rcu;
use std::path::PathBuf;

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

/// What the router routes with: the startup config (ports, addresses), the routes file,
/// and the pipeline and ICMP settings.
pub struct Routing {
    pub startup: StartupConfig,
    pub routes: Option<PathBuf>,
    pub pipeline: PipelineConfig,
    pub icmp: IcmpConfig,
}

/// Longest sleep of the control loop between its periodic jobs.
const CONTROL_TICK: Duration = Duration::from_millis(5);

/// Capacity of the workers' queue to the slow path.
const PUNT_QUEUE: usize = 1024;

/// Starts the FPM listener when the `fpm:` section is present and hands its control
/// side to `control`; else a channel that never delivers.
#[allow(clippy::type_complexity)]
fn start_fpm(
    startup: &StartupConfig,
    ports: &[config::startup::PortIface],
    control: &mut ControlPlane,
    stats: &Arc<crate::fpm::FpmStats>,
) -> Result<
    (
        Option<crate::fpm::Listener>,
        crossbeam_channel::Receiver<crate::fpm::Batch>,
    ),
    RouterError,
> {
    let Some(cfg) = &startup.fpm else {
        return Ok((None, crossbeam_channel::never()));
    };
    let max_labels = (startup.max_label_depth as usize).min(net::fib::MAX_PUSH);
    let (l, c, rx) = crate::fpm::start(cfg, ports, max_labels, stats.clone())
        .map_err(|e| RouterError::Spec(format!("fpm: cannot listen on {}: {e}", cfg.listen)))?;
    println!("fpm: listening on {}", l.addr());
    control.attach_fpm(c);
    Ok((Some(l), rx))
}

fn drop_reason_name(i: usize) -> Option<&'static str> {
    DropReason::ALL.get(i).map(|r| r.as_str())
}

/// Sets its flags when dropped (normal return, early return or unwinding).
struct StopOnDrop([Arc<std::sync::atomic::AtomicBool>; 2]);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        for f in &self.0 {
            f.store(true, Ordering::SeqCst);
        }
    }
}

/// Runs the router until SIGINT/SIGTERM or `spec.duration`.
pub fn run(spec: &RuntimeSpec, routing: Routing) -> Result<RunSummary, RouterError> {
    let signals = SignalFlags::install()?;
    let eal = Eal::init(&spec.eal_args).map_err(|error| RouterError::Eal {
        error,
        hint: crate::error::eal_hint(
            &spec.eal_args,
            &std::fs::read_to_string("/proc/meminfo").unwrap_or_default(),
        ),
    })?;

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

    let pool = Arc::new(
        Mempool::new(
            "mplsrouter_mbufs",
            spec.mempool_size,
            spec.mempool_cache,
            -1,
        )
        .map_err(RouterError::Mempool)?,
    );

    // Ports, in index order; each worker gets its own TX queue on every port (no TX
    // locks); the slow path transmits through worker 0.
    let mut ports: Vec<Port> = Vec::with_capacity(spec.ports.len());
    for p in &spec.ports {
        let err = |error| RouterError::Port {
            name: p.name.clone(),
            device: p.device.clone(),
            error,
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
        if let Some(mac) = p.mac {
            // Virtual PMDs (pcap, null) cannot change their MAC; the tables use the
            // configured one as source MAC either way, and vdev ports are promiscuous.
            match port.set_mac(mac) {
                Err(e) if e.errno == libc::ENOTSUP => {}
                r => r.map_err(err)?,
            }
        }
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

    // Tables: compile the routes against the ports' real MACs, publish the first table.
    let control_stats = Arc::new(ControlStats::new());
    let macs: Vec<[u8; 6]> = ports.iter().map(|p| p.mac()).collect();
    let ctx = config::RouteContext::from_startup(&routing.startup, |i| macs[i as usize]);
    let port_ifaces = ctx.ports.clone().unwrap_or_default();
    let (mut control, first) =
        ControlPlane::load(routing.routes.clone(), ctx, control_stats.clone())
            .map_err(|e| RouterError::Config(e.to_string()))?;
    let fs = first.stats();
    println!(
        "tables: generation {} with {} IPv4 routes, {} labels, {} next hops, {} ECMP groups ({} KiB)",
        first.generation(),
        fs.ipv4_routes,
        fs.labels,
        fs.adjacencies,
        fs.ecmp_groups,
        fs.bytes / 1024
    );
    let rcu = Arc::new(Rcu::new(first, workers.len() + 2));
    control.attach(rcu.clone());
    let fpm_stats = Arc::new(crate::fpm::FpmStats::default());
    let (fpm_listener, mut fpm_rx) =
        start_fpm(&routing.startup, &port_ifaces, &mut control, &fpm_stats)?;
    let (punt_tx, punt_rx) = crossbeam_channel::bounded::<Punted>(PUNT_QUEUE);
    let (event_tx, event_rx) = crossbeam_channel::bounded::<SlowPathEvent>(256);
    let (inject_tx, inject_rx) = crossbeam_channel::bounded::<Injected>(1024);
    let mut inject_rx = Some(inject_rx);

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
            forwarder: PipelineForwarder::new(Pipeline::new(routing.pipeline), &rcu)
                .map_err(|e| RouterError::Spec(e.to_string()))?,
            punt: punt_tx.clone(),
            inject: inject_rx.take(),
        };
        let h = lcore::launch(w.lcore, move || worker.run()).map_err(|e| RouterError::Worker {
            lcore: w.lcore,
            msg: e.to_string(),
        })?;
        handles.push(h);
    }

    drop(punt_tx);
    let slow_stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // If anything below panics (e.g. printing to a closed stdout), stop the workers and
    // the slow path before `eal` is dropped: rte_eal_cleanup waits for running lcores, so
    // without this the process would hang forever, deaf to SIGTERM.
    let _stop_on_unwind = StopOnDrop([worker_stop.clone(), slow_stop.clone()]);
    let slow = SlowPath {
        ports: port_ifaces,
        inject: inject_tx,
        pool: Arc::clone(&pool),
        rcu: rcu.clone(),
        pipeline: Pipeline::new(routing.pipeline),
        icmp: routing.icmp,
        stats: control_stats.clone(),
        events: event_tx,
        stop: slow_stop.clone(),
    };
    let slow_thread = std::thread::Builder::new()
        .name("slowpath".into())
        .spawn(move || slow.run(punt_rx))
        .map_err(|e| RouterError::Spec(format!("spawn the slow path: {e}")))?;

    let control_arc = control_stats.clone();
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
                control_arc.clone(),
                spec.build.clone(),
            );
            registry
                .register(Box::new(collector))
                .expect("collector descriptors are unique");
            registry
                .register(Box::new(control_arc.reload_duration.clone()))
                .expect("histogram descriptor is unique");
            if fpm_listener.is_some() {
                registry
                    .register(Box::new(crate::fpm::metrics::FpmCollector::new(
                        fpm_stats.clone(),
                        control_arc.clone(),
                    )))
                    .expect("fpm descriptors are unique");
                registry
                    .register(Box::new(fpm_stats.publish_latency.clone()))
                    .expect("histogram descriptor is unique");
            }
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
                    slow_stop.store(true, Ordering::SeqCst);
                    let _ = slow_thread.join();
                    return Err(e.into());
                }
            }
        }
        None => None,
    };

    // The control loop sleeps on its inputs: routes-file events, signals, neighbors
    // learned by the slow path, and a tick for the periodic work (RCU reclamation, the
    // fallback file check, stats lines, the run's duration).
    let (input_tx, input_rx) = crossbeam_channel::bounded::<ControlInput>(64);
    let watcher = control.routes_path().and_then(|p| {
        FileWatcher::start(p, input_tx.clone())
            .inspect_err(|e| {
                eprintln!(
                    "mplsrouter: cannot watch {} ({e}); checking it every {} ms",
                    p.display(),
                    WATCH_INTERVAL.as_millis()
                )
            })
            .ok()
    });
    control.set_watched(watcher.is_some());
    let _waker = SignalWaker::start(input_tx.clone()).map_err(RouterError::Signal)?;
    let mut events = event_rx;
    let started = Instant::now();
    let names: Vec<String> = spec.ports.iter().map(|p| p.name.clone()).collect();
    let mut reporter = Reporter::new(names, dev_ids.clone(), drop_reason_name);
    let mut next_report = spec.stats_interval.map(|i| started + i);
    loop {
        let now = Instant::now();
        let mut wake = now + CONTROL_TICK;
        if let Some(at) = next_report {
            wake = wake.min(at);
        }
        if let Some(d) = spec.duration {
            wake = wake.min(started + d);
        }
        if let Some(at) = control.fpm_deadline() {
            wake = wake.min(at);
        }
        let mut events_closed = false;
        crossbeam_channel::select! {
            recv(input_rx) -> first => {
                // A burst of file events (an editor's save, a storm of writes) is one
                // reload: the file is read after the last event queued so far.
                let file = first
                    .into_iter()
                    .chain(input_rx.try_iter())
                    .any(|i| i == ControlInput::RoutesFile);
                if file {
                    control.routes_file_changed(watcher.as_ref().and_then(|w| w.last_event()));
                }
            }
            recv(events) -> ev => match ev {
                Ok(SlowPathEvent::NeighborLearned { port, ip, mac }) => {
                    control.neighbor_learned(port, ip, mac)
                }
                Err(_) => events_closed = true,
            },
            recv(fpm_rx) -> b => match b {
                Ok(b) => {
                    control.fpm_receive(b);
                    for more in fpm_rx.try_iter() {
                        control.fpm_receive(more);
                    }
                }
                Err(_) => fpm_rx = crossbeam_channel::never(),
            },
            default(wake.saturating_duration_since(now)) => {}
        }
        if events_closed {
            // The slow path is gone; do not spin on its closed channel.
            events = crossbeam_channel::never();
        }
        control.fpm_poll();
        control.poll(signals.take_reload());
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
    }
    drop(input_tx);
    drop(fpm_listener);

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
    slow_stop.store(true, Ordering::SeqCst);
    if slow_thread.join().is_err() {
        failures.push(RouterError::Spec("the slow path thread panicked".into()));
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
    drop(control);
    drop(rcu);
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
