//! IPv6 router, 6PE and label disposition to IPv6 behaviour of the pipeline (RFC 8200,
//! 4291, 4861, 4443's triggers, 3032/4182 label 2, 4798), one test per behaviour. Frames
//! are built and outputs decoded with etherparse, independently of `net::wire`.
#![forbid(unsafe_code)]

mod pipeline_support;

use etherparse::{IpNumber, Ipv6Header, UdpHeader};
use net::fib::{Adjacency, Fib, LabelEntry, LabelOp, NextHop, RouteTarget, TtlMode};
use net::packet::{PacketBuf, VecBuf};
use net::pipeline::{DropReason, PipelineConfig, PuntReason, Verdict};
use pipeline_support::*;
use std::net::Ipv6Addr;

fn a6(s: &str) -> [u8; 16] {
    s.parse::<Ipv6Addr>().unwrap().octets()
}
fn n6(s: &str) -> u128 {
    u128::from_be_bytes(a6(s))
}

const SRC: &str = "2001:db8:aaaa::7";
const DST: &str = "2001:db8:1::9";
/// The router's global address on port 0 and its link-local one (EUI-64 of ROUTER_MAC).
const OWN: &str = "2001:db8:ffff::1";
const OWN_LL: &str = "fe80::ff:fe00:1";

/// An IPv6 datagram: next header chain `ext` (raw extension headers, each starting with
/// its next header byte, patched here) then UDP or ICMPv6 `icmp_type`.
#[derive(Clone, Debug)]
struct Ip6 {
    src: [u8; 16],
    dst: [u8; 16],
    hop: u8,
    tc: u8,
    flow: u32,
    sport: u16,
    payload_len: usize,
    icmp_type: Option<u8>,
    ext: Vec<(u8, Vec<u8>)>,
}

impl Ip6 {
    fn new(src: &str, dst: &str) -> Ip6 {
        Ip6 {
            src: a6(src),
            dst: a6(dst),
            hop: 64,
            tc: 0,
            flow: 0x12345,
            sport: 40000,
            payload_len: 18,
            icmp_type: None,
            ext: Vec::new(),
        }
    }
    fn hop(mut self, h: u8) -> Self {
        self.hop = h;
        self
    }
    fn icmp(mut self, t: u8) -> Self {
        self.icmp_type = Some(t);
        self
    }
    /// A destination options header (8 bytes of PadN) before the upper layer.
    fn dest_opts(mut self, n: usize) -> Self {
        for _ in 0..n {
            self.ext.push((60, vec![0, 0, 1, 4, 0, 0, 0, 0]));
        }
        self
    }
    fn bytes(&self) -> Vec<u8> {
        let data: Vec<u8> = (0..self.payload_len).map(|i| i as u8).collect();
        let (proto, upper) = match self.icmp_type {
            Some(t) => {
                let mut m = vec![t, 0, 0, 0, 0, 0, 0, 0];
                m.extend_from_slice(&a6(DST)); // an NS-like target field
                (58u8, m)
            }
            None => {
                let h = Ipv6Header {
                    source: self.src,
                    destination: self.dst,
                    ..Default::default()
                };
                let u = UdpHeader::with_ipv6_checksum(self.sport, 53, &h, &data).unwrap();
                let mut v = u.to_bytes().to_vec();
                v.extend_from_slice(&data);
                (17u8, v)
            }
        };
        let mut chain = Vec::new();
        let mut first = proto;
        for (nh, h) in self.ext.iter().rev() {
            let mut h = h.clone();
            h[0] = first;
            first = *nh;
            chain.splice(0..0, h);
        }
        chain.extend(upper);
        let h = Ipv6Header {
            traffic_class: self.tc,
            flow_label: etherparse::Ipv6FlowLabel::try_new(self.flow).unwrap(),
            payload_length: chain.len() as u16,
            next_header: IpNumber(first),
            hop_limit: self.hop,
            source: self.src,
            destination: self.dst,
        };
        let mut out = h.to_bytes().to_vec();
        out.extend(chain);
        out
    }
}

fn frame6(ip: &Ip6) -> Vec<u8> {
    eth(0x86dd, &ip.bytes())
}

