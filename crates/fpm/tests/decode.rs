//! Decoder tests on bytes built by `netlink-packet-route`'s encoder (routes) and by hand
//! (next-hop objects), and on malformed input.
#![forbid(unsafe_code)]

mod harness;

use fpm::encode::{self, path};
use fpm::msg::{Gateway, Key, Message, NexthopBody, Op, Path, RouteBody};
use fpm::netlink::{Limits, Messages};
use fpm::MsgError;
use harness::{ip, v4};

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

#[test]
fn ipv4_single_path_with_push_labels() {
    let body = RouteBody::Paths(vec![path(ip(10, 0, 1, 2), 5, &[100, 200], 1)]);
    let m = one(encode::route(v4(192, 168, 0, 0, 16), Some(&body))).unwrap();
    assert_eq!(m, new_route(v4(192, 168, 0, 0, 16), body));
}

#[test]
fn ipv4_multipath_keeps_weights_and_labels() {
    let body = RouteBody::Paths(vec![
        path(ip(10, 0, 0, 2), 4, &[16], 1),
        path(ip(10, 0, 1, 2), 5, &[], 3),
    ]);
    let m = one(encode::route(v4(172, 16, 0, 0, 12), Some(&body))).unwrap();
    assert_eq!(m, new_route(v4(172, 16, 0, 0, 12), body));
}

#[test]
fn ipv4_host_bits_are_cleared_and_delete_has_no_body() {
    let m = one(encode::route(v4(10, 9, 8, 7, 8), None)).unwrap();
    assert_eq!(
        m,
        Message::Route {
            op: Op::Del,
            key: v4(10, 0, 0, 0, 8),
            body: None
        }
    );
}

#[test]
fn blackhole_unreachable_prohibit_all_drop() {
    for kind in [6u8, 7, 8] {
        let m = one(encode::drop_route(ip(1, 2, 3, 0), 24, kind)).unwrap();
        assert_eq!(
            m,
            new_route(v4(1, 2, 3, 0, 24), RouteBody::Drop),
            "rtm_type {kind}"
        );
    }
    // RTN_LOCAL is not forwarded.
    assert_eq!(
        one(encode::drop_route(ip(1, 2, 3, 0), 24, 2)),
        Err(MsgError::UnsupportedRouteType(2))
    );
}

#[test]
fn route_by_nexthop_id() {
    let m = one(encode::route(
        v4(8, 8, 8, 0, 24),
        Some(&RouteBody::Group(77)),
    ))
    .unwrap();
    assert_eq!(m, new_route(v4(8, 8, 8, 0, 24), RouteBody::Group(77)));
}

#[test]
fn mpls_swap_pop_and_multi_label_stacks() {
    for labels in [vec![], vec![300], vec![300, 400, 500]] {
        let body = RouteBody::Paths(vec![path(ip(10, 0, 0, 2), 4, &labels, 1)]);
        let m = one(encode::route(Key::Label(1000), Some(&body))).unwrap();
        assert_eq!(m, new_route(Key::Label(1000), body));
    }
}

#[test]
fn mpls_implicit_null_out_label_is_a_pop() {
    let body = RouteBody::Paths(vec![path(ip(10, 0, 0, 2), 4, &[3], 1)]);
    let m = one(encode::route(Key::Label(1000), Some(&body))).unwrap();
    assert_eq!(
        m,
        new_route(
            Key::Label(1000),
            RouteBody::Paths(vec![path(ip(10, 0, 0, 2), 4, &[], 1)])
        )
    );
}

#[test]
fn reserved_in_label_is_refused() {
    let body = RouteBody::Paths(vec![path(ip(10, 0, 0, 2), 4, &[], 1)]);
    assert_eq!(
        one(encode::route(Key::Label(15), Some(&body))),
        Err(MsgError::ReservedInLabel(15))
    );
}

#[test]
fn label_stack_deeper_than_the_limit_is_refused() {
    let deep: Vec<u32> = (100..109).collect();
    let body = RouteBody::Paths(vec![path(ip(10, 0, 0, 2), 4, &deep, 1)]);
    assert_eq!(
        one(encode::route(v4(9, 0, 0, 0, 8), Some(&body))),
        Err(MsgError::LabelDepth { got: 9, max: 8 })
    );
}

