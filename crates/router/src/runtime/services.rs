//! The side services around the data path: the control interfaces, the FPM listener, the
//! Prometheus endpoint and the control socket.
//!
//! Each reads counters or tables and never blocks a worker. [`Services`] stops them (its
//! fields' own `Drop`s join their threads) before the ports stop at teardown.

use std::sync::Arc;

use config::startup::PortIface;
use config::StartupConfig;
use crossbeam_channel::Receiver;

use crate::control::ControlPlane;
use crate::counters::{drop_reason_name, WorkerCounters, MAX_DROP_REASONS};
use crate::cpif::ControlIfaces;
use crate::ctlsock::CtlSock;
use crate::error::RouterError;
use crate::fpm::{Batch, FpmStats, Listener};
use crate::metrics::{ControlStats, MetricsServer, RouterCollector};
use crate::spec::RuntimeSpec;

/// The running services, held for their `Drop`: dropping this stops each.
pub(super) struct Services {
    pub _ctl: Option<CtlSock>,
    pub _metrics: Option<MetricsServer>,
    pub _fpm: Option<Listener>,
}

/// Step: the ports' control interfaces (`control_interface:`), if any; an error names the
/// port whose interface cannot be created.
pub(super) fn create_control_ifaces(
    startup: &StartupConfig,
    ports: &[PortIface],
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

/// Step: the FPM listener when the `fpm:` section is present, its control side handed to
/// `control`; else a channel that never delivers.
pub(super) fn start_fpm(
    startup: &StartupConfig,
    ports: &[PortIface],
    control: &mut ControlPlane,
    control_ifs: Option<Arc<dyn crate::fpm::ControlIfindexes>>,
    stats: &Arc<FpmStats>,
) -> Result<(Option<Listener>, Receiver<Batch>), RouterError> {
    let Some(cfg) = &startup.fpm else {
        return Ok((None, crossbeam_channel::never()));
    };
    let max_labels = (startup.max_label_depth as usize).min(net::fib::MAX_PUSH);
    let (l, c, rx) = crate::fpm::start(cfg, ports, max_labels, control_ifs, stats.clone())
        .map_err(|source| RouterError::Fpm {
            listen: cfg.listen.to_string(),
            source,
        })?;
    println!("fpm: listening on {}", l.addr());
    control.attach_fpm(c);
    Ok((Some(l), rx))
}

/// Step: the Prometheus endpoint, if configured.
pub(super) fn start_metrics(
    spec: &RuntimeSpec,
    dev_ids: &[u16],
    counters: &[Arc<WorkerCounters>],
    control: &Arc<ControlStats>,
    fpm: Option<&Arc<FpmStats>>,
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
