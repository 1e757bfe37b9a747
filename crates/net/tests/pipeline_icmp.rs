//! ICMP generation end to end: punt from the pipeline, build the reply, send it through
//! the pipeline, decode the result independently.
#![forbid(unsafe_code)]

mod pipeline_support;

use etherparse::{IcmpEchoHeader, Icmpv4Header, Icmpv4Slice, Icmpv4Type, IpNumber, Ipv4Header};
use net::fib::{Fib, LabelEntry, LabelOp, NextHop, RouteTarget, TtlMode};
use net::icmp::{self, IcmpConfig, IcmpError, MplsReply, SendVia};
use net::packet::{PacketBuf, VecBuf};
use net::pipeline::{PipelineConfig, PuntReason, Verdict};
use pipeline_support::*;

const SRC: [u8; 4] = [198, 51, 100, 7];
const DST: [u8; 4] = [203, 0, 113, 9];

/// Label 100 swaps to 200 on port 1; 203.0.113/24 via port 2 pushing [700];
/// 198.51.100/24 (the sources) via port 3 plain when `route_back`.
fn fib(route_back: bool) -> Fib {
    let mut b = builder();
    let swap = b.add_adjacency(adj(1, &[200]));
    let push = b.add_adjacency(adj(2, &[700]));
    let back = b.add_adjacency(adj(3, &[]));
    b.add_label(
        100,
        LabelEntry {
            op: LabelOp::Swap,
            next_hop: Some(NextHop::Adjacency(swap)),
            ttl_mode: TtlMode::Uniform,
        },
    )
    .unwrap();
    let u = TtlMode::Uniform;
    b.add_ipv4_route(addr([203, 0, 113, 0]), 24, route(via(push), u))
        .unwrap();
    if route_back {
        b.add_ipv4_route(addr([198, 51, 100, 0]), 24, route(via(back), u))
            .unwrap();
    }
    b.add_ipv4_route(addr(ROUTER_ADDR), 32, route(RouteTarget::Local, u))
        .unwrap();
    b.build(1)
}

fn punt(fib: &Fib, frame: &[u8]) -> PuntReason {
    match run1(fib, frame.to_vec()).0 {
        Verdict::SlowPath(r) => r,
        v => panic!("expected a punt, got {v:?}"),
    }
}

/// One's complement sum, independent of `net::wire::checksum`.
fn ones_sum(b: &[u8]) -> u16 {
    let mut s: u64 = b
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u64)
        .sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

fn sent(fib: &Fib, via: SendVia, frame: &[u8]) -> (Verdict, Vec<u8>) {
    let mut p = VecBuf::new(frame);
    let v = icmp::send(
        &pipeline(PipelineConfig::default()),
        fib,
        IN_PORT,
        via,
        &mut p,
    );
    (v, p.data().to_vec())
}

#[test]
fn ipv4_ttl_expiry_gives_time_exceeded_routed_from_the_ingress_address() {
    let fib = fib(true);
    let frame = ipv4_frame(&Ip4::new(SRC, DST).ttl(1));
    assert_eq!(
        punt(&fib, &frame),
        PuntReason::TtlExpired { in_port: IN_PORT }
    );
    let mut out = [0u8; icmp::MAX_ERROR_FRAME];
    let r = icmp::time_exceeded(&IcmpConfig::default(), &fib, IN_PORT, &frame, &mut out).unwrap();
    assert_eq!(r.via, SendVia::Route);
    let (v, wire) = sent(&fib, r.via, &out[..r.len]);
    assert_eq!(v, Verdict::Forward { port: 3 });
    let d = decode(&wire);
    let h = d.ip.unwrap();
    assert_eq!(h.source, [192, 0, 2, 1], "address of the ingress port");
    assert_eq!(h.destination, SRC);
    assert_eq!(h.time_to_live, 64, "originated: not decremented");
    let (_, icmp_bytes) = Ipv4Header::from_slice(&d.payload).unwrap();
    let e = Icmpv4Slice::from_slice(icmp_bytes).unwrap();
    assert!(matches!(
        e.icmp_type(),
        Icmpv4Type::TimeExceeded(etherparse::icmpv4::TimeExceededCode::TtlExceededInTransit)
    ));
    assert_eq!(e.checksum(), e.icmp_type().calc_checksum(e.payload()));
    assert_eq!(
        e.payload(),
        &frame[14..],
        "the whole short datagram is quoted"
    );
}