/// The IPv6 header of an output frame's payload (after any labels), checked: version 6,
/// the payload length covers exactly what follows when `exact`.
fn ipv6_of(payload: &[u8], exact: bool) -> Ipv6Header {
    let (h, rest) = Ipv6Header::from_slice(payload).expect("ipv6 header");
    if exact {
        assert_eq!(
            h.payload_length as usize,
            rest.len(),
            "IPv6 padding trimmed"
        );
    }
    h
}

fn adj6(port: u16, labels: &[u32]) -> Adjacency {
    Adjacency::new_v6(
        port,
        1500,
        a6("fe80::2"),
        Some(nh_mac(port)),
        port_mac(port),
        labels,
    )
}

fn local6() -> net::pipeline::LocalAddrs {
    local().with_ipv6([(0, a6(OWN))])
}

fn run6(fib: &Fib, frames: &[Vec<u8>]) -> Vec<(Verdict, Vec<u8>)> {
    let mut pkts: Vec<VecBuf> = frames.iter().map(|f| VecBuf::new(f)).collect();
    let mut verdicts = vec![Verdict::Forward { port: u16::MAX }; pkts.len()];
    let p = net::pipeline::Pipeline::new(PipelineConfig::default(), local6());
    p.process_burst(fib, IN_PORT, &mut pkts, &mut verdicts);
    verdicts
        .into_iter()
        .zip(pkts.iter().map(|p| p.data().to_vec()))
        .collect()
}

fn one(fib: &Fib, f: Vec<u8>) -> (Verdict, Vec<u8>) {
    run6(fib, &[f]).pop().unwrap()
}

/// Routes: 2001:db8:1::/48 via port 1 (IPv6 neighbour), 2001:db8:2::/48 pushing
/// [1000, 2000] (uniform), 2001:db8:3::/48 pushing [1000] in pipe mode (TTL 200),
/// 2001:db8:4::/48 as 6PE (IPv4 neighbour, label 300), local, connected, blackhole,
/// unresolved; labels 110 PHP to an IPv6 neighbour, 111 PHP to an IPv4 one, 112 PHP
/// pipe, 120 pop-and-lookup, 121 pop-and-lookup pipe, 100 swap.
fn fib() -> Fib {
    fib_builder().build(1)
}

/// The builder of [`fib`].
fn fib_builder() -> net::fib::FibBuilder {
    let mut b = builder();
    let plain = b.add_adjacency(adj6(1, &[]));
    let push2 = b.add_adjacency(adj6(2, &[1000, 2000]));
    let push1 = b.add_adjacency(adj6(2, &[1000]));
    let six_pe = b.add_adjacency(adj(3, &[300]));
    let v4 = b.add_adjacency(adj(3, &[]));
    let swap = b.add_adjacency(adj(1, &[200]));
    let unresolved = b.add_adjacency(Adjacency::new_v6(
        3,
        1500,
        a6("2001:db8:77::2"),
        None,
        port_mac(3),
        &[],
    ));
    let u = TtlMode::Uniform;
    let r = |t, m| route(t, m);
    for (p, t, m) in [
        ("2001:db8:1::", via(plain), u),
        ("2001:db8:2::", via(push2), u),
        ("2001:db8:3::", via(push1), TtlMode::Pipe(200)),
        ("2001:db8:4::", via(six_pe), u),
        ("2001:db8:9::", RouteTarget::Connected { port: 2 }, u),
        ("2001:db8:66::", RouteTarget::Blackhole, u),
        ("2001:db8:77::", via(unresolved), u),
    ] {
        b.add_ipv6_route(n6(p), 48, r(t, m)).unwrap();
    }
    b.add_ipv6_route(n6(OWN), 128, r(RouteTarget::Local, u))
        .unwrap();
    let e = |op, nh: Option<u32>, m| LabelEntry {
        op,
        next_hop: nh.map(NextHop::Adjacency),
        ttl_mode: m,
    };
    b.add_label(110, e(LabelOp::Pop, Some(plain), u)).unwrap();
    b.add_label(111, e(LabelOp::Pop, Some(v4), u)).unwrap();
    b.add_label(112, e(LabelOp::Pop, Some(plain), TtlMode::Pipe(0)))
        .unwrap();
    b.add_label(120, e(LabelOp::PopAndLookup, None, u)).unwrap();
    b.add_label(121, e(LabelOp::PopAndLookup, None, TtlMode::Pipe(0)))
        .unwrap();
    b.add_label(100, e(LabelOp::Swap, Some(swap), u)).unwrap();
    b
}

