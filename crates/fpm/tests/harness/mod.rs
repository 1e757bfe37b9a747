//! One harness for the session tests: a session with two ports, a clock that only moves
//! when told, and helpers that send zebra-style frames.
#![allow(dead_code)]

use std::collections::HashMap;
use std::time::{Duration, Instant};

use fpm::encode;
use fpm::msg::{Key, NexthopBody, Path, RouteBody};
use fpm::{Limits, PortMap, PortSubnets, Session, SessionConfig, Target};

pub const HOLD: Duration = Duration::from_secs(30);
pub const SETTLE: Duration = Duration::from_millis(500);

pub fn ip(a: u8, b: u8, c: u8, d: u8) -> u32 {
    u32::from_be_bytes([a, b, c, d])
}

/// 2001:db8:0::/64, 2001:db8:1::/64 (ports 0 and 1) and fe80::/64, as integers.
pub const DB8_0: u128 = 0x2001_0db8_0000_0000 << 64;
pub const DB8_1: u128 = 0x2001_0db8_0001_0000 << 64;
pub const LL: u128 = 0xfe80 << 112;

/// `::ffff:a.b.c.d`, the IPv4-mapped IPv6 address zebra writes for a 6PE next hop.
pub fn mapped(a: u32) -> u128 {
    0xffff << 32 | a as u128
}

pub fn v6(addr: u128, len: u8) -> Key {
    Key::Ipv6 { addr, len }
}

/// Port 0: 10.0.0.0/24, 169.254.0.0/16 and 2001:db8:0::/64; port 1: 10.0.1.0/24,
/// 2001:db8:1::/64 and ifindex 5; both have fe80::/64.
pub fn ports() -> PortMap {
    PortMap::new(
        vec![
            PortSubnets {
                id: 0,
                subnets: vec![(ip(10, 0, 0, 1), 24), (ip(169, 254, 0, 9), 16)],
                subnets6: vec![(DB8_0 | 1, 64), (LL | 1, 64)],
            },
            PortSubnets {
                id: 1,
                subnets: vec![(ip(10, 0, 1, 1), 24)],
                subnets6: vec![(DB8_1 | 1, 64), (LL | 1, 64)],
            },
        ],
        HashMap::from([(5, 1)]),
    )
}

pub fn v4(a: u8, b: u8, c: u8, d: u8, len: u8) -> Key {
    Key::Ipv4 {
        addr: ip(a, b, c, d),
        len,
    }
}

pub struct H {
    pub s: Session,
    pub now: Instant,
}

impl H {
    pub fn new() -> H {
        let now = Instant::now();
        let cfg = SessionConfig {
            hold_time: HOLD,
            resync_settle: SETTLE,
            resync_min: Duration::ZERO,
            limits: Limits { max_labels: 8 },
        };
        let mut s = Session::new(cfg, ports(), now);
        s.connect(now);
        H { s, now }
    }

    /// Sends the messages as one frame.
    pub fn send(&mut self, msgs: &[Vec<u8>]) {
        let f = encode::frame(msgs);
        self.s.feed(&f, self.now).expect("valid frame");
    }

    pub fn route(&mut self, key: Key, body: RouteBody) {
        self.send(&[encode::route(key, Some(&body))]);
    }

    pub fn del(&mut self, key: Key) {
        self.send(&[encode::route(key, None)]);
    }

    pub fn nh(&mut self, id: u32, body: NexthopBody) {
        self.send(&[encode::nexthop(id, Some(&body))]);
    }

    pub fn advance(&mut self, d: Duration) {
        self.now += d;
        self.s.poll(self.now);
    }

    /// Changes since the last call, as (key, target).
    pub fn changes(&mut self) -> Vec<(Key, Option<Target>)> {
        self.s
            .take_changes()
            .into_iter()
            .map(|c| (c.key, c.target.map(|t| (*t).clone())))
            .collect()
    }

    pub fn errors(&self, reason: &str) -> u64 {
        self.s.stats().errors_of(reason)
    }
}

pub fn paths(ps: &[Path]) -> RouteBody {
    RouteBody::Paths(ps.to_vec())
}
