//! Bringing the router up, running it, and taking it down cleanly.
//!
//! Order matters and is the reverse on the way down: signal handlers -> EAL -> mempool ->
//! ports -> tables -> workers; stop workers (they flush their TX buffers) -> stop ports
//! (vdev outputs are flushed) -> check every mbuf is back in the pool -> free the pool ->
//! EAL cleanup. The handlers come first so a SIGINT/SIGTERM at any later time stops the
//! router, even while a big routes file is still loading. The threads are owned by a
//! [`Threads`] guard that exists before the first launch: however `run` ends, they are
//! stopped and joined before the ports and the EAL go away. The control loop watches them:
//! a worker or the slow path that dies stops the router with an error.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use dpdk::lcore::{self, LcoreHandle};
use dpdk::{Eal, Mempool, Port, PortConfig, PortStats, TxBuffer};

use crate::control::{ControlPlane, WATCH_INTERVAL};
use crate::counters::{drop_reason_name, WorkerCounters, WorkerTotals, MAX_DROP_REASONS};
use crate::cpif::down::Down;
use crate::cpif::ControlIfaces;
use crate::error::RouterError;
use crate::forward::PipelineForwarder;
use crate::metrics::{ControlStats, MetricsServer, RouterCollector};
use crate::punt::{PuntQueues, CONTROL_QUEUE};
use crate::report::{next_tick, Reporter};
use crate::signals::SignalFlags;
use crate::slowpath::{ArpPolicy, PuntReceivers, SlowPath, SlowPathEvent};
use crate::spec::{RuntimeSpec, TestFault, WorkerSpec};
use crate::watch::{ControlInput, FileWatcher, SignalWaker};
use crate::worker::{Injected, Punted, Worker};
use config::startup::PortIface;
use config::StartupConfig;
use net::fib::Fib;
use net::icmp::IcmpConfig;
use net::pipeline::{LocalAddrs, Pipeline, PipelineConfig};
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

impl RunSummary {
    /// The summary of a run stopped by a signal before any worker started.
    fn stopped_during_startup() -> RunSummary {
        println!("mplsrouter: stopped by a signal during startup");
        RunSummary {
            ports: Vec::new(),
            workers: WorkerTotals::default(),
            mbufs_leaked: 0,
            elapsed: Duration::ZERO,
        }
    }
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

/// How often a startup step that may take long (loading the tables) checks for a signal.
const STARTUP_POLL: Duration = Duration::from_millis(20);

/// The MAC each port answers to (by port id) and the router's IPv4 addresses, for the
/// pipeline's input checks.
fn local_addrs(ports: &[PortIface]) -> LocalAddrs {
    let mut macs = vec![[0u8; 6]; ports.iter().map(|p| p.id as usize + 1).max().unwrap_or(0)];
    for p in ports {
        macs[p.id as usize] = p.mac;
    }
    let addrs = ports.iter().flat_map(|p| p.addresses.iter());
    LocalAddrs::new(&macs, addrs.map(|a| a.addr.to_be_bytes()))
}

fn fmt_mac(m: [u8; 6]) -> String {
    let h: Vec<String> = m.iter().map(|b| format!("{b:02x}")).collect();
    h.join(":")
}

/// Capacity of the workers' queue to the slow path.
const PUNT_QUEUE: usize = 1024;

/// Capacity of the slow path's queue of frames for the workers to send.
const INJECT_QUEUE: usize = 1024;

/// Capacity of the queue of frames the control interfaces' kernel sent, for the worker.
const CONTROL_INJECT_QUEUE: usize = 256;

/// Capacity of the slow path's queue of events for the control loop.
const EVENT_QUEUE: usize = 256;

/// The worker and slow-path threads. Created before the first launch; dropping it (normal
/// return, early return on an error, unwinding) stops and joins them, so no lcore keeps
/// polling ports that are being closed, and `rte_eal_cleanup` never waits forever.
struct Threads {
    worker_stop: Arc<AtomicBool>,
    slow_stop: Arc<AtomicBool>,
    workers: Vec<LcoreHandle<Arc<WorkerCounters>>>,
    slow: Option<std::thread::JoinHandle<()>>,
    /// The control interfaces' down thread (stopped with the slow path).
    cpif: Option<std::thread::JoinHandle<()>>,
}

/// Starts the FPM listener when the `fpm:` section is present and hands its control
/// side to `control`; else a channel that never delivers.
#[allow(clippy::type_complexity)]
fn start_fpm(
    startup: &StartupConfig,
    ports: &[config::startup::PortIface],
    control: &mut ControlPlane,
    control_ifs: &[(u32, u16)],
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
    let (l, c, rx) = crate::fpm::start(cfg, ports, max_labels, control_ifs, stats.clone())
        .map_err(|e| RouterError::Spec(format!("fpm: cannot listen on {}: {e}", cfg.listen)))?;
    println!("fpm: listening on {}", l.addr());
    control.attach_fpm(c);
    Ok((Some(l), rx))
}

impl Threads {
    fn new() -> Threads {
        Threads {
            worker_stop: Arc::new(AtomicBool::new(false)),
            slow_stop: Arc::new(AtomicBool::new(false)),
            workers: Vec::new(),
            slow: None,
            cpif: None,
        }
    }

