//! `RTM_NEWROUTE` / `RTM_DELROUTE` bodies, decoded with `netlink-packet-route` and turned
//! into [`Message::Route`].
//!
//! - `AF_INET`: prefix in `RTA_DST` (absent = default route); unicast with `RTA_GATEWAY`
//!   and `RTA_OIF`, push labels in `RTA_ENCAP` (`LWTUNNEL_ENCAP_MPLS`), `RTA_MULTIPATH`
//!   (weight = `rtnh_hops` + 1) or `RTA_NH_ID`; blackhole, unreachable and prohibit drop.
//! - `AF_INET6`: the same forms. A gateway may be IPv6 (global, or link-local with
//!   `RTA_OIF`), IPv4 in `RTA_VIA`, or IPv4-mapped IPv6 (`::ffff:a.b.c.d`), which is the
//!   IPv4 next hop of a 6PE route (RFC 4798) and is decoded as one. Link-local and
//!   multicast prefixes (zebra's `fe80::/64` per interface) are not forwarded: they
//!   decode as [`Message::Other`].
//! - `AF_MPLS`: in-label in `RTA_DST`; `RTA_VIA` gateway; out-stack in `RTA_NEWDST`
//!   (none, or implicit null, is a pop). A path with no gateway is pop-and-lookup (zebra
//!   sends it for labels that terminate here: an interface, VRF or loopback next hop).
//!
//! Deletes carry only the key: zebra sends them without next hops.

use netlink_packet_core::{Nla, Parseable};
use netlink_packet_route::route::{
    MplsLabel, RouteAddress, RouteAttribute, RouteLwEnCapType, RouteLwTunnelEncap, RouteMessage,
    RouteMplsIpTunnel, RouteNextHop, RouteType, RouteVia,
};
use netlink_packet_route::AddressFamily;

use crate::error::MsgError;
use crate::msg::{Gateway, Key, Message, Op, Path, RouteBody};
use crate::netlink::Limits;

/// The main routing table.
const RT_TABLE_MAIN: u32 = 254;
/// MPLS implicit null (RFC 3032): "pop", never written on the wire.
pub const IMPLICIT_NULL: u32 = 3;
/// Lowest label that may be an in-label.
const MIN_IN_LABEL: u32 = 16;
const MPLS_IPTUNNEL_DST: u16 = 1;

/// Decodes a route message body.
pub fn decode(op: Op, body: &[u8], limits: Limits) -> Result<Message, MsgError> {
    let msg = RouteMessage::parse(body).map_err(|e| MsgError::MalformedRoute(e.to_string()))?;
    let h = &msg.header;
    let table = msg
        .attributes
        .iter()
        .find_map(|a| match a {
            RouteAttribute::Table(t) => Some(*t),
            _ => None,
        })
        .unwrap_or(h.table as u32);
    if table != RT_TABLE_MAIN {
        return Err(MsgError::OtherTable(table));
    }
    let key = match h.address_family {
        AddressFamily::Inet => ipv4_key(&msg)?,
        AddressFamily::Inet6 => match ipv6_key(&msg)? {
            Some(k) => k,
            None => return Ok(Message::Other(kind_of(op))),
        },
        AddressFamily::Mpls => label_key(&msg)?,
        f => return Err(MsgError::UnsupportedFamily(u8::from(f))),
    };
    if op == Op::Del {
        return Ok(Message::Route {
            op,
            key,
            body: None,
        });
    }
    let body = match h.kind {
        RouteType::BlackHole | RouteType::Unreachable | RouteType::Prohibit => RouteBody::Drop,
        RouteType::Unicast => unicast(&msg, limits)?,
        t => return Err(MsgError::UnsupportedRouteType(u8::from(t))),
    };
    Ok(Message::Route {
        op,
        key,
        body: Some(body),
    })
}

fn ipv4_key(msg: &RouteMessage) -> Result<Key, MsgError> {
    let len = msg.header.destination_prefix_length;
    if len > 32 {
        return Err(MsgError::MalformedRoute(format!(
            "IPv4 prefix length {len}"
        )));
    }
    let addr = msg
        .attributes
        .iter()
        .find_map(|a| match a {
            RouteAttribute::Destination(RouteAddress::Inet(a)) => Some(u32::from(*a)),
            _ => None,
        })
        .unwrap_or(0);
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
    Ok(Key::Ipv4 {
        addr: addr & mask,
        len,
    })
}

/// The netlink message type of a route message (for [`Message::Other`]).
fn kind_of(op: Op) -> u16 {
    match op {
        Op::New => crate::netlink::RTM_NEWROUTE,
        Op::Del => crate::netlink::RTM_DELROUTE,
    }
}

/// The IPv6 prefix, or `None` for a link-local or multicast one (never forwarded).
fn ipv6_key(msg: &RouteMessage) -> Result<Option<Key>, MsgError> {
    let len = msg.header.destination_prefix_length;
    if len > 128 {
        return Err(MsgError::MalformedRoute(format!(
            "IPv6 prefix length {len}"
        )));
    }
    let addr = msg
        .attributes
        .iter()
        .find_map(|a| match a {
            RouteAttribute::Destination(RouteAddress::Inet6(a)) => Some(u128::from(*a)),
            _ => None,
        })
        .unwrap_or(0);
    let mask = if len == 0 {
        0
    } else {
        u128::MAX << (128 - len)
    };
    let addr = addr & mask;
    let link_local = len >= 10 && addr >> 118 == 0x3fa;
    let multicast = len >= 8 && addr >> 120 == 0xff;
    if link_local || multicast {
        return Ok(None);
    }
    Ok(Some(Key::Ipv6 { addr, len }))
}

