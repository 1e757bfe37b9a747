//! Building a [`Fib`] snapshot from scratch.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// Hasher for keys that are one integer: a multiply spreads it over the high bits,
/// which hashbrown uses. Not DoS-resistant: keys come from the operator's own config.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, k: u64) {
        self.0 = (self.0 ^ k)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(26);
    }
}

use super::direct::direct_routes;
use super::{
    mask6, AdjId, Adjacency, EcmpError, EcmpGroup, EcmpId, Family, Fib, Ipv4Route, Ipv6Route,
    LabelEntry, LabelOp, LabelTable, Lpm4, Lpm6, NextHop, RouteTarget, MAX_LABEL,
    MIN_UNRESERVED_LABEL,
};

/// Why the builder refused an entry. The config layer validates first and maps these to
/// file positions; reaching one of these from config input is a validation gap.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FibError {
    #[error("prefix {addr}/{len} has host bits set or a length over 32")]
    BadPrefix { addr: std::net::Ipv4Addr, len: u8 },
    #[error("duplicate prefix {addr}/{len}")]
    DuplicatePrefix { addr: std::net::Ipv4Addr, len: u8 },
    #[error("IPv6 prefix {addr}/{len} has host bits set or a length over 128")]
    BadPrefix6 { addr: std::net::Ipv6Addr, len: u8 },
    #[error("duplicate IPv6 prefix {addr}/{len}")]
    DuplicatePrefix6 { addr: std::net::Ipv6Addr, len: u8 },
    #[error("label {0} is outside {MIN_UNRESERVED_LABEL}..={MAX_LABEL}")]
    BadInLabel(u32),
    #[error("duplicate in-label {0}")]
    DuplicateLabel(u32),
    #[error("unknown adjacency id {0}")]
    UnknownAdjacency(AdjId),
    #[error("unknown ECMP group id {0}")]
    UnknownEcmp(EcmpId),
    #[error("label operation {op:?} on label {label} needs a next hop")]
    MissingNextHop { label: u32, op: LabelOp },
    #[error("swap on label {0} needs an adjacency that pushes at least one label")]
    SwapWithoutLabel(u32),
    #[error(transparent)]
    Ecmp(#[from] EcmpError),
}

/// Collects adjacencies, ECMP groups, routes and labels, then freezes them into a [`Fib`].
#[derive(Debug, Default)]
pub struct FibBuilder {
    /// IPv4 prefixes as (addr, len, route id), bulk-loaded into the [`Lpm4`] by `build`.
    prefixes: Vec<(u32, u8, u32)>,
    /// Duplicate check: one probe per prefix, keyed by `addr << 6 | len` (a u64, hashed
    /// by a multiply: SipHash over a million keys was a visible share of a full build).
    prefix_set: HashSet<u64, BuildHasherDefault<KeyHasher>>,
    /// IPv6 prefixes as (addr, len, route id); duplicates are caught by the set beside.
    prefixes6: Vec<(u128, u8, u32)>,
    prefix6_set: HashSet<(u128, u8)>,
    routes: Vec<Ipv4Route>,
    route_ids: HashMap<Ipv4Route, u32>,
    labels: LabelTable,
    label_entries: Vec<LabelEntry>,
    label_keys: Vec<u32>,
    adjacencies: Vec<Adjacency>,
    ecmp: Vec<EcmpGroup>,
    port_addrs: Vec<Option<[u8; 4]>>,
    port_addrs6: Vec<Option<[u8; 16]>>,
    ipv4_route_count: usize,
}

impl FibBuilder {
    /// An empty builder.
    pub fn new() -> FibBuilder {
        FibBuilder::default()
    }

    /// Adds an adjacency and returns its id.
    pub fn add_adjacency(&mut self, adj: Adjacency) -> AdjId {
        self.adjacencies.push(adj);
        (self.adjacencies.len() - 1) as AdjId
    }

    /// Adds a weighted ECMP group over existing adjacencies and returns its id.
    pub fn add_ecmp(&mut self, members: &[(AdjId, u32)]) -> Result<EcmpId, FibError> {
        for &(a, _) in members {
            self.check_adj(a)?;
        }
        self.ecmp.push(EcmpGroup::new(members)?);
        Ok((self.ecmp.len() - 1) as EcmpId)
    }

    /// Records the router's own address on `port` (source of the ICMP it generates).
    pub fn set_port_address(&mut self, port: u16, addr: [u8; 4]) {
        let p = port as usize;
        if self.port_addrs.len() <= p {
            self.port_addrs.resize(p + 1, None);
        }
        self.port_addrs[p] = Some(addr);
    }

    /// Records the router's IPv6 address on `port` (source of the ICMPv6 it generates).
    pub fn set_port_address6(&mut self, port: u16, addr: [u8; 16]) {
        let p = port as usize;
        if self.port_addrs6.len() <= p {
            self.port_addrs6.resize(p + 1, None);
        }
        self.port_addrs6[p] = Some(addr);
    }

