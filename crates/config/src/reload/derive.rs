//! Applying a small diff to the last table instead of compiling the whole set.
//!
//! A full compile of a full view takes a few hundred milliseconds, almost all of it
//! rebuilding prefixes that did not change. When only some prefixes and labels changed
//! (and neighbors and ports did not), [`derive`] patches them into a clone of the last
//! table ([`Fib::derive`]): time proportional to the edit.
//!
//! The result must be the table [`crate::compile`] would build from the same set, in
//! what it answers. So the rules of `compile` are repeated here for the prefixes it adds
//! itself: a changed prefix that is a port's subnet or address is left to the full
//! compile (`None`), and removing a user `/32` over a static neighbor restores the
//! neighbor's own `/32`.

use net::fib::{Fib, FibDelta, Ipv4Route, NextHop, RouteTarget, TtlMode};

use crate::routes::compile::{
    adjacency, label_entry_of, neighbor_macs, neighbor_nh, route_of, Macs,
};
use crate::routes::{CompileError, LabelSpec, NhSpec, RouteSet};
use crate::startup::PortIface;
use crate::types::{is_link_local6, Cidr, Cidr6, FastMap};

/// What changed between the set the last table was built from and the new one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RouteChanges {
    /// Prefixes gone from the new set.
    pub ipv4_removed: Vec<Cidr>,
    /// Prefixes added or changed, with their spec id in the new set.
    pub ipv4_set: Vec<(Cidr, u32)>,
    /// The same for IPv6.
    pub ipv6_removed: Vec<Cidr6>,
    pub ipv6_set: Vec<(Cidr6, u32)>,
    pub labels_removed: Vec<u32>,
    /// Labels added or changed.
    pub labels_set: Vec<(u32, LabelSpec)>,
}

impl RouteChanges {
    pub fn len(&self) -> usize {
        self.ipv4_removed.len()
            + self.ipv4_set.len()
            + self.ipv6_removed.len()
            + self.ipv6_set.len()
            + self.labels_removed.len()
            + self.labels_set.len()
    }
}

struct Ctx<'a> {
    d: FibDelta,
    ports: &'a [PortIface],
    macs: Macs,
}

impl Ctx<'_> {
    fn next_hop(&mut self, nhs: &[NhSpec]) -> Result<NextHop, CompileError> {
        if let [one] = nhs {
            let a = adjacency(self.ports, &self.macs, one)?;
            return Ok(NextHop::Adjacency(self.d.intern_adjacency(a)));
        }
        let mut members = Vec::with_capacity(nhs.len());
        for n in nhs {
            let a = adjacency(self.ports, &self.macs, n)?;
            members.push((self.d.intern_adjacency(a), n.weight));
        }
        Ok(NextHop::Ecmp(self.d.intern_ecmp(&members)?))
    }
}

/// The next table: `base` (built from the previous set) with `changes` applied, or
/// `None` when a change needs the full compile.
pub(crate) fn derive(
    base: &Fib,
    set: &RouteSet,
    changes: &RouteChanges,
    ports: &[PortIface],
    generation: u64,
) -> Result<Option<Fib>, CompileError> {
    if !set.ports_checked {
        return Err(CompileError::NoPorts);
    }
    let system = |c: &Cidr| {
        ports
            .iter()
            .flat_map(|p| &p.addresses)
            .any(|a| (c.len == 32 && c.addr == a.addr) || (a.len < 32 && *c == a.network()))
    };
    if changes
        .ipv4_removed
        .iter()
        .chain(changes.ipv4_set.iter().map(|(c, _)| c))
        .any(system)
    {
        return Ok(None);
    }
    let system6 = |c: &Cidr6| {
        ports.iter().flat_map(|p| &p.addresses6).any(|a| {
            (c.len == 128 && c.addr == a.addr)
                || (a.len < 128 && !is_link_local6(a.addr) && *c == a.network())
        })
    };
    if changes
        .ipv6_removed
        .iter()
        .chain(changes.ipv6_set.iter().map(|(c, _)| c))
        .any(system6)
    {
        return Ok(None);
    }
    let mut c = Ctx {
        d: base.derive(),
        ports,
        macs: neighbor_macs(set),
    };
    for p in &changes.ipv4_removed {
        let neighbor = (p.len == 32)
            .then(|| set.neighbors.iter().find(|n| n.ip == p.addr))
            .flatten();
        match neighbor {
            Some(n) => {
                let nh = c.next_hop(&[neighbor_nh(n.port, n.ip, None)])?;
                let r = Ipv4Route {
                    target: RouteTarget::NextHop(nh),
                    ttl_mode: TtlMode::Uniform,
                };
                c.d.replace_ipv4_route(p.addr, p.len, r)?;
            }
            None => {
                c.d.remove_ipv4_route(p.addr, p.len)?;
            }
        }
    }
    let mut routes: FastMap<u32, Ipv4Route> = FastMap::default();
    for &(p, id) in &changes.ipv4_set {
        let route = match routes.get(&id) {
            Some(r) => *r,
            None => {
                let r = route_of(&set.specs[id as usize], |nhs| c.next_hop(nhs))?;
                routes.insert(id, r);
                r
            }
        };
        c.d.replace_ipv4_route(p.addr, p.len, route)?;
    }
    apply_ipv6(&mut c, set, changes)?;
    for l in &changes.labels_removed {
        c.d.remove_label(*l);
    }
    for (label, spec) in &changes.labels_set {
        let entry = label_entry_of(spec, |nhs| c.next_hop(nhs))?;
        c.d.replace_label(*label, entry)?;
    }
    Ok(Some(c.d.build(generation)))
}

/// The IPv6 part of [`derive`]: as for IPv4, a removed user `/128` over a static
/// neighbor gives the neighbor its own `/128` back.
fn apply_ipv6(c: &mut Ctx, set: &RouteSet, changes: &RouteChanges) -> Result<(), CompileError> {
    for p in &changes.ipv6_removed {
        let neighbor = (p.len == 128 && !is_link_local6(p.addr))
            .then(|| set.neighbors6.iter().find(|n| n.ip == p.addr))
            .flatten();
        match neighbor {
            Some(n) => {
                let nh = c.next_hop(&[neighbor_nh(n.port, 0, Some(n.ip))])?;
                let r = Ipv4Route {
                    target: RouteTarget::NextHop(nh),
                    ttl_mode: TtlMode::Uniform,
                };
                c.d.replace_ipv6_route(p.addr, p.len, r)?;
            }
            None => {
                c.d.remove_ipv6_route(p.addr, p.len)?;
            }
        }
    }
    let mut routes: FastMap<u32, Ipv4Route> = FastMap::default();
    for &(p, id) in &changes.ipv6_set {
        let route = match routes.get(&id) {
            Some(r) => *r,
            None => {
                let r = route_of(&set.specs[id as usize], |nhs| c.next_hop(nhs))?;
                routes.insert(id, r);
                r
            }
        };
        c.d.replace_ipv6_route(p.addr, p.len, route)?;
    }
    Ok(())
}