/// The stack object of an RFC 4884 message: checks the structure, returns the stack.
fn rfc4950_stack(icmp_msg: &[u8]) -> Vec<u8> {
    assert_eq!(ones_sum(icmp_msg), 0xffff, "ICMP checksum");
    let words = icmp_msg[5] as usize;
    assert_eq!(words, 32, "original datagram padded to 128 bytes");
    let ext = &icmp_msg[8 + 128..];
    assert_eq!(ext[0] >> 4, 2, "extension version");
    assert_eq!(ones_sum(ext), 0xffff, "extension checksum");
    let obj_len = u16::from_be_bytes([ext[4], ext[5]]) as usize;
    assert_eq!(
        (ext[6], ext[7]),
        (1, 1),
        "MPLS label stack class / incoming stack"
    );
    assert_eq!(ext.len(), 4 + obj_len);
    ext[8..4 + obj_len].to_vec()
}

#[test]
fn mpls_ttl_expiry_reply_follows_the_lsp_with_rfc4950_stack() {
    let fib = fib(true);
    let payload = Ip4::new(SRC, DST).len(300).bytes();
    let frame = mpls(&[(100, 5, 1)], &payload);
    assert_eq!(
        punt(&fib, &frame),
        PuntReason::TtlExpired { in_port: IN_PORT }
    );
    let mut out = [0u8; icmp::MAX_ERROR_FRAME];
    let r = icmp::time_exceeded(&IcmpConfig::default(), &fib, IN_PORT, &frame, &mut out).unwrap();
    assert_eq!(r.via, SendVia::LabelSwitch);
    // Built under the received stack, label TTL 255.
    assert_eq!(decode(&out[..r.len]).labels, vec![(100, 5, true, 255)]);
    let (v, wire) = sent(&fib, r.via, &out[..r.len]);
    assert_eq!(
        v,
        Verdict::Forward { port: 1 },
        "switched like the expired packet"
    );
    let d = decode(&wire);
    assert_eq!(d.labels, vec![(200, 5, true, 254)]);
    let h = d.ip.unwrap();
    assert_eq!(
        (h.source, h.destination, h.protocol),
        ([192, 0, 2, 1], SRC, IpNumber::ICMP)
    );
    let msg = &d.payload[20..];
    assert_eq!((msg[0], msg[1]), (11, 0));
    assert_eq!(&msg[8..8 + 128], &payload[..128], "first 128 bytes quoted");
    assert_eq!(
        rfc4950_stack(msg),
        frame[14..18].to_vec(),
        "stack as received"
    );
}

#[test]
fn mpls_reply_direct_option_routes_when_possible() {
    let cfg = IcmpConfig {
        mpls_reply: MplsReply::Direct,
        ..IcmpConfig::default()
    };
    let frame = mpls(&[(100, 0, 1)], &Ip4::new(SRC, DST).bytes());
    let mut out = [0u8; icmp::MAX_ERROR_FRAME];
    let with_route = fib(true);
    let r = icmp::time_exceeded(&cfg, &with_route, IN_PORT, &frame, &mut out).unwrap();
    assert_eq!(r.via, SendVia::Route);
    let (v, wire) = sent(&with_route, r.via, &out[..r.len]);
    assert_eq!(v, Verdict::Forward { port: 3 });
    let d = decode(&wire);
    assert!(d.labels.is_empty());
    // The stack object is still there for traceroute.
    assert_eq!(rfc4950_stack(&d.payload[20..]), frame[14..18].to_vec());
    let without = fib(false);
    let r = icmp::time_exceeded(&cfg, &without, IN_PORT, &frame, &mut out).unwrap();
    assert_eq!(r.via, SendVia::LabelSwitch);
}