    /// The first thread that ended while it should still run, named.
    fn first_death(&self) -> Option<String> {
        if let Some(w) = self.workers.iter().find(|w| w.is_finished()) {
            return Some(format!("the worker on lcore {} stopped", w.lcore()));
        }
        if self.cpif.as_ref().is_some_and(|c| c.is_finished()) {
            return Some("the control-interface thread stopped".into());
        }
        match &self.slow {
            Some(s) if s.is_finished() => Some("the slow-path thread stopped".into()),
            _ => None,
        }
    }

    /// Stops the workers, then the slow path (which feeds them), joining each; returns why
    /// any of them ended abnormally.
    fn stop_and_join(&mut self) -> Vec<RouterError> {
        let mut failures = Vec::new();
        self.worker_stop.store(true, Ordering::SeqCst);
        for h in self.workers.drain(..) {
            if let Err(e) = h.join() {
                failures.push(RouterError::Died(e.to_string()));
            }
        }
        self.slow_stop.store(true, Ordering::SeqCst);
        if let Some(s) = self.slow.take() {
            if let Err(p) = s.join() {
                failures.push(RouterError::SlowPath(lcore::panic_message(p.as_ref())));
            }
        }
        if let Some(c) = self.cpif.take() {
            if let Err(p) = c.join() {
                failures.push(RouterError::Died(format!(
                    "the control-interface thread panicked: {}",
                    lcore::panic_message(p.as_ref())
                )));
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

/// Runs the router until SIGINT/SIGTERM, `spec.duration`, or a thread's death (an error).
pub fn run(spec: &RuntimeSpec, routing: Routing) -> Result<RunSummary, RouterError> {
    let signals = SignalFlags::install()?;
    let ctl_bound = crate::ctlsock::bind_for(&routing.startup)?;
    let eal = init_eal(spec)?;
    let workers = plan_workers(spec, &eal)?;
    let pool = create_pool(spec)?;
    let mut ports = start_ports(spec, &eal, &workers, &pool)?;
    check_worker_queues(spec, &workers)?;
    if signals.stop_requested() {
        return Ok(RunSummary::stopped_during_startup());
    }
    let baseline_in_use = pool.in_use();

    let control_stats = Arc::new(ControlStats::new());
    let macs: Vec<[u8; 6]> = ports.iter().map(|p| p.mac()).collect();
    let ctx = config::RouteContext::from_startup(&routing.startup, |i| macs[i as usize]);
    let port_ifaces = ctx.ports.clone().unwrap_or_default();
    let local = local_addrs(&port_ifaces);
    let Some((mut control, first)) =
        load_tables(routing.routes.clone(), ctx, &control_stats, &signals)?
    else {
        return Ok(RunSummary::stopped_during_startup());
    };
    print_tables(&first);
    // Readers: the workers, the slow path, the control socket, one spare.
    let rcu = Arc::new(Rcu::new(first, workers.len() + 3));
    control.attach(rcu.clone());
    let cpif = create_control_ifaces(&routing.startup, &port_ifaces, &control_stats)?;
    let cpif_ifindexes = cpif.as_ref().map(|c| c.ifindexes()).unwrap_or_default();
    let fpm_stats = Arc::new(crate::fpm::FpmStats::default());
    let (fpm_listener, fpm_rx) = start_fpm(
        &routing.startup,
        &port_ifaces,
        &mut control,
        &cpif_ifindexes,
        &fpm_stats,
    )?;
    let (punt_tx, punt_rx) = crossbeam_channel::bounded::<Punted>(PUNT_QUEUE);
    let (control_tx, control_rx) = crossbeam_channel::bounded::<Punted>(CONTROL_QUEUE);
    let (event_tx, event_rx) = crossbeam_channel::bounded::<SlowPathEvent>(EVENT_QUEUE);
    let (inject_tx, inject_rx) = crossbeam_channel::bounded::<Injected>(INJECT_QUEUE);
    let (cpif_tx, cpif_rx) = crossbeam_channel::bounded::<Injected>(CONTROL_INJECT_QUEUE);
    let dev_ids: Vec<u16> = ports.iter().map(|p| p.id()).collect();

    let mut threads = Threads::new();
    let lcores: Vec<u32> = workers.iter().map(|w| w.lcore).collect();
    let (trace, taps) = crate::trace::channel(&lcores);
    let counters = launch_workers(
        spec,
        &workers,
        &dev_ids,
        (&routing.pipeline, &local),
        &rcu,
        PuntQueues {
            control: control_tx,
            data: punt_tx,
        },
        [inject_rx, cpif_rx],
        taps,
        &mut threads,
    )?;
    if let Some(c) = &cpif {
        threads.cpif = Some(spawn_cpif_down(Down {
            ifs: c.clone(),
            pool: Arc::clone(&pool),
            inject: cpif_tx,
            stop: threads.slow_stop.clone(),
            dev_ids: dev_ids.clone(),
        })?);
    }
    let slow = SlowPath {
        ports: port_ifaces,
        inject: inject_tx,
        pool: Arc::clone(&pool),
        rcu: rcu.clone(),
        pipeline: Pipeline::new(routing.pipeline, local.clone()),
        icmp: routing.icmp,
        arp: ArpPolicy::from_config(&routing.startup.arp),
        statics: control.static_neighbors(),
        stats: control_stats.clone(),
        events: event_tx,
        stop: threads.slow_stop.clone(),
        cpif: cpif.clone(),
        trace: Some(trace.slow.tap()),
    };
    let punts = PuntReceivers {
        control: control_rx,
        data: punt_rx,
    };
    threads.slow = Some(spawn_slow_path(slow, punts, spec.test_fault)?);
    let fpm_metrics = fpm_listener.as_ref().map(|_| &fpm_stats);
    let _metrics = start_metrics(spec, &dev_ids, &counters, &control_stats, fpm_metrics)?;
    let ctl_parts = crate::ctlsock::Parts {
        spec,
        workers: &workers,
        ports: ctx_ports(&routing.startup, &macs),
        dev_ids: dev_ids.clone(),
        counters: &counters,
        control: control_stats.clone(),
        pipeline: routing.pipeline,
        local,
        book: control.source_book(),
        statics: control.static_neighbors(),
        trace,
        fpm: fpm_listener.as_ref().map(|l| (fpm_stats.clone(), l.addr())),
        cpif: cpif.clone(),
    };
    let _ctl = ctl_bound
        .map(|b| crate::ctlsock::serve_for(b, ctl_parts, &rcu))
        .transpose()?;

    let names: Vec<String> = spec.ports.iter().map(|p| p.name.clone()).collect();
    let mut reporter = Reporter::new(names, dev_ids.clone(), drop_reason_name);
    let started = Instant::now();
    let died = control_loop(
        spec,
        &signals,
        &mut control,
        event_rx,
        fpm_rx,
        &threads,
        &counters,
        &mut reporter,
        started,
    );

    let mut failures = threads.stop_and_join();
    if let (Some(d), true) = (died, failures.is_empty()) {
        failures.push(RouterError::Died(d));
    }
    let elapsed = started.elapsed();
    let mut totals = WorkerTotals::default();
    for c in &counters {
        totals.add(&c.snapshot());
    }
    let port_stats = stop_ports(spec, &mut ports);
    drop(ports);
    drop(control);
    drop(rcu);
    let mbufs_leaked = pool.in_use().saturating_sub(baseline_in_use);
    reporter.summary(elapsed, &totals, &port_stats, mbufs_leaked);
    if let Some(c) = &cpif {
        println!("{}", c.stats().summary());
    }
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

/// The ports with their real MACs, as the tables see them.
fn ctx_ports(startup: &StartupConfig, macs: &[[u8; 6]]) -> Vec<config::startup::PortIface> {
    let ctx = config::RouteContext::from_startup(startup, |i| macs[i as usize]);
    ctx.ports.unwrap_or_default()
}

/// Step: the EAL, with a hint naming what to fix when it refuses.
fn init_eal(spec: &RuntimeSpec) -> Result<Eal, RouterError> {
    Eal::init(&spec.eal_args).map_err(|error| {
        let hint = crate::error::eal_hint(
            &error,
            &spec.eal_args,
            &std::fs::read_to_string("/proc/meminfo").unwrap_or_default(),
        );
        RouterError::Eal { error, hint }
    })
}

/// Step: which lcore polls which queues (one worker on the first worker lcore polling
/// every queue unless the spec says otherwise).
fn plan_workers(spec: &RuntimeSpec, eal: &Eal) -> Result<Vec<WorkerSpec>, RouterError> {
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
    Ok(workers)
}

/// Step: the packet pool, its data room sized so a frame of the largest MTU fits in one
/// segment.
fn create_pool(spec: &RuntimeSpec) -> Result<Arc<Mempool>, RouterError> {
    Mempool::with_data_room(
        "mplsrouter_mbufs",
        spec.mempool_size,
        spec.mempool_cache,
        spec.mbuf_data_room,
        -1,
    )
    .map(Arc::new)
    .map_err(RouterError::Mempool)
}

/// Step: configure and start the ports, in index order; each worker gets its own TX
/// queue on every port (no TX locks); the slow path transmits through worker 0.
fn start_ports(
    spec: &RuntimeSpec,
    eal: &Eal,
    workers: &[WorkerSpec],
    pool: &Mempool,
) -> Result<Vec<Port>, RouterError> {
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
            mtu: None,
            promiscuous: p.promiscuous,
        };
        let mut port = Port::configure(id, &cfg, pool).map_err(err)?;
        apply_mtu(&mut port, p).map_err(err)?;
        if let Some(mac) = p.mac {
            // Virtual PMDs (pcap, null) cannot change their MAC; the tables and the
            // pipeline's destination check use the configured one either way, so such a
            // port sees frames sent to it only in promiscuous mode (their default).
            match port.set_mac(mac) {
                Err(e) if e.errno == libc::ENOTSUP => {
                    if !p.promiscuous {
                        eprintln!(
                            "mplsrouter: warning: port {:?} ({}) cannot take MAC {}; \
                             frames sent to it arrive only with `promiscuous: true`",
                            p.name,
                            p.device,
                            fmt_mac(mac)
                        );
                    }
                }
                r => r.map_err(err)?,
            }
        }
        port.start().map_err(err)?;
        ports.push(port);
    }
    Ok(ports)
}

/// Sets the configured MTU. A PMD without an MTU (pcap, null) keeps none; a virtual
/// device refusing it (af_packet, whose interface MTU is set with `ip link`) is warned
/// about; forwarding checks use the configured MTU either way.
fn apply_mtu(port: &mut Port, p: &crate::spec::PortSpec) -> Result<(), dpdk::DpdkError> {
    let Some(mtu) = p.mtu else { return Ok(()) };
    match port.set_mtu(mtu) {
        Err(e) if e.errno == libc::ENOTSUP => Ok(()),
        Err(e) if p.vdev && e.errno == libc::EINVAL => {
            eprintln!(
                "mplsrouter: warning: port {:?}: {e}; the virtual device keeps the MTU of \
                 what it wraps (af_packet: set the interface's MTU with `ip link`); \
                 forwarding uses the configured MTU {mtu}",
                p.name
            );
            Ok(())
        }
        r => r,
    }
}

/// Step: every (port, queue) a worker polls exists.
fn check_worker_queues(spec: &RuntimeSpec, workers: &[WorkerSpec]) -> Result<(), RouterError> {
    for w in workers {
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
    Ok(())
}

/// Step: compile the routes against the ports' real MACs. Loading a full view takes
/// seconds, so it runs on its own thread while this one watches for a signal: on one,
/// `None` comes back at once (the loader, pure computation, is left to finish or to die
/// with the process; it touches no DPDK state).
fn load_tables(
    routes: Option<PathBuf>,
    ctx: config::RouteContext,
    stats: &Arc<ControlStats>,
    signals: &SignalFlags,
) -> Result<Option<(ControlPlane, Fib)>, RouterError> {
    if let Some(p) = &routes {
        println!("routes: loading {}", p.display());
    }
    let (tx, rx) = crossbeam_channel::bounded(1);
    let stats = stats.clone();
    std::thread::Builder::new()
        .name("routes-load".into())
        .spawn(move || {
            let _ = tx.send(ControlPlane::load(routes, ctx, stats));
        })
        .map_err(|e| RouterError::Spec(format!("spawn the routes loader: {e}")))?;
    loop {
        if signals.stop_requested() {
            return Ok(None);
        }
        match rx.recv_timeout(STARTUP_POLL) {
            Ok(r) => return r.map(Some).map_err(|e| RouterError::Config(e.to_string())),
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                return Err(RouterError::Config(
                    "the routes loader stopped without a result (it panicked)".into(),
                ))
            }
        }
    }
}

fn print_tables(first: &Fib) {
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
}

/// Step: one worker per planned lcore, each owned by `threads` as soon as it runs.
#[allow(clippy::too_many_arguments)]
fn launch_workers(
    spec: &RuntimeSpec,
    workers: &[WorkerSpec],
    dev_ids: &[u16],
    pipeline: (&PipelineConfig, &LocalAddrs),
    rcu: &Arc<Rcu<Fib>>,
    punt: PuntQueues,
    inject: [Receiver<Injected>; 2],
    taps: Vec<crate::trace::TraceTap>,
    threads: &mut Threads,
) -> Result<Vec<Arc<WorkerCounters>>, RouterError> {
    let [inject, inject_control] = inject;
    let (mut inject, mut inject_control) = (Some(inject), Some(inject_control));
    let mut taps = taps.into_iter();
    let mut counters = Vec::with_capacity(workers.len());
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
            stop: threads.worker_stop.clone(),
            idle: spec.idle,
            burst: spec.burst,
            forwarder: PipelineForwarder::new(Pipeline::new(*pipeline.0, pipeline.1.clone()), rcu)
                .map_err(|e| RouterError::Spec(e.to_string()))?,
            punt: punt.clone(),
            inject: inject.take(),
            inject_control: inject_control.take(),
            trace: taps.next(),
        };
        let fault = wi == 0 && spec.test_fault == Some(TestFault::WorkerPanic);
        let h = lcore::launch(w.lcore, move || {
            if fault {
                panic!("test fault injected (MPLSROUTER_TEST_FAULT=worker-panic)");
            }
            worker.run()
        })
        .map_err(|e| RouterError::Worker {
            lcore: w.lcore,
            msg: e.to_string(),
        })?;
        threads.workers.push(h);
    }
    Ok(counters)
}

/// Step: the slow-path thread (ARP, ICMP, local delivery).
fn spawn_slow_path(
    slow: SlowPath,
    punts: PuntReceivers,
    fault: Option<TestFault>,
) -> Result<std::thread::JoinHandle<()>, RouterError> {
    let fault = fault == Some(TestFault::SlowPathPanic);
    std::thread::Builder::new()
        .name("slowpath".into())
        .spawn(move || {
            if fault {
                panic!("test fault injected (MPLSROUTER_TEST_FAULT=slowpath-panic)");
            }
            slow.run(punts)
        })
        .map_err(|e| RouterError::Spec(format!("spawn the slow path: {e}")))
}

/// Step: the ports' control interfaces (`control_interface:`), if any; an error names the
/// port whose interface cannot be created.
fn create_control_ifaces(
    startup: &StartupConfig,
    ports: &[config::startup::PortIface],
    stats: &Arc<ControlStats>,
) -> Result<Option<Arc<ControlIfaces>>, RouterError> {
    let cfgs = startup.control_interfaces();
    if cfgs.is_empty() {
        return Ok(None);
    }
    let c = ControlIfaces::create(&cfgs, ports, stats.clone())?;
    for t in &c.taps {
        println!(
            "cpif: port {:?} has control interface {:?} (ifindex {})",
            ports[t.port as usize].name,
            t.name,
            t.ifindex()
        );
    }
    Ok(Some(Arc::new(c)))
}

/// Step: the thread that sends down what the kernel writes to the control interfaces.
fn spawn_cpif_down(d: Down) -> Result<std::thread::JoinHandle<()>, RouterError> {
    std::thread::Builder::new()
        .name("cpif-down".into())
        .spawn(move || d.run())
        .map_err(|e| RouterError::Spec(format!("spawn the control-interface thread: {e}")))
}

/// Step: the Prometheus endpoint, if configured.
fn start_metrics(
    spec: &RuntimeSpec,
    dev_ids: &[u16],
    counters: &[Arc<WorkerCounters>],
    control: &Arc<ControlStats>,
    fpm: Option<&Arc<crate::fpm::FpmStats>>,
) -> Result<Option<MetricsServer>, RouterError> {
    let Some(addr) = spec.metrics_listen else {
        return Ok(None);
    };
    let registry = prometheus::Registry::new();
    let names: Vec<&'static str> = (0..MAX_DROP_REASONS).map_while(drop_reason_name).collect();
    let collector = RouterCollector::new(
        spec.ports
            .iter()
            .map(|p| p.name.clone())
            .zip(dev_ids.iter().copied())
            .collect(),
        counters.to_vec(),
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
    if let Some(f) = fpm {
        registry
            .register(Box::new(crate::fpm::metrics::FpmCollector::new(
                f.clone(),
                control.clone(),
            )))
            .expect("fpm descriptors are unique");
        registry
            .register(Box::new(f.publish_latency.clone()))
            .expect("histogram descriptor is unique");
    }
    let s = MetricsServer::start(addr, registry)?;
    println!("metrics: http://{}/metrics", s.addr());
    Ok(Some(s))
}

/// The control loop: sleeps on its inputs (routes-file events, signals, neighbours
/// learned by the slow path) and a tick for the periodic work (RCU reclamation, the
/// fallback file check, stats lines, the run's duration, watching the threads). Returns
/// why a thread died, if one did.
#[allow(clippy::too_many_arguments)]
fn control_loop(
    spec: &RuntimeSpec,
    signals: &SignalFlags,
    control: &mut ControlPlane,
    mut events: Receiver<SlowPathEvent>,
    mut fpm_rx: Receiver<crate::fpm::Batch>,
    threads: &Threads,
    counters: &[Arc<WorkerCounters>],
    reporter: &mut Reporter,
    started: Instant,
) -> Option<String> {
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
    control.set_watched(watcher.as_ref().map(FileWatcher::status));
    let _waker = match SignalWaker::start(input_tx.clone()) {
        Ok(w) => Some(w),
        Err(e) => {
            eprintln!("mplsrouter: cannot wake on signals ({e}); polling them every tick");
            None
        }
    };
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
                // One table for all the updates queued so far.
                Ok(ev) => control.slow_path_events(std::iter::once(ev).chain(events.try_iter())),
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
            // The slow path is gone (the watch below reports it); do not spin on its
            // closed channel.
            events = crossbeam_channel::never();
        }
        control.fpm_poll();
        control.poll(signals.take_reload());
        if signals.stop_requested() {
            return None;
        }
        if let Some(d) = threads.first_death() {
            eprintln!("mplsrouter: error: {d} while the router was running; stopping");
            return Some(format!("{d} while the router was running"));
        }
        if spec.duration.is_some_and(|d| started.elapsed() >= d) {
            return None;
        }
        if let (Some(at), Some(iv)) = (next_report, spec.stats_interval) {
            let now = Instant::now();
            if now >= at {
                reporter.line(started.elapsed(), counters);
                next_report = Some(next_tick(at, iv, now));
            }
        }
    }
}

/// Step: read each port's final counters and stop it (vdev outputs are flushed).
fn stop_ports(spec: &RuntimeSpec, ports: &mut [Port]) -> Vec<(String, PortStats)> {
    let mut port_stats = Vec::new();
    for (p, spec_p) in ports.iter_mut().zip(&spec.ports) {
        let st = p.stats().unwrap_or_default();
        let _ = p.stop();
        port_stats.push((spec_p.name.clone(), st));
    }
    port_stats
}
