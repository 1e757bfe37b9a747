//! The fast path against the staged path: random tables, settings (depth limit, VLAN,
//! options), input ports and random (often nearly valid) frames go through
//! `process_burst_counted` (fast paths first, the worker's entry) and
//! `process_burst_staged` (stages only); verdicts and output bytes must be identical for
//! every packet. Frames are mostly addressed to
//! the input port, else to another station, a MAC one byte off, another port of the
//! router, broadcast or multicast; sources are sometimes the router's own addresses.
//! Payloads are IPv4 or IPv6 (global, link-local, multicast, NDP, own addresses), plain or
//! labelled; adjacencies carry IPv4 or IPv6, and IPv6 routes (6PE among them) sit beside
//! the IPv4 ones; IPv6 carries hop-by-hop, destination options and fragment headers, and
//! the default IPv6 route is sometimes missing (no route). A share of the frames are as an
//! egress LER receives them: one label, an explicit null or a bound (often pop-and-lookup)
//! one, over either family, with TTLs at the edges.
#![forbid(unsafe_code)]

mod pipeline_support;

use net::fib::{Adjacency, Family, Fib, LabelEntry, LabelOp, NextHop, RouteTarget, TtlMode};
use net::packet::{PacketBuf, VecBuf};
use net::pipeline::{DropReason, PipelineConfig, Verdict};
use pipeline_support::*;
use proptest::prelude::*;

/// Labels the random tables bind (frames draw from these and a few others).
const LABELS: std::ops::Range<u32> = 16..24;

#[derive(Clone, Debug)]
struct AdjSpec {
    port: u16,
    labels: Vec<u32>,
    mtu: u16,
    resolved: bool,
}

#[derive(Clone, Debug)]
struct TableSpec {
    adjs: Vec<AdjSpec>,
    /// Per bound label: op (0 swap, 1 pop, 2 pop-and-lookup), adjacency or ECMP of the
    /// first two, TTL mode.
    labels: Vec<(u8, usize, bool, Option<u8>)>,
    /// Per route: target kind, adjacency, TTL mode, and whether the next hop carries
    /// IPv6 (a table allows it; the config and FPM refuse such routes); the first is
    /// the default route, the others are /8s from 10.0.0.0/8 upwards.
    routes: Vec<(u8, usize, Option<u8>, bool)>,
    /// Per bound label: whether its next hop carries IPv6 (a pop exposes IPv6 to it).
    label_v6: Vec<bool>,
    /// IPv6 routes as `routes` (prefixes 2001:db8:N::/48, the first ::/0) and whether the
    /// next hop carries IPv6 (else IPv4: 6PE when it pushes labels).
    routes6: Vec<(u8, usize, Option<u8>, bool)>,
}

fn adj_spec() -> impl Strategy<Value = AdjSpec> {
    (
        0u16..3,
        proptest::collection::vec(16u32..(1 << 20), 0..3),
        prop_oneof![Just(1500u16), Just(9000), 40u16..200],
        prop_oneof![4 => Just(true), 1 => Just(false)],
    )
        .prop_map(|(port, labels, mtu, resolved)| AdjSpec {
            port,
            labels,
            mtu,
            resolved,
        })
}

fn mode(m: Option<u8>) -> TtlMode {
    m.map_or(TtlMode::Uniform, TtlMode::Pipe)
}

fn table_spec() -> impl Strategy<Value = TableSpec> {
    let ttl_mode = prop_oneof![3 => Just(None), 1 => any::<u8>().prop_map(Some)];
    (
        proptest::collection::vec(adj_spec(), 1..5),
        proptest::collection::vec((0u8..3, 0usize..8, any::<bool>(), ttl_mode.clone()), 8),
        proptest::collection::vec(
            (
                0u8..5,
                0usize..8,
                ttl_mode.clone(),
                prop_oneof![4 => Just(false), 1 => Just(true)],
            ),
            5,
        ),
        proptest::collection::vec(any::<bool>(), 8),
        proptest::collection::vec((0u8..5, 0usize..8, ttl_mode, any::<bool>()), 5),
    )
        .prop_map(|(adjs, labels, routes, label_v6, routes6)| TableSpec {
            adjs,
            labels,
            routes,
            label_v6,
            routes6,
        })
}

fn build(t: &TableSpec) -> Fib {
    let mut b = builder();
    // Each adjacency twice: carrying IPv4, and IPv6.
    let mut ids = [Vec::new(), Vec::new()];
    for a in &t.adjs {
        let dst_mac = a.resolved.then(|| nh_mac(a.port));
        let adj = Adjacency::new(
            a.port,
            a.mtu,
            [10, 0, 0, 2],
            dst_mac,
            port_mac(a.port),
            &a.labels,
        );
        ids[1].push(b.add_adjacency(adj.clone().with_payload(Family::Ipv6)));
        ids[0].push(b.add_adjacency(adj));
    }
    let groups: Vec<_> = ids
        .iter()
        .map(|ids| {
            let members: Vec<_> = ids.iter().map(|&a| (a, 1 + a % 3)).collect();
            b.add_ecmp(&members).unwrap()
        })
        .collect();
    let pick = |i: usize, ecmp_too: bool, v6: bool| {
        let f = v6 as usize;
        if ecmp_too {
            NextHop::Ecmp(groups[f])
        } else {
            NextHop::Adjacency(ids[f][i % ids[f].len()])
        }
    };
    for (k, (label, &(op, nh, ecmp_too, m))) in LABELS.zip(&t.labels).enumerate() {
        let v6 = t.label_v6[k];
        let (op, next_hop) = match op {
            0 => (LabelOp::Swap, Some(pick(nh, ecmp_too, v6))),
            1 => (LabelOp::Pop, Some(pick(nh, ecmp_too, v6))),
            _ => (LabelOp::PopAndLookup, None),
        };
        let entry = LabelEntry {
            op,
            next_hop,
            ttl_mode: mode(m),
        };
        // The builder refuses some combinations (a swap to an adjacency without labels):
        // those labels stay unbound.
        let _ = b.add_label(label, entry);
    }
    for (i, &(kind, nh, m, v6)) in t.routes.iter().enumerate() {
        let target = match kind {
            0 | 1 => RouteTarget::NextHop(pick(nh, kind == 1, v6)),
            2 => RouteTarget::Local,
            3 => RouteTarget::Connected { port: 1 },
            _ => RouteTarget::Blackhole,
        };
        let (net, len) = match i {
            0 => (0, 0),
            _ => (addr([9 + i as u8, 0, 0, 0]), 8),
        };
        b.add_ipv4_route(net, len, route(target, mode(m))).unwrap();
    }
    for (i, &(kind, nh, m, v6)) in t.routes6.iter().enumerate() {
        let target = match kind {
            0 | 1 => RouteTarget::NextHop(pick(nh, kind == 1, v6)),
            2 => RouteTarget::Local,
            3 => RouteTarget::Connected { port: 1 },
            _ => RouteTarget::Blackhole,
        };
        let (net, len) = match i {
            // A blackhole default becomes no default route (no route: unreachable).
            0 if kind == 4 => continue,
            0 => (0, 0),
            _ => (prefix6(i as u16), 48),
        };
        b.add_ipv6_route(net, len, route(target, mode(m))).unwrap();
    }
    b.build(1)
}

/// 2001:db8:`n`::/48.
fn prefix6(n: u16) -> u128 {
    (0x2001_0db8u128 << 96) | (n as u128) << 80
}

/// The router's global IPv6 address on port 0.
const OWN6: u128 = 0x2001_0db8_ffff_0000_0000_0000_0000_0001;

