//! IPv4 router and LER imposition behaviour of the pipeline, one test per behaviour.
#![forbid(unsafe_code)]

mod pipeline_support;

use net::fib::{Adjacency, FibBuilder, NextHop, RouteTarget, TtlMode};
use net::packet::{PacketBuf, VecBuf};
use net::pipeline::{DropReason, PipelineConfig, PuntReason, Verdict};
use pipeline_support::*;

const SRC: [u8; 4] = [198, 51, 100, 7];
const DST: [u8; 4] = [203, 0, 113, 9];

/// 203.0.113.0/24 via port 1 (no labels), 203.0.114.0/24 via port 2 pushing [1000, 2000]
/// in `push_mode`, plus local, connected, blackhole and unresolved routes.
fn fib_with(push_mode: TtlMode) -> net::fib::Fib {
    let mut b = builder();
    let plain = b.add_adjacency(adj(1, &[]));
    let push = b.add_adjacency(adj(2, &[1000, 2000]));
    let unresolved = b.add_adjacency(Adjacency::new(
        3,
        1500,
        [10, 0, 3, 2],
        None,
        port_mac(3),
        &[],
    ));
    let u = TtlMode::Uniform;
    b.add_ipv4_route(addr([203, 0, 113, 0]), 24, route(via(plain), u))
        .unwrap();
    b.add_ipv4_route(addr([203, 0, 114, 0]), 24, route(via(push), push_mode))
        .unwrap();
    b.add_ipv4_route(addr(ROUTER_ADDR), 32, route(RouteTarget::Local, u))
        .unwrap();
    b.add_ipv4_route(
        addr([10, 9, 0, 0]),
        16,
        route(RouteTarget::Connected { port: 2 }, u),
    )
    .unwrap();
    b.add_ipv4_route(addr([10, 66, 0, 0]), 16, route(RouteTarget::Blackhole, u))
        .unwrap();
    b.add_ipv4_route(addr([10, 77, 0, 0]), 16, route(via(unresolved), u))
        .unwrap();
    b.build(1)
}

fn fib() -> net::fib::Fib {
    fib_with(TtlMode::Uniform)
}

#[test]
fn forward_decrements_ttl_fixes_checksum_and_rewrites_l2() {
    let ip = Ip4::new(SRC, DST).ttl(64);
    let input = ipv4_frame(&ip);
    let (v, out) = run1(&fib(), input.clone());
    assert_eq!(v, Verdict::Forward { port: 1 });
    let d = decode(&out);
    assert_eq!(
        (d.dst, d.src, d.ethertype),
        (nh_mac(1), port_mac(1), 0x0800)
    );
    let h = d.ip.unwrap();
    assert_eq!(h.time_to_live, 63);
    assert_eq!((h.source, h.destination), (SRC, DST));
    // Only TTL and checksum changed.
    let (a, b) = (&input[14..], &out[14..]);
    assert_eq!(a.len(), b.len());
    for i in (0..a.len()).filter(|i| ![8, 10, 11].contains(i)) {
        assert_eq!(a[i], b[i], "byte {i}");
    }
}

#[test]
fn ttl_one_or_zero_is_punted_as_expired_and_left_unmodified() {
    for ttl in [0, 1] {
        let input = ipv4_frame(&Ip4::new(SRC, DST).ttl(ttl));
        let (v, out) = run1(&fib(), input.clone());
        assert_eq!(
            v,
            Verdict::SlowPath(PuntReason::TtlExpired { in_port: IN_PORT })
        );
        assert_eq!(out, input);
    }
    let (v, out) = run1(&fib(), ipv4_frame(&Ip4::new(SRC, DST).ttl(2)));
    assert_eq!(v, Verdict::Forward { port: 1 });
    assert_eq!(decode(&out).ip.unwrap().time_to_live, 1);
}

