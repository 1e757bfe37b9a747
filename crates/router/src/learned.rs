//! The neighbors the slow path learned by ARP or NDP, as the control side applies them to
//! tables: a learned MAC fills every adjacency towards the neighbor (by its IPv4 address,
//! or by its IPv6 one for adjacencies resolved by NDP) and, where the routes file has no
//! /32 (/128) of its own, a host route to it; a neighbor that is gone takes its MAC back
//! out (its traffic is then resolved again) and its host route away.
//!
//! Pure (works on a [`FibDelta`]). Static neighbors of the routes file always win. A
//! derived table keeps the adjacencies nobody uses any more (see `net::fib::delta`), so
//! the adjacency of a removed host route is reused by the next one: churn of learned
//! neighbors does not grow the table.

use std::collections::{BTreeMap, BTreeSet};

use config::startup::PortIface;
use net::fib::{AdjId, Adjacency, FibDelta, FibError, Ipv4Route, NextHop, RouteTarget, TtlMode};

use crate::slowpath::NbrAddr;

/// Learned neighbors, and what this module added to the current table for them.
#[derive(Debug, Default)]
pub struct Learned {
    macs: BTreeMap<(u16, NbrAddr), [u8; 6]>,
    /// Host routes added for learned neighbors: their adjacency, and whether this module
    /// added that adjacency (else it is shared with the routes file's routes).
    hosts: BTreeMap<(u16, NbrAddr), (AdjId, bool)>,
    /// Adjacencies of removed host routes, to reuse.
    free: BTreeSet<AdjId>,
}

fn unresolved(a: &Adjacency) -> Adjacency {
    let mut u = Adjacency::new(a.port, a.mtu, a.neighbor, None, a.src_mac, a.labels());
    u.neighbor6 = a.neighbor6;
    u.with_payload(a.payload)
}

/// Whether adjacency `a` leads to neighbor `n` on `port`.
fn points_at(a: &Adjacency, port: u16, n: NbrAddr) -> bool {
    a.port == port
        && match n {
            NbrAddr::V4(ip) => a.neighbor6.is_none() && a.neighbor == ip.to_be_bytes(),
            NbrAddr::V6(ip) => a.neighbor6 == Some(ip.to_be_bytes()),
        }
}

/// The host route of `n` in `delta`.
fn host_route(delta: &FibDelta, n: NbrAddr) -> Option<Ipv4Route> {
    match n {
        NbrAddr::V4(ip) => delta.ipv4_route(ip, 32),
        NbrAddr::V6(ip) => delta.ipv6_route(ip, 128),
    }
}

impl Learned {
    /// The learned MAC of `ip` on `port`.
    pub fn get(&self, port: u16, ip: u32) -> Option<[u8; 6]> {
        self.get_addr(port, NbrAddr::V4(ip))
    }

    /// The learned MAC of a neighbour of either family on `port`.
    pub fn get_addr(&self, port: u16, n: NbrAddr) -> Option<[u8; 6]> {
        self.macs.get(&(port, n)).copied()
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.macs.len()
    }

    /// Records `mac` for `ip` and applies it to `delta`. False when nothing changes
    /// (known already, or a static neighbor).
    pub fn learn(
        &mut self,
        delta: &mut FibDelta,
        ports: &[PortIface],
        is_static: bool,
        (port, ip, mac): (u16, u32, [u8; 6]),
    ) -> Result<bool, FibError> {
        self.learn_addr(delta, ports, is_static, (port, NbrAddr::V4(ip), mac))
    }

    /// [`Learned::learn`] for a neighbor of either family.
    pub fn learn_addr(
        &mut self,
        delta: &mut FibDelta,
        ports: &[PortIface],
        is_static: bool,
        (port, n, mac): (u16, NbrAddr, [u8; 6]),
    ) -> Result<bool, FibError> {
        if is_static || self.macs.get(&(port, n)) == Some(&mac) {
            return Ok(false);
        }
        self.macs.insert((port, n), mac);
        self.apply(delta, ports, port, n, mac)?;
        Ok(true)
    }

    /// Forgets `ip` on `port` and takes it out of `delta`. False when it was not known.
    pub fn forget(&mut self, delta: &mut FibDelta, port: u16, ip: u32) -> Result<bool, FibError> {
        self.forget_addr(delta, port, NbrAddr::V4(ip))
    }

