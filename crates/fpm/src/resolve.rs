//! From what zebra said to what the router installs: next hops mapped to ports,
//! next-hop groups expanded, label operations chosen. A route's next hops must suit its
//! family: IPv4 routes go via IPv4 neighbours (not zebra's 169.254.0.1, which stands for
//! an IPv6 one); IPv6 routes via IPv6 neighbours, or via IPv4 ones with a label stack
//! (6PE, RFC 4798); label entries via either.

use std::collections::HashMap;

use crate::error::MsgError;
use crate::msg::{Gateway, Key, NexthopBody, Path, RouteBody};
use crate::ports::PortMap;

/// A next hop on a port, with the labels it writes and its ECMP weight.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Hop {
    pub port: u16,
    pub via: Gateway,
    /// Push (IP routes) or out-stack (labels), outermost first; empty = none / pop.
    pub labels: Vec<u32>,
    pub weight: u32,
}

/// What an FPM route installs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// IP route: blackhole, unreachable or prohibit.
    Drop,
    /// IP route: an interface route without gateway; neighbours are resolved by ARP
    /// (IPv4) or NDP (IPv6).
    Connected { port: u16 },
    /// IP route: forward (ECMP when several), pushing each hop's labels.
    Forward(Vec<Hop>),
    /// Label: pop and forward (PHP); hops push nothing.
    Pop(Vec<Hop>),
    /// Label: swap the top label for each hop's stack (one or more labels).
    Swap(Vec<Hop>),
    /// Label: pop and look up what is below (the label terminates here).
    PopAndLookup,
}

/// The next-hop objects zebra has sent, by id.
pub type Groups = HashMap<u32, NexthopBody>;

/// Resolves a route body for `key`.
pub fn resolve(
    key: Key,
    body: &RouteBody,
    groups: &Groups,
    ports: &PortMap,
) -> Result<Target, MsgError> {
    let paths: Vec<Path> = match body {
        RouteBody::Drop => return drop_target(key),
        RouteBody::Paths(p) => p.clone(),
        RouteBody::Group(id) => match expand(*id, groups)? {
            None => return drop_target(key),
            Some(p) => p,
        },
    };
    match key {
        Key::Ipv4 { addr, .. } => ip_route(Gateway::V4(addr), &paths, ports),
        Key::Ipv6 { addr, .. } => ip_route(Gateway::V6(addr), &paths, ports),
        Key::Label(_) => label(&paths, ports),
    }
}

fn drop_target(key: Key) -> Result<Target, MsgError> {
    match key {
        Key::Ipv4 { .. } | Key::Ipv6 { .. } => Ok(Target::Drop),
        // A label table entry cannot drop; zebra does not send blackhole LSPs.
        Key::Label(_) => Err(MsgError::UnsupportedRouteType(6)),
    }
}

/// The paths of next-hop object `id`; `None` for a blackhole.
fn expand(id: u32, groups: &Groups) -> Result<Option<Vec<Path>>, MsgError> {
    match groups.get(&id).ok_or(MsgError::UnknownGroup(id))? {
        NexthopBody::Blackhole => Ok(None),
        NexthopBody::Single(p) => Ok(Some(vec![p.clone()])),
        NexthopBody::Group(members) => {
            let mut out = Vec::with_capacity(members.len());
            for &(m, w) in members {
                match groups.get(&m).ok_or(MsgError::UnknownGroup(m))? {
                    NexthopBody::Single(p) => out.push(Path {
                        weight: w,
                        ..p.clone()
                    }),
                    NexthopBody::Blackhole => {}
                    NexthopBody::Group(_) => {
                        return Err(MsgError::MalformedNexthop(format!(
                            "group {id} nests group {m}"
                        )))
                    }
                }
            }
            if out.is_empty() {
                return Err(MsgError::EmptyGroup(id));
            }
            Ok(Some(out))
        }
    }
}

fn hop(p: &Path, ports: &PortMap) -> Result<Hop, MsgError> {
    let no_port = || MsgError::NoPort {
        gateway: p.gateway.map_or("none".into(), |g| g.to_string()),
        ifindex: p.ifindex,
    };
    let via = p.gateway.ok_or_else(no_port)?;
    let port = ports.port_for(Some(via), p.ifindex).ok_or_else(no_port)?;
    Ok(Hop {
        port,
        via,
        labels: p.labels.clone(),
        weight: p.weight.max(1),
    })
}

/// The gateway zebra writes for an IPv4 route over an IPv6 next hop (RFC 8950, BGP
/// unnumbered), onlink: the peer's MAC goes into a kernel neighbour entry, which FPM
/// does not carry (docs/fpm.md).
const RFC5549_GATEWAY: u32 = 0xa9fe_0001; // 169.254.0.1

/// Whether a hop suits a route to `prefix`'s family (see the module docs).
fn check_family(prefix: Gateway, h: &Hop, ports: &PortMap) -> Result<(), MsgError> {
    let why = match (prefix, h.via) {
        (Gateway::V4(_), Gateway::V6(_)) => "IPv4 over an IPv6 next hop is not supported",
        // A port numbered in 169.254.0.0/16 by its operator keeps its neighbour.
        (Gateway::V4(_), Gateway::V4(RFC5549_GATEWAY)) if !ports.on_subnet(h.port, h.via) => {
            "zebra's form of an IPv6 next hop for IPv4 (BGP unnumbered) is not supported: \
             FPM does not carry the peer's MAC"
        }
        (Gateway::V6(_), Gateway::V4(_)) if h.labels.is_empty() => {
            "an IPv6 route via an IPv4 next hop must push a label (6PE, RFC 4798)"
        }
        _ => return Ok(()),
    };
    Err(MsgError::GatewayFamily {
        route: match prefix {
            Gateway::V4(_) => "IPv4",
            Gateway::V6(_) => "IPv6",
        },
        gateway: h.via.to_string(),
        why,
    })
}

/// An interface route (no gateway) goes to the port of its ifindex, or else to the port
/// whose subnet holds the prefix (zebra's connected routes for the ports' own subnets).
/// `prefix` is the route's address, in its family.
fn ip_route(prefix: Gateway, paths: &[Path], ports: &PortMap) -> Result<Target, MsgError> {
    if let [p] = paths {
        if p.gateway.is_none() && p.labels.is_empty() {
            return match ports.port_for(Some(prefix), p.ifindex) {
                Some(port) => Ok(Target::Connected { port }),
                None => Err(MsgError::NoPort {
                    gateway: "none".into(),
                    ifindex: p.ifindex,
                }),
            };
        }
    }
    let hops = paths
        .iter()
        .map(|p| hop(p, ports))
        .collect::<Result<Vec<_>, _>>()?;
    for h in &hops {
        check_family(prefix, h, ports)?;
    }
    Ok(Target::Forward(hops))
}

fn label(paths: &[Path], ports: &PortMap) -> Result<Target, MsgError> {
    if paths
        .iter()
        .all(|p| p.gateway.is_none() && p.labels.is_empty())
    {
        return Ok(Target::PopAndLookup);
    }
    let hops = paths
        .iter()
        .map(|p| hop(p, ports))
        .collect::<Result<Vec<_>, _>>()?;
    if hops.iter().all(|h| h.labels.is_empty()) {
        Ok(Target::Pop(hops))
    } else if hops.iter().all(|h| !h.labels.is_empty()) {
        Ok(Target::Swap(hops))
    } else {
        Err(MsgError::MixedLabelOps)
    }
}