#[test]
fn ttl_one_to_the_router_is_delivered_locally() {
    let input = ipv4_frame(&Ip4::new(SRC, ROUTER_ADDR).ttl(1));
    let (v, out) = run1(&fib(), input.clone());
    assert_eq!(v, Verdict::SlowPath(PuntReason::LocalDelivery));
    assert_eq!(out, input);
}

#[test]
fn rfc1812_input_checks() {
    let good = ipv4_frame(&Ip4::new(SRC, DST));
    type Mangle = Box<dyn Fn(&mut Vec<u8>)>;
    let cases: Vec<(Mangle, DropReason)> = vec![
        (Box::new(|f| f[24] ^= 0x01), DropReason::BadChecksum),
        (Box::new(|f| f[14] = 0x65), DropReason::BadIpv4Header),
        (Box::new(|f| f[14] = 0x44), DropReason::BadIpv4Header),
        (
            Box::new(|f| f[16..18].copy_from_slice(&19u16.to_be_bytes())),
            DropReason::BadIpv4Header,
        ),
        (
            Box::new(|f| f[16..18].copy_from_slice(&999u16.to_be_bytes())),
            DropReason::Truncated,
        ),
        (Box::new(|f| f.truncate(14 + 19)), DropReason::Truncated),
        (Box::new(|f| f.truncate(13)), DropReason::Truncated),
    ];
    for (i, (mangle, reason)) in cases.iter().enumerate() {
        let mut f = good.clone();
        mangle(&mut f);
        let (v, out) = run1(&fib(), f.clone());
        assert_eq!(v, Verdict::Drop(*reason), "case {i}");
        assert_eq!(out, f);
    }
}

#[test]
fn martian_and_multicast_addresses_are_dropped() {
    for (src, dst, r) in [
        ([127, 0, 0, 1], DST, DropReason::MartianAddress),
        ([0, 1, 2, 3], DST, DropReason::MartianAddress),
        ([224, 0, 0, 5], DST, DropReason::MartianAddress),
        (SRC, [127, 0, 0, 1], DropReason::MartianAddress),
        (SRC, [255, 255, 255, 255], DropReason::MartianAddress),
        (SRC, [239, 1, 1, 1], DropReason::Multicast),
    ] {
        let (v, _) = run1(&fib(), ipv4_frame(&Ip4::new(src, dst)));
        assert_eq!(v, Verdict::Drop(r), "{src:?} -> {dst:?}");
    }
}

#[test]
fn link_local_multicast_is_punted_as_control_traffic() {
    // OSPF AllSPFRouters, LDP hellos (all routers), the last of 224.0.0.0/24; TTL 1 as
    // the protocols send it.
    for dst in [[224, 0, 0, 5], [224, 0, 0, 2], [224, 0, 0, 255]] {
        let (v, _) = run1(&fib(), ipv4_frame(&Ip4::new(SRC, dst).ttl(1)));
        assert_eq!(
            v,
            Verdict::SlowPath(PuntReason::LinkLocalMulticast),
            "{dst:?}"
        );
    }
    let (v, _) = run1(&fib(), ipv4_frame(&Ip4::new(SRC, [224, 0, 1, 5])));
    assert_eq!(v, Verdict::Drop(DropReason::Multicast));
}

#[test]
fn ethernet_padding_is_trimmed_using_ipv4_total_length() {
    let ip = Ip4::new(SRC, DST).len(0);
    let mut f = ipv4_frame(&ip);
    let ip_len = f.len() - 14;
    f.extend_from_slice(&[0xee; 18]);
    let (v, out) = run1(&fib(), f);
    assert_eq!(v, Verdict::Forward { port: 1 });
    assert_eq!(out.len(), 14 + ip_len);
    decode(&out);
}

