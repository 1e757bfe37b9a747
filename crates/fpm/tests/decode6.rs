//! IPv6 decoding: `AF_INET6` routes (gateways in both families, link-local with an
//! ifindex, multipath, next-hop ids, blackhole, deletes), next-hop objects with 16-byte
//! gateways, and label entries with an IPv6 `RTA_VIA`. Messages are built with
//! `netlink-packet-route`'s encoder (through `fpm::encode`, or directly where zebra
//! writes something `encode` does not) so the decoder is checked against another
//! implementation of the format.
#![forbid(unsafe_code)]

mod harness;

use fpm::encode::{self, path, path6};
use fpm::msg::{Gateway, Key, Message, NexthopBody, Op, Path, RouteBody};
use fpm::netlink::{Limits, Messages, NLMSG_HDR_LEN, RTM_NEWROUTE};
use fpm::MsgError;
use harness::{ip, mapped, v6, DB8_1, LL};
use netlink_packet_core::Emitable;
use netlink_packet_route::route::{
    MplsLabel, RouteAddress, RouteAttribute, RouteHeader, RouteLwEnCapType, RouteLwTunnelEncap,
    RouteMessage, RouteMplsIpTunnel, RouteProtocol, RouteScope, RouteType, RouteVia,
};
use netlink_packet_route::AddressFamily;

const LIM: Limits = Limits { max_labels: 8 };

fn one(msg: Vec<u8>) -> Result<Message, MsgError> {
    let mut it = Messages::new(&msg, LIM);
    let m = it.next().expect("one message");
    assert!(it.next().is_none());
    m
}

fn new_route(key: Key, body: RouteBody) -> Message {
    Message::Route {
        op: Op::New,
        key,
        body: Some(body),
    }
}

/// 2001:db8:100::/48.
const P100: u128 = 0x2001_0db8_0100 << 80;

#[test]
fn global_and_link_local_gateways_with_push_labels() {
    for body in [
        RouteBody::Paths(vec![path6(DB8_1 | 2, 5, &[], 1)]),
        RouteBody::Paths(vec![path6(DB8_1 | 2, 5, &[100, 200], 1)]),
        RouteBody::Paths(vec![path6(LL | 2, 5, &[], 1)]),
    ] {
        let m = one(encode::route(v6(P100, 48), Some(&body))).unwrap();
        assert_eq!(m, new_route(v6(P100, 48), body));
    }
}

#[test]
fn multipath_keeps_weights_families_and_labels() {
    let body = RouteBody::Paths(vec![
        path6(LL | 2, 3, &[16], 1),
        path6(DB8_1 | 3, 5, &[], 3),
        // 6PE member: an IPv4-mapped gateway with a label.
        path6(mapped(ip(10, 0, 1, 2)), 5, &[600], 1),
    ]);
    let m = one(encode::route(v6(P100, 40), Some(&body))).unwrap();
    let mut want = body.clone();
    if let RouteBody::Paths(p) = &mut want {
        p[2].gateway = Some(Gateway::V4(ip(10, 0, 1, 2)));
    }
    assert_eq!(m, new_route(v6(P100, 40), want));
}

#[test]
fn ipv4_mapped_gateway_is_the_ipv4_next_hop() {
    let body = RouteBody::Paths(vec![path6(mapped(ip(10, 0, 1, 2)), 5, &[600], 1)]);
    let m = one(encode::route(v6(P100, 48), Some(&body))).unwrap();
    assert_eq!(
        m,
        new_route(
            v6(P100, 48),
            RouteBody::Paths(vec![path(ip(10, 0, 1, 2), 5, &[600], 1)])
        )
    );
    // Only ::ffff:0:0/96 is mapped: ::a.b.c.d (deprecated compatible) stays IPv6.
    assert_eq!(
        Gateway::from_v6(ip(10, 0, 1, 2) as u128),
        Gateway::V6(ip(10, 0, 1, 2) as u128)
    );
}

/// An `AF_INET6` route the way the kernel also takes a 6PE next hop: `RTA_VIA` with an
/// IPv4 address, labels in `RTA_ENCAP`.
#[test]
fn rta_via_inet_on_an_ipv6_route_is_an_ipv4_next_hop() {
    let mut m = RouteMessage::default();
    m.header = RouteHeader {
        address_family: AddressFamily::Inet6,
        destination_prefix_length: 48,
        table: RouteHeader::RT_TABLE_MAIN,
        protocol: RouteProtocol::Static,
        scope: RouteScope::Universe,
        kind: RouteType::Unicast,
        ..Default::default()
    };
    m.attributes = vec![
        RouteAttribute::Destination(RouteAddress::Inet6(P100.into())),
        RouteAttribute::EncapType(RouteLwEnCapType::Mpls),
        RouteAttribute::Encap(vec![RouteLwTunnelEncap::Mpls(
            RouteMplsIpTunnel::Destination(vec![MplsLabel::from(600 << 12 | 1 << 8)]),
        )]),
        RouteAttribute::Via(RouteVia::Inet(ip(10, 0, 1, 2).into())),
        RouteAttribute::Oif(5),
    ];
    let mut buf = vec![0; m.buffer_len()];
    m.emit(&mut buf);
    let got = one(encode::nlmsg(RTM_NEWROUTE, &buf)).unwrap();
    assert_eq!(
        got,
        new_route(
            v6(P100, 48),
            RouteBody::Paths(vec![path(ip(10, 0, 1, 2), 5, &[600], 1)])
        )
    );
}

