//! The FPM input path on arbitrary bytes: frame reassembly over arbitrary chunking,
//! netlink decoding, and the session (groups, resync, hold time). Errors are fine,
//! panics are not, and the changes the session emits must add up to what it says is
//! installed.
#![no_main]

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use fpm::netlink::{Limits, Messages};
use fpm::{PortMap, PortSubnets, Session, SessionConfig};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits { max_labels: 8 };
    // The whole input as one frame's payload.
    for m in Messages::new(data, limits) {
        let _ = m.map_err(|e| e.reason());
    }
    // The input as a stream: the first byte picks the chunk size, the second how often
    // time jumps past the resync settle and whether the peer reconnects.
    let (chunk, ctl, rest) = match data {
        [c, t, rest @ ..] => ((*c as usize % 64) + 1, *t, rest),
        _ => return,
    };
    let ports = vec![
        PortSubnets {
            id: 0,
            subnets: vec![(0x0a00_0001, 24)],
            subnets6: vec![(0x2001_0db8 << 96 | 1, 64)],
        },
        PortSubnets {
            id: 1,
            subnets: vec![(0x0a00_0101, 24)],
            subnets6: vec![(0x2001_0db8_0001 << 80 | 1, 64)],
        },
    ];
    let cfg = SessionConfig {
        hold_time: Duration::from_secs(30),
        resync_settle: Duration::from_millis(100),
        resync_min: Duration::ZERO,
        limits,
    };
    let mut now = Instant::now();
    let mut s = Session::new(cfg, PortMap::new(ports, HashMap::from([(3, 0), (5, 1)])), now);
    s.connect(now);
    let mut table = BTreeMap::new();
    for (i, c) in rest.chunks(chunk).enumerate() {
        if s.feed(c, now).is_err() {
            s.disconnect(now);
            s.connect(now);
        }
        if ctl != 0 && i % (ctl as usize) == 0 {
            now += Duration::from_millis(150);
            s.poll(now);
            if ctl & 1 == 1 {
                s.disconnect(now);
                s.connect(now);
            }
        }
        for ch in s.take_changes() {
            match ch.target {
                Some(t) => table.insert(ch.key, t),
                None => table.remove(&ch.key),
            };
        }
        let _ = s.take_events();
    }
    let (v4, v6, labels) = s.installed();
    assert_eq!(v4 + v6 + labels, table.len());
    s.disconnect(now);
    s.poll(now + Duration::from_secs(31));
    for ch in s.take_changes() {
        assert!(ch.target.is_none());
        table.remove(&ch.key);
    }
    assert!(table.is_empty(), "hold expiry left routes: {table:?}");
});
