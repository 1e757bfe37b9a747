//! Bringing the router up, running it, and taking it down cleanly.
//!
//! [`Router::start`] brings the pieces up in order: signal handlers, control socket bind,
//! EAL, worker plan, pool and ports (`start.rs`, `ports.rs`), tables, control interfaces
//! and FPM (`services.rs`), workers and slow path (`workers.rs`), metrics and control
//! socket. The handlers come first so a SIGINT/SIGTERM at any later time stops the router,
//! even while a big routes file is still loading. [`Router::run_until`] runs the control
//! loop (`control_loop.rs`) until a stop, the spec's duration or a thread's death, then
//! tears down in the reverse order (`teardown.rs`, also the router's `Drop`). A start that
//! fails drops what it built so far, in the same reverse order.
//!
//! Must never let a thread that polls ports or holds mbufs outlive the ports, the pool or
//! the EAL: [`workers::Threads`] joins them first, however the router ends.

mod control_loop;
mod ports;
mod services;
mod start;
mod teardown;
mod workers;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dpdk::PortStats;

use crate::counters::{drop_reason_name, WorkerCounters, WorkerTotals};
use crate::cpif::ControlIfaces;
use crate::error::RouterError;
use crate::metrics::ControlStats;
use crate::report::Reporter;
use crate::signals::SignalFlags;
use crate::slowpath::{ArpPolicy, SlowPath};
use crate::spec::{RuntimeSpec, WorkerSpec};
use control_loop::{ControlLoop, Inputs};
use services::Services;
use start::{Dpdk, PortView, Tables};
use workers::{Queues, Threads, WorkerParts};

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

/// Asks [`Router::run_until`] to return: set by SIGINT/SIGTERM for the handle from
/// [`Router::stop_handle`], or by [`Stop::request`] from any thread.
#[derive(Clone, Debug, Default)]
pub struct Stop(Arc<AtomicBool>);

impl Stop {
    pub fn new() -> Stop {
        Stop::default()
    }

