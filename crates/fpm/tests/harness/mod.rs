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

/// Port 0: 10.0.0.0/24; port 1: 10.0.1.0/24 and ifindex 5.
pub fn ports() -> PortMap {
    PortMap::new(
        vec![
            PortSubnets {
                id: 0,
                subnets: vec![(ip(10, 0, 0, 1), 24)],
            },
            PortSubnets {
                id: 1,
                subnets: vec![(ip(10, 0, 1, 1), 24)],
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
