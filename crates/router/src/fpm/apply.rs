//! The control side of FPM: the FPM routes as last heard, coalesced into batches, and
//! their translation into table edits on a [`FibDelta`].
//!
//! Precedence lives in [`FpmControl::file_names`] alone: the routes file (with the
//! connected and local routes compiled from the ports) wins for any prefix or label it
//! binds, as the operator's override. FPM fills in the rest. When a reload stops
//! naming something, [`FpmControl::reapply_all`] on the new table brings the FPM route
//! back; when FPM withdraws something the file binds, the file's entry stays.

use std::collections::HashMap;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use config::routes::{Neighbor6Spec, NeighborSpec};
use config::startup::PortIface;
use fpm::msg::Gateway;
use fpm::{Change, Hop, Key, Target};
use net::fib::{
    Adjacency, Fib, FibDelta, FibError, Ipv4Route, LabelEntry, LabelOp, NextHop, RouteTarget,
    TtlMode,
};

use super::stats::{kind_index, FpmStats, KINDS};

use crate::learned::Learned;
use crate::slowpath::NbrAddr;

/// FPM routes, pending changes and the file's view; see the module docs.
pub struct FpmControl {
    mirror: HashMap<Key, Arc<Target>>,
    /// What the routes file binds (the last table a reload produced, before FPM routes
    /// and learned neighbours were added).
    file: Option<FibDelta>,
    /// Static neighbours of the routes file, both families: (port, address) -> MAC.
    static_macs: HashMap<(u16, NbrAddr), [u8; 6]>,
    pending: Vec<Change>,
    since: Option<Instant>,
    /// When the oldest pending change was read off the socket.
    oldest: Option<Instant>,
    interval: Duration,
    ports: Vec<PortIface>,
    stats: Arc<FpmStats>,
    /// Which keys FPM's entry is the table's, for `show` (the control socket).
    book: Arc<crate::ctlsock::SourceBook>,
}

impl FpmControl {
    pub fn new(interval: Duration, ports: Vec<PortIface>, stats: Arc<FpmStats>) -> FpmControl {
        FpmControl {
            mirror: HashMap::new(),
            file: None,
            static_macs: HashMap::new(),
            pending: Vec::new(),
            since: None,
            oldest: None,
            interval,
            ports,
            stats,
            book: Arc::default(),
        }
    }

    /// Shares the book `show` reads the routes' sources from.
    pub fn set_book(&mut self, book: Arc<crate::ctlsock::SourceBook>) {
        self.book = book;
    }

    /// Changes from the listener; published at the end of the interval.
    pub fn receive(&mut self, batch: super::Batch, now: Instant) {
        self.stats
            .changes
            .fetch_add(batch.changes.len() as u64, Relaxed);
        if batch.changes.is_empty() {
            return;
        }
        if self.pending.is_empty() {
            self.since = Some(now);
            self.oldest = Some(batch.read_at);
        }
        self.pending.extend(batch.changes);
    }

    /// When the pending changes are due.
    pub fn deadline(&self) -> Option<Instant> {
        self.since.map(|s| s + self.interval)
    }

    /// The pending changes and when the oldest was read, if their interval has passed.
    pub fn take_due(&mut self, now: Instant) -> Option<(Vec<Change>, Instant)> {
        if self.deadline().is_some_and(|d| now >= d) {
            self.since = None;
            let oldest = self.oldest.take().unwrap_or(now);
            return Some((std::mem::take(&mut self.pending), oldest));
        }
        None
    }

    /// Counts one publish of FPM changes, the oldest read at `read_at`.
    pub fn published(&self, read_at: Instant) {
        self.stats.published(read_at);
    }

    /// A reload produced `fib` (before learned neighbours) from a file with these static
    /// neighbours: it is the file's view now.
    pub fn set_file_view(
        &mut self,
        fib: &Fib,
        neighbors: &[NeighborSpec],
        neighbors6: &[Neighbor6Spec],
    ) {
        self.file = Some(fib.derive());
        let v4 = neighbors
            .iter()
            .map(|n| ((n.port, NbrAddr::V4(n.ip)), n.mac));
        let v6 = neighbors6
            .iter()
            .map(|n| ((n.port, NbrAddr::V6(n.ip)), n.mac));
        self.static_macs = v4.chain(v6).collect();
    }

    /// The precedence rule: whether the routes file binds `key` itself.
    pub fn file_names(&self, key: Key) -> bool {
        let Some(f) = &self.file else { return false };
        match key {
            Key::Ipv4 { addr, len } => f.ipv4_route(addr, len).is_some(),
            Key::Ipv6 { addr, len } => f.ipv6_route(addr, len).is_some(),
            Key::Label(l) => f.label(l).is_some(),
        }
    }

    /// Applies FPM changes to `delta` and remembers them.
    pub fn apply(&mut self, delta: &mut FibDelta, changes: &[Change], learned: &Learned) {
        for c in changes {
            let before = self.mirror.contains_key(&c.key);
            match &c.target {
                Some(t) => self.mirror.insert(c.key, t.clone()),
                None => self.mirror.remove(&c.key),
            };
            let after = self.mirror.contains_key(&c.key);
            let i = kind_index(c.key);
            let slot = if self.file_names(c.key) {
                self.book.set_fpm(c.key, false);
                &self.stats.overridden[i]
            } else {
                let r = match &c.target {
                    Some(t) => self.install(delta, c.key, t, learned),
                    None => remove(delta, c.key),
                };
                if let Err(e) = &r {
                    self.stats.rejected.fetch_add(1, Relaxed);
                    eprintln!("fpm: the table refused {:?}: {e}", c.key);
                }
                self.book.set_fpm(c.key, r.is_ok() && c.target.is_some());
                &self.stats.active[i]
            };
            match (before, after) {
                (false, true) => slot.fetch_add(1, Relaxed),
                (true, false) => slot.fetch_sub(1, Relaxed),
                _ => 0,
            };
        }
    }

