//! A reload (SIGHUP) also reads the startup config again. A change of the ports'
//! addresses (IPv4 and IPv6) alone is applied: the tables' connected and local routes
//! are recompiled (with the routes file checked against the new subnets; refused, with
//! its diagnostics, where that fails) and published with the router's new addresses (the
//! workers' source checks), then the slow path (ARP and echo answers) and the control
//! interfaces follow. Anything else (MTU, MAC, port list, or addresses along with them)
//! is logged as needing a restart and nothing changes. Never on a worker; reads one file
//! per SIGHUP; never blocks the slow path (it is sent the new ports on a queue).

use std::sync::Arc;

use config::startup::{PortIface, StartupConfig};
use crossbeam_channel::Sender;

use super::ControlIfaces;
use crate::control::ControlPlane;

/// What differs between the ports the router runs with and the ports in the file now,
/// one line per change (empty: nothing to say).
pub fn port_changes(running: &[PortIface], now: &[PortIface]) -> Vec<String> {
    let mut out = Vec::new();
    if running.len() != now.len() {
        out.push(format!("ports: {} -> {}", running.len(), now.len()));
    }
    fn list<T: std::fmt::Display>(addrs: &[T]) -> String {
        let a: Vec<String> = addrs.iter().map(|c| c.to_string()).collect();
        format!("[{}]", a.join(", "))
    }
    for (r, n) in running.iter().zip(now) {
        if r.name != n.name {
            out.push(format!("port {}: name {:?} -> {:?}", r.id, r.name, n.name));
            continue;
        }
        if r.addresses != n.addresses {
            out.push(format!(
                "port {:?}: addresses {} -> {}",
                r.name,
                list(&r.addresses),
                list(&n.addresses)
            ));
        }
        if r.addresses6 != n.addresses6 {
            out.push(format!(
                "port {:?}: addresses6 {} -> {}",
                r.name,
                list(&r.addresses6),
                list(&n.addresses6)
            ));
        }
        if r.mtu != n.mtu {
            out.push(format!("port {:?}: mtu {} -> {}", r.name, r.mtu, n.mtu));
        }
        if r.mac != n.mac {
            out.push(format!("port {:?}: mac changed", r.name));
        }
    }
    out
}

/// Whether `now` differs from `running` only in the ports' addresses (same ports, names,
/// MTUs and MACs): a change applied live.
pub fn only_addresses(running: &[PortIface], now: &[PortIface]) -> bool {
    running.len() == now.len()
        && running
            .iter()
            .zip(now)
            .all(|(r, n)| r.name == n.name && r.mtu == n.mtu && r.mac == n.mac)
}

/// The startup config's file, the ports as the router runs with them, and where a change
/// of their addresses goes besides the tables.
pub struct StartupCheck {
    running: StartupConfig,
    ports: Vec<PortIface>,
    /// The slow path's view of the ports (ARP and echo answers).
    slow_path: Sender<Vec<PortIface>>,
    cpif: Option<Arc<ControlIfaces>>,
}

impl StartupCheck {
    pub fn new(
        running: &StartupConfig,
        ports: &[PortIface],
        slow_path: Sender<Vec<PortIface>>,
        cpif: Option<Arc<ControlIfaces>>,
    ) -> StartupCheck {
        StartupCheck {
            running: running.clone(),
            ports: ports.to_vec(),
            slow_path,
            cpif,
        }
    }

    /// Reads the file again: a change of the ports' addresses alone is applied (tables,
    /// workers, slow path, control interfaces); anything else is logged as needing a
    /// restart and nothing changes.
    pub fn on_reload(&mut self, control: &mut ControlPlane) {
        let file = self.running.file.clone();
        let now = match StartupConfig::load(&file) {
            Ok(c) => c,
            Err(e) => {
                eprintln!(
                    "startup config {}: does not load, nothing in it is applied: {e}",
                    file.display()
                );
                return;
            }
        };
        // MACs the file does not set are the NICs': the ones running.
        let now = now.port_ifaces(|i| self.ports.get(i as usize).map_or([0; 6], |p| p.mac));
        let changes = port_changes(&self.ports, &now);
        if changes.is_empty() {
            return;
        }
        if !only_addresses(&self.ports, &now) {
            for c in changes {
                eprintln!(
                    "startup config {}: {c}: needs a restart (the router, its tables and \
                     control interfaces keep what they started with)",
                    file.display()
                );
            }
            return;
        }
        if let Err(e) = control.set_ports(now.clone()) {
            eprintln!(
                "startup config {}: address change refused, nothing applied:\n{e}",
                file.display()
            );
            return;
        }
        self.follow(&now);
        for c in changes {
            println!("startup config {}: {c}: applied", file.display());
        }
        self.ports = now;
    }

    /// After the tables: the slow path and the control interfaces take the new addresses.
    fn follow(&self, now: &[PortIface]) {
        if self.slow_path.try_send(now.to_vec()).is_err() {
            eprintln!(
                "startup config: the slow path did not take the new port addresses (queue \
                 full or gone); it answers ARP for the old ones until the next reload"
            );
        }
        if self.running.fpm.is_some() {
            println!(
                "fpm: next hops are mapped to ports by the control interfaces' ifindexes; \
                 the subnet fallback keeps the startup addresses until a restart"
            );
        }
        let Some(c) = &self.cpif else { return };
        for (r, n) in self.ports.iter().zip(now) {
            if r.addresses != n.addresses || r.addresses6 != n.addresses6 {
                if let Err(e) = c.set_addresses(n) {
                    eprintln!("cpif: port {:?}: addresses not set: {e}", n.name);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use config::types::Cidr;

    fn port(addrs: &[(u32, u8)]) -> PortIface {
        PortIface {
            id: 0,
            name: "h1".into(),
            mac: [2, 0, 0, 0, 0, 1],
            mtu: 1500,
            addresses: addrs
                .iter()
                .map(|&(addr, len)| Cidr { addr, len })
                .collect(),
            addresses6: vec![],
        }
    }

    #[test]
    fn an_added_address_is_named_and_nothing_else_is() {
        let a = [port(&[(0x0a01_0001, 24)])];
        assert!(port_changes(&a, &a).is_empty());
        let b = port(&[(0x0a01_0001, 24), (0x0a01_0005, 24)]);
        assert_eq!(
            port_changes(&a, std::slice::from_ref(&b)),
            ["port \"h1\": addresses [10.1.0.1/24] -> [10.1.0.1/24, 10.1.0.5/24]"]
        );
        assert!(only_addresses(&a, std::slice::from_ref(&b)));
        let mut c = a[0].clone();
        c.mtu = 9000;
        assert!(!only_addresses(&a, std::slice::from_ref(&c)));
        assert!(!only_addresses(&a, &[b.clone(), b]));
        let mut v6 = a[0].clone();
        v6.addresses6.push("2001:db8::1/64".parse().unwrap());
        assert_eq!(
            port_changes(&a, std::slice::from_ref(&v6)),
            ["port \"h1\": addresses6 [] -> [2001:db8::1/64]"]
        );
        assert!(only_addresses(&a, &[v6]));
        assert_eq!(
            port_changes(&a, &[c, a[0].clone()]),
            ["ports: 1 -> 2", "port \"h1\": mtu 1500 -> 9000"]
        );
    }
}