fn punt(r: PuntReason) -> Verdict {
    Verdict::SlowPath(r)
}
fn drop(r: DropReason) -> Verdict {
    Verdict::Drop(r)
}

/// Each case's verdict, and a frame not forwarded is left as received.
fn expect(cases: &[(Vec<u8>, Verdict)]) {
    for (i, (f, want)) in cases.iter().enumerate() {
        let (v, out) = one(&fib(), f.clone());
        assert_eq!(v, *want, "case {i}");
        if !matches!(want, Verdict::Forward { .. }) {
            assert_eq!(&out, f, "case {i} must be left as received");
        }
    }
}

#[test]
fn forward_decrements_the_hop_limit_trims_padding_and_rewrites_l2() {
    let ip = Ip6::new(SRC, DST).hop(64);
    let mut input = frame6(&ip);
    input.extend_from_slice(&[0x5a; 6]); // Ethernet padding
    let (v, out) = one(&fib(), input.clone());
    assert_eq!(v, Verdict::Forward { port: 1 });
    let d = decode(&out);
    assert_eq!(
        (d.dst, d.src, d.ethertype),
        (nh_mac(1), port_mac(1), 0x86dd)
    );
    let h = ipv6_of(&d.payload, true);
    assert_eq!(h.hop_limit, 63);
    assert_eq!((h.source, h.destination), (a6(SRC), a6(DST)));
    // Only the hop limit changed (no IPv6 header checksum); the padding is gone.
    let (a, b) = (&input[14..input.len() - 6], &out[14..]);
    assert_eq!(a.len(), b.len());
    for i in (0..a.len()).filter(|&i| i != 7) {
        assert_eq!(a[i], b[i], "byte {i}");
    }
}

#[test]
fn header_checks() {
    let good = frame6(&Ip6::new(SRC, DST));
    let mut v4 = good.clone();
    v4[14] = 0x40;
    let mut long = good.clone();
    long[18..20].copy_from_slice(&999u16.to_be_bytes());
    expect(&[
        (v4, drop(DropReason::BadIpv6Header)),
        (long, drop(DropReason::Truncated)),
        (good[..14 + 39].to_vec(), drop(DropReason::Truncated)),
    ]);
}

#[test]
fn martian_addresses_are_dropped() {
    let m = drop(DropReason::MartianAddress);
    expect(&[
        (frame6(&Ip6::new("::1", DST)), m),
        (frame6(&Ip6::new("ff0e::1", DST)), m),
        (frame6(&Ip6::new("::", DST)), m),
        (frame6(&Ip6::new(SRC, "::")), m),
        (frame6(&Ip6::new(SRC, "::1")), m),
    ]);
}

#[test]
fn link_local_scope_is_never_left() {
    let scope = drop(DropReason::LinkLocalScope);
    let local = punt(PuntReason::LocalDelivery);
    expect(&[
        (frame6(&Ip6::new("fe80::9", DST)), scope),
        (frame6(&Ip6::new(SRC, "fe80::9")), scope),
        // Another port's link-local address is not this link's.
        (frame6(&Ip6::new("fe80::9", "fe80::bb:ff:fe00:1")), scope),
        (frame6(&Ip6::new("fe80::9", OWN_LL)), local),
        (frame6(&Ip6::new("fe80::9", OWN_LL).hop(1)), local),
        (frame6(&Ip6::new("fe80::9", OWN)), local),
    ]);
}

