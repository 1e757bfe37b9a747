//! Property tests of the IPv6 wire views: no panic on arbitrary bytes, round trips, and
//! ICMPv6 checksums against an independent pseudo-header sum and etherparse.
#![forbid(unsafe_code)]

use net::wire::icmpv6::{Icmpv6Packet, Icmpv6Repr};
use net::wire::ipv6::{Ipv6Packet, Ipv6Repr, NH_ICMPV6};
use net::wire::ipv6_ext;
use net::wire::ndp::NdpRepr;
use proptest::prelude::*;

/// RFC 1071 by the textbook: 16-bit words, end-around carry at the end.
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

/// Sum over the RFC 8200 §8.1 pseudo-header followed by the message, built byte by byte.
fn with_pseudo_header(src: &[u8; 16], dst: &[u8; 16], msg: &[u8]) -> u16 {
    let mut v = Vec::new();
    v.extend_from_slice(src);
    v.extend_from_slice(dst);
    v.extend_from_slice(&(msg.len() as u32).to_be_bytes());
    v.extend_from_slice(&[0, 0, 0, NH_ICMPV6]);
    v.extend_from_slice(msg);
    ones_sum(&v)
}

fn ndp() -> impl Strategy<Value = NdpRepr> {
    let mac = proptest::option::of(any::<[u8; 6]>());
    // Targets are unicast: the first byte is not 0xff.
    let target = (0u8..0xff, any::<[u8; 15]>()).prop_map(|(a, r)| {
        let mut t = [a; 16];
        t[1..].copy_from_slice(&r);
        t
    });
    prop_oneof![
        mac.clone()
            .prop_map(|lladdr| NdpRepr::RouterSolicit { lladdr }),
        (target.clone(), mac.clone())
            .prop_map(|(target, lladdr)| NdpRepr::NeighborSolicit { target, lladdr }),
        (target, mac.clone(), any::<[bool; 3]>()).prop_map(|(target, lladdr, f)| {
            NdpRepr::NeighborAdvert {
                router: f[0],
                solicited: f[1],
                override_: f[2],
                target,
                lladdr,
            }
        }),
        (
            any::<(u8, bool, bool, u16, u32, u32)>(),
            mac,
            proptest::option::of(any::<u32>())
        )
            .prop_map(
                |(
                    (hop_limit, managed, other, router_lifetime, reachable_time, retrans_time),
                    lladdr,
                    mtu,
                )| {
                    NdpRepr::RouterAdvert {
                        hop_limit,
                        managed,
                        other,
                        router_lifetime,
                        reachable_time,
                        retrans_time,
                        lladdr,
                        mtu,
                    }
                }
            ),
    ]
}