    pub fn request(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn requested(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// A started router: its threads run and forward until [`Router::run_until`] returns or
/// the router is dropped (both tear down in order; see `teardown.rs`).
pub struct Router {
    spec: RuntimeSpec,
    signals: SignalFlags,
    threads: Threads,
    counters: Vec<Arc<WorkerCounters>>,
    inputs: Inputs,
    reporter: Reporter,
    services: Option<Services>,
    cpif: Option<Arc<ControlIfaces>>,
    /// Applies a change of the ports' addresses, logs the others as needing a restart (on
    /// SIGHUP).
    startup_check: crate::cpif::startup::StartupCheck,
    tables: Option<Tables>,
    dpdk: Option<Dpdk>,
}

impl Router {
    /// Brings the router up (see the module docs for the order). A signal before the
    /// workers start gives [`RouterError::StoppedDuringStartup`].
    pub fn start(spec: RuntimeSpec) -> Result<Router, RouterError> {
        let signals = SignalFlags::install()?;
        let ctl_bound = crate::ctlsock::bind_for(&spec.routing.startup)?;
        let (dpdk, plan) = Dpdk::bring_up(&spec)?;
        if signals.stop_requested() {
            return Err(start::stopped_during_startup());
        }
        let stats = Arc::new(ControlStats::new());
        let view = start::port_view(&spec, &dpdk);
        let mut tables = Tables::load(&spec, &view.macs, plan.len(), &stats, &signals)?;
        let startup = &spec.routing.startup;
        let cpif = services::create_control_ifaces(startup, &view.ifaces, &stats)?;
        // The slow path's port view follows address changes through this queue.
        let (ports_tx, ports_rx) = crossbeam_channel::bounded(8);
        let startup_check =
            crate::cpif::startup::StartupCheck::new(startup, &view.ifaces, ports_tx, cpif.clone());
        let fpm_stats = Arc::new(crate::fpm::FpmStats::default());
        let (fpm, fpm_rx) = services::start_fpm(
            startup,
            &view.ifaces,
            &mut tables.control,
            cpif.clone().map(|c| c as _),
            &fpm_stats,
        )?;
        let mut threads = Threads::new();
        let running = start_threads(
            &spec,
            &plan,
            &dpdk,
            &tables,
            &view,
            (&cpif, ports_rx),
            &stats,
            &mut threads,
        )?;
        let dev_ids = dpdk.dev_ids();
        let fpm_metrics = fpm.as_ref().map(|_| &fpm_stats);
        let counters = running.counters;
        let metrics = services::start_metrics(&spec, &dev_ids, &counters, &stats, fpm_metrics)?;
        let ctl_parts = crate::ctlsock::Parts {
            spec: &spec,
            workers: &plan,
            ports: start::ctx_ports(startup, &view.macs),
            dev_ids: dev_ids.clone(),
            counters: &counters,
            control: stats,
            pipeline: spec.routing.pipeline,
            local: view.local,
            book: tables.control.source_book(),
            statics: tables.control.static_neighbors(),
            trace: running.trace,
            fpm: fpm.as_ref().map(|l| (fpm_stats.clone(), l.addr())),
            cpif: cpif.clone(),
        };
        let ctl = ctl_bound
            .map(|b| crate::ctlsock::serve_for(b, ctl_parts, &tables.rcu))
            .transpose()?;
        let names: Vec<String> = spec.ports.iter().map(|p| p.name.clone()).collect();
        Ok(Router {
            reporter: Reporter::new(names, dev_ids, drop_reason_name),
            spec,
            signals,
            threads,
            counters,
            inputs: Inputs {
                events: running.events,
                fpm: fpm_rx,
            },
            services: Some(Services {
                _ctl: ctl,
                _metrics: metrics,
                _fpm: fpm,
            }),
            cpif,
            startup_check,
            tables: Some(tables),
            dpdk: Some(dpdk),
        })
    }

    /// A [`Stop`] that SIGINT/SIGTERM also set.
    pub fn stop_handle(&self) -> Stop {
        Stop(self.signals.stop.clone())
    }

    /// Runs the control loop until `stop` (or SIGINT/SIGTERM), the spec's duration, or a
    /// thread's death (an error), then tears down and prints the summary.
    pub fn run_until(mut self, stop: &Stop) -> Result<RunSummary, RouterError> {
        let started = Instant::now();
        let died = self.control_loop(stop, started);
        let mut failures = self.stop_threads();
        if let (Some(d), true) = (died, failures.is_empty()) {
            failures.push(RouterError::Died(d));
        }
        let elapsed = started.elapsed();
        let s = self.stop_ports_and_tables();
        self.reporter
            .summary(elapsed, &s.workers, &s.ports, s.mbufs_leaked);
        if let Some(c) = &self.cpif {
            println!("{}", c.stats().summary());
        }
        self.release_dpdk();
        if let Some(e) = failures.into_iter().next() {
            return Err(e);
        }
        Ok(RunSummary {
            ports: s.ports,
            workers: s.workers,
            mbufs_leaked: s.mbufs_leaked,
            elapsed,
        })
    }

    fn control_loop(&mut self, stop: &Stop, started: Instant) -> Option<crate::error::ThreadDeath> {
        let tables = self.tables.as_mut().expect("tables live until teardown");
        ControlLoop {
            spec: &self.spec,
            signals: &self.signals,
            stop,
            control: &mut tables.control,
            inputs: &mut self.inputs,
            threads: &self.threads,
            counters: &self.counters,
            reporter: &mut self.reporter,
            startup_check: &mut self.startup_check,
            started,
        }
        .run()
    }
}

/// What [`start_threads`] hands back.
struct Running {
    counters: Vec<Arc<WorkerCounters>>,
    events: crossbeam_channel::Receiver<crate::slowpath::SlowPathEvent>,
    trace: crate::trace::TraceControl,
}

/// Step: the workers, the control interfaces' down thread and the slow path, wired by
/// their queues; each owned by `threads` as soon as it runs.
#[allow(clippy::too_many_arguments)]
fn start_threads(
    spec: &RuntimeSpec,
    plan: &[WorkerSpec],
    dpdk: &Dpdk,
    tables: &Tables,
    view: &PortView,
    (cpif, port_updates): (
        &Option<Arc<ControlIfaces>>,
        crossbeam_channel::Receiver<Vec<config::startup::PortIface>>,
    ),
    stats: &Arc<ControlStats>,
    threads: &mut Threads,
) -> Result<Running, RouterError> {
    let marks = Arc::new(crate::punt::NeighborMarks::default());
    let budgets = crate::punt::Budgets::new(
        &crate::punt::budget::rates(&spec.routing.startup.punt, &spec.routing.icmp),
        dpdk::tsc_hz(),
        plan.len(),
    );
    let mut q = Queues::new(budgets, marks.clone());
    q.punted.data_delay = (spec.test_fault == Some(crate::spec::TestFault::SlowData))
        .then_some(crate::spec::SLOW_DATA_DELAY);
    let dev_ids = dpdk.dev_ids();
    let lcores: Vec<u32> = plan.iter().map(|w| w.lcore).collect();
    let (trace, taps) = crate::trace::channel(&lcores);
    let parts = WorkerParts {
        spec,
        plan,
        dev_ids: &dev_ids,
        pipeline: (&spec.routing.pipeline, &view.local),
        rcu: &tables.rcu,
        punt: q.punt,
        inject: [q.inject.1, q.cpif_inject.1],
        taps,
    };
    let counters = workers::launch_workers(parts, threads)?;
    if let Some(c) = cpif {
        let capture = trace.take_control_if_tap();
        workers::spawn_cpif_down(c, &dpdk.pool, q.cpif_inject.0, &dev_ids, capture, threads)?;
    }
    let slow = SlowPath {
        ports: view.ifaces.clone(),
        inject: q.inject.0,
        pool: Arc::clone(&dpdk.pool),
        rcu: tables.rcu.clone(),
        pipeline: net::pipeline::Pipeline::new(spec.routing.pipeline, view.local.clone()),
        icmp: spec.routing.icmp,
        arp: ArpPolicy::from_config(&spec.routing.startup.arp),
        statics: tables.control.static_neighbors(),
        stats: stats.clone(),
        events: q.events.0,
        stop: threads.slow_stop.clone(),
        cpif: cpif.clone(),
        marks,
        trace: Some(trace.slow.tap()),
        port_updates,
    };
    workers::spawn_slow_path(slow, q.punted, spec.test_fault, threads)?;
    Ok(Running {
        counters,
        events: q.events.1,
        trace,
    })
}