    /// Adds the IPv4 route `addr/len` (host byte order).
    pub fn add_ipv4_route(&mut self, addr: u32, len: u8, route: Ipv4Route) -> Result<(), FibError> {
        let ip = std::net::Ipv4Addr::from(addr);
        if len > 32 || (len < 32 && addr & (u32::MAX >> len) != 0) {
            return Err(FibError::BadPrefix { addr: ip, len });
        }
        let id = self.intern_route(route)?;
        if !self
            .prefix_set
            .insert(u64::from(addr) << 6 | u64::from(len))
        {
            return Err(FibError::DuplicatePrefix { addr: ip, len });
        }
        self.prefixes.push((addr, len, id));
        self.ipv4_route_count += 1;
        Ok(())
    }

    /// Adds the IPv6 route `addr/len` (the address as a big-endian 128-bit integer).
    pub fn add_ipv6_route(
        &mut self,
        addr: u128,
        len: u8,
        route: Ipv6Route,
    ) -> Result<(), FibError> {
        check_prefix6(addr, len)?;
        let id = self.intern_route(route)?;
        if !self.prefix6_set.insert((addr, len)) {
            return Err(FibError::DuplicatePrefix6 {
                addr: addr.into(),
                len,
            });
        }
        self.prefixes6.push((addr, len, id));
        Ok(())
    }

    /// The id of `route`, adding it if new (both families share the ids).
    fn intern_route(&mut self, route: Ipv4Route) -> Result<u32, FibError> {
        if let RouteTarget::NextHop(nh) = route.target {
            self.check_next_hop(nh)?;
        }
        Ok(match self.route_ids.get(&route) {
            Some(&id) => id,
            None => {
                self.routes.push(route);
                let id = (self.routes.len() - 1) as u32;
                self.route_ids.insert(route, id);
                id
            }
        })
    }

    /// Binds an in-label to an entry.
    pub fn add_label(&mut self, label: u32, entry: LabelEntry) -> Result<(), FibError> {
        if (MIN_UNRESERVED_LABEL..=MAX_LABEL).contains(&label)
            && self.labels.lookup(label).is_some()
        {
            return Err(FibError::DuplicateLabel(label));
        }
        check_label(&self.adjacencies, &self.ecmp, label, &entry)?;
        self.label_entries.push(entry);
        self.label_keys.push(label);
        self.labels
            .insert(label, (self.label_entries.len() - 1) as u32);
        Ok(())
    }

    fn check_adj(&self, a: AdjId) -> Result<(), FibError> {
        check_adj(&self.adjacencies, a)
    }

    fn check_next_hop(&self, nh: NextHop) -> Result<(), FibError> {
        check_next_hop(&self.adjacencies, &self.ecmp, nh)
    }

    /// Freezes the tables into a snapshot with this generation number.
    pub fn build(self, generation: u64) -> Fib {
        Fib {
            generation,
            lpm: Lpm4::from_prefixes(self.prefixes),
            lpm6: std::sync::Arc::new(Lpm6::from_prefixes(self.prefixes6)),
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
            ipv4_route_count: self.ipv4_route_count,
            local: None,
        }
    }
}

/// Fewest labels any adjacency of `nh` pushes (a swap needs at least one).
pub(super) fn min_push(adjs: &[Adjacency], ecmp: &[EcmpGroup], nh: NextHop) -> usize {
    match nh {
        NextHop::Adjacency(a) => adjs[a as usize].push_bytes(),
        NextHop::Ecmp(g) => ecmp[g as usize]
            .members()
            .iter()
            .map(|&(a, _)| adjs[a as usize].push_bytes())
            .min()
            .unwrap_or(0),
    }
}

pub(super) fn check_adj(adjs: &[Adjacency], a: AdjId) -> Result<(), FibError> {
    if (a as usize) < adjs.len() {
        Ok(())
    } else {
        Err(FibError::UnknownAdjacency(a))
    }
}

pub(super) fn check_next_hop(
    adjs: &[Adjacency],
    ecmp: &[EcmpGroup],
    nh: NextHop,
) -> Result<(), FibError> {
    match nh {
        NextHop::Adjacency(a) => check_adj(adjs, a),
        NextHop::Ecmp(g) if (g as usize) < ecmp.len() => Ok(()),
        NextHop::Ecmp(g) => Err(FibError::UnknownEcmp(g)),
    }
}

/// Checks a prefix: no host bits, length at most 32.
pub(super) fn check_prefix(addr: u32, len: u8) -> Result<(), FibError> {
    if len > 32 || (len < 32 && addr & (u32::MAX >> len) != 0) {
        return Err(FibError::BadPrefix {
            addr: addr.into(),
            len,
        });
    }
    Ok(())
}

/// Checks an IPv6 prefix: no host bits, length at most 128.
pub(super) fn check_prefix6(addr: u128, len: u8) -> Result<(), FibError> {
    if len > 128 || addr & !mask6(len) != 0 {
        return Err(FibError::BadPrefix6 {
            addr: addr.into(),
            len,
        });
    }
    Ok(())
}