proptest! {
    #[test]
    fn views_never_panic(b in proptest::collection::vec(any::<u8>(), 0..300), nh in any::<u8>()) {
        if let Ok(p) = Ipv6Packet::new_checked(&b[..]) {
            let _ = (p.payload(), p.flow_label(), p.traffic_class(), p.src_addr(), p.dst_addr());
            let r = Ipv6Repr::parse(&p).unwrap();
            prop_assert_eq!(r.payload_len, p.payload().len());
            if let Ok(u) = ipv6_ext::walk(p.next_header(), p.payload()) {
                prop_assert!(u.offset <= p.payload().len());
                prop_assert!(u.headers <= ipv6_ext::MAX_EXT_HEADERS);
            }
        }
        if let Ok(u) = ipv6_ext::walk(nh, &b) {
            prop_assert!(u.offset <= b.len());
        }
        if let Ok(p) = Icmpv6Packet::new_checked(&b[..]) {
            let (s, d) = ([1u8; 16], [2u8; 16]);
            let _ = (p.data(), p.word(), p.is_error(), p.verify_checksum(&s, &d));
            let _ = Icmpv6Repr::parse(&p, &s, &d);
            let _ = NdpRepr::parse(&p);
        }
    }

    #[test]
    fn ipv6_repr_round_trip(
        src in any::<[u8; 16]>(), dst in any::<[u8; 16]>(), next_header in any::<u8>(),
        hop_limit in any::<u8>(), traffic_class in any::<u8>(), flow_label in 0u32..1 << 20,
        payload_len in 0usize..100,
    ) {
        let r = Ipv6Repr { src, dst, next_header, hop_limit, traffic_class, flow_label, payload_len };
        let mut b = vec![0u8; 40 + payload_len];
        r.emit(&mut b).unwrap();
        prop_assert_eq!(Ipv6Repr::parse(&Ipv6Packet::new_checked(&b[..]).unwrap()).unwrap(), r);
        let (e, _) = etherparse::Ipv6Header::from_slice(&b).unwrap();
        prop_assert_eq!((e.source, e.destination, e.hop_limit), (src, dst, hop_limit));
        prop_assert_eq!((e.flow_label.value(), e.traffic_class), (flow_label, traffic_class));
    }

    #[test]
    fn icmpv6_errors_with_extension_round_trip(
        src in any::<[u8; 16]>(), dst in any::<[u8; 16]>(),
        original in proptest::collection::vec(any::<u8>(), 0..300),
        labels in proptest::collection::vec(any::<u32>(), 1..5),
        te in any::<bool>(),
    ) {
        let stack: Vec<u8> = labels.iter().flat_map(|l| l.to_be_bytes()).collect();
        let r = if te {
            Icmpv6Repr::TimeExceeded { code: 0, original: &original, mpls: Some(&stack) }
        } else {
            Icmpv6Repr::DstUnreachable { code: 0, original: &original, mpls: Some(&stack) }
        };
        let mut buf = vec![0u8; r.buffer_len()];
        r.emit(&src, &dst, &mut buf).unwrap();
        prop_assert_eq!(with_pseudo_header(&src, &dst, &buf), 0xffff);
        let orig_len = 128.max(original.len().next_multiple_of(8));
        prop_assert_eq!(buf[4] as usize * 8, orig_len);
        prop_assert_eq!(ones_sum(&buf[8 + orig_len..]), 0xffff);
        let p = Icmpv6Packet::new_checked(&buf[..]).unwrap();
        match Icmpv6Repr::parse(&p, &src, &dst).unwrap() {
            Icmpv6Repr::TimeExceeded { original: o, mpls: Some(s), .. }
            | Icmpv6Repr::DstUnreachable { original: o, mpls: Some(s), .. } => {
                prop_assert_eq!(o.len(), orig_len);
                prop_assert_eq!(&o[..original.len()], &original[..]);
                prop_assert_eq!(s, &stack[..]);
            }
            other => prop_assert!(false, "{:?}", other),
        }
    }

    #[test]
    fn echo_and_ndp_round_trip_with_independent_checksums(
        src in any::<[u8; 16]>(), dst in any::<[u8; 16]>(), n in ndp(),
        data in proptest::collection::vec(any::<u8>(), 0..64), ident in any::<u16>(), seq in any::<u16>(),
    ) {
        for r in [Icmpv6Repr::Ndp(n), Icmpv6Repr::EchoReply { ident, seq, data: &data }] {
            let mut buf = vec![0u8; r.buffer_len()];
            r.emit(&src, &dst, &mut buf).unwrap();
            prop_assert_eq!(with_pseudo_header(&src, &dst, &buf), 0xffff);
            let (h, _) = etherparse::Icmpv6Header::from_slice(&buf).unwrap();
            prop_assert_eq!(h.checksum, h.icmp_type.calc_checksum(src, dst, &buf[8..]).unwrap());
            let p = Icmpv6Packet::new_checked(&buf[..]).unwrap();
            prop_assert_eq!(Icmpv6Repr::parse(&p, &src, &dst).unwrap(), r);
        }
    }
}
