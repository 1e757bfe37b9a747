//! A reload (SIGHUP) also reads the startup config again, to say what in it cannot be
//! applied while running: the ports' addresses are set at startup in the tables'
//! connected and local routes, the workers' source checks, the slow path's ARP answers,
//! FPM's subnets and the control interfaces, and none of those follows a change yet. A
//! changed address (or MTU, MAC, port list) is logged as needing a restart, and nothing
//! changes: the control interfaces keep the addresses the router answers for, never
//! one it would not serve. Never on a worker; reads one file per SIGHUP.

use config::startup::{PortIface, StartupConfig};

/// What differs between the ports the router runs with and the ports in the file now,
/// one line per change (empty: nothing to say).
pub fn port_changes(running: &[PortIface], now: &[PortIface]) -> Vec<String> {
    let mut out = Vec::new();
    if running.len() != now.len() {
        out.push(format!("ports: {} -> {}", running.len(), now.len()));
    }
    let list = |p: &PortIface| {
        let a: Vec<String> = p.addresses.iter().map(|c| c.to_string()).collect();
        format!("[{}]", a.join(", "))
    };
    for (r, n) in running.iter().zip(now) {
        if r.name != n.name {
            out.push(format!("port {}: name {:?} -> {:?}", r.id, r.name, n.name));
            continue;
        }
        if r.addresses != n.addresses {
            out.push(format!(
                "port {:?}: addresses {} -> {}",
                r.name,
                list(r),
                list(n)
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

/// The startup config's file and the ports as the router started with them.
pub struct StartupCheck {
    running: StartupConfig,
    ports: Vec<PortIface>,
}

impl StartupCheck {
    pub fn new(running: &StartupConfig, ports: &[PortIface]) -> StartupCheck {
        StartupCheck {
            running: running.clone(),
            ports: ports.to_vec(),
        }
    }

    /// Reads the file again and logs what a restart would change in the ports.
    pub fn on_reload(&self) {
        let file = &self.running.file;
        let now = match StartupConfig::load(file) {
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
        for c in port_changes(&self.ports, &now) {
            eprintln!(
                "startup config {}: {c}: needs a restart (the router, its tables and \
                 control interfaces keep what they started with)",
                file.display()
            );
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
            port_changes(&a, &[b]),
            ["port \"h1\": addresses [10.1.0.1/24] -> [10.1.0.1/24, 10.1.0.5/24]"]
        );
        let mut c = a[0].clone();
        c.mtu = 9000;
        assert_eq!(
            port_changes(&a, &[c, a[0].clone()]),
            ["ports: 1 -> 2", "port \"h1\": mtu 1500 -> 9000"]
        );
    }
}
