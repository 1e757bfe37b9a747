//! Session tests: resync by mark and sweep, hold time, next-hop groups, replaces and
//! deletes, bad input counted by reason. Time only moves when the test says so.
#![forbid(unsafe_code)]

mod harness;

use std::time::Duration;

use fpm::encode::{self, path};
use fpm::msg::{Gateway, Key, NexthopBody, Path, RouteBody};
use fpm::{Hop, State, Target};
use harness::{ip, paths, v4, H, HOLD, SETTLE};

fn hop(port: u16, via: u32, labels: &[u32], weight: u32) -> Hop {
    Hop {
        port,
        via: Gateway::V4(via),
        labels: labels.to_vec(),
        weight,
    }
}

fn fwd(h: &[Hop]) -> Option<Target> {
    Some(Target::Forward(h.to_vec()))
}

#[test]
fn routes_resolve_to_ports_by_ifindex_or_subnet() {
    let mut h = H::new();
    h.route(
        v4(1, 0, 0, 0, 8),
        paths(&[path(ip(10, 0, 1, 2), 5, &[100], 1)]),
    );
    h.route(
        v4(2, 0, 0, 0, 8),
        paths(&[
            path(ip(10, 0, 0, 2), 99, &[], 1),
            path(ip(10, 0, 1, 3), 0, &[7, 8], 2),
        ]),
    );
    h.route(v4(3, 0, 0, 0, 8), RouteBody::Drop);
    h.route(
        v4(4, 0, 0, 0, 8),
        paths(&[Path {
            gateway: None,
            ifindex: 5,
            labels: vec![],
            weight: 1,
        }]),
    );
    // zebra's connected route of port 0's subnet, on an unmapped ifindex.
    let iface = Path {
        gateway: None,
        ifindex: 3,
        labels: vec![],
        weight: 1,
    };
    h.route(v4(10, 0, 0, 0, 24), paths(&[iface]));
    assert_eq!(
        h.changes(),
        vec![
            (
                v4(1, 0, 0, 0, 8),
                fwd(&[hop(1, ip(10, 0, 1, 2), &[100], 1)])
            ),
            (
                v4(2, 0, 0, 0, 8),
                fwd(&[
                    hop(0, ip(10, 0, 0, 2), &[], 1),
                    hop(1, ip(10, 0, 1, 3), &[7, 8], 2)
                ])
            ),
            (v4(3, 0, 0, 0, 8), Some(Target::Drop)),
            (v4(4, 0, 0, 0, 8), Some(Target::Connected { port: 1 })),
            (v4(10, 0, 0, 0, 24), Some(Target::Connected { port: 0 })),
        ]
    );
}

#[test]
fn label_entries_swap_pop_and_pop_and_lookup() {
    let mut h = H::new();
    h.route(
        Key::Label(100),
        paths(&[path(ip(10, 0, 0, 2), 0, &[200, 300], 1)]),
    );
    h.route(
        Key::Label(101),
        paths(&[
            path(ip(10, 0, 0, 2), 0, &[3], 1),
            path(ip(10, 0, 1, 2), 0, &[], 1),
        ]),
    );
    h.route(
        Key::Label(102),
        paths(&[Path {
            gateway: None,
            ifindex: 1,
            labels: vec![],
            weight: 1,
        }]),
    );
    h.route(
        Key::Label(103),
        paths(&[
            path(ip(10, 0, 0, 2), 0, &[200], 1),
            path(ip(10, 0, 1, 2), 0, &[], 1),
        ]),
    );
    assert_eq!(
        h.changes(),
        vec![
            (
                Key::Label(100),
                Some(Target::Swap(vec![hop(0, ip(10, 0, 0, 2), &[200, 300], 1)]))
            ),
            (
                Key::Label(101),
                Some(Target::Pop(vec![
                    hop(0, ip(10, 0, 0, 2), &[], 1),
                    hop(1, ip(10, 0, 1, 2), &[], 1)
                ]))
            ),
            (Key::Label(102), Some(Target::PopAndLookup)),
        ]
    );
    assert_eq!(h.errors("mixed_label_ops"), 1);
}