/// An IPv6 address of kind `k`: mostly in a routed /48 (or the default route), else
/// link-local, the router's link-local or global one, multicast (ff02::1:ffxx:xxxx,
/// ff02::5, ff0e::1), unspecified, loopback.
fn addr6(k: u8, low: u16) -> [u8; 16] {
    let a = match k {
        0..=5 => prefix6(k as u16) | low as u128,
        6 => 0xfe80 << 112 | low as u128,
        7 => u128::from_be_bytes(net::wire::ipv6::link_local_from_mac(router_mac(0))),
        8 => OWN6,
        9 => 0xff02_0000_0000_0000_0000_0001_ff00_0000 | low as u128,
        10 => 0xff02 << 112 | 5,
        11 => 0xff0e << 112 | 1,
        12 => 0,
        _ => 1,
    };
    a.to_be_bytes()
}

/// An IPv6 datagram: UDP, or ICMPv6 of type `icmp` (133..=137: NDP), behind `opts`
/// destination options headers, the first of them hop-by-hop (`hbh`) or a fragment
/// header (`frag`: its offset in 8-byte units, 0 the first fragment).
#[derive(Clone, Debug)]
struct Ip6Spec {
    src: (u8, u16),
    dst: (u8, u16),
    hop: u8,
    tc: u8,
    flow: u32,
    icmp: Option<u8>,
    opts: u8,
    hbh: bool,
    frag: Option<u16>,
    len: usize,
}

/// A plain UDP datagram from net 4 to net `net` with hop limit `hop` and traffic class
/// `tc` (flow label 5, 30 bytes of payload): the fixed cases' IPv6 packet.
fn plain_ip6(net: u8, hop: u8, tc: u8) -> Vec<u8> {
    ip6_between(4, net, hop, tc)
}

/// [`plain_ip6`] from net `src`.
fn ip6_between(src: u8, net: u8, hop: u8, tc: u8) -> Vec<u8> {
    Ip6Spec {
        src: (src, 7),
        dst: (net, 9),
        hop,
        tc,
        flow: 5,
        icmp: None,
        opts: 0,
        hbh: false,
        frag: None,
        len: 30,
    }
    .bytes()
}

fn ip6_spec() -> impl Strategy<Value = Ip6Spec> {
    let kind = prop_oneof![8 => 0u8..6, 2 => 6u8..14];
    (
        (kind.clone(), any::<u16>()),
        (kind, any::<u16>()),
        prop_oneof![1 => Just(0u8), 1 => Just(1), 1 => Just(2), 2 => Just(255), 2 => any::<u8>()],
        (any::<u8>(), 0u32..(1 << 20)),
        prop_oneof![3 => Just(None), 1 => (128u8..140).prop_map(Some)],
        (
            prop_oneof![6 => Just(0u8), 1 => 1u8..10],
            prop_oneof![6 => Just(false), 1 => Just(true)],
            prop_oneof![6 => Just(None), 1 => (0u16..3).prop_map(Some)],
        ),
        0usize..1600,
    )
        .prop_map(
            |(src, dst, hop, (tc, flow), icmp, (opts, hbh, frag), len)| Ip6Spec {
                src,
                dst,
                hop,
                tc,
                flow,
                icmp,
                opts,
                hbh,
                frag,
                len,
            },
        )
}

impl Ip6Spec {
    fn bytes(&self) -> Vec<u8> {
        let mut upper: Vec<u8> = match self.icmp {
            Some(t) => vec![t, 0, 0, 0, 0, 0, 0, 0],
            None => vec![0x9c, 0x40, 0, 53, 0, 0, 0, 0],
        };
        upper.extend((0..self.len).map(|i| i as u8));
        let mut next = if self.icmp.is_some() { 58 } else { 17 };
        for k in 0..self.opts {
            let mut h = vec![next, 0, 1, 4, 0, 0, 0, 0];
            next = 60;
            if k + 1 == self.opts && self.hbh {
                next = 0;
            }
            if let (0, Some(off)) = (k, self.frag) {
                h[1] = 0;
                h[2..4].copy_from_slice(&(off << 3 | 1).to_be_bytes());
                next = 44;
            }
            h.extend(upper);
            upper = h;
        }
        let w = 6u32 << 28 | (self.tc as u32) << 20 | self.flow;
        let mut b = w.to_be_bytes().to_vec();
        b.extend((upper.len() as u16).to_be_bytes());
        b.extend([next, self.hop]);
        b.extend(addr6(self.src.0, self.src.1));
        b.extend(addr6(self.dst.0, self.dst.1));
        b.extend(upper);
        b
    }
}

/// One frame: a label stack (possibly empty) over an IPv4 datagram, then damage.
#[derive(Clone, Debug)]
struct FrameSpec {
    labels: Vec<(u32, u8, u8)>,
    ip: Ip4,
    ihl_options: bool,
    pad: usize,
    /// (byte offset, xor mask) applied last.
    damage: Option<(usize, u8)>,
    cut: usize,
    headroom: usize,
    /// An 802.1Q tag after the MAC addresses.
    vlan: bool,
    /// Destination: 0 the input port's MAC, 1 another station's, 2 the input port's with
    /// byte `dst_byte` changed, 3 another port's of the router, 4 broadcast, 5 multicast.
    dst: u8,
    dst_byte: usize,
    /// First two bytes of the source MAC (read by the 8-byte destination load).
    src_mac: [u8; 2],
    /// An IPv6 payload instead of `ip`.
    ip6: Option<Ip6Spec>,
}

/// Mostly the routed /8s, sometimes martian or multicast.
fn first_octet() -> impl Strategy<Value = u8> {
    prop_oneof![12 => 9u8..16, 1 => Just(0u8), 1 => Just(127u8), 1 => 224u8..=255]
}

fn frame_spec() -> impl Strategy<Value = FrameSpec> {
    // Explicit nulls (0, 2) often, as an egress LER sees them.
    let label = prop_oneof![
        8 => LABELS,
        2 => prop_oneof![Just(0u32), Just(2)],
        1 => 0u32..16,
        1 => 16u32..(1 << 20),
    ];
    let ttl = prop_oneof![Just(0u8), Just(1), Just(2), any::<u8>()];
    let entry = (label, 0u8..8, ttl.clone());
    // A single label (the egress LER's case) often, else up to three.
    let stack = prop_oneof![
        2 => proptest::collection::vec(entry.clone(), 0..4),
        1 => proptest::collection::vec(entry, 1..2),
    ];
    (
        stack,
        (
            first_octet(),
            first_octet(),
            ttl,
            0u8..64,
            any::<bool>(),
            0usize..1600,
        ),
        (prop_oneof![9 => Just(false), 1 => Just(true)], 0usize..24),
        prop_oneof![
            6 => Just(None),
            1 => (0usize..60, 1u8..=255).prop_map(Some),
            // The header a single label exposes.
            1 => (18usize..58, 1u8..=255).prop_map(Some),
        ],
        prop_oneof![8 => Just(0usize), 1 => 1usize..3, 1 => 1usize..40],
        (
            prop_oneof![6 => Just(128usize), 1 => 0usize..12],
            prop_oneof![9 => Just(false), 1 => Just(true)],
        ),
        (
            prop_oneof![10 => Just(0u8), 1 => 1u8..6],
            0usize..6,
            any::<[u8; 2]>(),
            prop_oneof![8 => Just(None), 1 => (0u8..4).prop_map(Some)],
        ),
        prop_oneof![2 => Just(None), 1 => ip6_spec().prop_map(Some)],
    )
        .prop_map(
            |(
                labels,
                (s0, d0, ttl, dscp, df, len),
                (ihl_options, pad),
                damage,
                cut,
                (headroom, vlan),
                (dst, dst_byte, src_mac, own_src),
                ip6,
            )| {
                // An own source: the router's address on one of its ports.
                let src = own_src.map_or([s0, 1, 2, 3], |p| [192, 0, 2 + p, 1]);
                let mut ip = Ip4::new(src, [d0, 4, 5, 6]);
                ip.ttl = ttl;
                ip.dscp = dscp;
                ip.df = df;
                ip.payload_len = len;
                FrameSpec {
                    labels,
                    ip,
                    ihl_options,
                    pad,
                    damage,
                    cut,
                    headroom,
                    vlan,
                    dst,
                    dst_byte,
                    src_mac,
                    ip6,
                }
            },
        )
}