    /// Installs every FPM route the file does not name on a table from a reload.
    pub fn reapply_all(&mut self, delta: &mut FibDelta, learned: &Learned) {
        let mut active = [0u64; KINDS.len()];
        let mut installed = Vec::new();
        let mut overridden = [0u64; KINDS.len()];
        let entries: Vec<(Key, Arc<Target>)> =
            self.mirror.iter().map(|(k, t)| (*k, t.clone())).collect();
        for (k, t) in entries {
            let i = kind_index(k);
            if self.file_names(k) {
                overridden[i] += 1;
            } else {
                active[i] += 1;
                match self.install(delta, k, &t, learned) {
                    Ok(()) => installed.push(k),
                    Err(e) => {
                        self.stats.rejected.fetch_add(1, Relaxed);
                        eprintln!("fpm: the table refused {k:?}: {e}");
                    }
                }
            }
        }
        self.book.replace_fpm(installed);
        for (slot, v) in self.stats.active.iter().zip(active) {
            slot.store(v, Relaxed);
        }
        for (slot, v) in self.stats.overridden.iter().zip(overridden) {
            slot.store(v, Relaxed);
        }
    }

    fn install(
        &self,
        delta: &mut FibDelta,
        key: Key,
        t: &Target,
        learned: &Learned,
    ) -> Result<(), ApplyError> {
        let uniform = TtlMode::Uniform;
        let route = |delta: &mut FibDelta| -> Result<Option<Ipv4Route>, ApplyError> {
            let target = match t {
                Target::Drop => RouteTarget::Blackhole,
                Target::Connected { port } => RouteTarget::Connected { port: *port },
                Target::Forward(h) => RouteTarget::NextHop(self.next_hop(delta, h, learned)?),
                _ => return Ok(None),
            };
            Ok(Some(Ipv4Route {
                target,
                ttl_mode: uniform,
            }))
        };
        match (key, t) {
            (Key::Ipv4 { addr, len }, _) => {
                if let Some(r) = route(delta)? {
                    delta.replace_ipv4_route(addr, len, r)?;
                }
                Ok(())
            }
            (Key::Ipv6 { addr, len }, _) => {
                if let Some(r) = route(delta)? {
                    delta.replace_ipv6_route(addr, len, r)?;
                }
                Ok(())
            }
            (Key::Label(l), _) => {
                let (op, next_hop) = match t {
                    Target::Swap(h) => (LabelOp::Swap, Some(self.next_hop(delta, h, learned)?)),
                    Target::Pop(h) => (LabelOp::Pop, Some(self.next_hop(delta, h, learned)?)),
                    Target::PopAndLookup => (LabelOp::PopAndLookup, None),
                    _ => return Ok(()),
                };
                let entry = LabelEntry {
                    op,
                    next_hop,
                    ttl_mode: uniform,
                };
                delta.replace_label(l, entry)?;
                Ok(())
            }
        }
    }

    fn next_hop(
        &self,
        delta: &mut FibDelta,
        hops: &[Hop],
        learned: &Learned,
    ) -> Result<NextHop, ApplyError> {
        let mut members = Vec::with_capacity(hops.len());
        for h in hops {
            let Some(p) = self.ports.get(h.port as usize) else {
                return Err(ApplyError::Port(h.port));
            };
            let n = match h.via {
                Gateway::V4(a) => NbrAddr::V4(a),
                Gateway::V6(a) => NbrAddr::V6(a),
            };
            let mac = learned
                .get_addr(h.port, n)
                .or_else(|| self.static_macs.get(&(h.port, n)).copied());
            // An IPv6 neighbour is resolved by NDP and carries IPv6 when no label is
            // pushed (a PHP towards it exposes IPv6); an IPv4 one by ARP.
            let adj = match n {
                NbrAddr::V4(a) => {
                    Adjacency::new(h.port, p.mtu, a.to_be_bytes(), mac, p.mac, &h.labels)
                }
                NbrAddr::V6(a) => {
                    Adjacency::new_v6(h.port, p.mtu, a.to_be_bytes(), mac, p.mac, &h.labels)
                }
            };
            members.push((delta.intern_adjacency(adj), h.weight));
        }
        match members.as_slice() {
            [(a, _)] => Ok(NextHop::Adjacency(*a)),
            _ => Ok(NextHop::Ecmp(delta.intern_ecmp(&members)?)),
        }
    }
}

/// Why a change could not be applied to the table.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    Fib(#[from] FibError),
    #[error("port {0} does not exist")]
    Port(u16),
}

fn remove(delta: &mut FibDelta, key: Key) -> Result<(), ApplyError> {
    match key {
        Key::Ipv4 { addr, len } => {
            delta.remove_ipv4_route(addr, len)?;
            Ok(())
        }
        Key::Ipv6 { addr, len } => {
            delta.remove_ipv6_route(addr, len)?;
            Ok(())
        }
        Key::Label(l) => {
            delta.remove_label(l);
            Ok(())
        }
    }
}

#[cfg(test)]
#[path = "apply_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "apply_book_tests.rs"]
mod book_tests;

#[cfg(test)]
#[path = "apply6_tests.rs"]
mod tests6;