#[test]
fn replace_emits_only_real_changes_and_delete_withdraws() {
    let mut h = H::new();
    let a = paths(&[path(ip(10, 0, 0, 2), 0, &[], 1)]);
    h.route(v4(1, 0, 0, 0, 8), a.clone());
    h.changes();
    h.route(v4(1, 0, 0, 0, 8), a);
    assert_eq!(h.changes(), vec![]);
    h.route(
        v4(1, 0, 0, 0, 8),
        paths(&[path(ip(10, 0, 0, 3), 0, &[], 1)]),
    );
    assert_eq!(
        h.changes(),
        vec![(v4(1, 0, 0, 0, 8), fwd(&[hop(0, ip(10, 0, 0, 3), &[], 1)]))]
    );
    h.del(v4(1, 0, 0, 0, 8));
    assert_eq!(h.changes(), vec![(v4(1, 0, 0, 0, 8), None)]);
    h.del(v4(1, 0, 0, 0, 8));
    assert_eq!(h.changes(), vec![]);
}

#[test]
fn next_hop_group_change_moves_every_route_using_it() {
    let mut h = H::new();
    let nh = |g: u32, labels: &[u32]| {
        NexthopBody::Single(Path {
            gateway: Some(Gateway::V4(g)),
            ifindex: 0,
            labels: labels.to_vec(),
            weight: 1,
        })
    };
    h.nh(1, nh(ip(10, 0, 0, 2), &[16]));
    h.nh(2, nh(ip(10, 0, 1, 2), &[]));
    h.nh(10, NexthopBody::Group(vec![(1, 1), (2, 3)]));
    for i in 0..100u8 {
        h.route(v4(20, i, 0, 0, 16), RouteBody::Group(10));
    }
    h.route(v4(30, 0, 0, 0, 8), RouteBody::Group(2));
    let c = h.changes();
    assert_eq!(c.len(), 101);
    assert_eq!(
        c[0].1,
        fwd(&[
            hop(0, ip(10, 0, 0, 2), &[16], 1),
            hop(1, ip(10, 0, 1, 2), &[], 3)
        ])
    );
    // The member 2 moves: the group's 100 routes and the direct user follow.
    h.nh(2, nh(ip(10, 0, 1, 9), &[]));
    let c = h.changes();
    assert_eq!(c.len(), 101);
    assert!(c
        .iter()
        .any(|(k, t)| *k == v4(30, 0, 0, 0, 8) && *t == fwd(&[hop(1, ip(10, 0, 1, 9), &[], 1)])));
    // The group changes weights.
    h.nh(10, NexthopBody::Group(vec![(1, 2)]));
    let c = h.changes();
    assert_eq!(c.len(), 100);
    assert_eq!(c[0].1, fwd(&[hop(0, ip(10, 0, 0, 2), &[16], 2)]));
    // A blackhole next hop drops.
    h.nh(3, NexthopBody::Blackhole);
    h.route(v4(40, 0, 0, 0, 8), RouteBody::Group(3));
    assert_eq!(h.changes(), vec![(v4(40, 0, 0, 0, 8), Some(Target::Drop))]);
}

#[test]
fn route_before_its_group_waits_for_it() {
    let mut h = H::new();
    h.route(v4(1, 0, 0, 0, 8), RouteBody::Group(5));
    assert_eq!(h.changes(), vec![]);
    assert_eq!(h.errors("unknown_nexthop_group"), 1);
    h.nh(5, NexthopBody::Single(path(ip(10, 0, 0, 2), 0, &[], 1)));
    assert_eq!(
        h.changes(),
        vec![(v4(1, 0, 0, 0, 8), fwd(&[hop(0, ip(10, 0, 0, 2), &[], 1)]))]
    );
}

#[test]
fn resync_sweeps_only_what_was_not_sent_again() {
    let mut h = H::new();
    let a = paths(&[path(ip(10, 0, 0, 2), 0, &[], 1)]);
    h.route(v4(1, 0, 0, 0, 8), a.clone());
    h.route(v4(2, 0, 0, 0, 8), a.clone());
    h.route(v4(3, 0, 0, 0, 8), a.clone());
    h.advance(SETTLE);
    assert_eq!(h.s.state(), State::Established);
    h.changes();
    // zebra restarts: disconnect, reconnect, resend 1 (same) and 3 (changed), not 2.
    h.s.disconnect(h.now);
    assert_eq!(h.s.state(), State::Holding);
    h.advance(Duration::from_secs(2));
    h.s.connect(h.now);
    h.route(v4(1, 0, 0, 0, 8), a);
    h.route(
        v4(3, 0, 0, 0, 8),
        paths(&[path(ip(10, 0, 0, 9), 0, &[], 1)]),
    );
    assert_eq!(
        h.changes(),
        vec![(v4(3, 0, 0, 0, 8), fwd(&[hop(0, ip(10, 0, 0, 9), &[], 1)]))]
    );
    // Quiet but not long enough: nothing swept yet.
    h.advance(SETTLE - Duration::from_millis(1));
    assert_eq!(h.changes(), vec![]);
    h.advance(Duration::from_millis(1));
    assert_eq!(h.changes(), vec![(v4(2, 0, 0, 0, 8), None)]);
    assert_eq!(h.s.state(), State::Established);
    assert_eq!(h.s.stats().resyncs, 2);
    // The old hold timer does not fire later.
    h.advance(HOLD);
    assert_eq!(h.changes(), vec![]);
}