#[test]
fn ndp_and_link_local_control_multicast_go_to_the_slow_path() {
    let ndp = punt(PuntReason::Ndp);
    let ctl = punt(PuntReason::LinkLocalMulticast);
    let group = |ip: &Ip6| {
        let mut m = [0x33, 0x33, 0, 0, 0, 0];
        m[2..].copy_from_slice(&ip.dst[12..]);
        eth_to(m, 0x86dd, &ip.bytes())
    };
    let ns = Ip6::new("fe80::9", "ff02::1:ff00:9").hop(255).icmp(135);
    let mut too_many = ns.clone().dest_opts(9);
    too_many.hop = 255;
    expect(&[
        (group(&ns), ndp),
        (
            group(&Ip6::new("::", "ff02::1:ff00:9").hop(255).icmp(135)),
            ndp,
        ),
        (
            group(&Ip6::new("fe80::9", "ff02::2").hop(255).icmp(133)),
            ndp,
        ),
        (group(&ns.clone().dest_opts(2)), ndp),
        // Hop limit below 255: not NDP (RFC 4861 §7.1.1), still control traffic.
        (group(&ns.clone().hop(64)), ctl),
        // ICMPv6 echo to all-nodes, OSPFv3 hellos.
        (
            group(&Ip6::new("fe80::9", "ff02::1").hop(255).icmp(128)),
            ctl,
        ),
        (group(&Ip6::new("fe80::9", "ff02::5").hop(1)), ctl),
        (group(&too_many), drop(DropReason::BadIpv6Header)),
        // Unicast NDP to the router's addresses (NUD probes).
        (frame6(&Ip6::new("fe80::9", OWN_LL).hop(255).icmp(135)), ndp),
        (frame6(&Ip6::new(SRC, OWN).hop(255).icmp(136)), ndp),
        // Other groups are not forwarded.
        (
            frame6(&Ip6::new(SRC, "ff0e::1")),
            drop(DropReason::Multicast),
        ),
        (
            frame6(&Ip6::new(SRC, "ff05::2")),
            drop(DropReason::Multicast),
        ),
    ]);
}

#[test]
fn ipv6_in_link_layer_multicast_frames_is_dropped_unless_control() {
    let l2 = drop(DropReason::L2Multicast);
    let ns = Ip6::new("fe80::9", "ff02::1:ff00:9").hop(255).icmp(135);
    expect(&[
        (
            eth_to(
                [0x33, 0x33, 0, 0, 0, 9],
                0x86dd,
                &Ip6::new(SRC, DST).bytes(),
            ),
            l2,
        ),
        (
            eth_to(
                [0x33, 0x33, 0, 0, 0, 1],
                0x86dd,
                &Ip6::new(SRC, "ff0e::1").bytes(),
            ),
            l2,
        ),
        // IPv6 never uses broadcast.
        (eth_to([0xff; 6], 0x86dd, &ns.bytes()), l2),
        (
            eth_to(PEER_MAC, 0x86dd, &ns.bytes()),
            drop(DropReason::OtherHost),
        ),
    ]);
}

#[test]
fn own_source_from_outside_is_dropped() {
    expect(&[
        (frame6(&Ip6::new(OWN, DST)), drop(DropReason::OwnSource)),
        (frame6(&Ip6::new(OWN_LL, OWN)), drop(DropReason::OwnSource)),
    ]);
}

#[test]
fn route_targets_and_hop_limit_expiry() {
    let expired = punt(PuntReason::TtlExpired { in_port: IN_PORT });
    let unresolved = match one(&fib(), frame6(&Ip6::new(SRC, "2001:db8:77::1"))).0 {
        Verdict::SlowPath(PuntReason::ArpNeeded { adj }) => adj,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        fib().adjacency(unresolved).neighbor6,
        Some(a6("2001:db8:77::2"))
    );
    expect(&[
        (frame6(&Ip6::new(SRC, OWN)), punt(PuntReason::LocalDelivery)),
        (
            frame6(&Ip6::new(SRC, OWN).hop(1)),
            punt(PuntReason::LocalDelivery),
        ),
        (
            frame6(&Ip6::new(SRC, "2001:db8:66::1")),
            drop(DropReason::NoRoute),
        ),
        (
            frame6(&Ip6::new(SRC, "2001:db8:5555::1")),
            punt(PuntReason::Unreachable { in_port: IN_PORT }),
        ),
        (
            frame6(&Ip6::new(SRC, "2001:db8:9::5")),
            punt(PuntReason::Glean { port: 2 }),
        ),
        (frame6(&Ip6::new(SRC, DST).hop(1)), expired),
        (frame6(&Ip6::new(SRC, DST).hop(0)), expired),
    ]);
    let (v, out) = one(&fib(), frame6(&Ip6::new(SRC, DST).hop(2)));
    assert_eq!(v, Verdict::Forward { port: 1 });
    assert_eq!(ipv6_of(&decode(&out).payload, true).hop_limit, 1);
}