#[test]
fn frag_needed_reports_mtu_minus_label_bytes() {
    let fib = fib(true);
    let frame = ipv4_frame(&Ip4::new(SRC, DST).len(1500 - 28));
    let mtu = match punt(&fib, &frame) {
        PuntReason::FragNeeded { in_port, mtu } => {
            assert_eq!(in_port, IN_PORT);
            mtu
        }
        p => panic!("{p:?}"),
    };
    assert_eq!(mtu, 1496);
    let mut out = [0u8; icmp::MAX_ERROR_FRAME];
    let r =
        icmp::frag_needed(&IcmpConfig::default(), &fib, IN_PORT, &frame, mtu, &mut out).unwrap();
    let (v, wire) = sent(&fib, r.via, &out[..r.len]);
    assert_eq!(v, Verdict::Forward { port: 3 });
    let d = decode(&wire);
    assert!(d.payload.len() <= 576, "error fits in 576 bytes");
    let (_, icmp_bytes) = Ipv4Header::from_slice(&d.payload).unwrap();
    let e = Icmpv4Slice::from_slice(icmp_bytes).unwrap();
    assert_eq!(e.checksum(), e.icmp_type().calc_checksum(e.payload()));
    match e.icmp_type() {
        Icmpv4Type::DestinationUnreachable(
            etherparse::icmpv4::DestUnreachableHeader::FragmentationNeeded { next_hop_mtu },
        ) => assert_eq!(next_hop_mtu, 1496),
        t => panic!("{t:?}"),
    }
    assert_eq!(e.payload(), &frame[14..14 + 548]);
}

fn echo_request(dst: [u8; 4], id: u16, seq: u16, data: &[u8]) -> Vec<u8> {
    let icmp =
        Icmpv4Header::with_checksum(Icmpv4Type::EchoRequest(IcmpEchoHeader { id, seq }), data);
    let mut ip = Ipv4Header::new((8 + data.len()) as u16, 64, IpNumber::ICMP, SRC, dst).unwrap();
    ip.header_checksum = ip.calc_header_checksum();
    let mut v = Vec::new();
    ip.write(&mut v).unwrap();
    icmp.write(&mut v).unwrap();
    v.extend_from_slice(data);
    v
}

#[test]
fn echo_reply_for_the_router_address() {
    let fib = fib(true);
    for frame in [
        eth(0x0800, &echo_request(ROUTER_ADDR, 77, 3, b"ping payload")),
        // Also when it arrived labelled and was disposed of to the router.
        mpls(
            &[(0, 0, 9)],
            &echo_request(ROUTER_ADDR, 77, 3, b"ping payload"),
        ),
    ] {
        assert_eq!(punt(&fib, &frame), PuntReason::LocalDelivery);
        let mut out = [0u8; 256];
        let r = icmp::echo_reply(&IcmpConfig::default(), &frame, &mut out).unwrap();
        let (v, wire) = sent(&fib, r.via, &out[..r.len]);
        assert_eq!(v, Verdict::Forward { port: 3 });
        let d = decode(&wire);
        let h = d.ip.unwrap();
        assert_eq!((h.source, h.destination), (ROUTER_ADDR, SRC));
        let (_, icmp_bytes) = Ipv4Header::from_slice(&d.payload).unwrap();
        let e = Icmpv4Slice::from_slice(icmp_bytes).unwrap();
        assert_eq!(
            e.icmp_type(),
            Icmpv4Type::EchoReply(IcmpEchoHeader { id: 77, seq: 3 })
        );
        assert_eq!(e.checksum(), e.icmp_type().calc_checksum(e.payload()));
        assert_eq!(e.payload(), b"ping payload");
    }
    let not_echo = ipv4_frame(&Ip4::new(SRC, ROUTER_ADDR));
    let mut out = [0u8; 256];
    assert_eq!(
        icmp::echo_reply(&IcmpConfig::default(), &not_echo, &mut out),
        Err(IcmpError::NotEchoRequest)
    );
}