/// A frame as an egress LER receives it: one label (an explicit null or a bound label,
/// TTLs at the edges or not) over either family. Three in four are clean (to the
/// router, undamaged, routable addresses, an explicit null over its own family), so that
/// the forwarding cases are common; the rest are as [`frame_spec`] draws them.
fn egress_frame_spec() -> impl Strategy<Value = FrameSpec> {
    let label = prop_oneof![1 => Just(0u32), 1 => Just(2u32), 2 => LABELS];
    let ttl = prop_oneof![1 => 0u8..4, 1 => any::<u8>()];
    (
        frame_spec(),
        (label, 0u8..8, ttl.clone()),
        (ttl, ip6_spec(), any::<bool>()),
        prop_oneof![3 => Just(true), 1 => Just(false)],
    )
        .prop_map(|(mut f, (label, tc, lttl), (ip_ttl, ip6, v6), clean)| {
            f.labels = vec![(label, tc, lttl)];
            f.ip.ttl = ip_ttl;
            if clean {
                f.dst = 0;
                f.vlan = false;
                f.cut = 0;
                f.damage = None;
                f.ihl_options = false;
                f.ip.payload_len %= 200;
                for a in [&mut f.ip.src, &mut f.ip.dst] {
                    if !(9..16).contains(&a[0]) && a[0] != 192 {
                        a[0] = 9 + a[0] % 7;
                    }
                }
                let v6 = match label {
                    0 => false,
                    2 => true,
                    _ => v6,
                };
                f.ip6 = v6.then_some(Ip6Spec {
                    src: (ip6.src.0 % 6, ip6.src.1),
                    dst: (ip6.dst.0 % 9, ip6.dst.1),
                    hop: ip_ttl,
                    len: ip6.len % 200,
                    ..ip6
                });
            } else if let Some(ip6) = &mut f.ip6 {
                ip6.hop = ip_ttl;
            }
            f
        })
}

/// The destination MAC `s` asks for, on a frame received on `in_port`.
fn dst_mac(s: &FrameSpec, in_port: u16) -> [u8; 6] {
    let mut m = router_mac(in_port);
    match s.dst {
        0 => {}
        1 => m = PEER_MAC,
        2 => m[s.dst_byte] ^= 0x02,
        3 => m = router_mac((in_port + 1) % 4),
        4 => m = [0xff; 6],
        _ if s.ip6.is_some() => m = [0x33, 0x33, 0xff, 0, 0, 9],
        _ => m = [0x01, 0x00, 0x5e, 0x01, 0x02, 0x03],
    }
    m
}

fn frame(s: &FrameSpec, in_port: u16) -> VecBuf {
    let mut ip = s.ip.bytes();
    if s.ihl_options {
        // IHL 6 with a NOP option word, checksum recomputed: a sound header with options.
        ip.splice(20..20, [1u8, 1, 1, 0]);
        ip[0] = 0x46;
        let total = (u16::from_be_bytes([ip[2], ip[3]]) + 4).to_be_bytes();
        ip[2..4].copy_from_slice(&total);
        ip[10..12].fill(0);
        let sum = net::wire::checksum::compute(&ip[..24]);
        ip[10..12].copy_from_slice(&sum.to_be_bytes());
    }
    let (ethertype, ip) = match &s.ip6 {
        Some(ip6) => (0x86dd, ip6.bytes()),
        None => (0x0800, ip),
    };
    let mut f = if s.labels.is_empty() {
        eth(ethertype, &ip)
    } else {
        mpls(&s.labels, &ip)
    };
    f[..6].copy_from_slice(&dst_mac(s, in_port));
    f[6..8].copy_from_slice(&s.src_mac);
    if s.vlan {
        f.splice(12..12, [0x81, 0x00, 0x00, 0x05]);
    }
    f.resize(f.len() + s.pad, 0x5a);
    if let Some((at, x)) = s.damage {
        if let Some(b) = f.get_mut(at) {
            *b ^= x;
        }
    }
    f.truncate(f.len().saturating_sub(s.cut));
    VecBuf::with_headroom(&f, s.headroom)
}

