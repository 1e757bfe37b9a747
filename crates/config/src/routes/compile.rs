//! [`RouteSet`] + ports -> [`Fib`].
//!
//! Adds, per port, the connected subnets (`RouteTarget::Connected`: the slow path ARPs
//! for unknown hosts) and the router's own addresses (`/32`, `RouteTarget::Local`);
//! a `/32` per static neighbor so traffic to it needs no glean (unless the file routes
//! that `/32` itself); then the file's routes and labels. Adjacencies are shared by
//! (port, neighbor, label stack) and ECMP groups by their member list, so a full table
//! builds a few hundred of each. Input must come from [`super::parse_routes`] with the
//! same ports: a builder error here is a validation gap, reported as such.

use net::fib::{
    AdjId, Adjacency, Fib, FibBuilder, FibError, Ipv4Route, LabelEntry, NextHop, RouteTarget,
    TtlMode,
};

use super::{LabelSpec, NhSpec, RouteSet, RouteSpec, TargetSpec, UNKNOWN_PORT};
use crate::startup::PortIface;
use crate::types::{Cidr, FastMap as HashMap, FastSet as HashSet};

/// Why a validated set could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    #[error("routes were checked without ports; check them against the startup config")]
    NoPorts,
    #[error("next hop on port {0}, which does not exist")]
    UnknownPort(u16),
    #[error("internal validation gap: {0}")]
    Fib(#[from] FibError),
}

struct Ctx<'a> {
    b: FibBuilder,
    ports: &'a [PortIface],
    macs: HashMap<(u16, u32), [u8; 6]>,
    adjs: HashMap<(u16, u32, Vec<u32>), AdjId>,
    groups: HashMap<Vec<(AdjId, u32)>, u32>,
}

/// The adjacency reaching `nh`: its port's MAC and MTU, the neighbor's MAC if static.
pub(crate) fn adjacency(
    ports: &[PortIface],
    macs: &HashMap<(u16, u32), [u8; 6]>,
    nh: &NhSpec,
) -> Result<Adjacency, CompileError> {
    let p = ports
        .get(nh.port as usize)
        .filter(|_| nh.port != UNKNOWN_PORT)
        .ok_or(CompileError::UnknownPort(nh.port))?;
    let dst = macs.get(&(nh.port, nh.via)).copied();
    Ok(Adjacency::new(
        p.id,
        p.mtu,
        nh.via.to_be_bytes(),
        dst,
        p.mac,
        &nh.labels,
    ))
}

/// Static neighbor MACs by (port, address).
pub(crate) fn neighbor_macs(set: &RouteSet) -> HashMap<(u16, u32), [u8; 6]> {
    set.neighbors
        .iter()
        .map(|n| ((n.port, n.ip), n.mac))
        .collect()
}

impl Ctx<'_> {
    fn adj(&mut self, nh: &NhSpec) -> Result<AdjId, CompileError> {
        let k = (nh.port, nh.via, nh.labels.clone());
        if let Some(&a) = self.adjs.get(&k) {
            return Ok(a);
        }
        let a = self.b.add_adjacency(adjacency(self.ports, &self.macs, nh)?);
        self.adjs.insert(k, a);
        Ok(a)
    }

    fn next_hop(&mut self, nhs: &[NhSpec]) -> Result<NextHop, CompileError> {
        if let [one] = nhs {
            return Ok(NextHop::Adjacency(self.adj(one)?));
        }
        let mut members = Vec::with_capacity(nhs.len());
        for n in nhs {
            members.push((self.adj(n)?, n.weight));
        }
        if let Some(&g) = self.groups.get(&members) {
            return Ok(NextHop::Ecmp(g));
        }
        let g = self.b.add_ecmp(&members)?;
        self.groups.insert(members, g);
        Ok(NextHop::Ecmp(g))
    }
}

/// Builds a snapshot with this generation number.
pub fn compile(set: &RouteSet, ports: &[PortIface], generation: u64) -> Result<Fib, CompileError> {
    if !set.ports_checked {
        return Err(CompileError::NoPorts);
    }
    let mut c = Ctx {
        b: FibBuilder::new(),
        ports,
        macs: neighbor_macs(set),
        adjs: HashMap::default(),
        groups: HashMap::default(),
    };
    let uniform = |target| Ipv4Route {
        target,
        ttl_mode: TtlMode::Uniform,
    };
    let mut taken: HashSet<Cidr> = HashSet::default();
    for p in ports {
        if let Some(first) = p.addresses.first() {
            c.b.set_port_address(p.id, first.addr.to_be_bytes());
        }
        for a in &p.addresses {
            let host = Cidr {
                addr: a.addr,
                len: 32,
            };
            if a.len < 32 && taken.insert(a.network()) {
                let n = a.network();
                c.b.add_ipv4_route(
                    n.addr,
                    n.len,
                    uniform(RouteTarget::Connected { port: p.id }),
                )?;
            }
            if taken.insert(host) {
                c.b.add_ipv4_route(a.addr, 32, uniform(RouteTarget::Local))?;
            }
        }
    }
    let user: HashSet<Cidr> = set
        .ipv4
        .iter()
        .filter(|(p, _)| p.len == 32)
        .map(|(p, _)| *p)
        .collect();
    for n in &set.neighbors {
        let host = Cidr {
            addr: n.ip,
            len: 32,
        };
        if !user.contains(&host) && taken.insert(host) {
            let nh = c.next_hop(&[NhSpec {
                port: n.port,
                via: n.ip,
                labels: Vec::new(),
                weight: 1,
            }])?;
            c.b.add_ipv4_route(n.ip, 32, uniform(RouteTarget::NextHop(nh)))?;
        }
    }
    let mut routes: Vec<Option<Ipv4Route>> = vec![None; set.specs.len()];
    for &(prefix, id) in &set.ipv4 {
        let route = match routes[id as usize] {
            Some(r) => r,
            None => {
                let r = route_of(&set.specs[id as usize], |nhs| c.next_hop(nhs))?;
                routes[id as usize] = Some(r);
                r
            }
        };
        c.b.add_ipv4_route(prefix.addr, prefix.len, route)?;
    }
    for (label, spec) in &set.labels {
        let entry = label_entry_of(spec, |nhs| c.next_hop(nhs))?;
        c.b.add_label(*label, entry)?;
    }
    Ok(c.b.build(generation))
}

/// The table route for a validated route spec; `next_hop` turns next-hop specs into an
/// adjacency or ECMP group of the table being built (from scratch or derived).
pub(crate) fn route_of(
    spec: &RouteSpec,
    mut next_hop: impl FnMut(&[NhSpec]) -> Result<NextHop, CompileError>,
) -> Result<Ipv4Route, CompileError> {
    let target = match &spec.target {
        TargetSpec::Local => RouteTarget::Local,
        TargetSpec::Blackhole => RouteTarget::Blackhole,
        TargetSpec::NextHops(nhs) => RouteTarget::NextHop(next_hop(nhs)?),
    };
    Ok(Ipv4Route {
        target,
        ttl_mode: spec.ttl,
    })
}

/// The table entry for a validated label spec (see [`route_of`] for `next_hop`).
pub(crate) fn label_entry_of(
    spec: &LabelSpec,
    mut next_hop: impl FnMut(&[NhSpec]) -> Result<NextHop, CompileError>,
) -> Result<LabelEntry, CompileError> {
    let next_hop = if spec.nexthops.is_empty() {
        None
    } else {
        Some(next_hop(&spec.nexthops)?)
    };
    Ok(LabelEntry {
        op: spec.op,
        next_hop,
        ttl_mode: spec.ttl,
    })
}