#[test]
fn too_big_is_packet_too_big_with_the_mtu_left_after_labels() {
    // 1500-byte IPv6 packet: fits bare, not with two labels (1492 left for IP).
    let big = |dst: &str| {
        let mut ip = Ip6::new(SRC, dst);
        ip.payload_len = 1500 - 40 - 8;
        frame6(&ip)
    };
    let (v, _) = one(&fib(), big(DST));
    assert_eq!(v, Verdict::Forward { port: 1 });
    let f = big("2001:db8:2::1");
    let want = punt(PuntReason::FragNeeded {
        in_port: IN_PORT,
        mtu: 1492,
    });
    expect(&[(f, want)]);
}

#[test]
fn ecmp_hashes_addresses_flow_label_and_ports() {
    let mut b = builder();
    let members: Vec<_> = (0..4).map(|p| b.add_adjacency(adj6(p, &[]))).collect();
    let g = b
        .add_ecmp(&members.iter().map(|&a| (a, 1)).collect::<Vec<_>>())
        .unwrap();
    b.add_ipv6_route(
        n6("2001:db8::"),
        32,
        route(RouteTarget::NextHop(NextHop::Ecmp(g)), TtlMode::Uniform),
    )
    .unwrap();
    let fib = b.build(1);
    let port = |ip: &Ip6| match run_with_local(&fib, frame6(ip)) {
        Verdict::Forward { port } => port,
        v => panic!("{v:?}"),
    };
    let mut used = std::collections::HashSet::new();
    for i in 0..64u16 {
        let mut ip = Ip6::new(SRC, "2001:db8:1::1");
        ip.sport = 1000 + i;
        let p = port(&ip);
        used.insert(p);
        // The hop limit and traffic class never move a flow.
        ip.hop = 9;
        ip.tc = 0xb8;
        assert_eq!(port(&ip), p, "flow {i}");
    }
    assert_eq!(used.len(), 4, "{used:?}");
    let flows: std::collections::HashSet<_> = (0..64)
        .map(|f| {
            let mut ip = Ip6::new(SRC, "2001:db8:1::1");
            ip.flow = f;
            port(&ip)
        })
        .collect();
    assert!(flows.len() > 1, "the flow label moves flows");
}

fn run_with_local(fib: &Fib, f: Vec<u8>) -> Verdict {
    one(fib, f).0
}

#[test]
fn label_2_is_popped_at_the_bottom_and_above_other_labels() {
    let ip = Ip6::new(SRC, DST).hop(64).bytes();
    // Bottom: the IPv6 lookup, uniform (hop limit = min(64, 20 - 1)).
    let (v, out) = one(&fib(), mpls(&[(2, 0, 20)], &ip));
    assert_eq!(v, Verdict::Forward { port: 1 });
    let d = decode(&out);
    assert_eq!((d.ethertype, d.labels.len()), (0x86dd, 0));
    assert_eq!(ipv6_of(&d.payload, true).hop_limit, 19);
    // Above a swapped label: popped, the lower TTL carries on.
    let (v, out) = one(&fib(), mpls(&[(2, 0, 20), (100, 0, 9)], &ip));
    assert_eq!(v, Verdict::Forward { port: 1 });
    assert_eq!(decode(&out).labels, vec![(200, 0, true, 8)]);
    // The family a bottom explicit null names must be the payload's.
    let v4 = Ip4::new([198, 51, 100, 7], [203, 0, 113, 9]).bytes();
    expect(&[
        (
            mpls(&[(2, 0, 20)], &v4),
            drop(DropReason::UnsupportedPayload),
        ),
        (
            mpls(&[(0, 0, 20)], &ip),
            drop(DropReason::UnsupportedPayload),
        ),
        (
            mpls(&[(2, 0, 1)], &ip),
            punt(PuntReason::TtlExpired { in_port: IN_PORT }),
        ),
    ]);
}

