//! The address a neighbour is known by: IPv4 (resolved by ARP) or IPv6 (resolved by
//! NDP). One key for the resolutions in progress ([`super::pending`]) and the learned
//! bindings ([`super::neighbors`]), so both families share their bounds and timers.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A neighbour's address (host order for IPv4; IPv6 as a big-endian 128-bit integer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NbrAddr {
    V4(u32),
    V6(u128),
}

impl NbrAddr {
    /// An IPv6 address from its 16 bytes.
    pub fn v6(a: [u8; 16]) -> NbrAddr {
        NbrAddr::V6(u128::from_be_bytes(a))
    }

    pub fn ip(self) -> IpAddr {
        match self {
            NbrAddr::V4(a) => IpAddr::V4(Ipv4Addr::from(a)),
            NbrAddr::V6(a) => IpAddr::V6(Ipv6Addr::from(a)),
        }
    }
}
