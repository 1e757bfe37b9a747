//! Which router port a next hop leaves by.
//!
//! zebra names a next hop by gateway and Linux ifindex. The ifindex is mapped through
//! the `fpm.interfaces` table of the startup config when it is listed there; otherwise the
//! port whose connected subnet holds the gateway is used (longest prefix). A next hop
//! that matches neither is on no port: the route is skipped and counted (`no_port`).

use std::collections::HashMap;

/// One port: its id and its connected subnets (host byte order address, prefix length).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortSubnets {
    pub id: u16,
    pub subnets: Vec<(u32, u8)>,
}

/// ifindex -> port, and the ports' subnets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortMap {
    by_ifindex: HashMap<u32, u16>,
    ports: Vec<PortSubnets>,
}

fn mask(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - len.min(32))
    }
}

impl PortMap {
    pub fn new(ports: Vec<PortSubnets>, by_ifindex: HashMap<u32, u16>) -> PortMap {
        PortMap { by_ifindex, ports }
    }

    /// The port of a next hop, or `None` when it is on no port.
    pub fn port_for(&self, gateway: Option<u32>, ifindex: u32) -> Option<u16> {
        if let Some(&p) = self.by_ifindex.get(&ifindex) {
            return Some(p);
        }
        let gw = gateway?;
        self.ports
            .iter()
            .flat_map(|p| p.subnets.iter().map(move |&(a, l)| (p.id, a, l)))
            .filter(|&(_, a, l)| gw & mask(l) == a & mask(l))
            .max_by_key(|&(_, _, l)| l)
            .map(|(id, _, _)| id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ifindex_mapping_first_then_longest_subnet() {
        let m = PortMap::new(
            vec![
                PortSubnets {
                    id: 0,
                    subnets: vec![(0x0a00_0000, 8)],
                },
                PortSubnets {
                    id: 1,
                    subnets: vec![(0x0a01_0000, 16)],
                },
            ],
            HashMap::from([(7, 0)]),
        );
        assert_eq!(m.port_for(Some(0x0a01_0203), 7), Some(0));
        assert_eq!(m.port_for(Some(0x0a01_0203), 9), Some(1));
        assert_eq!(m.port_for(Some(0x0a02_0203), 0), Some(0));
        assert_eq!(m.port_for(Some(0x0b00_0001), 3), None);
        assert_eq!(m.port_for(None, 3), None);
    }
}
