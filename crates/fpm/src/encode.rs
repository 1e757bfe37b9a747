//! Building FPM byte streams the way zebra's `dplane_fpm_nl` does: for tests, the fuzzer's
//! seeds and the feeder example. Routes are emitted by `netlink-packet-route` (an encoder
//! independent of this crate's decoder); next-hop objects by hand, like linux/nexthop.h.

use netlink_packet_core::Emitable;
use netlink_packet_route::route::{
    MplsLabel, RouteAddress, RouteAttribute, RouteHeader, RouteLwEnCapType, RouteLwTunnelEncap,
    RouteMessage, RouteMplsIpTunnel, RouteNextHop, RouteProtocol, RouteScope, RouteType, RouteVia,
};
use netlink_packet_route::AddressFamily;

use crate::msg::{Gateway, Key, NexthopBody, Path, RouteBody};
use crate::netlink::{
    align4, NLMSG_HDR_LEN, RTM_DELNEXTHOP, RTM_DELROUTE, RTM_NEWNEXTHOP, RTM_NEWROUTE,
};
use crate::nexthop::*;

const NLM_F_REQUEST: u16 = 1;
const NLM_F_REPLACE: u16 = 0x100;
const NLM_F_CREATE: u16 = 0x400;

/// A netlink message: header (host order) + body, padded to 4 bytes.
pub fn nlmsg(kind: u16, body: &[u8]) -> Vec<u8> {
    let len = NLMSG_HDR_LEN + body.len();
    let mut out = Vec::with_capacity(align4(len));
    out.extend_from_slice(&(len as u32).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(&(NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE).to_ne_bytes());
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(body);
    out.resize(align4(len), 0);
    out
}

/// One FPM frame holding these netlink messages.
pub fn frame(msgs: &[Vec<u8>]) -> Vec<u8> {
    let payload: Vec<u8> = msgs.concat();
    let mut out = Vec::new();
    crate::frame::encode_frame(&payload, &mut out);
    out
}

fn label_stack(labels: &[u32]) -> Vec<MplsLabel> {
    let n = labels.len();
    labels
        .iter()
        .enumerate()
        .map(|(i, &l)| MplsLabel::from((l << 12) | if i + 1 == n { 1 << 8 } else { 0 }))
        .collect()
}

/// A path's attributes in a route of `key`'s family. A gateway of the other family goes
/// in `RTA_VIA` (the form the kernel takes: 6PE, RFC 5549).
fn path_attrs(p: &Path, key: Key) -> Vec<RouteAttribute> {
    let mpls = matches!(key, Key::Label(_));
    let mut a = Vec::new();
    if mpls {
        if !p.labels.is_empty() {
            a.push(RouteAttribute::NewDestination(label_stack(&p.labels)));
        }
        match p.gateway {
            Some(Gateway::V4(g)) => a.push(RouteAttribute::Via(RouteVia::Inet(g.into()))),
            Some(Gateway::V6(g)) => a.push(RouteAttribute::Via(RouteVia::Inet6(g.into()))),
            None => {}
        }
    } else {
        if !p.labels.is_empty() {
            a.push(RouteAttribute::EncapType(RouteLwEnCapType::Mpls));
            a.push(RouteAttribute::Encap(vec![RouteLwTunnelEncap::Mpls(
                RouteMplsIpTunnel::Destination(label_stack(&p.labels)),
            )]));
        }
        match p.gateway {
            Some(Gateway::V4(g)) if matches!(key, Key::Ipv6 { .. }) => {
                a.push(RouteAttribute::Via(RouteVia::Inet(g.into())))
            }
            Some(Gateway::V4(g)) => a.push(RouteAttribute::Gateway(RouteAddress::Inet(g.into()))),
            Some(Gateway::V6(g)) if matches!(key, Key::Ipv4 { .. }) => {
                a.push(RouteAttribute::Via(RouteVia::Inet6(g.into())))
            }
            Some(Gateway::V6(g)) => a.push(RouteAttribute::Gateway(RouteAddress::Inet6(g.into()))),
            None => {}
        }
    }
    a
}

/// An `RTM_NEWROUTE` (body given) or `RTM_DELROUTE` (`None`) message.
pub fn route(key: Key, body: Option<&RouteBody>) -> Vec<u8> {
    let mut h = RouteHeader {
        table: RouteHeader::RT_TABLE_MAIN,
        protocol: RouteProtocol::Static,
        scope: RouteScope::Universe,
        ..Default::default()
    };
    let mut m = RouteMessage::default();
    match key {
        Key::Ipv4 { addr, len } => {
            h.address_family = AddressFamily::Inet;
            h.destination_prefix_length = len;
            m.attributes
                .push(RouteAttribute::Destination(RouteAddress::Inet(addr.into())));
        }
        Key::Ipv6 { addr, len } => {
            h.address_family = AddressFamily::Inet6;
            h.destination_prefix_length = len;
            m.attributes
                .push(RouteAttribute::Destination(RouteAddress::Inet6(
                    addr.into(),
                )));
        }
        Key::Label(l) => {
            h.address_family = AddressFamily::Mpls;
            h.destination_prefix_length = 20;
            m.attributes
                .push(RouteAttribute::Destination(RouteAddress::Mpls(
                    MplsLabel::from((l << 12) | 1 << 8),
                )));
        }
    }
    m.attributes.push(RouteAttribute::Priority(20));
    h.kind = match body {
        Some(RouteBody::Drop) => RouteType::BlackHole,
        Some(_) => RouteType::Unicast,
        None => RouteType::Unspec,
    };
    match body {
        Some(RouteBody::Group(id)) => m.attributes.push(RouteAttribute::NhId(*id)),
        Some(RouteBody::Paths(ps)) if ps.len() == 1 => {
            m.attributes.extend(path_attrs(&ps[0], key));
            m.attributes.push(RouteAttribute::Oif(ps[0].ifindex));
        }
        Some(RouteBody::Paths(ps)) => {
            let hops = ps
                .iter()
                .map(|p| {
                    let mut nh = RouteNextHop::default();
                    nh.hops = (p.weight.max(1) - 1) as u8;
                    nh.interface_index = p.ifindex;
                    nh.attributes = path_attrs(p, key);
                    nh
                })
                .collect();
            m.attributes.push(RouteAttribute::MultiPath(hops));
        }
        _ => {}
    }
    m.header = h;
    let mut buf = vec![0; m.buffer_len()];
    m.emit(&mut buf);
    nlmsg(
        if body.is_some() {
            RTM_NEWROUTE
        } else {
            RTM_DELROUTE
        },
        &buf,
    )
}

/// The same with an explicit route type (e.g. 7 unreachable, 8 prohibit).
pub fn drop_route(addr: u32, len: u8, kind: u8) -> Vec<u8> {
    let mut msg = route(Key::Ipv4 { addr, len }, Some(&RouteBody::Drop));
    // rtm_type is byte 7 of struct rtmsg.
    msg[NLMSG_HDR_LEN + 7] = kind;
    msg
}

fn attr(kind: u16, value: &[u8], out: &mut Vec<u8>) {
    let len = 4 + value.len();
    out.extend_from_slice(&(len as u16).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(value);
    out.resize(align4(out.len()), 0);
}

/// An `RTM_NEWNEXTHOP` (body given) or `RTM_DELNEXTHOP` message.
pub fn nexthop(id: u32, body: Option<&NexthopBody>) -> Vec<u8> {
    let family = match body {
        Some(NexthopBody::Single(Path {
            gateway: Some(Gateway::V6(_)),
            ..
        })) => AF_INET6,
        Some(NexthopBody::Single(_)) => AF_INET,
        _ => AF_UNSPEC,
    };
    let mut b = vec![family, 0, 196, 0, 0, 0, 0, 0];
    attr(NHA_ID, &id.to_ne_bytes(), &mut b);
    match body {
        Some(NexthopBody::Group(members)) => {
            let mut g = Vec::new();
            for &(m, w) in members {
                g.extend_from_slice(&m.to_ne_bytes());
                g.extend_from_slice(&[(w - 1) as u8, 0, 0, 0]);
            }
            attr(NHA_GROUP, &g, &mut b);
        }
        Some(NexthopBody::Blackhole) => attr(NHA_BLACKHOLE, &[], &mut b),
        Some(NexthopBody::Single(p)) => {
            match p.gateway {
                Some(Gateway::V4(g)) => attr(NHA_GATEWAY, &g.to_be_bytes(), &mut b),
                Some(Gateway::V6(g)) => attr(NHA_GATEWAY, &g.to_be_bytes(), &mut b),
                None => {}
            }
            attr(NHA_OIF, &p.ifindex.to_ne_bytes(), &mut b);
            if !p.labels.is_empty() {
                attr(NHA_ENCAP_TYPE, &LWTUNNEL_ENCAP_MPLS.to_ne_bytes(), &mut b);
                let mut stack = Vec::new();
                for (i, &l) in p.labels.iter().enumerate() {
                    let s = if i + 1 == p.labels.len() { 1 << 8 } else { 0 };
                    stack.extend_from_slice(&((l << 12) | s).to_be_bytes());
                }
                let mut nest = Vec::new();
                attr(MPLS_IPTUNNEL_DST, &stack, &mut nest);
                attr(NHA_ENCAP | 0x8000, &nest, &mut b);
            }
        }
        None => {}
    }
    nlmsg(
        if body.is_some() {
            RTM_NEWNEXTHOP
        } else {
            RTM_DELNEXTHOP
        },
        &b,
    )
}

/// Shorthand: a path via `gateway` (a.b.c.d as u32) on `ifindex` pushing `labels`.
pub fn path(gateway: u32, ifindex: u32, labels: &[u32], weight: u32) -> Path {
    Path {
        gateway: Some(Gateway::V4(gateway)),
        ifindex,
        labels: labels.to_vec(),
        weight,
    }
}

/// The same via an IPv6 gateway (as a big-endian integer; an IPv4-mapped one is sent
/// as is, the way zebra writes a 6PE next hop that names `::ffff:a.b.c.d`).
pub fn path6(gateway: u128, ifindex: u32, labels: &[u32], weight: u32) -> Path {
    Path {
        gateway: Some(Gateway::V6(gateway)),
        ifindex,
        labels: labels.to_vec(),
        weight,
    }
}