/// Checks a label entry against the adjacencies and groups it refers to.
pub(super) fn check_label(
    adjs: &[Adjacency],
    ecmp: &[EcmpGroup],
    label: u32,
    entry: &LabelEntry,
) -> Result<(), FibError> {
    if !(MIN_UNRESERVED_LABEL..=MAX_LABEL).contains(&label) {
        return Err(FibError::BadInLabel(label));
    }
    match (entry.op, entry.next_hop) {
        (LabelOp::PopAndLookup, _) => Ok(()),
        (op, None) => Err(FibError::MissingNextHop { label, op }),
        (op, Some(nh)) => {
            check_next_hop(adjs, ecmp, nh)?;
            if op == LabelOp::Swap && min_push(adjs, ecmp, nh) == 0 {
                return Err(FibError::SwapWithoutLabel(label));
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fib::TtlMode;

    fn adj(labels: &[u32]) -> Adjacency {
        Adjacency::new(1, 1500, [10, 0, 0, 2], Some([2; 6]), [1; 6], labels)
    }

    #[test]
    fn routes_are_interned_and_looked_up() {
        let mut b = FibBuilder::new();
        let a = b.add_adjacency(adj(&[]));
        let r = Ipv4Route {
            target: RouteTarget::NextHop(NextHop::Adjacency(a)),
            ttl_mode: TtlMode::Uniform,
        };
        b.add_ipv4_route(0x0a000000, 8, r).unwrap();
        b.add_ipv4_route(0x0b000000, 8, r).unwrap();
        assert_eq!(
            b.add_ipv4_route(0x0b000000, 8, r),
            Err(FibError::DuplicatePrefix {
                addr: [11, 0, 0, 0].into(),
                len: 8
            })
        );
        assert!(matches!(
            b.add_ipv4_route(0x0b000001, 8, r),
            Err(FibError::BadPrefix { .. })
        ));
        let fib = b.build(3);
        assert_eq!(fib.generation(), 3);
        assert_eq!(fib.routes.len(), 1);
        let id = fib.lookup_ipv4(0x0a010203).unwrap();
        assert_eq!(*fib.route(id), r);
        assert_eq!(fib.lookup_ipv4(0x0c000000), None);
        assert_eq!(fib.stats().ipv4_routes, 2);
    }

    #[test]
    fn ipv6_routes_share_route_ids_with_ipv4() {
        let mut b = FibBuilder::new();
        let a = b.add_adjacency(adj(&[100]));
        let r = Ipv4Route {
            target: RouteTarget::NextHop(NextHop::Adjacency(a)),
            ttl_mode: TtlMode::Uniform,
        };
        let p: u128 = 0x2001_0db8 << 96;
        b.add_ipv4_route(0x0a000000, 8, r).unwrap();
        b.add_ipv6_route(p, 32, r).unwrap();
        b.add_ipv6_route(
            0,
            0,
            Ipv6Route {
                target: RouteTarget::Blackhole,
                ..r
            },
        )
        .unwrap();
        assert_eq!(
            b.add_ipv6_route(p, 32, r),
            Err(FibError::DuplicatePrefix6 {
                addr: p.into(),
                len: 32
            })
        );
        assert!(matches!(
            b.add_ipv6_route(p | 1, 32, r),
            Err(FibError::BadPrefix6 { .. })
        ));
        assert!(matches!(
            b.add_ipv6_route(p, 129, r),
            Err(FibError::BadPrefix6 { .. })
        ));
        let fib = b.build(1);
        assert_eq!(fib.routes.len(), 2);
        let id = fib.lookup_ipv6(p | 0xffff).unwrap();
        assert_eq!(id, fib.lookup_ipv4(0x0a000001).unwrap());
        assert_eq!(
            fib.route(fib.lookup_ipv6(1).unwrap()).target,
            RouteTarget::Blackhole
        );
        let mut out = [0; 2];
        fib.lookup_ipv6_batch(&[p, 1], &mut out);
        assert_eq!(out[0], id);
        let s = fib.stats();
        assert_eq!((s.ipv4_routes, s.ipv6_routes), (1, 2));
        assert!(s.lpm6_bytes > 0 && s.bytes > s.lpm6_bytes);
        assert_eq!(fib.port_address6(0), None);
    }

    #[test]
    fn label_entries_are_checked() {
        let mut b = FibBuilder::new();
        let plain = b.add_adjacency(adj(&[]));
        let push = b.add_adjacency(adj(&[200]));
        let swap = LabelEntry {
            op: LabelOp::Swap,
            next_hop: Some(NextHop::Adjacency(push)),
            ttl_mode: TtlMode::Uniform,
        };
        b.add_label(100, swap).unwrap();
        assert_eq!(b.add_label(100, swap), Err(FibError::DuplicateLabel(100)));
        assert_eq!(b.add_label(15, swap), Err(FibError::BadInLabel(15)));
        let bad_swap = LabelEntry {
            next_hop: Some(NextHop::Adjacency(plain)),
            ..swap
        };
        assert_eq!(
            b.add_label(101, bad_swap),
            Err(FibError::SwapWithoutLabel(101))
        );
        let fib = b.build(1);
        assert_eq!(fib.lookup_label(100), Some(&swap));
        assert_eq!(fib.lookup_label(101), None);
    }
}