#[test]
fn other_tables_and_families_are_refused() {
    let mut m = encode::route(v4(9, 0, 0, 0, 8), Some(&RouteBody::Drop));
    m[16 + 4] = 10; // rtm_table
    assert_eq!(one(m), Err(MsgError::OtherTable(10)));
    let mut m = encode::route(v4(9, 0, 0, 0, 8), None);
    m[16] = 7; // rtm_family: AF_BRIDGE
    assert_eq!(one(m), Err(MsgError::UnsupportedFamily(7)));
}

#[test]
fn truncated_netlink_ends_the_frame_only() {
    let mut m = encode::route(v4(9, 0, 0, 0, 8), None);
    m[0] = 200; // claims more than there is
    let mut it = Messages::new(&m, LIM);
    assert!(matches!(
        it.next(),
        Some(Err(MsgError::Truncated { claimed: 200, .. }))
    ));
    assert!(it.next().is_none());
    // A body cut short inside a well-delimited message is malformed, not a crash.
    let full = encode::route(
        v4(9, 0, 0, 0, 8),
        Some(&RouteBody::Paths(vec![path(1, 1, &[1, 2], 1)])),
    );
    for cut in 16..full.len() {
        let mut m = full[..cut].to_vec();
        m[..4].copy_from_slice(&(cut as u32).to_ne_bytes());
        let _ = Messages::new(&m, LIM).collect::<Vec<_>>();
    }
}

#[test]
fn two_messages_in_one_frame_like_a_zebra_update() {
    let body = RouteBody::Paths(vec![path(ip(10, 0, 0, 2), 4, &[], 1)]);
    let payload = [
        encode::route(v4(5, 0, 0, 0, 8), None),
        encode::route(v4(5, 0, 0, 0, 8), Some(&body)),
    ]
    .concat();
    let got: Vec<_> = Messages::new(&payload, LIM).collect();
    assert_eq!(got.len(), 2);
    assert_eq!(got[1], Ok(new_route(v4(5, 0, 0, 0, 8), body)));
}

#[test]
fn nexthop_objects() {
    let single = NexthopBody::Single(Path {
        gateway: Some(Gateway::V4(ip(10, 0, 1, 9))),
        ifindex: 5,
        labels: vec![16, 17],
        weight: 1,
    });
    for (id, body) in [
        (1, single),
        (2, NexthopBody::Blackhole),
        (3, NexthopBody::Group(vec![(1, 1), (4, 200)])),
    ] {
        let m = one(encode::nexthop(id, Some(&body))).unwrap();
        assert_eq!(
            m,
            Message::Nexthop {
                op: Op::New,
                id,
                body: Some(body)
            }
        );
    }
    let m = one(encode::nexthop(9, None)).unwrap();
    assert_eq!(
        m,
        Message::Nexthop {
            op: Op::Del,
            id: 9,
            body: None
        }
    );
}

#[test]
fn malformed_nexthops_are_refused() {
    let m = encode::nexthop(1, Some(&NexthopBody::Group(vec![(2, 1)])));
    let mut short = m.clone();
    short[16 + 8 + 8] = 7; // NHA_GROUP length 7: not a multiple of 8
    assert!(matches!(one(short), Err(MsgError::MalformedNexthop(_))));
    let body = &m[16..20];
    assert!(matches!(
        one(encode::nlmsg(104, body)),
        Err(MsgError::MalformedNexthop(_))
    ));
}

#[test]
fn unknown_attributes_are_counted_and_the_message_still_decodes() {
    let body = RouteBody::Paths(vec![path(ip(10, 0, 0, 2), 4, &[], 1)]);
    let mut m = encode::route(v4(7, 0, 0, 0, 8), Some(&body));
    // Append attribute type 200 (unknown) and fix the netlink length.
    m.extend_from_slice(&8u16.to_ne_bytes());
    m.extend_from_slice(&200u16.to_ne_bytes());
    m.extend_from_slice(&[1, 2, 3, 4]);
    let len = m.len() as u32;
    m[..4].copy_from_slice(&len.to_ne_bytes());
    let mut it = Messages::new(&m, LIM);
    assert_eq!(it.next(), Some(Ok(new_route(v4(7, 0, 0, 0, 8), body))));
    assert_eq!(it.unknown_attributes(), 1);
}