fn label_key(msg: &RouteMessage) -> Result<Key, MsgError> {
    let label = msg
        .attributes
        .iter()
        .find_map(|a| match a {
            RouteAttribute::Destination(RouteAddress::Mpls(l)) => Some(l.label),
            _ => None,
        })
        .ok_or_else(|| MsgError::MalformedRoute("MPLS route without RTA_DST".into()))?;
    if label < MIN_IN_LABEL {
        return Err(MsgError::ReservedInLabel(label));
    }
    Ok(Key::Label(label))
}

fn unicast(msg: &RouteMessage, limits: Limits) -> Result<RouteBody, MsgError> {
    let attrs = &msg.attributes;
    if let Some(id) = attrs.iter().find_map(|a| match a {
        RouteAttribute::NhId(id) => Some(*id),
        _ => None,
    }) {
        return Ok(RouteBody::Group(id));
    }
    if let Some(hops) = attrs.iter().find_map(|a| match a {
        RouteAttribute::MultiPath(h) => Some(h),
        _ => None,
    }) {
        let paths = hops
            .iter()
            .map(|h| multipath_hop(h, limits))
            .collect::<Result<Vec<_>, _>>()?;
        if paths.is_empty() {
            return Err(MsgError::MalformedRoute("empty RTA_MULTIPATH".into()));
        }
        return Ok(RouteBody::Paths(paths));
    }
    let ifindex = attrs
        .iter()
        .find_map(|a| match a {
            RouteAttribute::Oif(i) => Some(*i),
            _ => None,
        })
        .unwrap_or(0);
    Ok(RouteBody::Paths(vec![path(attrs, ifindex, 1, limits)?]))
}

fn multipath_hop(h: &RouteNextHop, limits: Limits) -> Result<Path, MsgError> {
    path(&h.attributes, h.interface_index, h.hops as u32 + 1, limits)
}

/// One path from the attributes that describe it (top level or one `rtnexthop`).
fn path(
    attrs: &[RouteAttribute],
    ifindex: u32,
    weight: u32,
    limits: Limits,
) -> Result<Path, MsgError> {
    let mut gateway = None;
    let mut labels: Vec<u32> = Vec::new();
    let encap_type = attrs
        .iter()
        .find_map(|a| match a {
            RouteAttribute::EncapType(t) => Some(*t),
            _ => None,
        })
        .unwrap_or(RouteLwEnCapType::None);
    if !matches!(encap_type, RouteLwEnCapType::None | RouteLwEnCapType::Mpls) {
        return Err(MsgError::UnsupportedEncap(u16::from(encap_type)));
    }
    for a in attrs {
        match a {
            RouteAttribute::Gateway(RouteAddress::Inet(g))
            | RouteAttribute::Via(RouteVia::Inet(g)) => gateway = Some(Gateway::V4(u32::from(*g))),
            RouteAttribute::Gateway(RouteAddress::Inet6(g))
            | RouteAttribute::Via(RouteVia::Inet6(g)) => {
                gateway = Some(Gateway::from_v6(u128::from(*g)))
            }
            RouteAttribute::Gateway(_) | RouteAttribute::Via(_) => {
                return Err(MsgError::MalformedRoute(
                    "gateway neither IPv4 nor IPv6".into(),
                ));
            }
            RouteAttribute::NewDestination(stack) => labels = out_labels(stack),
            RouteAttribute::Encap(e) => labels = encap_labels(e)?,
            _ => {}
        }
    }
    check_labels(&labels, limits)?;
    Ok(Path {
        gateway,
        ifindex,
        labels,
        weight,
    })
}

fn out_labels(stack: &[MplsLabel]) -> Vec<u32> {
    stack
        .iter()
        .map(|l| l.label)
        .filter(|&l| l != IMPLICIT_NULL)
        .collect()
}

/// The push labels of an `RTA_ENCAP` (MPLS). Inside `RTA_MULTIPATH` the crate parses the
/// encap before it knows the hop's own `RTA_ENCAP_TYPE` and leaves it raw: read
/// `MPLS_IPTUNNEL_DST` from the raw attribute then (the caller has checked the type).
fn encap_labels(e: &[RouteLwTunnelEncap]) -> Result<Vec<u32>, MsgError> {
    let mut labels = Vec::new();
    for x in e {
        match x {
            RouteLwTunnelEncap::Mpls(RouteMplsIpTunnel::Destination(stack)) => {
                labels = out_labels(stack)
            }
            RouteLwTunnelEncap::Other(nla) if nla.kind() == MPLS_IPTUNNEL_DST => {
                let mut v = vec![0; nla.value_len()];
                nla.emit_value(&mut v);
                if !v.len().is_multiple_of(4) {
                    return Err(MsgError::MalformedRoute(format!(
                        "MPLS_IPTUNNEL_DST is {} bytes",
                        v.len()
                    )));
                }
                labels = v
                    .chunks_exact(4)
                    .map(|w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]) >> 12)
                    .filter(|&l| l != IMPLICIT_NULL)
                    .collect();
            }
            RouteLwTunnelEncap::Mpls(_) | RouteLwTunnelEncap::Other(_) => {}
            _ => return Err(MsgError::UnsupportedEncap(u16::MAX)),
        }
    }
    Ok(labels)
}

/// Depth and range of a label stack to write.
pub fn check_labels(labels: &[u32], limits: Limits) -> Result<(), MsgError> {
    if labels.len() > limits.max_labels {
        return Err(MsgError::LabelDepth {
            got: labels.len(),
            max: limits.max_labels,
        });
    }
    Ok(())
}
