//! The neighbors the slow path learned by ARP, as the control side applies them to
//! tables: a learned MAC fills every adjacency towards the neighbor and, where the routes
//! file has no /32 of its own, a host route to it; a neighbor that is gone takes its MAC
//! back out (its traffic is then resolved again) and its host route away.
//!
//! Pure (works on a [`FibDelta`]). Static neighbors of the routes file always win. A
//! derived table keeps the adjacencies nobody uses any more (see `net::fib::delta`), so
//! the adjacency of a removed host route is reused by the next one: churn of learned
//! neighbors does not grow the table.

use std::collections::{BTreeMap, BTreeSet};

use config::startup::PortIface;
use net::fib::{AdjId, Adjacency, FibDelta, FibError, Ipv4Route, NextHop, RouteTarget, TtlMode};

/// Learned neighbors, and what this module added to the current table for them.
#[derive(Debug, Default)]
pub struct Learned {
    macs: BTreeMap<(u16, u32), [u8; 6]>,
    /// Host routes added for learned neighbors: their adjacency, and whether this module
    /// added that adjacency (else it is shared with the routes file's routes).
    hosts: BTreeMap<(u16, u32), (AdjId, bool)>,
    /// Adjacencies of removed host routes, to reuse.
    free: BTreeSet<AdjId>,
}

fn unresolved(a: &Adjacency) -> Adjacency {
    Adjacency::new(a.port, a.mtu, a.neighbor, None, a.src_mac, a.labels())
}

impl Learned {
    /// The learned MAC of `ip` on `port`.
    pub fn get(&self, port: u16, ip: u32) -> Option<[u8; 6]> {
        self.macs.get(&(port, ip)).copied()
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
        if is_static || self.get(port, ip) == Some(mac) {
            return Ok(false);
        }
        self.macs.insert((port, ip), mac);
        self.apply(delta, ports, port, ip, mac)?;
        Ok(true)
    }

    /// Forgets `ip` on `port` and takes it out of `delta`. False when it was not known.
    pub fn forget(&mut self, delta: &mut FibDelta, port: u16, ip: u32) -> Result<bool, FibError> {
        if self.macs.remove(&(port, ip)).is_none() {
            return Ok(false);
        }
        let stale: Vec<(AdjId, Adjacency)> = delta
            .adjacencies()
            .iter()
            .enumerate()
            .filter(|(i, a)| {
                a.port == port
                    && a.neighbor == ip.to_be_bytes()
                    && a.is_resolved()
                    && !self.free.contains(&(*i as AdjId))
            })
            .map(|(i, a)| (i as AdjId, unresolved(a)))
            .collect();
        for (id, a) in stale {
            delta.set_adjacency(id, a)?;
        }
        if let Some((adj, owned)) = self.hosts.remove(&(port, ip)) {
            let target = RouteTarget::NextHop(NextHop::Adjacency(adj));
            if delta.ipv4_route(ip, 32).map(|r| r.target) == Some(target) {
                delta.remove_ipv4_route(ip, 32)?;
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
        is_static: impl Fn(u16, u32) -> bool,
    ) -> Result<(), FibError> {
        self.hosts.clear();
        self.free.clear();
        self.macs.retain(|&(p, ip), _| !is_static(p, ip));
        let all: Vec<_> = self.macs.iter().map(|(&(p, ip), &m)| (p, ip, m)).collect();
        for (port, ip, mac) in all {
            self.apply(delta, ports, port, ip, mac)?;
        }
        Ok(())
    }

    /// Gives every adjacency towards `ip` on `port` its MAC, and routes `ip/32` to the
    /// neighbor unless the table routes that /32 already.
    fn apply(
        &mut self,
        delta: &mut FibDelta,
        ports: &[PortIface],
        port: u16,
        ip: u32,
        mac: [u8; 6],
    ) -> Result<(), FibError> {
        let updates: Vec<(AdjId, Adjacency)> = delta
            .adjacencies()
            .iter()
            .enumerate()
            .filter(|(i, a)| {
                a.port == port
                    && a.neighbor == ip.to_be_bytes()
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
        if self.hosts.contains_key(&(port, ip)) || delta.ipv4_route(ip, 32).is_some() {
            return Ok(());
        }
        let adj = Adjacency::new(port, iface.mtu, ip.to_be_bytes(), Some(mac), iface.mac, &[]);
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
        delta.replace_ipv4_route(
            ip,
            32,
            Ipv4Route {
                target: RouteTarget::NextHop(NextHop::Adjacency(id)),
                ttl_mode: TtlMode::Uniform,
            },
        )?;
        self.hosts.insert((port, ip), (id, owned));
        Ok(())
    }
}

#[cfg(test)]
#[path = "learned_tests.rs"]
mod tests;