#[test]
fn hold_time_then_withdraw_everything() {
    let mut h = H::new();
    h.nh(1, NexthopBody::Single(path(ip(10, 0, 0, 2), 0, &[], 1)));
    h.route(v4(1, 0, 0, 0, 8), RouteBody::Group(1));
    h.route(
        Key::Label(500),
        paths(&[path(ip(10, 0, 0, 2), 0, &[600], 1)]),
    );
    h.advance(SETTLE);
    h.changes();
    h.s.disconnect(h.now);
    h.advance(HOLD - Duration::from_millis(1));
    assert_eq!(h.changes(), vec![]);
    h.advance(Duration::from_millis(1));
    let mut c = h.changes();
    c.sort_by_key(|x| x.0);
    assert_eq!(c, vec![(v4(1, 0, 0, 0, 8), None), (Key::Label(500), None)]);
    assert_eq!(h.s.state(), State::Idle);
    assert_eq!(h.s.stats().hold_withdrawals, 1);
    assert_eq!(h.s.installed(), (0, 0, 0));
}

#[test]
fn bad_messages_are_skipped_and_counted_and_the_stream_goes_on() {
    let mut h = H::new();
    let good = encode::route(
        v4(1, 0, 0, 0, 8),
        Some(&paths(&[path(ip(10, 0, 0, 2), 0, &[], 1)])),
    );
    let deep: Vec<u32> = (100..110).collect();
    h.send(&[
        encode::route(
            v4(2, 0, 0, 0, 8),
            Some(&paths(&[path(ip(10, 0, 0, 2), 0, &deep, 1)])),
        ),
        encode::route(
            Key::Label(4),
            Some(&paths(&[path(ip(10, 0, 0, 2), 0, &[], 1)])),
        ),
        encode::route(
            v4(3, 0, 0, 0, 8),
            Some(&paths(&[path(ip(192, 0, 2, 1), 0, &[], 1)])),
        ),
        good,
    ]);
    assert_eq!(h.changes().len(), 1);
    assert_eq!(h.errors("label_depth"), 1);
    assert_eq!(h.errors("reserved_in_label"), 1);
    assert_eq!(h.errors("no_port"), 1);
    assert_eq!(h.s.stats().messages[0], 2);
}

#[test]
fn framing_errors_close_the_session_and_cut_frames_count() {
    let mut h = H::new();
    assert!(h.s.feed(&[2, 1, 0, 8, 0, 0, 0, 0], h.now).is_err());
    assert_eq!(h.errors("bad_version"), 1);
    h.s.disconnect(h.now);
    h.s.connect(h.now);
    assert!(h.s.feed(&[1, 1, 0, 2], h.now).is_err());
    assert_eq!(h.errors("short_length"), 1);
    h.s.disconnect(h.now);
    h.s.connect(h.now);
    h.s.feed(&[1, 1, 0, 40, 0], h.now).unwrap();
    h.s.disconnect(h.now);
    assert_eq!(h.errors("truncated_frame"), 1);
}

#[test]
fn a_stream_in_one_byte_chunks_gives_the_same_result() {
    let mut stream = Vec::new();
    for i in 0..20u8 {
        stream.extend(encode::frame(&[encode::route(
            v4(1, i, 0, 0, 16),
            Some(&paths(&[path(ip(10, 0, 0, 2), 0, &[16 + i as u32], 1)])),
        )]));
    }
    let mut whole = H::new();
    whole.s.feed(&stream, whole.now).unwrap();
    let mut bytes = H::new();
    for b in &stream {
        bytes.s.feed(std::slice::from_ref(b), bytes.now).unwrap();
    }
    assert_eq!(whole.changes(), bytes.changes());
    assert_eq!(whole.s.installed(), (20, 0, 0));
}