#[test]
fn php_to_ipv6_checks_the_next_hops_family_and_sets_the_hop_limit() {
    let ip = Ip6::new(SRC, DST).hop(64).bytes();
    // Uniform: min(64, 30 - 1); padding below the label is trimmed to the datagram.
    let mut f = mpls(&[(110, 0, 30)], &ip);
    f.extend_from_slice(&[0; 5]);
    let (v, out) = one(&fib(), f);
    assert_eq!(v, Verdict::Forward { port: 1 });
    let d = decode(&out);
    assert_eq!((d.dst, d.ethertype, d.labels.len()), (nh_mac(1), 0x86dd, 0));
    assert_eq!(ipv6_of(&d.payload, true).hop_limit, 29);
    // Pipe: the hop limit as received.
    let (_, out) = one(&fib(), mpls(&[(112, 0, 30)], &ip));
    assert_eq!(ipv6_of(&decode(&out).payload, true).hop_limit, 64);
    // The entry's next hop carries IPv4 (111) or IPv6 (110): the payload must match.
    let v4 = Ip4::new([198, 51, 100, 7], [203, 0, 113, 9]).bytes();
    let (v, out) = one(&fib(), mpls(&[(111, 0, 30)], &v4));
    assert_eq!(v, Verdict::Forward { port: 3 });
    assert_eq!(decode(&out).ethertype, 0x0800);
    expect(&[
        (
            mpls(&[(111, 0, 30)], &ip),
            drop(DropReason::UnsupportedPayload),
        ),
        (
            mpls(&[(110, 0, 30)], &v4),
            drop(DropReason::UnsupportedPayload),
        ),
        (
            mpls(&[(110, 0, 30)], &ip[..39]),
            drop(DropReason::Truncated),
        ),
    ]);
}

#[test]
fn pop_and_lookup_into_the_ipv6_table_uniform_and_pipe() {
    let ip = Ip6::new(SRC, DST).hop(64).bytes();
    let (v, out) = one(&fib(), mpls(&[(120, 0, 40)], &ip));
    assert_eq!(v, Verdict::Forward { port: 1 });
    assert_eq!(ipv6_of(&decode(&out).payload, true).hop_limit, 39);
    let (v, out) = one(&fib(), mpls(&[(121, 0, 40)], &ip));
    assert_eq!(v, Verdict::Forward { port: 1 });
    assert_eq!(ipv6_of(&decode(&out).payload, true).hop_limit, 64);
    // What may never be forwarded is refused below labels too; no route: unreachable.
    expect(&[
        (
            mpls(&[(120, 0, 40)], &Ip6::new("fe80::1", DST).bytes()),
            drop(DropReason::LinkLocalScope),
        ),
        (
            mpls(&[(120, 0, 40)], &Ip6::new(SRC, "ff0e::1").bytes()),
            drop(DropReason::Multicast),
        ),
        (
            mpls(&[(120, 0, 40)], &Ip6::new(SRC, "2001:db8:5555::1").bytes()),
            punt(PuntReason::Unreachable { in_port: IN_PORT }),
        ),
    ]);
}

#[test]
fn ler_push_and_6pe_with_uniform_and_pipe_ttl() {
    let mut ip = Ip6::new(SRC, "2001:db8:2::1").hop(64);
    ip.tc = 0xa0; // class selector 5
    let (v, out) = one(&fib(), frame6(&ip));
    assert_eq!(v, Verdict::Forward { port: 2 });
    let d = decode(&out);
    assert_eq!(d.labels, vec![(1000, 5, false, 63), (2000, 5, true, 63)]);
    assert_eq!(ipv6_of(&d.payload, true).hop_limit, 63);
    // Pipe: the label's own TTL, the hop limit decremented once.
    let (_, out) = one(&fib(), frame6(&Ip6::new(SRC, "2001:db8:3::1").hop(64)));
    let d = decode(&out);
    assert_eq!(d.labels, vec![(1000, 0, true, 200)]);
    assert_eq!(ipv6_of(&d.payload, true).hop_limit, 63);
    // 6PE: an IPv4 next hop's label stack over the intact IPv6 packet.
    let input = frame6(&Ip6::new(SRC, "2001:db8:4::1").hop(64));
    let (v, out) = one(&fib(), input.clone());
    assert_eq!(v, Verdict::Forward { port: 3 });
    let d = decode(&out);
    assert_eq!((d.dst, d.ethertype), (nh_mac(3), 0x8847));
    assert_eq!(d.labels, vec![(300, 0, true, 63)]);
    let mut inner = input[14..].to_vec();
    inner[7] = 63;
    assert_eq!(d.payload, inner);
}

