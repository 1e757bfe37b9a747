//! [`RouteSet`] + ports -> [`Fib`].
//!
//! Adds, per port, the connected subnets (`RouteTarget::Connected`: the slow path ARPs
//! for unknown hosts) and the router's own addresses (`/32`, `RouteTarget::Local`);
//! a `/32` per static neighbor so traffic to it needs no glean (unless the file routes
//! that `/32` itself); then the file's routes and labels. Adjacencies are shared by
//! (port, neighbor, label stack) and ECMP groups by their member list, so a full table
//! builds a few hundred of each. IPv6 follows the same rules: connected subnets and
//! `/128` local addresses per port (a link-local address gets only its `/128`), a
//! `/128` per static IPv6 neighbor, then the `ipv6` routes. Input must come from [`super::parse_routes`] with the
//! same ports: a builder error here is a validation gap, reported as such.

use net::fib::{
    AdjId, Adjacency, Family, Fib, FibBuilder, FibError, Ipv4Route, LabelEntry, NextHop,
    RouteTarget, TtlMode,
};

use super::{LabelSpec, NhSpec, RouteSet, RouteSpec, TargetSpec, UNKNOWN_PORT};
use crate::startup::PortIface;
use crate::types::{is_link_local6, Cidr, Cidr6, FastMap as HashMap, FastSet as HashSet};

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

/// Static neighbor MACs by (port, address), per family.
#[derive(Default)]
pub(crate) struct Macs {
    v4: HashMap<(u16, u32), [u8; 6]>,
    v6: HashMap<(u16, u128), [u8; 6]>,
}

/// What makes two next hops one adjacency.
type AdjKey = (u16, u32, Option<u128>, Family, Vec<u32>);

struct Ctx<'a> {
    b: FibBuilder,
    ports: &'a [PortIface],
    macs: Macs,
    adjs: HashMap<AdjKey, AdjId>,
    groups: HashMap<Vec<(AdjId, u32)>, u32>,
}

/// The adjacency reaching `nh`: its port's MAC and MTU, the neighbor's MAC if static.
pub(crate) fn adjacency(
    ports: &[PortIface],
    macs: &Macs,
    nh: &NhSpec,
) -> Result<Adjacency, CompileError> {
    let p = ports
        .get(nh.port as usize)
        .filter(|_| nh.port != UNKNOWN_PORT)
        .ok_or(CompileError::UnknownPort(nh.port))?;
    Ok(match nh.via6 {
        Some(a) => {
            let dst = macs.v6.get(&(nh.port, a)).copied();
            Adjacency::new_v6(p.id, p.mtu, a.to_be_bytes(), dst, p.mac, &nh.labels)
        }
        None => {
            let dst = macs.v4.get(&(nh.port, nh.via)).copied();
            let a = Adjacency::new(p.id, p.mtu, nh.via.to_be_bytes(), dst, p.mac, &nh.labels);
            if nh.payload == Family::Ipv4 {
                a
            } else {
                a.with_payload(nh.payload)
            }
        }
    })
}

/// Static neighbor MACs by (port, address).
pub(crate) fn neighbor_macs(set: &RouteSet) -> Macs {
    Macs {
        v4: set
            .neighbors
            .iter()
            .map(|n| ((n.port, n.ip), n.mac))
            .collect(),
        v6: set
            .neighbors6
            .iter()
            .map(|n| ((n.port, n.ip), n.mac))
            .collect(),
    }
}

/// The next hop of a static neighbor's own host route.
pub(crate) fn neighbor_nh(port: u16, via: u32, via6: Option<u128>) -> NhSpec {
    NhSpec {
        port,
        via,
        via6,
        labels: Vec::new(),
        weight: 1,
        payload: if via6.is_some() {
            Family::Ipv6
        } else {
            Family::Ipv4
        },
    }
}

impl Ctx<'_> {
    fn adj(&mut self, nh: &NhSpec) -> Result<AdjId, CompileError> {
        let k = (nh.port, nh.via, nh.via6, nh.payload, nh.labels.clone());
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
            let nh = c.next_hop(&[neighbor_nh(n.port, n.ip, None)])?;
            c.b.add_ipv4_route(n.ip, 32, uniform(RouteTarget::NextHop(nh)))?;
        }
    }
    system_routes6(&mut c, set)?;
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
    for &(prefix, id) in &set.ipv6 {
        let route = match routes[id as usize] {
            Some(r) => r,
            None => {
                let r = route_of(&set.specs[id as usize], |nhs| c.next_hop(nhs))?;
                routes[id as usize] = Some(r);
                r
            }
        };
        c.b.add_ipv6_route(prefix.addr, prefix.len, route)?;
    }
    for (label, spec) in &set.labels {
        let entry = label_entry_of(spec, |nhs| c.next_hop(nhs))?;
        c.b.add_label(*label, entry)?;
    }
    Ok(c.b.build(generation))
}

/// The IPv6 routes `compile` adds itself: per port its subnets and `/128` addresses,
/// and a `/128` per static neighbor the file does not route itself.
fn system_routes6(c: &mut Ctx, set: &RouteSet) -> Result<(), CompileError> {
    let uniform = |target| Ipv4Route {
        target,
        ttl_mode: TtlMode::Uniform,
    };
    let mut taken: HashSet<Cidr6> = HashSet::default();
    for p in c.ports {
        let global = p.addresses6.iter().find(|a| !is_link_local6(a.addr));
        if let Some(a) = global.or(p.addresses6.first()) {
            c.b.set_port_address6(p.id, a.addr.to_be_bytes());
        }
        for a in &p.addresses6 {
            let net = a.network();
            if a.len < 128 && !is_link_local6(a.addr) && taken.insert(net) {
                let t = uniform(RouteTarget::Connected { port: p.id });
                c.b.add_ipv6_route(net.addr, net.len, t)?;
            }
            let host = Cidr6 {
                addr: a.addr,
                len: 128,
            };
            if taken.insert(host) {
                c.b.add_ipv6_route(a.addr, 128, uniform(RouteTarget::Local))?;
            }
        }
    }
    let user: HashSet<Cidr6> = set
        .ipv6
        .iter()
        .filter(|(p, _)| p.len == 128)
        .map(|(p, _)| *p)
        .collect();
    for n in &set.neighbors6 {
        let host = Cidr6 {
            addr: n.ip,
            len: 128,
        };
        if !user.contains(&host) && !is_link_local6(n.ip) && taken.insert(host) {
            let nh = c.next_hop(&[neighbor_nh(n.port, 0, Some(n.ip))])?;
            c.b.add_ipv6_route(n.ip, 128, uniform(RouteTarget::NextHop(nh)))?;
        }
    }
    Ok(())
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
