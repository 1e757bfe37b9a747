//! Which router port a next hop leaves by.
//!
//! zebra names a next hop by gateway and Linux ifindex. The ifindex is mapped through
//! the `fpm.interfaces` table of the startup config when it is listed there; otherwise the
//! port whose connected subnet holds the gateway is used (longest prefix). A next hop
//! that matches neither is on no port: the route is skipped and counted (`no_port`).
//! IPv6 gateways match the ports' IPv6 subnets the same way, except link-local ones:
//! `fe80::/64` is on every link, so a link-local gateway needs its ifindex.

use std::collections::HashMap;

use crate::msg::Gateway;

/// One port: its id and its connected subnets (host byte order address, prefix length).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortSubnets {
    pub id: u16,
    pub subnets: Vec<(u32, u8)>,
    /// IPv6 subnets (link-local ones are ignored).
    pub subnets6: Vec<(u128, u8)>,
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

fn mask6(len: u8) -> u128 {
    if len == 0 {
        0
    } else {
        u128::MAX << (128 - len.min(128))
    }
}

/// Whether `addr/len` holds `gw`, and how specific it is.
fn holds(gw: Gateway, p: &PortSubnets) -> Option<u8> {
    match gw {
        Gateway::V4(g) => p
            .subnets
            .iter()
            .filter(|&&(a, l)| g & mask(l) == a & mask(l))
            .map(|&(_, l)| l)
            .max(),
        Gateway::V6(_) if gw.is_link_local() => None,
        Gateway::V6(g) => p
            .subnets6
            .iter()
            .filter(|&&(a, l)| !Gateway::V6(a).is_link_local() && g & mask6(l) == a & mask6(l))
            .map(|&(_, l)| l)
            .max(),
    }
}

impl PortMap {
    pub fn new(ports: Vec<PortSubnets>, by_ifindex: HashMap<u32, u16>) -> PortMap {
        PortMap { by_ifindex, ports }
    }

    /// Whether one of `port`'s own subnets holds `gateway`.
    pub fn on_subnet(&self, port: u16, gateway: Gateway) -> bool {
        self.ports
            .iter()
            .any(|p| p.id == port && holds(gateway, p).is_some())
    }

    /// The port of a next hop, or `None` when it is on no port.
    pub fn port_for(&self, gateway: Option<Gateway>, ifindex: u32) -> Option<u16> {
        if let Some(&p) = self.by_ifindex.get(&ifindex) {
            return Some(p);
        }
        let gw = gateway?;
        self.ports
            .iter()
            .filter_map(|p| Some((p.id, holds(gw, p)?)))
            .max_by_key(|&(_, l)| l)
            .map(|(id, _)| id)
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
                    subnets6: vec![(0x2001_0db8 << 96, 32), (0xfe80 << 112, 64)],
                },
                PortSubnets {
                    id: 1,
                    subnets: vec![(0x0a01_0000, 16)],
                    subnets6: vec![(0x2001_0db8_0001 << 80, 48)],
                },
            ],
            HashMap::from([(7, 0)]),
        );
        let v4 = |a| Some(Gateway::V4(a));
        let v6 = |a| Some(Gateway::V6(a));
        assert_eq!(m.port_for(v4(0x0a01_0203), 7), Some(0));
        assert_eq!(m.port_for(v4(0x0a01_0203), 9), Some(1));
        assert_eq!(m.port_for(v4(0x0a02_0203), 0), Some(0));
        assert_eq!(m.port_for(v4(0x0b00_0001), 3), None);
        assert_eq!(m.port_for(None, 3), None);
        // IPv6: longest subnet; the families never mix.
        assert_eq!(m.port_for(v6(0x2001_0db8_0001 << 80 | 2), 0), Some(1));
        assert_eq!(m.port_for(v6(0x2001_0db8_0002 << 80 | 2), 0), Some(0));
        assert_eq!(m.port_for(v6(0x0a01_0203), 0), None);
        // Link-local: only by ifindex, even where a port has fe80::/64.
        assert_eq!(m.port_for(v6(0xfe80 << 112 | 2), 0), None);
        assert_eq!(m.port_for(v6(0xfe80 << 112 | 2), 7), Some(0));
    }
}
