//! Deriving the next snapshot from the running one, in time proportional to the change.
//!
//! A full view has ~900k prefixes but only a few hundred routes, adjacencies and ECMP
//! groups. [`Fib::derive`] clones the running snapshot: the [`Lpm4`] shares its /8
//! blocks (copy-on-write), the [`Lpm6`] is shared whole until the first IPv6 edit
//! copies it, and the small vectors are copied; the interning maps for
//! routes, adjacencies and groups are built from them (a few hundred entries) the first
//! time an edit needs one. Each
//! edit then touches one prefix or one label; [`FibDelta::build`] moves the result into
//! a new [`Fib`] without any bulk step. The running snapshot is never modified.
//!
//! Adjacencies, groups and routes that no prefix uses any more stay in the derived
//! snapshot (ids must stay stable for the entries that still point at them); they are
//! dropped by the next full build. Label entries are kept dense: unbinding a label moves
//! the last entry into its slot.

use std::collections::HashMap;

use std::sync::Arc;

use super::builder::{check_label, check_next_hop, check_prefix, check_prefix6};
use super::direct::direct_routes;
use super::{
    AdjId, Adjacency, EcmpGroup, EcmpId, Family, Fib, FibError, Ipv4Route, Ipv6Route, LabelEntry,
    LabelTable, Lpm4, Lpm6, RouteTarget,
};

/// A snapshot being derived from a running [`Fib`]; see the module docs.
#[derive(Debug)]
pub struct FibDelta {
    lpm: Lpm4,
    lpm6: Arc<Lpm6>,
    routes: Vec<Ipv4Route>,
    route_ids: Option<HashMap<Ipv4Route, u32>>,
    labels: LabelTable,
    label_entries: Vec<LabelEntry>,
    label_keys: Vec<u32>,
    adjacencies: Vec<Adjacency>,
    adj_ids: Option<HashMap<Adjacency, AdjId>>,
    ecmp: Vec<EcmpGroup>,
    ecmp_ids: Option<HashMap<Vec<(AdjId, u32)>, EcmpId>>,
    port_addrs: Vec<Option<[u8; 4]>>,
    port_addrs6: Vec<Option<[u8; 16]>>,
    local: Option<Arc<crate::pipeline::LocalAddrs>>,
}

impl Fib {
    /// Starts deriving the next snapshot from this one (which stays untouched).
    pub fn derive(&self) -> FibDelta {
        FibDelta {
            lpm: self.lpm.clone(),
            lpm6: Arc::clone(&self.lpm6),
            routes: self.routes.clone(),
            route_ids: None,
            labels: self.labels.clone(),
            label_entries: self.label_entries.clone(),
            label_keys: self.label_keys.clone(),
            adjacencies: self.adjacencies.clone(),
            adj_ids: None,
            ecmp: self.ecmp.clone(),
            ecmp_ids: None,
            port_addrs: self.port_addrs.clone(),
            port_addrs6: self.port_addrs6.clone(),
            local: self.local.clone(),
        }
    }
}

/// An id -> item vector inverted, first id winning for equal items.
fn index<K: std::hash::Hash + Eq>(items: impl Iterator<Item = K>) -> HashMap<K, u32> {
    let mut m = HashMap::new();
    for (i, k) in items.enumerate() {
        m.entry(k).or_insert(i as u32);
    }
    m
}

impl FibDelta {
    fn adj_ids(&mut self) -> &mut HashMap<Adjacency, AdjId> {
        let adjs = &self.adjacencies;
        self.adj_ids
            .get_or_insert_with(|| index(adjs.iter().cloned()))
    }

    /// The id of an adjacency equal to `adj`, adding it if there is none.
    pub fn intern_adjacency(&mut self, adj: Adjacency) -> AdjId {
        if let Some(&a) = self.adj_ids().get(&adj) {
            return a;
        }
        self.adjacencies.push(adj.clone());
        let id = (self.adjacencies.len() - 1) as AdjId;
        self.adj_ids().insert(adj, id);
        id
    }

    /// The id of a group with exactly these members (same order and weights), adding
    /// one if there is none.
    pub fn intern_ecmp(&mut self, members: &[(AdjId, u32)]) -> Result<EcmpId, FibError> {
        let groups = &self.ecmp;
        let ids = self
            .ecmp_ids
            .get_or_insert_with(|| index(groups.iter().map(|g| g.members().to_vec())));
        if let Some(&g) = ids.get(members) {
            return Ok(g);
        }
        for &(a, _) in members {
            super::builder::check_adj(&self.adjacencies, a)?;
        }
        self.ecmp.push(EcmpGroup::new(members)?);
        let id = (self.ecmp.len() - 1) as EcmpId;
        if let Some(ids) = &mut self.ecmp_ids {
            ids.insert(members.to_vec(), id);
        }
        Ok(id)
    }

    /// Replaces the adjacency `id` in place (e.g. its MAC was learned): every route and
    /// label using it follows.
    pub fn set_adjacency(&mut self, id: AdjId, adj: Adjacency) -> Result<(), FibError> {
        super::builder::check_adj(&self.adjacencies, id)?;
        let old = std::mem::replace(&mut self.adjacencies[id as usize], adj.clone());
        if let Some(ids) = &mut self.adj_ids {
            if ids.get(&old) == Some(&id) {
                ids.remove(&old);
            }
            ids.entry(adj).or_insert(id);
        }
        Ok(())
    }

    /// The route currently bound to exactly `addr/len`.
    pub fn ipv4_route(&self, addr: u32, len: u8) -> Option<Ipv4Route> {
        (len <= 32)
            .then(|| self.lpm.get(addr, len))
            .flatten()
            .map(|id| self.routes[id as usize])
    }