#[test]
fn route_targets() {
    let cases = [
        ([9, 9, 9, 9], Verdict::Drop(DropReason::NoRoute)),
        ([10, 66, 1, 1], Verdict::Drop(DropReason::NoRoute)),
        (
            [10, 9, 1, 1],
            Verdict::SlowPath(PuntReason::Glean { port: 2 }),
        ),
        (ROUTER_ADDR, Verdict::SlowPath(PuntReason::LocalDelivery)),
        (
            [10, 77, 1, 1],
            Verdict::SlowPath(PuntReason::ArpNeeded { adj: 2 }),
        ),
    ];
    for (dst, want) in cases {
        let input = ipv4_frame(&Ip4::new(SRC, dst));
        let (v, out) = run1(&fib(), input.clone());
        assert_eq!(v, want, "{dst:?}");
        assert_eq!(out, input, "{dst:?} must be left as received");
    }
}

#[test]
fn arp_goes_to_slow_path_and_unknown_ethertypes_are_dropped() {
    let (v, _) = run1(&fib(), eth(0x0806, &[0; 28]));
    assert_eq!(v, Verdict::SlowPath(PuntReason::Arp));
    let (v, _) = run1(&fib(), eth(0x88cc, &[0x60; 40])); // LLDP
    assert_eq!(v, Verdict::Drop(DropReason::UnsupportedEthertype));
    let (v, _) = run1(&fib(), eth(0x8848, &lse(100, 0, true, 9)));
    assert_eq!(v, Verdict::Drop(DropReason::UnsupportedEthertype));
}

#[test]
fn isis_frames_are_punted_as_control_traffic_other_llc_is_dropped() {
    // dst, LLC DSAP/SSAP, expected.
    let punt = Verdict::SlowPath(PuntReason::LinkLocalMulticast);
    let drop = Verdict::Drop(DropReason::UnsupportedEthertype);
    for (dst, llc, want) in [
        ([0x01, 0x80, 0xc2, 0, 0, 0x14], [0xfe, 0xfe], punt),
        ([0x01, 0x80, 0xc2, 0, 0, 0x15], [0xfe, 0xfe], punt),
        ([0x09, 0x00, 0x2b, 0, 0, 0x05], [0xfe, 0xfe], punt),
        // STP (bridge group address, LLC 0x42): not the router's.
        ([0x01, 0x80, 0xc2, 0, 0, 0x00], [0x42, 0x42], drop),
        // Another LLC protocol to the IS-IS group.
        ([0x01, 0x80, 0xc2, 0, 0, 0x15], [0xaa, 0xaa], drop),
    ] {
        let mut f = dst.to_vec();
        f.extend_from_slice(&[2, 0, 0, 0, 0, 9]);
        f.extend_from_slice(&[0x00, 0x30]); // 802.3 length
        f.extend_from_slice(&llc);
        f.extend_from_slice(&[0x03, 0x83]); // UI, IS-IS discriminator
        f.resize(60, 0);
        let (v, _) = run1(&fib(), f);
        assert_eq!(v, want, "{dst:02x?} {llc:02x?}");
    }
}

#[test]
fn vlan_tag_dropped_by_default_and_stripped_when_accepted() {
    let ip = Ip4::new(SRC, DST).bytes();
    let mut tagged = eth(0x8100, &[0x00, 0x05, 0x08, 0x00]);
    tagged.extend_from_slice(&ip);
    let (v, _) = run1(&fib(), tagged.clone());
    assert_eq!(v, Verdict::Drop(DropReason::VlanTagged));
    let cfg = PipelineConfig {
        accept_vlan: true,
        ..PipelineConfig::default()
    };
    let (v, out) = run_with(cfg, &fib(), &[tagged]).pop().unwrap();
    assert_eq!(v, Verdict::Forward { port: 1 });
    let d = decode(&out);
    assert_eq!(d.ethertype, 0x0800);
    assert_eq!(d.ip.unwrap().time_to_live, 63);
}

#[test]
fn ler_push_uniform_copies_ttl_and_dscp_class() {
    let mut ip = Ip4::new(SRC, [203, 0, 114, 5]).ttl(20);
    ip.dscp = 46; // EF: class selector bits 101
    let (v, out) = run1(&fib(), ipv4_frame(&ip));
    assert_eq!(v, Verdict::Forward { port: 2 });
    let d = decode(&out);
    assert_eq!(
        (d.dst, d.src, d.ethertype),
        (nh_mac(2), port_mac(2), 0x8847)
    );
    assert_eq!(d.labels, vec![(1000, 5, false, 19), (2000, 5, true, 19)]);
    assert_eq!(d.ip.unwrap().time_to_live, 19);
}