#[test]
fn lsr_ttl_expiry_over_ipv6_is_punted_like_ipv4() {
    let ip = Ip6::new(SRC, DST).bytes();
    expect(&[(
        mpls(&[(100, 0, 1)], &ip),
        punt(PuntReason::TtlExpired { in_port: IN_PORT }),
    )]);
    // A swap carries the IPv6 payload untouched.
    let (v, out) = one(&fib(), mpls(&[(100, 0, 9)], &ip));
    assert_eq!(v, Verdict::Forward { port: 1 });
    assert_eq!(decode(&out).payload, ip);
}

#[test]
fn originated_ipv6_is_routed_without_checks_or_decrement() {
    let p = net::pipeline::Pipeline::new(PipelineConfig::default(), local6());
    let go = |ip: Ip6| {
        let mut f = eth_to([0; 6], 0x86dd, &ip.bytes());
        f[6..12].fill(0);
        let mut b = VecBuf::new(&f);
        let v = p.originate(&fib(), &mut b);
        (v, b.data().to_vec())
    };
    let (v, out) = go(Ip6::new(OWN, DST).hop(64));
    assert_eq!(v, Verdict::Forward { port: 1 });
    let d = decode(&out);
    assert_eq!((d.dst, d.src), (nh_mac(1), port_mac(1)));
    assert_eq!(ipv6_of(&d.payload, true).hop_limit, 64);
    // Labels are pushed as for forwarded traffic.
    let (v, out) = go(Ip6::new(OWN, "2001:db8:2::1").hop(255));
    assert_eq!(v, Verdict::Forward { port: 2 });
    assert_eq!(decode(&out).labels[0].3, 255);
    // Link-scope destinations have no port here: the slow path sends those itself.
    assert_eq!(
        go(Ip6::new(OWN_LL, "fe80::9")).0,
        drop(DropReason::LinkLocalScope)
    );
    assert_eq!(
        go(Ip6::new(OWN_LL, "ff02::1")).0,
        drop(DropReason::Multicast)
    );
    assert_eq!(
        go(Ip6::new(OWN, "2001:db8:5555::1")).0,
        drop(DropReason::NoRoute)
    );
}

