//! `RTM_NEWROUTE` / `RTM_DELROUTE` bodies, decoded with `netlink-packet-route` and turned
//! into [`Message::Route`].
//!
//! - `AF_INET`: prefix in `RTA_DST` (absent = default route); unicast with `RTA_GATEWAY`
//!   and `RTA_OIF`, push labels in `RTA_ENCAP` (`LWTUNNEL_ENCAP_MPLS`), `RTA_MULTIPATH`
//!   (weight = `rtnh_hops` + 1) or `RTA_NH_ID`; blackhole, unreachable and prohibit drop.
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
use crate::msg::{Key, Message, Op, Path, RouteBody};
use crate::netlink::Limits;

/// The main routing table.
const RT_TABLE_MAIN: u32 = 254;
/// MPLS implicit null (RFC 3032): "pop", never written on the wire.
pub const IMPLICIT_NULL: u32 = 3;
/// Lowest label that may be an in-label.
const MIN_IN_LABEL: u32 = 16;
const AF_INET6: u8 = 10;
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
            | RouteAttribute::Via(RouteVia::Inet(g)) => gateway = Some(u32::from(*g)),
            RouteAttribute::Gateway(_) | RouteAttribute::Via(_) => {
                return Err(MsgError::UnsupportedFamily(AF_INET6));
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
