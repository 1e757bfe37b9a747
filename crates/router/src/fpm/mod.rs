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
/// subnets (IPv4 and IPv6) for next hops on neither.
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
            subnets6: p.addresses6.iter().map(|c| (c.addr, c.len)).collect(),
        })
        .collect();
    PortMap::new(subnets, by_ifindex)
}

/// The control interfaces as FPM sees them: their (ifindex, port) pairs, and a count
/// that changes whenever one of them gets a new ifindex (recreated after a deletion).
pub trait ControlIfindexes: Send + Sync {
    fn generation(&self) -> u64;
    fn ifindexes(&self) -> Vec<(u32, u16)>;
}

/// What the listener's ifindex -> port map is built from; rebuilt when a control
/// interface is recreated, so zebra's next hops over the new ifindex find their port.
pub struct PortMapSource {
    cfg: FpmConfig,
    ports: Vec<PortIface>,
    control: Option<Arc<dyn ControlIfindexes>>,
    seen: u64,
}

impl PortMapSource {
    pub fn new(
        cfg: &FpmConfig,
        ports: &[PortIface],
        control: Option<Arc<dyn ControlIfindexes>>,
    ) -> PortMapSource {
        let seen = control.as_ref().map_or(0, |c| c.generation());
        PortMapSource {
            cfg: cfg.clone(),
            ports: ports.to_vec(),
            control,
            seen,
        }
    }

    /// The map as of now.
    pub fn build(&self) -> PortMap {
        let control = self.control.as_ref().map(|c| c.ifindexes());
        port_map(&self.cfg, &self.ports, control.as_deref().unwrap_or(&[]))
    }

    /// A new map when a control interface changed since the last call (one atomic load
    /// otherwise).
    pub fn refresh(&mut self) -> Option<PortMap> {
        let g = self.control.as_ref()?.generation();
        if g == self.seen {
            return None;
        }
        self.seen = g;
        Some(self.build())
    }
}

/// Starts the listener; returns it, the control side and the channel between them.
pub fn start(
    cfg: &FpmConfig,
    ports: &[PortIface],
    max_labels: usize,
    control: Option<Arc<dyn ControlIfindexes>>,
    stats: Arc<FpmStats>,
) -> std::io::Result<(Listener, FpmControl, crossbeam_channel::Receiver<Batch>)> {
    let source = PortMapSource::new(cfg, ports, control);
    let session = Session::new(
        SessionConfig {
            hold_time: cfg.hold_time,
            resync_settle: cfg.resync_settle,
            resync_min: cfg.resync_min,
            limits: Limits { max_labels },
        },
        source.build(),
        std::time::Instant::now(),
    );
    let (tx, rx) = crossbeam_channel::bounded(CHANNEL_BATCHES);
    let listener = Listener::start(cfg.listen, session, source, stats.clone(), tx)?;
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

    /// Control interfaces whose ifindexes the test changes, as a recreation does.
    struct Fake(std::sync::Mutex<(u64, Vec<(u32, u16)>)>);
    impl ControlIfindexes for Fake {
        fn generation(&self) -> u64 {
            self.0.lock().unwrap().0
        }
        fn ifindexes(&self) -> Vec<(u32, u16)> {
            self.0.lock().unwrap().1.clone()
        }
    }

    #[test]
    fn a_recreated_control_interface_maps_its_new_ifindex() {
        let ports: Vec<PortIface> = (0..2)
            .map(|id| PortIface {
                id,
                name: format!("p{id}"),
                mac: [0; 6],
                mtu: 1500,
                addresses: vec![],
                addresses6: vec![],
            })
            .collect();
        let fake = Arc::new(Fake(std::sync::Mutex::new((0, vec![(7, 0), (9, 1)]))));
        let mut src = PortMapSource::new(&config_fpm(), &ports, Some(fake.clone()));
        let m = src.build();
        assert_eq!(m.port_for(None, 7), Some(0));
        assert_eq!(src.refresh(), None, "nothing changed");
        // Port 0's interface deleted and created again: ifindex 12.
        *fake.0.lock().unwrap() = (1, vec![(12, 0), (9, 1)]);
        let m = src.refresh().expect("a new map");
        assert_eq!(m.port_for(None, 12), Some(0));
        assert_eq!(m.port_for(None, 9), Some(1));
        assert_eq!(m.port_for(None, 7), None, "the old ifindex is gone");
        assert_eq!(src.refresh(), None);
        // Without control interfaces there is nothing to refresh.
        let mut none = PortMapSource::new(&config_fpm(), &ports, None);
        assert_eq!(none.refresh(), None);
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