    /// [`Learned::forget`] for a neighbor of either family.
    pub fn forget_addr(
        &mut self,
        delta: &mut FibDelta,
        port: u16,
        n: NbrAddr,
    ) -> Result<bool, FibError> {
        if self.macs.remove(&(port, n)).is_none() {
            return Ok(false);
        }
        let stale: Vec<(AdjId, Adjacency)> = delta
            .adjacencies()
            .iter()
            .enumerate()
            .filter(|(i, a)| {
                points_at(a, port, n) && a.is_resolved() && !self.free.contains(&(*i as AdjId))
            })
            .map(|(i, a)| (i as AdjId, unresolved(a)))
            .collect();
        for (id, a) in stale {
            delta.set_adjacency(id, a)?;
        }
        if let Some((adj, owned)) = self.hosts.remove(&(port, n)) {
            let target = RouteTarget::NextHop(NextHop::Adjacency(adj));
            if host_route(delta, n).map(|r| r.target) == Some(target) {
                match n {
                    NbrAddr::V4(ip) => delta.remove_ipv4_route(ip, 32).map(drop)?,
                    NbrAddr::V6(ip) => delta.remove_ipv6_route(ip, 128).map(drop)?,
                }
            }
            if owned {
                self.free.insert(adj);
            }
        }
        Ok(true)
    }

    /// Applies every learned neighbor to a table built from the routes file alone;
    /// neighbors the file now makes static are forgotten.
    pub fn reapply(
        &mut self,
        delta: &mut FibDelta,
        ports: &[PortIface],
        is_static: impl Fn(u16, NbrAddr) -> bool,
    ) -> Result<(), FibError> {
        self.hosts.clear();
        self.free.clear();
        self.macs.retain(|&(p, n), _| !is_static(p, n));
        let all: Vec<_> = self.macs.iter().map(|(&(p, n), &m)| (p, n, m)).collect();
        for (port, n, mac) in all {
            self.apply(delta, ports, port, n, mac)?;
        }
        Ok(())
    }

    /// Gives every adjacency towards `n` on `port` its MAC, and routes `n`'s host prefix
    /// (/32, /128) to the neighbor unless the table routes that prefix already.
    fn apply(
        &mut self,
        delta: &mut FibDelta,
        ports: &[PortIface],
        port: u16,
        n: NbrAddr,
        mac: [u8; 6],
    ) -> Result<(), FibError> {
        let updates: Vec<(AdjId, Adjacency)> = delta
            .adjacencies()
            .iter()
            .enumerate()
            .filter(|(i, a)| {
                points_at(a, port, n)
                    && a.dst_mac != Some(mac)
                    && !self.free.contains(&(*i as AdjId))
            })
            .map(|(i, a)| (i as AdjId, a.with_dst_mac(mac)))
            .collect();
        for (id, adj) in updates {
            delta.set_adjacency(id, adj)?;
        }
        let Some(iface) = ports.get(port as usize) else {
            return Ok(());
        };
        if self.hosts.contains_key(&(port, n)) || host_route(delta, n).is_some() {
            return Ok(());
        }
        let adj = match n {
            NbrAddr::V4(ip) => {
                Adjacency::new(port, iface.mtu, ip.to_be_bytes(), Some(mac), iface.mac, &[])
            }
            NbrAddr::V6(ip) => {
                Adjacency::new_v6(port, iface.mtu, ip.to_be_bytes(), Some(mac), iface.mac, &[])
            }
        };
        let (id, owned) = match self.free.pop_first() {
            Some(id) => {
                delta.set_adjacency(id, adj)?;
                (id, true)
            }
            None => {
                let before = delta.adjacencies().len() as AdjId;
                let id = delta.intern_adjacency(adj);
                (id, id >= before)
            }
        };
        let route = Ipv4Route {
            target: RouteTarget::NextHop(NextHop::Adjacency(id)),
            ttl_mode: TtlMode::Uniform,
        };
        match n {
            NbrAddr::V4(ip) => delta.replace_ipv4_route(ip, 32, route).map(drop)?,
            NbrAddr::V6(ip) => delta.replace_ipv6_route(ip, 128, route).map(drop)?,
        }
        self.hosts.insert((port, n), (id, owned));
        Ok(())
    }
}

#[cfg(test)]
#[path = "learned_tests.rs"]
mod tests;
