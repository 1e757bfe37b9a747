//! Port steps: configure and start each port at start-up; read its final counters and
//! stop it at teardown.
//!
//! Must never stop a port while a worker may still poll it: [`stop_ports`] runs only
//! after the workers are joined.

use dpdk::{Eal, Mempool, Port, PortConfig, PortStats};

use crate::error::RouterError;
use crate::spec::{PortSpec, RuntimeSpec, WorkerSpec};

/// Step: configure and start the ports, in index order; each worker gets its own TX
/// queue on every port (no TX locks); the slow path transmits through worker 0.
pub(super) fn start_ports(
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
        apply_mac(&mut port, p).map_err(err)?;
        port.start().map_err(err)?;
        ports.push(port);
    }
    Ok(ports)
}

/// Sets the configured MAC. Virtual PMDs (pcap, null) cannot change their MAC; the
/// tables and the pipeline's destination check use the configured one either way, so
/// such a port sees frames sent to it only in promiscuous mode (their default).
fn apply_mac(port: &mut Port, p: &PortSpec) -> Result<(), dpdk::DpdkError> {
    let Some(mac) = p.mac else { return Ok(()) };
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
            Ok(())
        }
        r => r,
    }
}

/// Sets the configured MTU. A PMD without an MTU (pcap, null) keeps none; a virtual
/// device refusing it (af_packet, whose interface MTU is set with `ip link`) is warned
/// about; forwarding checks use the configured MTU either way.
fn apply_mtu(port: &mut Port, p: &PortSpec) -> Result<(), dpdk::DpdkError> {
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

fn fmt_mac(m: [u8; 6]) -> String {
    let h: Vec<String> = m.iter().map(|b| format!("{b:02x}")).collect();
    h.join(":")
}

/// Teardown step: read each port's final counters and stop it (vdev outputs are flushed).
pub(super) fn stop_ports(spec: &RuntimeSpec, ports: &mut [Port]) -> Vec<(String, PortStats)> {
    let mut port_stats = Vec::new();
    for (p, spec_p) in ports.iter_mut().zip(&spec.ports) {
        let st = p.stats().unwrap_or_default();
        let _ = p.stop();
        port_stats.push((spec_p.name.clone(), st));
    }
    port_stats
}