#[test]
fn blackhole_group_delete_and_default_route() {
    let m = one(encode::route(v6(P100, 48), Some(&RouteBody::Drop))).unwrap();
    assert_eq!(m, new_route(v6(P100, 48), RouteBody::Drop));
    for kind in [7u8, 8] {
        let mut msg = encode::route(v6(P100, 48), Some(&RouteBody::Drop));
        msg[NLMSG_HDR_LEN + 7] = kind; // rtm_type: unreachable, prohibit
        assert_eq!(one(msg), Ok(new_route(v6(P100, 48), RouteBody::Drop)));
    }
    let m = one(encode::route(v6(0, 0), Some(&RouteBody::Group(9)))).unwrap();
    assert_eq!(m, new_route(v6(0, 0), RouteBody::Group(9)));
    // Host bits are cleared; a delete carries only the key.
    let m = one(encode::route(v6(P100 | 0xffff, 48), None)).unwrap();
    assert_eq!(
        m,
        Message::Route {
            op: Op::Del,
            key: v6(P100, 48),
            body: None
        }
    );
}

#[test]
fn link_local_and_multicast_prefixes_are_not_used() {
    let iface = RouteBody::Paths(vec![Path {
        gateway: None,
        ifindex: 3,
        labels: vec![],
        weight: 1,
    }]);
    for (addr, len) in [(LL, 64), (0xff00 << 112, 8), (0xff02 << 112 | 1, 128)] {
        assert_eq!(
            one(encode::route(v6(addr, len), Some(&iface))),
            Ok(Message::Other(RTM_NEWROUTE)),
            "{addr:x}/{len}"
        );
    }
    // A prefix that only starts like one is a route.
    let m = one(encode::route(v6(0xfe00 << 112, 7), Some(&iface))).unwrap();
    assert_eq!(m, new_route(v6(0xfe00 << 112, 7), iface));
}

#[test]
fn bad_prefix_length_is_malformed() {
    let mut m = encode::route(v6(P100, 48), None);
    m[NLMSG_HDR_LEN + 1] = 129; // rtm_dst_len
    assert!(matches!(one(m), Err(MsgError::MalformedRoute(_))));
}

#[test]
fn nexthop_objects_with_ipv6_and_mapped_gateways() {
    let single = |gw: u128| {
        NexthopBody::Single(Path {
            gateway: Some(Gateway::V6(gw)),
            ifindex: 5,
            labels: vec![16],
            weight: 1,
        })
    };
    for gw in [DB8_1 | 2, LL | 2] {
        let m = one(encode::nexthop(1, Some(&single(gw)))).unwrap();
        assert_eq!(
            m,
            Message::Nexthop {
                op: Op::New,
                id: 1,
                body: Some(single(gw))
            }
        );
    }
    let m = one(encode::nexthop(2, Some(&single(mapped(ip(10, 0, 1, 2)))))).unwrap();
    assert_eq!(
        m,
        Message::Nexthop {
            op: Op::New,
            id: 2,
            body: Some(NexthopBody::Single(path(ip(10, 0, 1, 2), 5, &[16], 1)))
        }
    );
    // A gateway of another length is malformed.
    let mut bad = encode::nexthop(3, Some(&single(DB8_1)));
    let at = NLMSG_HDR_LEN + 8 + 8; // nhmsg, NHA_ID; then NHA_GATEWAY's length
    assert_eq!(u16::from_ne_bytes([bad[at], bad[at + 1]]), 20);
    bad[at..at + 2].copy_from_slice(&12u16.to_ne_bytes());
    assert!(matches!(one(bad), Err(MsgError::MalformedNexthop(_))));
}

#[test]
fn label_entries_via_ipv6_next_hops() {
    for labels in [vec![], vec![300], vec![300, 400]] {
        let body = RouteBody::Paths(vec![path6(DB8_1 | 2, 5, &labels, 1)]);
        let m = one(encode::route(Key::Label(1000), Some(&body))).unwrap();
        assert_eq!(m, new_route(Key::Label(1000), body));
    }
    let body = RouteBody::Paths(vec![path6(LL | 2, 5, &[], 1), path6(LL | 3, 3, &[], 2)]);
    let m = one(encode::route(Key::Label(1001), Some(&body))).unwrap();
    assert_eq!(m, new_route(Key::Label(1001), body));
}