#[test]
fn ler_push_pipe_uses_configured_label_ttl() {
    for (mode, want) in [(TtlMode::Pipe(255), 255), (TtlMode::Pipe(100), 100)] {
        let ip = Ip4::new(SRC, [203, 0, 114, 5]).ttl(20);
        let (v, out) = run1(&fib_with(mode), ipv4_frame(&ip));
        assert_eq!(v, Verdict::Forward { port: 2 });
        let d = decode(&out);
        assert_eq!(
            d.labels,
            vec![(1000, 0, false, want), (2000, 0, true, want)]
        );
        assert_eq!(d.ip.unwrap().time_to_live, 19);
    }
}

#[test]
fn ip_options_forwarded_or_punted_per_config() {
    // Hand-made header with a 4-byte NOP/EOL option (IHL 6).
    let mut ip = vec![
        0x46, 0, 0, 28, 0, 1, 0x40, 0, 9, 17, 0, 0, 198, 51, 100, 7, 203, 0, 113, 9, 1, 1, 1, 0,
    ];
    ip.extend_from_slice(&[0, 1, 0, 2, 0, 0, 0, 0]);
    let n = ip.len() as u16;
    ip[2..4].copy_from_slice(&n.to_be_bytes());
    let c = !fold(&ip[..24]);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let f = eth(0x0800, &ip);
    let (v, out) = run1(&fib(), f.clone());
    assert_eq!(v, Verdict::Forward { port: 1 });
    assert_eq!(decode(&out).ip.unwrap().time_to_live, 8);
    let cfg = PipelineConfig {
        punt_ip_options: true,
        ..PipelineConfig::default()
    };
    let (v, _) = run_with(cfg, &fib(), &[f]).pop().unwrap();
    assert_eq!(v, Verdict::SlowPath(PuntReason::IpOptions));
}

fn fold(b: &[u8]) -> u16 {
    let mut s: u32 = b
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]) as u32)
        .sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

#[test]
fn mtu_after_push_frag_needed_with_df_else_dropped() {
    // 1500-byte IPv4 packet: fits plain, not with two labels.
    let big = Ip4::new(SRC, [203, 0, 114, 5]).len(1500 - 28);
    let (v, _) = run1(&fib(), ipv4_frame(&big));
    assert_eq!(
        v,
        Verdict::SlowPath(PuntReason::FragNeeded {
            in_port: IN_PORT,
            mtu: 1492
        })
    );
    let mut no_df = big.clone();
    no_df.df = false;
    let (v, _) = run1(&fib(), ipv4_frame(&no_df));
    assert_eq!(v, Verdict::Drop(DropReason::MtuExceeded));
    let fits = Ip4::new(SRC, [203, 0, 114, 5]).len(1492 - 28);
    assert_eq!(
        run1(&fib(), ipv4_frame(&fits)).0,
        Verdict::Forward { port: 2 }
    );
    let plain = Ip4::new(SRC, DST).len(1500 - 28);
    assert_eq!(
        run1(&fib(), ipv4_frame(&plain)).0,
        Verdict::Forward { port: 1 }
    );
    let plain = Ip4::new(SRC, DST).len(1501 - 28);
    assert_eq!(
        run1(&fib(), ipv4_frame(&plain)).0,
        Verdict::SlowPath(PuntReason::FragNeeded {
            in_port: IN_PORT,
            mtu: 1500
        })
    );
}