#[test]
fn errors_are_not_sent_about_errors_fragments_or_bad_sources() {
    let fib = fib(true);
    let cfg = IcmpConfig::default();
    let mut out = [0u8; icmp::MAX_ERROR_FRAME];
    // An ICMP error (a time exceeded we built) about which no error may be sent.
    let first = ipv4_frame(&Ip4::new(SRC, DST).ttl(1));
    let r = icmp::time_exceeded(&cfg, &fib, IN_PORT, &first, &mut out).unwrap();
    let mut err_frame = out[..r.len].to_vec();
    err_frame[14 + 8] = 1; // its TTL expires in turn
    let c = !ones_sum(&{
        let mut h = err_frame[14..34].to_vec();
        h[10] = 0;
        h[11] = 0;
        h
    });
    err_frame[24..26].copy_from_slice(&c.to_be_bytes());
    assert!(matches!(
        icmp::time_exceeded(&cfg, &fib, IN_PORT, &err_frame, &mut out),
        Err(IcmpError::Suppressed(_))
    ));
    let mut frag = Ip4::new(SRC, DST).ttl(1);
    frag.frag_off = 100;
    frag.df = false;
    assert!(matches!(
        icmp::time_exceeded(&cfg, &fib, IN_PORT, &ipv4_frame(&frag), &mut out),
        Err(IcmpError::Suppressed(_))
    ));
    let bad_src = ipv4_frame(&Ip4::new([0, 0, 0, 0], DST).ttl(1));
    assert!(matches!(
        icmp::time_exceeded(&cfg, &fib, IN_PORT, &bad_src, &mut out),
        Err(IcmpError::Suppressed(_))
    ));
    assert_eq!(
        icmp::time_exceeded(&cfg, &fib, 9, &first, &mut out),
        Err(IcmpError::NoSourceAddress(9))
    );
    assert!(matches!(
        icmp::time_exceeded(&cfg, &fib, IN_PORT, &first, &mut out[..40]),
        Err(IcmpError::BufferTooSmall { .. })
    ));
    assert_eq!(
        icmp::time_exceeded(&cfg, &fib, IN_PORT, &eth(0x86dd, &[0; 40]), &mut out),
        Err(IcmpError::NotIpv4)
    );
}

#[test]
fn token_bucket_limits_generation() {
    let mut b = icmp::TokenBucket::new(2, 2);
    let t = 1_000_000_000u64;
    assert!(b.allow(t) && b.allow(t));
    assert!(!b.allow(t));
    assert!(b.allow(t + 500_000_000));
}

#[test]
fn frag_needed_about_a_labelled_packet_carries_the_stack_and_follows_the_lsp() {
    let fib = fib(true);
    // Label 100 swaps to 200 (same size): 1500 bytes of IPv4 + 4 label bytes > 1500.
    let payload = Ip4::new(SRC, DST).len(1500 - 28).bytes();
    let frame = mpls(&[(100, 0, 64)], &payload);
    let mtu = match punt(&fib, &frame) {
        PuntReason::FragNeeded { mtu, .. } => mtu,
        p => panic!("{p:?}"),
    };
    assert_eq!(mtu, 1496);
    let mut out = [0u8; icmp::MAX_ERROR_FRAME];
    let r =
        icmp::frag_needed(&IcmpConfig::default(), &fib, IN_PORT, &frame, mtu, &mut out).unwrap();
    assert_eq!(r.via, SendVia::LabelSwitch);
    let (v, wire) = sent(&fib, r.via, &out[..r.len]);
    assert_eq!(v, Verdict::Forward { port: 1 });
    let d = decode(&wire);
    assert_eq!(d.labels, vec![(200, 0, true, 254)]);
    let msg = &d.payload[20..];
    assert_eq!((msg[0], msg[1]), (3, 4));
    assert_eq!(u16::from_be_bytes([msg[6], msg[7]]), 1496);
    assert_eq!(rfc4950_stack(msg), frame[14..18].to_vec());
}