/// `process_burst_counted` counts every packet once under the family its frame carries,
/// whichever path (label, IPv4, IPv6 fast loops or the stages) decides it, over bursts
/// longer than a chunk and whichever family comes first; and noting the packets not
/// forwarded leaves the forwarded ones of each family. The oracle is what was fed.
#[test]
fn received_packets_are_counted_once_by_family() {
    use net::pipeline::{Family, FamilyCounts};
    let fib = fib_builder_with_ipv4().build(2);
    let v4_fwd = ipv4_frame(&Ip4::new([10, 9, 9, 9], [198, 51, 100, 7]));
    let v4_noroute = ipv4_frame(&Ip4::new([10, 9, 9, 9], [203, 0, 113, 7])); // restaged
    let v4_ttl1 = ipv4_frame(&Ip4::new([10, 9, 9, 9], [198, 51, 100, 7]).ttl(1));
    let v6_fwd = frame6(&Ip6::new(SRC, DST));
    let v6_ndp = frame6(&Ip6::new("fe80::9", OWN).icmp(135).hop(255)); // staged
    let swap = mpls(&[(100, 0, 64)], &[0x45; 40]);
    let unknown_label = mpls(&[(999, 0, 64)], &[0x45; 40]); // staged
                                                            // Egress LER (the `egress` fast path): explicit null and pop-and-lookup, forwarded
                                                            // or turned back to the stages after the lookup (no route).
    let v4 = Ip4::new([10, 9, 9, 9], [198, 51, 100, 7]).bytes();
    let null4 = mpls(&[(0, 0, 64)], &v4);
    let pal6 = mpls(&[(120, 0, 64)], &Ip6::new(SRC, DST).bytes());
    let null4_noroute = mpls(
        &[(0, 0, 64)],
        &Ip4::new([10, 9, 9, 9], [203, 0, 113, 7]).bytes(),
    );
    let arp = eth(0x0806, &[0; 28]);
    let mut vlan = eth(0x8100, &[0, 5, 0x08, 0x00]); // IPv4 where tags are accepted
    vlan.extend_from_slice(&Ip4::new([10, 9, 9, 9], [198, 51, 100, 7]).bytes());
    let truncated = vec![0u8; 10];
    let fed = [
        (Family::Ipv4, v4_fwd, 7),
        (Family::Ipv4, v4_noroute, 3),
        (Family::Ipv4, v4_ttl1, 2),
        (Family::Ipv6, v6_fwd, 6),
        (Family::Ipv6, v6_ndp, 2),
        (Family::Mpls, swap, 5),
        (Family::Mpls, unknown_label, 2),
        (Family::Mpls, null4, 4),
        (Family::Mpls, pal6, 3),
        (Family::Mpls, null4_noroute, 2),
        (Family::Other, arp, 3),
        (Family::Other, vlan, 1),
        (Family::Other, truncated, 1),
    ];
    for (rotate, accept_vlan) in (0..fed.len()).zip([false, true].into_iter().cycle()) {
        let cfg = PipelineConfig {
            accept_vlan,
            ..PipelineConfig::default()
        };
        let p = net::pipeline::Pipeline::new(cfg, local6());
        // Interleaved, 3 rounds (123 packets: two chunks), starting with another family.
        let mut frames = Vec::new();
        let mut fams = Vec::new();
        let mut want = [0u64; Family::COUNT];
        for _ in 0..3 {
            for k in 0..fed.len() {
                let (fam, f, n) = &fed[(k + rotate) % fed.len()];
                let fam = match (f.get(12..14) == Some(&[0x81, 0][..]), accept_vlan) {
                    (true, true) => Family::Ipv4,
                    _ => *fam,
                };
                for _ in 0..*n {
                    frames.push(VecBuf::new(f));
                    fams.push(fam);
                }
                want[fam as usize] += *n as u64;
            }
        }
        let mut verdicts = vec![Verdict::Forward { port: u16::MAX }; frames.len()];
        let mut counts = FamilyCounts::default();
        p.process_burst_counted(&fib, IN_PORT, &mut frames, &mut verdicts, &mut counts);
        assert_eq!(counts.received, want, "rotation {rotate}");
        assert_eq!(counts.total(), frames.len() as u64);
        // The mix took every path: forwarded by each fast path, punted and dropped.
        assert!(verdicts.contains(&Verdict::Forward { port: 1 }));
        assert!(verdicts.iter().any(|v| matches!(v, Verdict::Drop(_))));
        assert!(verdicts.iter().any(|v| matches!(v, Verdict::SlowPath(_))));
        // The family of each packet not forwarded, as the worker reads it, is the one
        // it was counted under.
        let (mut forwarded, mut unforwarded) = ([0u64; Family::COUNT], [0u64; Family::COUNT]);
        for ((f, v), fam) in frames.iter().zip(&verdicts).zip(&fams) {
            match v {
                Verdict::Forward { .. } => forwarded[*fam as usize] += 1,
                _ => {
                    assert_eq!(Family::of_unforwarded(f.data(), *v), *fam, "{v:?}");
                    unforwarded[*fam as usize] += 1;
                }
            }
        }
        let got: [u64; Family::COUNT] =
            std::array::from_fn(|i| counts.received[i] - unforwarded[i]);
        assert_eq!(
            got, forwarded,
            "rotation {rotate}, accept_vlan {accept_vlan}"
        );
    }
}

/// [`fib`]'s tables plus 198.51.100.0/24 to an IPv4 neighbour on port 1.
fn fib_builder_with_ipv4() -> net::fib::FibBuilder {
    let mut b = fib_builder();
    let a = b.add_adjacency(adj(1, &[]));
    b.add_ipv4_route(addr([198, 51, 100, 0]), 24, route(via(a), TtlMode::Uniform))
        .unwrap();
    b
}