#[test]
fn push_without_headroom_is_dropped() {
    let f = ipv4_frame(&Ip4::new(SRC, [203, 0, 114, 5]));
    let mut pkts = [VecBuf::with_headroom(&f, 4)];
    let mut v = [Verdict::Forward { port: 0 }];
    pipeline(PipelineConfig::default()).process_burst(&fib(), 0, &mut pkts, &mut v);
    assert_eq!(v[0], Verdict::Drop(DropReason::NoHeadroom));
    assert_eq!(pkts[0].data(), &f[..]);
}

#[test]
fn originate_routes_without_decrementing_ttl() {
    let f = ipv4_frame(&Ip4::new(ROUTER_ADDR, [203, 0, 114, 5]).ttl(255));
    let mut p = VecBuf::new(&f);
    let v = pipeline(PipelineConfig::default()).originate(&fib(), &mut p);
    assert_eq!(v, Verdict::Forward { port: 2 });
    let d = decode(p.data());
    assert_eq!(d.ip.unwrap().time_to_live, 255);
    assert_eq!(d.labels[1], (2000, 0, true, 255));
}

#[test]
fn long_bursts_are_processed_in_chunks() {
    let frames: Vec<Vec<u8>> = (0..150u32)
        .map(|i| {
            let dst = if i % 3 == 0 { [9, 9, 9, 9] } else { DST };
            ipv4_frame(&Ip4::new(SRC, dst).ttl(10 + (i % 50) as u8))
        })
        .collect();
    let out = run(&fib(), &frames);
    for (i, (v, o)) in out.iter().enumerate() {
        if i % 3 == 0 {
            assert_eq!(*v, Verdict::Drop(DropReason::NoRoute));
        } else {
            assert_eq!(*v, Verdict::Forward { port: 1 });
            assert_eq!(decode(o).ip.unwrap().time_to_live, 9 + (i % 50) as u8);
        }
    }
}

#[test]
fn ecmp_member_is_stable_per_flow_and_spreads_flows() {
    let mut b = FibBuilder::new();
    let a1 = b.add_adjacency(adj(1, &[]));
    let a2 = b.add_adjacency(adj(2, &[]));
    let g = b.add_ecmp(&[(a1, 1), (a2, 3)]).unwrap();
    b.add_ipv4_route(
        addr([203, 0, 113, 0]),
        24,
        route(RouteTarget::NextHop(NextHop::Ecmp(g)), TtlMode::Uniform),
    )
    .unwrap();
    let fib = b.build(1);
    let mut count = [0usize; 3];
    for sport in 0..400u16 {
        let mut ip = Ip4::new(SRC, DST);
        ip.sport = 1000 + sport;
        let first = run1(&fib, ipv4_frame(&ip)).0;
        // Same flow, other TTL and length: same member.
        ip.ttl = 9;
        ip.payload_len = 100;
        assert_eq!(run1(&fib, ipv4_frame(&ip)).0, first);
        match first {
            Verdict::Forward { port } => count[port as usize] += 1,
            v => panic!("{v:?}"),
        }
    }
    // Weights 1:3 over 400 flows: roughly 100 / 300.
    assert!((60..=140).contains(&count[1]), "{count:?}");
    assert!((260..=340).contains(&count[2]), "{count:?}");
}

#[test]
fn fragments_hash_without_ports() {
    let mut b = FibBuilder::new();
    let members: Vec<_> = (0..4).map(|p| (b.add_adjacency(adj(p, &[])), 1)).collect();
    let g = b.add_ecmp(&members).unwrap();
    b.add_ipv4_route(
        addr([203, 0, 113, 0]),
        24,
        route(RouteTarget::NextHop(NextHop::Ecmp(g)), TtlMode::Uniform),
    )
    .unwrap();
    let fib = b.build(1);
    let mut ports = std::collections::HashSet::new();
    for sport in 0..64u16 {
        let mut ip = Ip4::new(SRC, DST);
        ip.mf = true;
        ip.df = false;
        ip.sport = sport;
        ports.insert(run1(&fib, ipv4_frame(&ip)).0);
    }
    assert_eq!(
        ports.len(),
        1,
        "fragments of one datagram must not spread: {ports:?}"
    );
}
