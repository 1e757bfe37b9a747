//! Start-up steps before any thread runs: the EAL, the worker plan, the packet pool and
//! the ports ([`Dpdk`]), then the first tables ([`Tables`]).
//!
//! Must never launch a thread that touches DPDK: everything here is undone by dropping
//! what it returns (ports, then pool, then EAL), so a failed start needs no special path.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use dpdk::{Eal, Mempool, Port};
use net::fib::Fib;
use net::pipeline::LocalAddrs;
use net::rcu::Rcu;

use config::startup::PortIface;

use super::ports;
use crate::control::ControlPlane;
use crate::error::{RouterError, SpecError};
use crate::metrics::ControlStats;
use crate::signals::SignalFlags;
use crate::spec::{RuntimeSpec, WorkerSpec};

/// How often a startup step that may take long (loading the tables) checks for a signal.
const STARTUP_POLL: Duration = Duration::from_millis(20);

/// The DPDK resources. Fields drop in declaration order, which is the teardown order:
/// ports (closed), then the pool, then the EAL.
pub(super) struct Dpdk {
    pub ports: Vec<Port>,
    pub pool: Arc<Mempool>,
    /// Mbufs in use once the ports are up (their RX rings): the leak check's zero.
    pub baseline_in_use: u32,
    /// Held for its `Drop` (`rte_eal_cleanup`), which runs last.
    pub _eal: Eal,
}

impl Dpdk {
    /// Steps: EAL, worker plan, pool, ports (in index order), every polled queue exists.
    pub fn bring_up(spec: &RuntimeSpec) -> Result<(Dpdk, Vec<WorkerSpec>), RouterError> {
        let eal = init_eal(spec)?;
        let workers = plan_workers(spec, &eal)?;
        let pool = create_pool(spec)?;
        let ports = ports::start_ports(spec, &eal, &workers, &pool)?;
        check_worker_queues(spec, &workers)?;
        let baseline_in_use = pool.in_use();
        let dpdk = Dpdk {
            ports,
            pool,
            baseline_in_use,
            _eal: eal,
        };
        Ok((dpdk, workers))
    }

    /// The ports' real MACs, in port-index order.
    pub fn macs(&self) -> Vec<[u8; 6]> {
        self.ports.iter().map(|p| p.mac()).collect()
    }

    /// The ports' ethdev ids, in port-index order.
    pub fn dev_ids(&self) -> Vec<u16> {
        self.ports.iter().map(|p| p.id()).collect()
    }
}

/// The router's tables and what was derived from the config with them.
pub(super) struct Tables {
    pub control: ControlPlane,
    /// Readers: the workers, the slow path, the control socket, one spare.
    pub rcu: Arc<Rcu<Fib>>,
}

/// The ports as the tables see them (real MACs) and the pipeline's local addresses.
pub(super) struct PortView {
    pub ifaces: Vec<PortIface>,
    pub local: LocalAddrs,
    pub macs: Vec<[u8; 6]>,
}

/// The summary's line when a signal stops the router before any worker started.
pub(super) fn stopped_during_startup() -> RouterError {
    println!("mplsrouter: stopped by a signal during startup");
    RouterError::StoppedDuringStartup
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
        let lcore = *worker_lcores.first().ok_or(SpecError::NoWorkerLcore)?;
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
            return Err(SpecError::LcoreNotEnabled {
                lcore: w.lcore,
                enabled: worker_lcores,
            }
            .into());
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

/// Step: every (port, queue) a worker polls exists.
fn check_worker_queues(spec: &RuntimeSpec, workers: &[WorkerSpec]) -> Result<(), RouterError> {
    for w in workers {
        for &(pi, q) in &w.rx {
            let p = spec.ports.get(pi as usize).ok_or(SpecError::UnknownPort {
                lcore: w.lcore,
                port: pi,
            })?;
            if q >= p.rx_queues {
                return Err(SpecError::UnknownQueue {
                    lcore: w.lcore,
                    queue: q,
                    port: p.name.clone(),
                    rx_queues: p.rx_queues,
                }
                .into());
            }
        }
    }
    Ok(())
}

/// The ports with their real MACs, as the tables see them, and the pipeline's view.
pub(super) fn port_view(spec: &RuntimeSpec, dpdk: &Dpdk) -> PortView {
    let macs = dpdk.macs();
    let ifaces = ctx_ports(&spec.routing.startup, &macs);
    PortView {
        local: crate::control::local_addrs(&ifaces),
        ifaces,
        macs,
    }
}

/// The ports with their real MACs, as the tables see them.
pub(super) fn ctx_ports(startup: &config::StartupConfig, macs: &[[u8; 6]]) -> Vec<PortIface> {
    route_context(startup, macs).ports.unwrap_or_default()
}

fn route_context(startup: &config::StartupConfig, macs: &[[u8; 6]]) -> config::RouteContext {
    config::RouteContext::from_startup(startup, |i| macs[i as usize])
}

impl Tables {
    /// Step: compile the routes against the ports' real MACs and publish them for
    /// `readers` workers. Loading a full view takes seconds, so it runs on its own thread
    /// while this one watches for a signal: on one, [`RouterError::StoppedDuringStartup`]
    /// comes back at once (the loader, pure computation, is left to finish or to die with
    /// the process; it touches no DPDK state).
    pub fn load(
        spec: &RuntimeSpec,
        macs: &[[u8; 6]],
        workers: usize,
        stats: &Arc<ControlStats>,
        signals: &SignalFlags,
    ) -> Result<Tables, RouterError> {
        let ctx = route_context(&spec.routing.startup, macs);
        let (mut control, first) =
            load_in_background(spec.routing.routes.clone(), ctx, stats, signals)?;
        print_tables(&first);
        let rcu = Arc::new(Rcu::new(first, workers + 3));
        control.attach(rcu.clone());
        Ok(Tables { control, rcu })
    }
}

fn load_in_background(
    routes: Option<PathBuf>,
    ctx: config::RouteContext,
    stats: &Arc<ControlStats>,
    signals: &SignalFlags,
) -> Result<(ControlPlane, Fib), RouterError> {
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
        .map_err(|source| RouterError::Spawn {
            thread: "the routes loader",
            source,
        })?;
    loop {
        if signals.stop_requested() {
            return Err(stopped_during_startup());
        }
        match rx.recv_timeout(STARTUP_POLL) {
            Ok(r) => return r.map_err(RouterError::from),
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                return Err(RouterError::LoaderDied)
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
