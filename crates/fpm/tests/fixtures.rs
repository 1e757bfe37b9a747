//! Real zebra byte streams (FRR 8.4, `dplane_fpm_nl`, recorded by the FRR harness; see
//! `tests/data/NOTES.md`) replayed through the session: the decoder and the session
//! must give exactly the routes zebra selected, with and without next-hop groups.
//! Interfaces in the recording: ifindex 3/5/7 = port0/port1/port2 (10.0.{0,1,2}.1/24).
#![forbid(unsafe_code)]

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use fpm::msg::Gateway;
use fpm::{Hop, Key, Limits, PortMap, PortSubnets, Session, SessionConfig, State, Target};

type Table = BTreeMap<Key, Target>;

fn ip(a: u8, b: u8, c: u8, d: u8) -> u32 {
    u32::from_be_bytes([a, b, c, d])
}

fn data(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn session(now: Instant) -> Session {
    session_with(now, Duration::ZERO)
}

fn session_with(now: Instant, resync_min: Duration) -> Session {
    session_map(now, resync_min, HashMap::from([(3, 0), (5, 1), (7, 2)]))
}

fn session_map(now: Instant, resync_min: Duration, by_ifindex: HashMap<u32, u16>) -> Session {
    let ports = (0..3u8)
        .map(|i| PortSubnets {
            id: i as u16,
            subnets: vec![(ip(10, 0, i, 1), 24)],
            subnets6: Vec::new(),
        })
        .collect();
    let cfg = SessionConfig {
        hold_time: Duration::from_secs(30),
        resync_settle: Duration::from_millis(500),
        resync_min,
        limits: Limits { max_labels: 8 },
    };
    Session::new(cfg, PortMap::new(ports, by_ifindex), now)
}

fn apply(t: &mut Table, s: &mut Session) -> usize {
    let c = s.take_changes();
    for ch in &c {
        match &ch.target {
            Some(x) => t.insert(ch.key, (**x).clone()),
            None => t.remove(&ch.key),
        };
    }
    c.len()
}

/// The table after each part of connection 1 of `scenario`.
fn replay(scenario: &str) -> Vec<Table> {
    replay_with(scenario, HashMap::from([(3, 0), (5, 1), (7, 2)]))
}

fn replay_with(scenario: &str, by_ifindex: HashMap<u32, u16>) -> Vec<Table> {
    let mut now = Instant::now();
    let mut s = session_map(now, Duration::ZERO, by_ifindex);
    s.connect(now);
    let mut t = Table::new();
    let mut out = Vec::new();
    for part in 0.. {
        let name = format!("{scenario}.1.{part}.bin");
        if !PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(&name)
            .exists()
        {
            break;
        }
        s.feed(&data(&name), now).unwrap();
        now += Duration::from_secs(2);
        s.poll(now);
        apply(&mut t, &mut s);
        out.push(t.clone());
    }
    // Nothing is refused: the IPv6 link-local route (fe80::/64, once per connect) is
    // not forwarded, so it decodes as a message the router does not use.
    let st = s.stats();
    let errors: u64 = st.errors.iter().sum();
    assert_eq!(errors, 0, "{scenario}: {st:?}");
    assert!(
        st.messages[fpm::MESSAGE_KINDS.len() - 1] >= 1,
        "{scenario}: {st:?}"
    );
    let link_local = |k: &Key| matches!(k, Key::Ipv6 { addr, .. } if addr >> 112 == 0xfe80);
    assert!(!out.iter().flat_map(|t| t.keys()).any(link_local));
    out
}

fn v4(a: u8, b: u8, c: u8, d: u8, len: u8) -> Key {
    Key::Ipv4 {
        addr: ip(a, b, c, d),
        len,
    }
}

fn hop(port: u16, via: u32, labels: &[u32]) -> Hop {
    Hop {
        port,
        via: fpm::msg::Gateway::V4(via),
        labels: labels.to_vec(),
        weight: 1,
    }
}

fn connected() -> Table {
    (0..3u8)
        .map(|i| (v4(10, 0, i, 0, 24), Target::Connected { port: i as u16 }))
        .collect()
}

fn with(entries: &[(Key, Target)]) -> Table {
    let mut t = connected();
    t.extend(entries.iter().cloned());
    t
}

/// Both variants give the same tables, and these.
fn check(scenario: &str, want: &[Table]) {
    let nhg = replay(scenario);
    let plain = replay(&format!("{scenario}-nonhg"));
    assert_eq!(nhg, want, "{scenario} with next-hop groups");
    assert_eq!(plain, want, "{scenario} without next-hop groups");
}

#[test]
fn a_static_routes_added_and_deleted() {
    let added = with(&[
        (
            v4(192, 0, 2, 0, 24),
            Target::Forward(vec![hop(1, ip(10, 0, 1, 2), &[])]),
        ),
        (
            v4(198, 51, 100, 0, 24),
            Target::Forward(vec![hop(0, ip(10, 0, 0, 2), &[])]),
        ),
        (
            v4(203, 0, 113, 7, 32),
            Target::Forward(vec![hop(2, ip(10, 0, 2, 2), &[])]),
        ),
    ]);
    check("a-static", &[connected(), added, connected()]);
}

#[test]
fn b_ecmp_and_replace_in_one_frame() {
    let both = Target::Forward(vec![
        hop(1, ip(10, 0, 1, 2), &[]),
        hop(2, ip(10, 0, 2, 2), &[]),
    ]);
    let same_port = Target::Forward(vec![
        hop(1, ip(10, 0, 1, 2), &[]),
        hop(1, ip(10, 0, 1, 3), &[]),
    ]);
    let one = Target::Forward(vec![hop(1, ip(10, 0, 1, 2), &[])]);
    check(
        "b-ecmp",
        &[
            connected(),
            with(&[
                (v4(192, 0, 2, 0, 24), both),
                (v4(198, 51, 100, 0, 24), same_port.clone()),
            ]),
            with(&[
                (v4(192, 0, 2, 0, 24), one),
                (v4(198, 51, 100, 0, 24), same_port),
            ]),
            connected(),
        ],
    );
}

#[test]
fn c_push_labels_single_stacked_and_per_path() {
    let added = with(&[
        (
            v4(192, 0, 2, 0, 24),
            Target::Forward(vec![hop(1, ip(10, 0, 1, 2), &[100])]),
        ),
        (
            v4(198, 51, 100, 0, 24),
            Target::Forward(vec![hop(1, ip(10, 0, 1, 2), &[100, 200])]),
        ),
        (
            v4(203, 0, 113, 0, 24),
            Target::Forward(vec![
                hop(1, ip(10, 0, 1, 2), &[300]),
                hop(2, ip(10, 0, 2, 2), &[301]),
            ]),
        ),
    ]);
    check("c-push", &[connected(), added, connected()]);
}

#[test]
fn d_lsp_swap_php_explicit_null_ecmp() {
    let base = [
        (
            Key::Label(100),
            Target::Swap(vec![hop(1, ip(10, 0, 1, 2), &[200])]),
        ),
        (
            Key::Label(101),
            Target::Pop(vec![hop(1, ip(10, 0, 1, 2), &[])]),
        ),
        (
            Key::Label(102),
            Target::Swap(vec![hop(1, ip(10, 0, 1, 2), &[0])]),
        ),
    ];
    let mut part1 = with(&base);
    part1.insert(
        Key::Label(103),
        Target::Swap(vec![
            hop(1, ip(10, 0, 1, 2), &[500]),
            hop(2, ip(10, 0, 2, 2), &[501]),
        ]),
    );
    let mut part2 = with(&base);
    part2.insert(
        Key::Label(103),
        Target::Swap(vec![hop(1, ip(10, 0, 1, 2), &[500])]),
    );
    check("d-lsp", &[connected(), part1, part2, connected()]);
}

#[test]
fn h_blackhole_and_unreachable_drop() {
    let added = with(&[
        (v4(192, 0, 2, 0, 24), Target::Drop),
        (v4(198, 51, 100, 0, 24), Target::Drop),
        (v4(203, 0, 113, 0, 24), Target::Drop),
    ]);
    check("h-blackhole", &[connected(), added, connected()]);
}

#[test]
fn i_replace_moves_the_route_and_back() {
    let p1 = Target::Forward(vec![hop(1, ip(10, 0, 1, 2), &[])]);
    let p2 = Target::Forward(vec![hop(2, ip(10, 0, 2, 2), &[])]);
    let k = v4(192, 0, 2, 0, 24);
    check(
        "i-replace",
        &[
            connected(),
            with(&[(k, p1.clone())]),
            with(&[(k, p2)]),
            with(&[(k, p1)]),
        ],
    );
}

/// zebra restarted: the new session renumbers next-hop objects (id 11 was a gateway,
/// becomes an interface) and resends everything. Nothing may move in between, and the
/// sweep withdraws nothing.
fn restart(scenario: &str) {
    let mut now = Instant::now();
    let mut s = session(now);
    let mut t = Table::new();
    s.connect(now);
    s.feed(&data(&format!("{scenario}.1.0.bin")), now).unwrap();
    now += Duration::from_secs(1);
    s.poll(now);
    apply(&mut t, &mut s);
    assert!(t.len() > 3, "{scenario}: {t:?}");
    s.disconnect(now);
    now += Duration::from_secs(5);
    s.poll(now);
    s.connect(now);
    let bytes = data(&format!("{scenario}.2.0.bin"));
    for chunk in bytes.chunks(7) {
        s.feed(chunk, now).unwrap();
        assert_eq!(
            s.take_changes(),
            vec![],
            "{scenario}: a route moved during the resync"
        );
    }
    now += Duration::from_secs(1);
    s.poll(now);
    assert_eq!(s.state(), State::Established);
    assert_eq!(
        apply(&mut t, &mut s),
        0,
        "{scenario}: the sweep withdrew something"
    );
    assert_eq!(s.stats().swept, 0);
}

#[test]
fn g_restart_resync_disturbs_nothing() {
    restart("g-restart");
    restart("g-restart-nonhg");
}

/// Splits an FPM stream after `n` frames.
fn split_frames(bytes: &[u8], n: usize) -> (&[u8], &[u8]) {
    let mut at = 0;
    for _ in 0..n {
        at += u16::from_be_bytes([bytes[at + 2], bytes[at + 3]]) as usize;
    }
    bytes.split_at(at)
}

/// After a zebra restart the resend comes in two waves (recorder.log, whose frame counts
/// run on across connections: zebra's own routes at connect, staticd's 6.4 s later). `resync_min` keeps the
/// static routes through the gap; a quiet period alone would sweep them and put them
/// back 6 s later.
fn two_waves(scenario: &str, first_wave: usize, resync_min: Duration) -> Vec<(Key, bool)> {
    let mut now = Instant::now();
    let mut s = session_with(now, resync_min);
    let mut t = Table::new();
    s.connect(now);
    s.feed(&data(&format!("{scenario}.1.0.bin")), now).unwrap();
    now += Duration::from_secs(16);
    s.poll(now);
    apply(&mut t, &mut s);
    s.disconnect(now);
    now += Duration::from_secs(3);
    s.connect(now);
    let bytes = data(&format!("{scenario}.2.0.bin"));
    let (first, second) = split_frames(&bytes, first_wave);
    s.feed(first, now).unwrap();
    let mut moved = Vec::new();
    for _ in 0..64 {
        now += Duration::from_millis(100);
        s.poll(now);
    }
    moved.extend(
        s.take_changes()
            .into_iter()
            .map(|c| (c.key, c.target.is_some())),
    );
    s.feed(second, now).unwrap();
    now += Duration::from_secs(16);
    s.poll(now);
    moved.extend(
        s.take_changes()
            .into_iter()
            .map(|c| (c.key, c.target.is_some())),
    );
    assert_eq!(s.state(), State::Established);
    moved
}

#[test]
fn g_restart_in_two_waves_keeps_the_routes_of_the_second_wave() {
    for (scenario, first_wave) in [("g-restart", 37 - 22), ("g-restart-nonhg", 15 - 9)] {
        assert_eq!(
            two_waves(scenario, first_wave, Duration::from_secs(15)),
            vec![],
            "{scenario}"
        );
        // Without the minimum, the static routes flap: withdrawn, then added back.
        let flaps = two_waves(scenario, first_wave, Duration::ZERO);
        assert!(
            flaps.contains(&(v4(192, 0, 2, 0, 24), false)),
            "{scenario}: {flaps:?}"
        );
        assert!(
            flaps.contains(&(v4(192, 0, 2, 0, 24), true)),
            "{scenario}: {flaps:?}"
        );
    }
}

/// Without `fpm.interfaces` the ports' subnets place every next hop (gateways) and
/// zebra's connected routes (their prefixes): the same tables.
#[test]
fn subnet_mapping_alone_gives_the_same_tables() {
    for sc in [
        "a-static",
        "b-ecmp",
        "c-push",
        "d-lsp",
        "h-blackhole",
        "i-replace",
    ] {
        for v in [sc.to_string(), format!("{sc}-nonhg")] {
            assert_eq!(replay_with(&v, HashMap::new()), replay(&v), "{v}");
        }
    }
}

/// IPv6 from zebra (j-ipv6, ports with 2001:db8:N::1/64): a global gateway, ECMP, a label
/// stack, a link-local gateway with its interface, 6PE through `::ffff:10.0.1.2` (the
/// IPv4 next hop), a blackhole, and LSPs via IPv6 next hops (swap, PHP); then deletes
/// and an ECMP set shrinking. (`ipv6 route ... ::ffff:10.0.1.2 label 601` without an
/// interface is in the steps too: zebra 8.4 does not resolve it and sends nothing.)
#[test]
fn j_ipv6_native_6pe_link_local_blackhole_and_lsps() {
    let g6 = |n: u128| Gateway::V6(0x2001_0db8 << 96 | n << 80 | 2);
    let h6 = |port: u16, n: u128, labels: &[u32]| Hop {
        port,
        via: g6(n),
        labels: labels.to_vec(),
        weight: 1,
    };
    let p48 = |n: u128| Key::Ipv6 {
        addr: 0x2001_0db8 << 96 | n << 80,
        len: 48,
    };
    let mut base = connected();
    for i in 0..3u8 {
        let net = 0x2001_0db8 << 96 | (i as u128) << 80;
        base.insert(
            Key::Ipv6 { addr: net, len: 64 },
            Target::Connected { port: i as u16 },
        );
    }
    let ll = Hop {
        via: Gateway::V6(0xfe80 << 112 | 2),
        ..h6(1, 1, &[])
    };
    let mut added = base.clone();
    added.extend([
        (p48(0x100), Target::Forward(vec![h6(1, 1, &[])])),
        (
            p48(0x200),
            Target::Forward(vec![h6(1, 1, &[]), h6(2, 2, &[])]),
        ),
        (p48(0x300), Target::Forward(vec![h6(1, 1, &[300, 301])])),
        (p48(0x400), Target::Forward(vec![ll])),
        (
            p48(0x600),
            Target::Forward(vec![hop(1, ip(10, 0, 1, 2), &[600])]),
        ),
        (p48(0x700), Target::Drop),
        (Key::Label(1000), Target::Swap(vec![h6(1, 1, &[2000])])),
        (Key::Label(1001), Target::Pop(vec![h6(2, 2, &[])])),
    ]);
    let mut after = added.clone();
    after.remove(&p48(0x100));
    after.remove(&Key::Label(1000));
    after.insert(p48(0x200), Target::Forward(vec![h6(1, 1, &[])]));
    check("j-ipv6", &[base, added, after]);
}
