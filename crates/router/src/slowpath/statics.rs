//! The static neighbors of the routes file, shared by the control side (which sets them
//! on every table it loads) and the slow path (which must never let ARP or NDP change
//! them).
//!
//! Read once per ARP packet by the slow path, written once per reload by the control
//! side: a lock is fine here, and no worker ever touches it.

use std::collections::HashMap;
use std::sync::RwLock;

/// (port, IPv4 in host order) -> MAC, as the routes file says; and the IPv6 ones.
#[derive(Debug, Default)]
pub struct StaticNeighbors(
    RwLock<HashMap<(u16, u32), [u8; 6]>>,
    RwLock<HashMap<(u16, u128), [u8; 6]>>,
);

impl StaticNeighbors {
    /// Replaces the set.
    pub fn set(&self, entries: impl IntoIterator<Item = ((u16, u32), [u8; 6])>) {
        let map = entries.into_iter().collect();
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = map;
    }

    /// The static MAC of `ip` on `port`.
    pub fn get(&self, port: u16, ip: u32) -> Option<[u8; 6]> {
        self.0
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(port, ip))
            .copied()
    }

    /// Every static neighbour, for `show neighbors`.
    pub fn all(&self) -> Vec<((u16, u32), [u8; 6])> {
        let map = self.0.read().unwrap_or_else(|e| e.into_inner());
        map.iter().map(|(k, v)| (*k, *v)).collect()
    }

    /// Replaces the IPv6 set ((port, address as a big-endian integer) -> MAC).
    pub fn set6(&self, entries: impl IntoIterator<Item = ((u16, u128), [u8; 6])>) {
        let map = entries.into_iter().collect();
        *self.1.write().unwrap_or_else(|e| e.into_inner()) = map;
    }

    /// The static MAC of IPv6 `ip` on `port`.
    pub fn get6(&self, port: u16, ip: u128) -> Option<[u8; 6]> {
        let map = self.1.read().unwrap_or_else(|e| e.into_inner());
        map.get(&(port, ip)).copied()
    }

    /// Every static IPv6 neighbour, for `show neighbors`.
    pub fn all6(&self) -> Vec<((u16, u128), [u8; 6])> {
        let map = self.1.read().unwrap_or_else(|e| e.into_inner());
        map.iter().map(|(k, v)| (*k, *v)).collect()
    }

    /// Whether `ip` on `port` is static.
    pub fn contains(&self, port: u16, ip: u32) -> bool {
        self.get(port, ip).is_some()
    }
}
