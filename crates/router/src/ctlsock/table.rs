//! The table as operators read it: routes, label entries and neighbours of one snapshot,
//! with names instead of ids. Pure (a snapshot and the source book in, views out).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Instant;

use fpm::Key;
use net::fib::{Fib, Ipv4Route, Ipv6Route, LabelEntry, LabelOp, NextHop, RouteTarget, TtlMode};

use super::board::NeighborEntry;
use super::book::SourceBook;
use super::proto::{HopView, LabelView, NeighborView, RouteView, Source};
use crate::slowpath::StaticNeighbors;

/// What turns ids into names.
pub struct Names<'a> {
    pub ports: &'a [String],
    pub book: &'a SourceBook,
}

pub fn mac_str(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

impl Names<'_> {
    pub fn port(&self, id: u16) -> String {
        self.ports
            .get(id as usize)
            .cloned()
            .unwrap_or_else(|| format!("port{id}"))
    }

    /// The members of a next hop with their weights.
    pub fn hops(&self, fib: &Fib, nh: NextHop) -> Vec<HopView> {
        let members = match nh {
            NextHop::Adjacency(a) => vec![(a, 1)],
            NextHop::Ecmp(g) => fib.ecmp_group(g).members().to_vec(),
        };
        members
            .into_iter()
            .map(|(a, weight)| {
                let adj = fib.adjacency(a);
                let via = match adj.neighbor6 {
                    Some(n) => Ipv6Addr::from(n).to_string(),
                    None => Ipv4Addr::from(adj.neighbor).to_string(),
                };
                HopView {
                    port: self.port(adj.port),
                    via,
                    mac: adj.dst_mac.map(mac_str),
                    labels: adj.labels().to_vec(),
                    weight,
                }
            })
            .collect()
    }

    fn route_source(&self, fib: &Fib, addr: u32, len: u8, r: &Ipv4Route) -> Source {
        if self.book.is_fpm(Key::Ipv4 { addr, len }) {
            return Source::Fpm;
        }
        if let (32, RouteTarget::NextHop(NextHop::Adjacency(a))) = (len, r.target) {
            let adj = fib.adjacency(a);
            if u32::from_be_bytes(adj.neighbor) == addr
                && self.book.learned_at(adj.port, addr).is_some()
            {
                return Source::Arp;
            }
        }
        Source::Yaml
    }

    /// An IPv6 route's source: FPM's, a learned neighbour's /128 (`arp`: learned by
    /// NDP), or the routes file's.
    fn route6_source(&self, fib: &Fib, addr: u128, len: u8, r: &Ipv6Route) -> Source {
        if self.book.is_fpm(Key::Ipv6 { addr, len }) {
            return Source::Fpm;
        }
        if let (128, RouteTarget::NextHop(NextHop::Adjacency(a))) = (len, r.target) {
            let adj = fib.adjacency(a);
            if adj.neighbor6.map(u128::from_be_bytes) == Some(addr)
                && self.book.learned6_at(adj.port, addr).is_some()
            {
                return Source::Arp;
            }
        }
        Source::Yaml
    }

    pub fn route(&self, fib: &Fib, addr: u32, len: u8, r: &Ipv4Route) -> RouteView {
        let source = self.route_source(fib, addr, len, r);
        self.view(fib, format!("{}/{len}", Ipv4Addr::from(addr)), r, source)
    }

    pub fn route6(&self, fib: &Fib, addr: u128, len: u8, r: &Ipv6Route) -> RouteView {
        let source = self.route6_source(fib, addr, len, r);
        self.view(fib, format!("{}/{len}", Ipv6Addr::from(addr)), r, source)
    }

    fn view(&self, fib: &Fib, prefix: String, r: &Ipv4Route, source: Source) -> RouteView {
        let (target, port, next_hops) = match r.target {
            RouteTarget::NextHop(nh) => ("forward", None, self.hops(fib, nh)),
            RouteTarget::Local => ("local", None, Vec::new()),
            RouteTarget::Connected { port } => ("connected", Some(self.port(port)), Vec::new()),
            RouteTarget::Blackhole => ("blackhole", None, Vec::new()),
        };
        let (ttl_mode, pipe_ttl) = ttl(r.ttl_mode);
        RouteView {
            prefix,
            target: target.into(),
            port,
            next_hops,
            ttl_mode,
            pipe_ttl,
            source,
        }
    }

    pub fn label(&self, fib: &Fib, label: u32, e: &LabelEntry) -> LabelView {
        let (action, payload) = match e.op {
            LabelOp::Swap => ("swap", "labelled"),
            LabelOp::Pop => ("pop", "as_received_below_top"),
            LabelOp::PopAndLookup => ("pop_and_lookup", "looked_up"),
        };
        let (ttl_mode, pipe_ttl) = ttl(e.ttl_mode);
        LabelView {
            label,
            action: action.into(),
            next_hops: e.next_hop.map(|nh| self.hops(fib, nh)).unwrap_or_default(),
            ttl_mode,
            pipe_ttl,
            payload: payload.into(),
            source: if self.book.is_fpm(Key::Label(label)) {
                Source::Fpm
            } else {
                Source::Yaml
            },
        }
    }

    /// IPv4 routes in the table by source (every source, zeros included).
    pub fn routes_by_source(&self, fib: &Fib) -> Vec<(Source, u64)> {
        let mut n = [(Source::Yaml, 0), (Source::Fpm, 0), (Source::Arp, 0)];
        for (a, l, r) in fib.ipv4_routes_under(0, 0) {
            let s = self.route_source(fib, a, l, r);
            if let Some(x) = n.iter_mut().find(|x| x.0 == s) {
                x.1 += 1;
            }
        }
        n.to_vec()
    }

    /// Every neighbour, by port then address: the static ones, the slow path's
    /// (`learned`: resolved, stale or incomplete, with their age), and those the table's
    /// adjacencies point at that neither knows (resolved by ARP before the slow path's
    /// last copy, or incomplete: nobody is resolving them now).
    pub fn neighbors(
        &self,
        fib: &Fib,
        statics: &StaticNeighbors,
        learned: Option<&[NeighborEntry]>,
        now: Instant,
    ) -> Vec<NeighborView> {
        let mut seen = std::collections::BTreeMap::new();
        for ((port, ip), mac) in statics.all() {
            seen.insert(
                (port, IpAddr::from(Ipv4Addr::from(ip))),
                (Some(mac), "static", None),
            );
        }
        for ((port, ip), mac) in statics.all6() {
            seen.insert(
                (port, IpAddr::from(Ipv6Addr::from(ip))),
                (Some(mac), "static", None),
            );
        }
        for e in learned.unwrap_or_default() {
            seen.entry((e.port, e.ip))
                .or_insert((e.mac, e.state.as_str(), Some(e.since)));
        }
        for id in 0..fib.stats().adjacencies {
            let a = fib.adjacency(id as u32);
            let v4 = u32::from_be_bytes(a.neighbor);
            let ip = match a.neighbor6 {
                Some(n) => IpAddr::from(Ipv6Addr::from(n)),
                None => IpAddr::from(Ipv4Addr::from(v4)),
            };
            let key = (a.port, ip);
            if ip.is_unspecified() || seen.contains_key(&key) {
                continue;
            }
            let v = match a.dst_mac {
                Some(_) if a.neighbor6.is_none() => ("resolved", self.book.learned_at(a.port, v4)),
                Some(_) => (
                    "resolved",
                    a.neighbor6
                        .and_then(|n| self.book.learned6_at(a.port, u128::from_be_bytes(n))),
                ),
                None => ("incomplete", None),
            };
            seen.insert(key, (a.dst_mac, v.0, v.1));
        }
        seen.into_iter()
            .map(|((port, ip), (mac, state, since))| NeighborView {
                ip: ip.to_string(),
                mac: mac.map(mac_str),
                port: self.port(port),
                state: state.into(),
                age_s: since.map(|t: Instant| now.saturating_duration_since(t).as_secs_f64()),
            })
            .collect()
    }
}

fn ttl(m: TtlMode) -> (String, Option<u8>) {
    match m {
        TtlMode::Uniform => ("uniform".into(), None),
        TtlMode::Pipe(t) => ("pipe".into(), Some(t)),
    }
}
