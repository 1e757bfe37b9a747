//! FRR's zebra programs the table over FPM (`dplane_fpm_nl`), beside the routes file.
//!
//! - [`listener`]: a thread that accepts zebra's connection and runs the pure
//!   [`fpm::Session`] (decoding, resync, hold time) on what it reads.
//! - [`apply`]: the control thread's side: FPM changes are coalesced per publish
//!   interval, applied with the routes file taking precedence, and published through the
//!   same RCU publish as reloads.
//! - [`metrics`]: the `mplsrouter_fpm_*` families.
//!
//! Never on a worker: the data path only ever sees the published tables.

pub mod apply;
pub mod listener;
pub mod metrics;
pub mod stats;

use std::collections::HashMap;
use std::sync::Arc;

use config::startup::{FpmConfig, LinuxIf, PortIface};
use fpm::{Change, Limits, PortMap, PortSubnets, Session, SessionConfig};

pub use apply::FpmControl;
pub use listener::Listener;
pub use stats::FpmStats;

/// Changes from one read of the socket (or one timer), and when the bytes were read.
pub struct Batch {
    pub read_at: std::time::Instant,
    pub changes: Vec<Change>,
}

/// Capacity of the listener -> control channel, in batches (one per socket read).
const CHANNEL_BATCHES: usize = 256;

/// The ifindex of a Linux interface in this network namespace.
fn ifindex_of(name: &str) -> Option<u32> {
    let p = std::path::Path::new("/sys/class/net")
        .join(name)
        .join("ifindex");
    std::fs::read_to_string(p).ok()?.trim().parse().ok()
}

/// ifindex -> port: the control interfaces' ifindexes (`control`) first, then the
/// config's `fpm.interfaces` (ifnames resolved now) for the others; and the ports'
/// subnets for next hops on neither.
pub fn port_map(cfg: &FpmConfig, ports: &[PortIface], control: &[(u32, u16)]) -> PortMap {
    let mut by_ifindex: HashMap<u32, u16> = HashMap::new();
    for (i, port) in &cfg.interfaces {
        match i {
            LinuxIf::Index(x) => {
                by_ifindex.insert(*x, *port);
            }
            LinuxIf::Name(n) => match ifindex_of(n) {
                Some(x) => {
                    by_ifindex.insert(x, *port);
                }
                None => eprintln!(
                    "fpm: interface `{n}` (fpm.interfaces) does not exist here; its next hops \
                     are mapped by subnet"
                ),
            },
        }
    }
    for &(ifindex, port) in control {
        by_ifindex.insert(ifindex, port);
    }
    let subnets = ports
        .iter()
        .map(|p| PortSubnets {
            id: p.id,
            subnets: p.addresses.iter().map(|c| (c.addr, c.len)).collect(),
        })
        .collect();
    PortMap::new(subnets, by_ifindex)
}

/// Starts the listener; returns it, the control side and the channel between them.
pub fn start(
    cfg: &FpmConfig,
    ports: &[PortIface],
    max_labels: usize,
    control: &[(u32, u16)],
    stats: Arc<FpmStats>,
) -> std::io::Result<(Listener, FpmControl, crossbeam_channel::Receiver<Batch>)> {
    let session = Session::new(
        SessionConfig {
            hold_time: cfg.hold_time,
            resync_settle: cfg.resync_settle,
            resync_min: cfg.resync_min,
            limits: Limits { max_labels },
        },
        port_map(cfg, ports, control),
        std::time::Instant::now(),
    );
    let (tx, rx) = crossbeam_channel::bounded(CHANNEL_BATCHES);
    let listener = Listener::start(cfg.listen, session, stats.clone(), tx)?;
    let control = FpmControl::new(cfg.publish_interval, ports.to_vec(), stats);
    Ok((listener, control, rx))
}

#[cfg(test)]
mod tests {
    use super::*;
    use config::startup::{FpmConfig, LinuxIf, PortIface};

    #[test]
    fn control_interfaces_name_their_ports_first() {
        let mut cfg: FpmConfig = config_fpm();
        cfg.interfaces = vec![(LinuxIf::Index(7), 1), (LinuxIf::Index(8), 1)];
        let ports: Vec<PortIface> = (0..2)
            .map(|id| PortIface {
                id,
                name: format!("p{id}"),
                mac: [0; 6],
                mtu: 1500,
                addresses6: Vec::new(),
                addresses: vec![],
            })
            .collect();
        // ifindex 7 is port 0's control interface: it wins over the config's line.
        let m = port_map(&cfg, &ports, &[(7, 0), (9, 1)]);
        assert_eq!(m.port_for(None, 7), Some(0));
        assert_eq!(m.port_for(None, 8), Some(1));
        assert_eq!(m.port_for(None, 9), Some(1));
        assert_eq!(m.port_for(None, 10), None);
    }

    fn config_fpm() -> FpmConfig {
        FpmConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            hold_time: std::time::Duration::from_secs(1),
            resync_settle: std::time::Duration::from_secs(1),
            resync_min: std::time::Duration::from_secs(1),
            publish_interval: std::time::Duration::from_millis(1),
            interfaces: vec![],
        }
    }
}