    /// Binds `addr/len` (host byte order) to `route`, adding the prefix or replacing its
    /// route. Returns the route it replaced.
    pub fn replace_ipv4_route(
        &mut self,
        addr: u32,
        len: u8,
        route: Ipv4Route,
    ) -> Result<Option<Ipv4Route>, FibError> {
        check_prefix(addr, len)?;
        let id = self.intern_route(route)?;
        let old = self.lpm.get(addr, len);
        if old == Some(id) {
            return Ok(Some(route));
        }
        self.lpm.insert(addr, len, id);
        Ok(old.map(|o| self.routes[o as usize]))
    }

    /// The id of `route` (either family), adding it if new.
    fn intern_route(&mut self, route: Ipv4Route) -> Result<u32, FibError> {
        if let RouteTarget::NextHop(nh) = route.target {
            check_next_hop(&self.adjacencies, &self.ecmp, nh)?;
        }
        let routes = &mut self.routes;
        let ids = self
            .route_ids
            .get_or_insert_with(|| index(routes.iter().copied()));
        Ok(match ids.get(&route) {
            Some(&id) => id,
            None => {
                routes.push(route);
                let id = (routes.len() - 1) as u32;
                ids.insert(route, id);
                id
            }
        })
    }

    /// The route currently bound to exactly the IPv6 prefix `addr/len`.
    pub fn ipv6_route(&self, addr: u128, len: u8) -> Option<Ipv6Route> {
        (len <= 128)
            .then(|| self.lpm6.get(addr, len))
            .flatten()
            .map(|id| self.routes[id as usize])
    }

    /// Binds the IPv6 prefix `addr/len` to `route`, adding or replacing; returns the route
    /// it replaced. The first IPv6 edit of a derivation copies the [`Lpm6`].
    pub fn replace_ipv6_route(
        &mut self,
        addr: u128,
        len: u8,
        route: Ipv6Route,
    ) -> Result<Option<Ipv6Route>, FibError> {
        check_prefix6(addr, len)?;
        let id = self.intern_route(route)?;
        let old = self.lpm6.get(addr, len);
        if old == Some(id) {
            return Ok(Some(route));
        }
        Arc::make_mut(&mut self.lpm6).insert(addr, len, id);
        Ok(old.map(|o| self.routes[o as usize]))
    }

    /// Unbinds the IPv6 prefix `addr/len`; returns the route it had.
    pub fn remove_ipv6_route(
        &mut self,
        addr: u128,
        len: u8,
    ) -> Result<Option<Ipv6Route>, FibError> {
        check_prefix6(addr, len)?;
        if self.lpm6.get(addr, len).is_none() {
            return Ok(None);
        }
        Ok(Arc::make_mut(&mut self.lpm6)
            .remove(addr, len)
            .map(|id| self.routes[id as usize]))
    }

    /// Number of IPv6 prefixes bound.
    pub fn ipv6_route_count(&self) -> usize {
        self.lpm6.len()
    }

    /// Unbinds `addr/len`; returns the route it had.
    pub fn remove_ipv4_route(&mut self, addr: u32, len: u8) -> Result<Option<Ipv4Route>, FibError> {
        check_prefix(addr, len)?;
        Ok(self
            .lpm
            .remove(addr, len)
            .map(|id| self.routes[id as usize]))
    }

    /// The entry bound to `label`.
    pub fn label(&self, label: u32) -> Option<&LabelEntry> {
        self.labels
            .lookup(label)
            .map(|i| &self.label_entries[i as usize])
    }

    /// Binds `label` to `entry`, adding or replacing; returns the entry it replaced.
    pub fn replace_label(
        &mut self,
        label: u32,
        entry: LabelEntry,
    ) -> Result<Option<LabelEntry>, FibError> {
        check_label(&self.adjacencies, &self.ecmp, label, &entry)?;
        match self.labels.lookup(label) {
            Some(i) => Ok(Some(std::mem::replace(
                &mut self.label_entries[i as usize],
                entry,
            ))),
            None => {
                self.label_entries.push(entry);
                self.label_keys.push(label);
                self.labels
                    .insert(label, (self.label_entries.len() - 1) as u32);
                Ok(None)
            }
        }
    }

    /// Unbinds `label`; returns its entry.
    pub fn remove_label(&mut self, label: u32) -> Option<LabelEntry> {
        if label >= 1 << 20 {
            return None;
        }
        let i = self.labels.remove(label)? as usize;
        let last = self.label_entries.len() - 1;
        if i != last {
            let moved = self.label_keys[last];
            self.labels.insert(moved, i as u32);
        }
        self.label_keys.swap_remove(i);
        Some(self.label_entries.swap_remove(i))
    }

    /// Number of IPv4 prefixes bound.
    pub fn ipv4_route_count(&self) -> usize {
        self.lpm.len()
    }

    /// Adjacencies so far (ids are indexes).
    pub fn adjacencies(&self) -> &[Adjacency] {
        &self.adjacencies
    }

    /// Freezes the result into a snapshot with this generation number.
    pub fn build(self, generation: u64) -> Fib {
        Fib {
            generation,
            ipv4_route_count: self.lpm.len(),
            lpm: self.lpm,
            lpm6: self.lpm6,
            direct: direct_routes(&self.routes, &self.adjacencies, Family::Ipv4),
            direct6: direct_routes(&self.routes, &self.adjacencies, Family::Ipv6),
            routes: self.routes,
            labels: self.labels,
            label_entries: self.label_entries,
            label_keys: self.label_keys,
            adjacencies: self.adjacencies,
            ecmp: self.ecmp,
            port_addrs: self.port_addrs,
            port_addrs6: self.port_addrs6,
            local: self.local,
        }
    }
}

#[cfg(test)]
#[path = "delta_tests.rs"]
mod tests;