fn both(
    cfg: PipelineConfig,
    fib: &Fib,
    in_port: u16,
    burst: &[VecBuf],
) -> [(Vec<Verdict>, Vec<Vec<u8>>); 2] {
    let local = local().with_ipv6([(0, OWN6.to_be_bytes())]);
    let p = net::pipeline::Pipeline::new(cfg, local);
    let run = |fast: bool| {
        let mut pkts = burst.to_vec();
        let mut v = vec![Verdict::Forward { port: u16::MAX }; pkts.len()];
        if fast {
            // The worker's entry (the only one that takes IPv6 first).
            let mut families = net::pipeline::FamilyCounts::default();
            p.process_burst_counted(fib, in_port, &mut pkts, &mut v, &mut families);
        } else {
            p.process_burst_staged(fib, in_port, &mut pkts, &mut v);
        }
        (v, pkts.iter().map(|p| p.data().to_vec()).collect())
    };
    [run(true), run(false)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn fast_path_equals_staged_path(
        table in table_spec(),
        frames in proptest::collection::vec(
            prop_oneof![3 => frame_spec(), 1 => egress_frame_spec()],
            1..80,
        ),
        depth in prop_oneof![Just(8usize), 1usize..4],
        (accept_vlan, punt_ip_options) in (any::<bool>(), any::<bool>()),
        in_port in prop_oneof![9 => 0u16..4, 1 => Just(4u16)],
    ) {
        // Port 4 has no MAC: every frame on it is refused.
        let fib = build(&table);
        let burst: Vec<VecBuf> = frames.iter().map(|f| frame(f, in_port)).collect();
        let cfg = PipelineConfig { max_label_depth: depth, accept_vlan, punt_ip_options };
        let [(fast_v, fast_b), (staged_v, staged_b)] = both(cfg, &fib, in_port, &burst);
        for i in 0..burst.len() {
            prop_assert_eq!(fast_v[i], staged_v[i], "packet {}: {:?}", i, frames[i]);
            prop_assert_eq!(&fast_b[i], &staged_b[i], "packet {}: {:?}", i, frames[i]);
        }
    }
}

/// The cases the fast path is for, with their expected bytes checked by the independent
/// decoder: if the fast path silently declined them all, the property above would compare
/// the staged path with itself, so each is also checked to be forwarded as expected.
#[test]
fn plain_cases_forward_the_same_both_ways() {
    let mut b = builder();
    let swap = b.add_adjacency(adj(1, &[200]));
    let plain = b.add_adjacency(adj(2, &[]));
    let push2 = b.add_adjacency(adj(3, &[1000, 2000]));
    let e = |op, a| LabelEntry {
        op,
        next_hop: Some(NextHop::Adjacency(a)),
        ttl_mode: TtlMode::Uniform,
    };
    b.add_label(100, e(LabelOp::Swap, swap)).unwrap();
    b.add_label(110, e(LabelOp::Pop, plain)).unwrap();
    b.add_ipv4_route(addr([10, 0, 0, 0]), 8, route(via(plain), TtlMode::Uniform))
        .unwrap();
    b.add_ipv4_route(addr([11, 0, 0, 0]), 8, route(via(push2), TtlMode::Uniform))
        .unwrap();
    let fib = b.build(1);
    let ip = |d0| Ip4::new([198, 51, 100, 7], [d0, 1, 2, 3]).ttl(64);
    let frames = [
        mpls(&[(100, 5, 9)], &ip(10).bytes()),
        mpls(&[(100, 0, 9), (300, 0, 7)], &ip(10).bytes()),
        mpls(&[(110, 0, 9)], &ip(10).bytes()),
        ipv4_frame(&ip(10)),
        ipv4_frame(&ip(11)),
    ];
    // Labelled packets first, then IPv4 first: the pipeline orders its fast-path loops by
    // the burst's first packet, and both orders must give the same (plain) outcome.
    for ipv4_first in [false, true] {
        let mut order: Vec<usize> = (0..frames.len()).collect();
        if ipv4_first {
            order.reverse();
        }
        let burst: Vec<VecBuf> = order.iter().map(|&k| VecBuf::new(&frames[k])).collect();
        let [(fast_v, fast_b), (staged_v, staged_b)] =
            both(PipelineConfig::default(), &fib, IN_PORT, &burst);
        assert_eq!(fast_v, staged_v, "ipv4_first {ipv4_first}");
        assert_eq!(fast_b, staged_b, "ipv4_first {ipv4_first}");
        // Back in the order of `frames`.
        let mut by_frame = vec![None; frames.len()];
        for (pos, &k) in order.iter().enumerate() {
            by_frame[k] = Some((fast_v[pos], fast_b[pos].clone()));
        }
        let (fast_v, fast_b): (Vec<_>, Vec<_>) = by_frame.into_iter().map(Option::unwrap).unzip();
        let ports: Vec<_> = fast_v
            .iter()
            .map(|v| match v {
                Verdict::Forward { port } => *port,
                other => panic!("not forwarded: {other:?}"),
            })
            .collect();
        assert_eq!(ports, [1, 1, 2, 2, 3]);
        let d: Vec<_> = fast_b.iter().map(|f| decode(f)).collect();
        assert_eq!(d[0].labels, [(200, 5, true, 8)]);
        assert_eq!(d[1].labels, [(200, 0, false, 8), (300, 0, true, 7)]);
        assert!(d[2].labels.is_empty());
        assert_eq!(d[2].ip.as_ref().unwrap().time_to_live, 8);
        assert_eq!(d[3].ip.as_ref().unwrap().time_to_live, 63);
        assert_eq!(d[4].labels, [(1000, 0, false, 63), (2000, 0, true, 63)]);
        assert_eq!(d[4].ip.as_ref().unwrap().time_to_live, 63);
    }
}

/// The IPv6 cases the fast path is for (plain forwarding, 6PE push, ECMP, PHP exposing
/// IPv6), each first in its burst and behind IPv4: forwarded the same both ways, with the
/// hop limit and labels the independent decoder (etherparse) reads.
#[test]
fn plain_ipv6_cases_forward_the_same_both_ways() {
    use etherparse::Ipv6Header;
    let mut b = builder();
    let plain6 = b.add_adjacency(adj(2, &[]).with_payload(Family::Ipv6));
    let push2 = b.add_adjacency(adj(3, &[1000, 2000]));
    let m: Vec<_> = (0..3)
        .map(|k| (b.add_adjacency(adj(k, &[]).with_payload(Family::Ipv6)), 1))
        .collect();
    let group = b.add_ecmp(&m).unwrap();
    let pop = LabelEntry {
        op: LabelOp::Pop,
        next_hop: Some(NextHop::Adjacency(plain6)),
        ttl_mode: TtlMode::Uniform,
    };
    b.add_label(110, pop).unwrap();
    let r = |t| route(t, TtlMode::Uniform);
    b.add_ipv6_route(prefix6(1), 48, r(via(plain6))).unwrap();
    b.add_ipv6_route(prefix6(2), 48, r(via(push2))).unwrap();
    b.add_ipv6_route(
        prefix6(3),
        48,
        r(RouteTarget::NextHop(NextHop::Ecmp(group))),
    )
    .unwrap();
    let plain4 = b.add_adjacency(adj(2, &[]));
    b.add_ipv4_route(addr([10, 0, 0, 0]), 8, r(via(plain4)))
        .unwrap();
    let fib = b.build(1);
    let ip6 = |net: u8, hop: u8| plain_ip6(net, hop, 0xa0);
    let frames = [
        eth(0x86dd, &ip6(1, 64)),
        eth(0x86dd, &ip6(2, 64)),
        eth(0x86dd, &ip6(3, 64)),
        mpls(&[(110, 0, 9)], &ip6(1, 64)),
    ];
    let other = ipv4_frame(&Ip4::new([198, 51, 100, 7], [10, 1, 2, 3]).ttl(64));
    for (k, f) in frames.iter().enumerate() {
        for pos in 0..2 {
            let mut burst = vec![VecBuf::new(f)];
            burst.insert(pos, VecBuf::new(&other));
            let [(fast_v, fast_b), (staged_v, staged_b)] =
                both(PipelineConfig::default(), &fib, IN_PORT, &burst);
            assert_eq!(fast_v, staged_v, "frame {k} at {pos}");
            assert_eq!(fast_b, staged_b, "frame {k} at {pos}");
            let i = 1 - pos;
            let port = match fast_v[i] {
                Verdict::Forward { port } => port,
                v => panic!("frame {k}: not forwarded: {v:?}"),
            };
            let d = decode(&fast_b[i]);
            let (h, _) = Ipv6Header::from_slice(&d.payload).expect("ipv6");
            assert_eq!(h.payload_length as usize + 40, d.payload.len());
            match k {
                0 => assert_eq!((port, d.ethertype, h.hop_limit), (2, 0x86dd, 63)),
                1 => {
                    assert_eq!((port, h.hop_limit), (3, 63));
                    // TC from the traffic class's class selector (0xa0 >> 5).
                    assert_eq!(d.labels, [(1000, 5, false, 63), (2000, 5, true, 63)]);
                }
                2 => assert!(port < 3 && d.labels.is_empty() && h.hop_limit == 63),
                _ => assert_eq!((port, d.ethertype, h.hop_limit), (2, 0x86dd, 8)),
            }
        }
    }
}

/// A datagram that fills the MTU goes out and one byte more does not, both ways: pushed
/// (IPv4 and 6PE, one label and two) or exposed by an egress LER (pop-and-lookup and
/// explicit null, bare). The fast paths' limits (from `Direct`: `limit`, and for a 6PE
/// push `push_limit`) against the stages' MTU check.
#[test]
fn datagrams_at_the_mtu_go_and_one_byte_over_do_not() {
    let ip4 = Ip4::new([198, 51, 100, 7], [10, 1, 2, 3]).bytes();
    let ip6 = plain_ip6(1, 64, 0);
    // (family, frame, labels the adjacency pushes, bytes of the datagram).
    let mut cases = Vec::new();
    for (family, ip, ethertype, null) in [
        (Family::Ipv4, &ip4, 0x0800, 0),
        (Family::Ipv6, &ip6, 0x86dd, 2),
    ] {
        for labels in [&[1000][..], &[1000, 2000]] {
            cases.push((family, eth(ethertype, ip), labels, ip.len()));
        }
        for label in [130, null] {
            cases.push((family, mpls(&[(label, 0, 64)], ip), &[][..], ip.len()));
        }
    }
    for (family, frame, labels, datagram) in cases {
        let fits = datagram + 4 * labels.len();
        for mtu in [fits, fits - 1] {
            let mut b = builder();
            let a = Adjacency::new(
                3,
                mtu as u16,
                [10, 0, 3, 2],
                Some(nh_mac(3)),
                port_mac(3),
                labels,
            );
            let a = b.add_adjacency(a.with_payload(family));
            let pal = LabelEntry {
                op: LabelOp::PopAndLookup,
                next_hop: None,
                ttl_mode: TtlMode::Uniform,
            };
            b.add_label(130, pal).unwrap();
            let r = route(via(a), TtlMode::Uniform);
            b.add_ipv4_route(addr([10, 0, 0, 0]), 8, r).unwrap();
            b.add_ipv6_route(prefix6(1), 48, r).unwrap();
            let fib = b.build(1);
            let burst = [VecBuf::new(&frame)];
            let [(fast_v, fast_b), (staged_v, staged_b)] =
                both(PipelineConfig::default(), &fib, IN_PORT, &burst);
            let case = format!("{family:?}, {:02x?}, MTU {mtu}", &frame[12..18]);
            assert_eq!((&fast_v, &fast_b), (&staged_v, &staged_b), "{case}");
            let forwarded = fast_v[0] == Verdict::Forward { port: 3 };
            assert_eq!(forwarded, mtu == fits, "{case}: {:?}", fast_v[0]);
        }
    }
}

/// IPv6 the fast path must leave to the stages although a route would forward it: NDP to
/// the router's address, its own address as source, link-local and special addresses,
/// hop limit 1, a hop-by-hop header. Both paths give the stages' verdict, untouched.
#[test]
fn ipv6_special_cases_are_decided_by_the_stages_both_ways() {
    use net::pipeline::PuntReason;
    let mut b = builder();
    let plain6 = b.add_adjacency(adj(2, &[]).with_payload(Family::Ipv6));
    b.add_ipv6_route(0, 0, route(via(plain6), TtlMode::Uniform))
        .unwrap();
    let fib = b.build(1);
    let ip6 = |src: u8, dst: u8, hop: u8, icmp: Option<u8>, hbh: bool| {
        Ip6Spec {
            src: (src, 7),
            dst: (dst, 9),
            hop,
            tc: 0,
            flow: 5,
            icmp,
            opts: hbh as u8,
            hbh,
            frag: None,
            len: 30,
        }
        .bytes()
    };
    let ndp = Verdict::SlowPath(PuntReason::Ndp);
    let cases = [
        (ip6(1, 8, 255, Some(135), false), ndp),
        (ip6(1, 9, 255, Some(135), false), ndp),
        (
            ip6(8, 1, 64, None, false),
            Verdict::Drop(DropReason::OwnSource),
        ),
        (
            ip6(6, 1, 64, None, false),
            Verdict::Drop(DropReason::LinkLocalScope),
        ),
        (
            ip6(1, 6, 64, None, false),
            Verdict::Drop(DropReason::LinkLocalScope),
        ),
        (
            ip6(1, 11, 64, None, false),
            Verdict::Drop(DropReason::Multicast),
        ),
        (
            ip6(13, 1, 64, None, false),
            Verdict::Drop(DropReason::MartianAddress),
        ),
        (
            ip6(1, 2, 1, None, false),
            Verdict::SlowPath(PuntReason::TtlExpired { in_port: IN_PORT }),
        ),
        // Controls: to the router's address without NDP, and with a hop-by-hop header,
        // the route forwards it.
        (ip6(1, 8, 64, None, false), Verdict::Forward { port: 2 }),
        (ip6(1, 2, 64, None, true), Verdict::Forward { port: 2 }),
        (ip6(1, 2, 64, None, false), Verdict::Forward { port: 2 }),
    ];
    for (k, (ip, want)) in cases.iter().enumerate() {
        let frame = eth(0x86dd, ip);
        let burst = [VecBuf::new(&frame), VecBuf::new(&frame)];
        let [(fast_v, fast_b), (staged_v, staged_b)] =
            both(PipelineConfig::default(), &fib, IN_PORT, &burst);
        assert_eq!(fast_v, [*want; 2], "fast: case {k}");
        assert_eq!(staged_v, [*want; 2], "staged: case {k}");
        assert_eq!(fast_b, staged_b, "case {k}");
        if !matches!(want, Verdict::Forward { .. }) {
            assert_eq!(fast_b[0], frame, "case {k}");
        }
    }
}

/// Frames the fast path would forward but for their destination MAC or source address:
/// both paths drop each under its reason, untouched (RFC 1812 §5.2.1, §5.3.4, §5.3.7).
#[test]
fn frames_not_for_the_router_and_own_sources_are_dropped_both_ways() {
    let mut b = builder();
    let swap = b.add_adjacency(adj(1, &[200]));
    let plain = b.add_adjacency(adj(2, &[]));
    let e = LabelEntry {
        op: LabelOp::Swap,
        next_hop: Some(NextHop::Adjacency(swap)),
        ttl_mode: TtlMode::Uniform,
    };
    b.add_label(100, e).unwrap();
    b.add_ipv4_route(addr([10, 0, 0, 0]), 8, route(via(plain), TtlMode::Uniform))
        .unwrap();
    let fib = b.build(1);
    let ip = Ip4::new([198, 51, 100, 7], [10, 1, 2, 3]).bytes();
    let own = Ip4::new(ROUTER_ADDR, [10, 1, 2, 3]).bytes();
    let mut near = ROUTER_MAC;
    near[5] ^= 1;
    let arp = [0u8; 28];
    let hello = Ip4::new([10, 0, 0, 9], [224, 0, 0, 5]).bytes();
    let cases: [(Vec<u8>, Verdict); 13] = [
        // OSPF/LDP hellos arrive as link-layer multicast: punted for the control
        // interface, not dropped as l2_multicast (the same group in a broadcast frame is).
        (
            eth_to([1, 0, 0x5e, 0, 0, 5], 0x0800, &hello),
            Verdict::SlowPath(net::pipeline::PuntReason::LinkLocalMulticast),
        ),
        (
            eth_to([0xff; 6], 0x0800, &hello),
            Verdict::Drop(DropReason::L2Multicast),
        ),
        (
            eth_to(PEER_MAC, 0x0800, &ip),
            Verdict::Drop(DropReason::OtherHost),
        ),
        (
            eth_to(near, 0x0800, &ip),
            Verdict::Drop(DropReason::OtherHost),
        ),
        (
            eth_to(port_mac(1), 0x0800, &ip),
            Verdict::Drop(DropReason::OtherHost),
        ),
        (
            eth_to([0xff; 6], 0x0800, &ip),
            Verdict::Drop(DropReason::L2Multicast),
        ),
        (
            eth_to([1, 0, 0x5e, 1, 2, 3], 0x0800, &ip),
            Verdict::Drop(DropReason::L2Multicast),
        ),
        (
            eth_to(PEER_MAC, 0x8847, &[&lse(100, 0, true, 9)[..], &ip].concat()),
            Verdict::Drop(DropReason::OtherHost),
        ),
        (
            eth_to(
                [0xff; 6],
                0x8847,
                &[&lse(100, 0, true, 9)[..], &ip].concat(),
            ),
            Verdict::Drop(DropReason::L2Multicast),
        ),
        (eth(0x0800, &own), Verdict::Drop(DropReason::OwnSource)),
        // ARP is for the router when broadcast, not when unicast to another station.
        (
            eth_to([0xff; 6], 0x0806, &arp),
            Verdict::SlowPath(net::pipeline::PuntReason::Arp),
        ),
        (
            eth_to(PEER_MAC, 0x0806, &arp),
            Verdict::Drop(DropReason::OtherHost),
        ),
        // The control case: the same datagram to the router's MAC is forwarded.
        (eth(0x0800, &ip), Verdict::Forward { port: 2 }),
    ];
    for (frame, want) in &cases {
        for pos in 0..2 {
            // First in its burst and behind a packet of the other family, so that both
            // fast-path loops see it.
            let other = if frame[12..14] == [0x08, 0x00] {
                mpls(&[(100, 0, 9)], &ip)
            } else {
                eth(0x0800, &ip)
            };
            let mut burst = vec![VecBuf::new(frame)];
            burst.insert(pos, VecBuf::new(&other));
            let [(fast_v, fast_b), (staged_v, staged_b)] =
                both(PipelineConfig::default(), &fib, IN_PORT, &burst);
            let k = 1 - pos;
            assert_eq!(fast_v[k], *want, "fast: {frame:02x?}");
            assert_eq!(staged_v[k], *want, "staged: {frame:02x?}");
            assert_eq!(fast_b, staged_b);
            if !matches!(want, Verdict::Forward { .. }) {
                assert_eq!(&fast_b[k], frame);
            }
        }
    }
}

/// Addresses published with the table (`Fib::set_local`, after a reload changed the
/// ports' addresses) replace the pipeline's own in the source check, on both paths: a new
/// address is an own source, a removed one is not any more.
#[test]
fn addresses_published_with_the_table_replace_the_pipelines_own() {
    let mut b = builder();
    let plain = b.add_adjacency(adj(2, &[]));
    b.add_ipv4_route(addr([10, 0, 0, 0]), 8, route(via(plain), TtlMode::Uniform))
        .unwrap();
    let mut fib = b.build(1);
    let added = [198, 51, 100, 1];
    let frames = [
        eth(0x0800, &Ip4::new(added, [10, 1, 2, 3]).bytes()),
        eth(0x0800, &Ip4::new(ROUTER_ADDR, [10, 1, 2, 3]).bytes()),
    ];
    let verdicts = |fib: &Fib| -> [Vec<Verdict>; 2] {
        let burst: Vec<VecBuf> = frames.iter().map(|f| VecBuf::new(f)).collect();
        let [(fast, _), (staged, _)] = both(PipelineConfig::default(), fib, IN_PORT, &burst);
        [fast, staged]
    };
    let fwd = Verdict::Forward { port: 2 };
    let own = Verdict::Drop(DropReason::OwnSource);
    for v in verdicts(&fib) {
        assert_eq!(v, [fwd, own], "the pipeline's own addresses");
    }
    let macs: Vec<_> = (0..4).map(router_mac).collect();
    let published = net::pipeline::LocalAddrs::new(&macs, [added]);
    fib.set_local(std::sync::Arc::new(published));
    for v in verdicts(&fib) {
        assert_eq!(v, [own, fwd], "the addresses published with the table");
    }
}

/// Punts and drops the fast path decides from the route alone, right after the batched
/// lookup (a `local` route: delivered; a connected subnet: glean), and the neighbouring
/// cases it leaves to the stages (TTL 1, a blackhole): the same verdict both ways, the
/// packet untouched, wherever it sits in its burst.
#[test]
fn route_punts_are_decided_the_same_both_ways() {
    use net::pipeline::PuntReason;
    let mut b = builder();
    let plain = b.add_adjacency(adj(2, &[]));
    let u = TtlMode::Uniform;
    b.add_ipv4_route(addr([10, 0, 0, 0]), 8, route(via(plain), u))
        .unwrap();
    b.add_ipv4_route(addr(ROUTER_ADDR), 32, route(RouteTarget::Local, u))
        .unwrap();
    let connected = RouteTarget::Connected { port: 1 };
    b.add_ipv4_route(addr([198, 18, 0, 0]), 16, route(connected, u))
        .unwrap();
    b.add_ipv4_route(addr([203, 0, 113, 0]), 24, route(RouteTarget::Blackhole, u))
        .unwrap();
    let fib = b.build(1);
    let to = |dst, ttl| eth(0x0800, &Ip4::new([198, 51, 100, 7], dst).ttl(ttl).bytes());
    let local = Verdict::SlowPath(PuntReason::LocalDelivery);
    let cases = [
        (to(ROUTER_ADDR, 64), local),
        (to(ROUTER_ADDR, 1), local),
        (
            to([198, 18, 1, 2], 64),
            Verdict::SlowPath(PuntReason::Glean { port: 1 }),
        ),
        (
            to([198, 18, 1, 2], 1),
            Verdict::SlowPath(PuntReason::TtlExpired { in_port: IN_PORT }),
        ),
        (to([203, 0, 113, 9], 64), Verdict::Drop(DropReason::NoRoute)),
    ];
    let good = to([10, 1, 2, 3], 64);
    for (frame, want) in &cases {
        for pos in 0..2 {
            let mut burst = vec![VecBuf::new(frame)];
            burst.insert(pos, VecBuf::new(&good));
            let [(fast_v, fast_b), (staged_v, staged_b)] =
                both(PipelineConfig::default(), &fib, IN_PORT, &burst);
            let k = 1 - pos;
            assert_eq!(fast_v[k], *want, "fast: {frame:02x?}");
            assert_eq!(staged_v[k], *want, "staged: {frame:02x?}");
            assert_eq!(fast_v[pos], Verdict::Forward { port: 2 });
            assert_eq!(fast_b, staged_b);
            assert_eq!(&fast_b[k], frame);
        }
    }
}

/// The egress LER's cases (explicit null 0 over IPv4 and 2 over IPv6, pop-and-lookup in
/// uniform and pipe mode, towards a bare adjacency, one that pushes labels, an ECMP
/// group), each first in its burst and behind a plain IPv4 packet: forwarded the same
/// both ways, with the TTL, hop limit and labels the independent decoder reads.
#[test]
fn egress_cases_forward_the_same_both_ways() {
    use etherparse::Ipv6Header;
    let mut b = builder();
    let plain4 = b.add_adjacency(adj(2, &[]));
    let plain6 = b.add_adjacency(adj(2, &[]).with_payload(Family::Ipv6));
    let push2 = b.add_adjacency(adj(3, &[1000, 2000]));
    let m: Vec<_> = (0..3).map(|k| (b.add_adjacency(adj(k, &[])), 1)).collect();
    let group = b.add_ecmp(&m).unwrap();
    let pal = |ttl_mode| LabelEntry {
        op: LabelOp::PopAndLookup,
        next_hop: None,
        ttl_mode,
    };
    b.add_label(130, pal(TtlMode::Uniform)).unwrap();
    b.add_label(131, pal(TtlMode::Pipe(7))).unwrap();
    let u = TtlMode::Uniform;
    b.add_ipv4_route(addr([10, 0, 0, 0]), 8, route(via(plain4), u))
        .unwrap();
    b.add_ipv4_route(addr([11, 0, 0, 0]), 8, route(via(push2), TtlMode::Pipe(0)))
        .unwrap();
    let ecmp = RouteTarget::NextHop(NextHop::Ecmp(group));
    b.add_ipv4_route(addr([12, 0, 0, 0]), 8, route(ecmp, u))
        .unwrap();
    b.add_ipv6_route(prefix6(1), 48, route(via(plain6), u))
        .unwrap();
    b.add_ipv6_route(prefix6(2), 48, route(via(push2), u))
        .unwrap();
    let fib = b.build(1);
    let ip4 = |d0, ttl| {
        let mut ip = Ip4::new([198, 51, 100, 7], [d0, 1, 2, 3]).ttl(ttl);
        ip.dscp = 0x28; // class selector 5
        ip.bytes()
    };
    let ip6 = |net: u8, hop: u8| plain_ip6(net, hop, 0x60);
    // (frame, port, labels, TTL or hop limit of the datagram); port 99: any ECMP member.
    let cases: [(Vec<u8>, u16, Vec<Lse>, u8); 8] = [
        (mpls(&[(0, 5, 9)], &ip4(10, 64)), 2, vec![], 8),
        // Uniform: min(IP TTL, label TTL - 1), so the IP TTL is not decremented again.
        (mpls(&[(0, 0, 200)], &ip4(10, 64)), 2, vec![], 64),
        (mpls(&[(2, 0, 9)], &ip6(1, 64)), 2, vec![], 8),
        (mpls(&[(130, 0, 9)], &ip4(10, 64)), 2, vec![], 8),
        // Pushed labels in the route's pipe mode (255), TC from the DSCP.
        (
            mpls(&[(130, 0, 9)], &ip4(11, 64)),
            3,
            vec![(1000, 5, false, 255), (2000, 5, true, 255)],
            8,
        ),
        // 6PE out of an egress LER, TC from the traffic class (0x60 >> 5).
        (
            mpls(&[(130, 0, 9)], &ip6(2, 64)),
            3,
            vec![(1000, 3, false, 8), (2000, 3, true, 8)],
            8,
        ),
        // Pipe mode: the exposed header's TTL as received.
        (mpls(&[(131, 0, 9)], &ip6(1, 64)), 2, vec![], 64),
        (mpls(&[(131, 0, 9)], &ip4(12, 64)), 99, vec![], 64),
    ];
    let other = ipv4_frame(&Ip4::new([198, 51, 100, 7], [10, 1, 2, 3]).ttl(64));
    for (k, (f, want_port, want_labels, want_ttl)) in cases.iter().enumerate() {
        for pos in 0..2 {
            let mut burst = vec![VecBuf::new(f), VecBuf::new(f)];
            burst.insert(pos, VecBuf::new(&other));
            let [(fast_v, fast_b), (staged_v, staged_b)] =
                both(PipelineConfig::default(), &fib, IN_PORT, &burst);
            assert_eq!(fast_v, staged_v, "case {k} at {pos}");
            assert_eq!(fast_b, staged_b, "case {k} at {pos}");
            let i = 1 - pos;
            let port = match fast_v[i] {
                Verdict::Forward { port } => port,
                v => panic!("case {k}: not forwarded: {v:?}"),
            };
            assert!(
                port == *want_port || (*want_port == 99 && port < 3),
                "case {k}"
            );
            let d = decode(&fast_b[i]);
            assert_eq!(&d.labels, want_labels, "case {k}");
            let ttl = match &d.ip {
                Some(h) => h.time_to_live,
                None => {
                    let (h, _) = Ipv6Header::from_slice(&d.payload).expect("ipv6");
                    assert_eq!(h.payload_length as usize + 40, d.payload.len());
                    h.hop_limit
                }
            };
            assert_eq!(ttl, *want_ttl, "case {k}");
        }
    }
}

/// Egress LER packets the fast path must leave to the stages (or that the stages decide
/// otherwise than by forwarding): the wrong family under an explicit null, TTLs that
/// expire, special addresses, a bad checksum, routes that punt or drop, deeper stacks.
/// Both paths give the expected verdict, and leave the packet untouched unless it is
/// forwarded.
#[test]
fn egress_special_cases_are_decided_the_same_both_ways() {
    use net::pipeline::PuntReason;
    let mut b = builder();
    let plain4 = b.add_adjacency(adj(2, &[]));
    let plain6 = b.add_adjacency(adj(2, &[]).with_payload(Family::Ipv6));
    let unresolved = b.add_adjacency(Adjacency::new(
        1,
        1500,
        [10, 0, 1, 2],
        None,
        port_mac(1),
        &[],
    ));
    let pal = |ttl_mode| LabelEntry {
        op: LabelOp::PopAndLookup,
        next_hop: None,
        ttl_mode,
    };
    b.add_label(130, pal(TtlMode::Uniform)).unwrap();
    b.add_label(131, pal(TtlMode::Pipe(0))).unwrap();
    let u = TtlMode::Uniform;
    b.add_ipv4_route(addr([10, 0, 0, 0]), 8, route(via(plain4), u))
        .unwrap();
    b.add_ipv4_route(addr([11, 0, 0, 0]), 8, route(RouteTarget::Local, u))
        .unwrap();
    b.add_ipv4_route(addr([12, 0, 0, 0]), 8, route(RouteTarget::Blackhole, u))
        .unwrap();
    let connected = RouteTarget::Connected { port: 1 };
    b.add_ipv4_route(addr([13, 0, 0, 0]), 8, route(connected, u))
        .unwrap();
    b.add_ipv4_route(addr([14, 0, 0, 0]), 8, route(via(unresolved), u))
        .unwrap();
    b.add_ipv6_route(prefix6(1), 48, route(via(plain6), u))
        .unwrap();
    // An IPv6 route to an adjacency that carries IPv4 bare.
    b.add_ipv6_route(prefix6(2), 48, route(via(plain4), u))
        .unwrap();
    let fib = b.build(1);
    let ip4 = |src: [u8; 4], d: [u8; 4], ttl| Ip4::new(src, d).ttl(ttl).bytes();
    let good = [198, 51, 100, 7];
    let ip6 = |src: u8, dst: u8, hop: u8| ip6_between(src, dst, hop, 0);
    let mut bad_sum = ip4(good, [10, 1, 2, 3], 64);
    bad_sum[10] ^= 1;
    let expired = Verdict::SlowPath(PuntReason::TtlExpired { in_port: IN_PORT });
    let fwd = Verdict::Forward { port: 2 };
    let drop = Verdict::Drop;
    let cases = [
        (
            mpls(&[(0, 0, 9)], &ip6(1, 1, 64)),
            drop(DropReason::UnsupportedPayload),
        ),
        (
            mpls(&[(2, 0, 9)], &ip4(good, [10, 1, 2, 3], 64)),
            drop(DropReason::UnsupportedPayload),
        ),
        (mpls(&[(0, 0, 1)], &ip4(good, [10, 1, 2, 3], 64)), expired),
        (mpls(&[(130, 0, 9)], &ip4(good, [10, 1, 2, 3], 0)), expired),
        (mpls(&[(130, 0, 9)], &ip6(1, 1, 0)), expired),
        // Pipe mode: the label's TTL does not expire the packet, the IP TTL as received.
        (mpls(&[(131, 0, 1)], &ip4(good, [10, 1, 2, 3], 64)), fwd),
        (mpls(&[(131, 0, 9)], &ip4(good, [10, 1, 2, 3], 1)), fwd),
        (mpls(&[(131, 0, 9)], &ip4(good, [10, 1, 2, 3], 0)), expired),
        // No own-source check below a label (the router's replies come back that way).
        (
            mpls(&[(0, 0, 9)], &ip4(ROUTER_ADDR, [10, 1, 2, 3], 64)),
            fwd,
        ),
        (
            mpls(&[(0, 0, 9)], &ip4(good, [224, 0, 0, 5], 64)),
            Verdict::SlowPath(PuntReason::LinkLocalMulticast),
        ),
        (
            mpls(&[(0, 0, 9)], &ip4(good, [127, 0, 0, 1], 64)),
            drop(DropReason::MartianAddress),
        ),
        (mpls(&[(0, 0, 9)], &bad_sum), drop(DropReason::BadChecksum)),
        (
            mpls(&[(0, 0, 9)], &ip4(good, [9, 1, 2, 3], 64)),
            drop(DropReason::NoRoute),
        ),
        (
            mpls(&[(0, 0, 9)], &ip4(good, [11, 1, 2, 3], 64)),
            Verdict::SlowPath(PuntReason::LocalDelivery),
        ),
        (
            mpls(&[(0, 0, 9)], &ip4(good, [12, 1, 2, 3], 64)),
            drop(DropReason::NoRoute),
        ),
        (
            mpls(&[(0, 0, 9)], &ip4(good, [13, 1, 2, 3], 64)),
            Verdict::SlowPath(PuntReason::Glean { port: 1 }),
        ),
        (
            mpls(&[(0, 0, 9)], &ip4(good, [14, 1, 2, 3], 64)),
            Verdict::SlowPath(PuntReason::ArpNeeded { adj: unresolved }),
        ),
        (
            mpls(&[(2, 0, 9)], &ip6(1, 6, 64)),
            drop(DropReason::LinkLocalScope),
        ),
        (
            mpls(&[(2, 0, 9)], &ip6(1, 3, 64)),
            Verdict::SlowPath(PuntReason::Unreachable { in_port: IN_PORT }),
        ),
        (
            mpls(&[(2, 0, 9)], &ip6(1, 2, 64)),
            drop(DropReason::UnsupportedPayload),
        ),
        // The router's own global address below a label: routed (no own check there).
        (
            mpls(&[(2, 0, 9)], &ip6(1, 8, 64)),
            Verdict::SlowPath(PuntReason::Unreachable { in_port: IN_PORT }),
        ),
        // Deeper stacks are the stages' (both labels popped, then the lookup).
        (
            mpls(&[(0, 0, 9), (130, 0, 9)], &ip4(good, [10, 1, 2, 3], 64)),
            fwd,
        ),
        (
            mpls(&[(130, 0, 9), (0, 0, 9)], &ip4(good, [10, 1, 2, 3], 64)),
            fwd,
        ),
    ];
    for (k, (frame, want)) in cases.iter().enumerate() {
        for pos in 0..2 {
            let other = ipv4_frame(&Ip4::new(good, [10, 1, 2, 3]));
            let mut burst = vec![VecBuf::new(frame)];
            burst.insert(pos, VecBuf::new(&other));
            let [(fast_v, fast_b), (staged_v, staged_b)] =
                both(PipelineConfig::default(), &fib, IN_PORT, &burst);
            let i = 1 - pos;
            assert_eq!(staged_v[i], *want, "staged: case {k}");
            assert_eq!(fast_v, staged_v, "fast: case {k}");
            assert_eq!(fast_b, staged_b, "case {k}");
            if !matches!(want, Verdict::Forward { .. }) {
                assert_eq!(&fast_b[i], frame, "case {k}");
            }
        }
    }
}

/// A burst that starts and ends with IPv6 takes IPv6 first (`fast6` over each chunk, then the
/// other loops over what it turned away, moved to the chunk's front and back): in a mix
/// of IPv6 (forwarded, 6PE, hop limit 1), IPv4, an MPLS swap, explicit null and ARP over
/// two chunks, every packet gets the staged path's verdict and bytes, the plain cases are
/// forwarded to their port, and `process_burst_counted` counts each packet once under its
/// family. A pass that lost a packet (verdict unset) or decided one twice (rewritten
/// twice, counted twice) fails here.
#[test]
fn bursts_starting_with_ipv6_decide_every_packet_once() {
    use net::pipeline::{Family as Fam, FamilyCounts, Pipeline};
    let mut b = builder();
    let swap = b.add_adjacency(adj(1, &[200]));
    let plain4 = b.add_adjacency(adj(2, &[]));
    let plain6 = b.add_adjacency(adj(2, &[]).with_payload(Family::Ipv6));
    let push2 = b.add_adjacency(adj(3, &[1000, 2000]));
    let e = LabelEntry {
        op: LabelOp::Swap,
        next_hop: Some(NextHop::Adjacency(swap)),
        ttl_mode: TtlMode::Uniform,
    };
    b.add_label(100, e).unwrap();
    let u = TtlMode::Uniform;
    b.add_ipv4_route(addr([10, 0, 0, 0]), 8, route(via(plain4), u))
        .unwrap();
    b.add_ipv6_route(prefix6(1), 48, route(via(plain6), u))
        .unwrap();
    b.add_ipv6_route(prefix6(2), 48, route(via(push2), u))
        .unwrap();
    // Turned away by fast6 after the lookup (an IPv4 adjacency): listed after the
    // packets its input checks turned away.
    b.add_ipv6_route(prefix6(3), 48, route(via(plain4), u))
        .unwrap();
    let fib = b.build(1);
    let ip6 = |net: u8, hop: u8| plain_ip6(net, hop, 0);
    let ip4 = |ttl| Ip4::new([198, 51, 100, 7], [10, 1, 2, 3]).ttl(ttl);
    // (frame, family, port when forwarded by a fast path)
    let kinds: [(Vec<u8>, Fam, Option<u16>); 9] = [
        (eth(0x86dd, &ip6(3, 64)), Fam::Ipv6, None),
        (eth(0x86dd, &ip6(1, 64)), Fam::Ipv6, Some(2)),
        (ipv4_frame(&ip4(64)), Fam::Ipv4, Some(2)),
        (eth(0x86dd, &ip6(2, 64)), Fam::Ipv6, Some(3)),
        (mpls(&[(100, 0, 9)], &ip4(64).bytes()), Fam::Mpls, Some(1)),
        (eth(0x86dd, &ip6(1, 1)), Fam::Ipv6, None),
        (mpls(&[(0, 0, 9)], &ip4(64).bytes()), Fam::Mpls, Some(2)),
        (eth(0x0806, &[0; 28]), Fam::Other, None),
        (ipv4_frame(&ip4(1)), Fam::Ipv4, None),
    ];
    let p = Pipeline::new(
        PipelineConfig::default(),
        local().with_ipv6([(0, OWN6.to_be_bytes())]),
    );
    // Bursts of 72 (two chunks) starting with each IPv6 kind and ending with IPv6.
    for start in [0, 1, 3, 5] {
        let mut order: Vec<usize> = (0..71).map(|k| (start + k * 2) % kinds.len()).collect();
        order.push(1);
        let burst: Vec<VecBuf> = order.iter().map(|&k| VecBuf::new(&kinds[k].0)).collect();
        let [(fast_v, fast_b), (staged_v, staged_b)] =
            both(PipelineConfig::default(), &fib, IN_PORT, &burst);
        for (i, &k) in order.iter().enumerate() {
            assert_eq!(
                fast_v[i], staged_v[i],
                "start {start}, packet {i} (kind {k})"
            );
            assert_eq!(
                fast_b[i], staged_b[i],
                "start {start}, packet {i} (kind {k})"
            );
            if let Some(port) = kinds[k].2 {
                assert_eq!(fast_v[i], Verdict::Forward { port }, "kind {k}");
            }
        }
        let mut pkts = burst.clone();
        let mut v = vec![Verdict::Forward { port: u16::MAX }; pkts.len()];
        let mut counts = FamilyCounts::default();
        p.process_burst_counted(&fib, IN_PORT, &mut pkts, &mut v, &mut counts);
        assert_eq!(v, fast_v, "start {start}");
        // process_burst keeps the IPv4-first order: the same outcome.
        let mut pkts = burst.clone();
        p.process_burst(&fib, IN_PORT, &mut pkts, &mut v);
        assert_eq!(v, fast_v, "start {start}");
        assert!(pkts.iter().zip(&fast_b).all(|(p, b)| p.data() == &b[..]));
        let mut want = [0u64; Fam::COUNT];
        for &k in &order {
            want[kinds[k].1 as usize] += 1;
        }
        assert_eq!(counts.received, want, "start {start}");
    }
}
