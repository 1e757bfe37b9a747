//! Property tests of the wire views: no panic on arbitrary bytes, round trips, and the
//! incremental checksum against a full recompute.
#![forbid(unsafe_code)]

use net::wire::arp::{ArpPacket, ArpRepr};
use net::wire::checksum;
use net::wire::ethernet::{EthernetFrame, EthernetRepr};
use net::wire::icmp::{Icmpv4Packet, Icmpv4Repr};
use net::wire::ipv4::{Ipv4Packet, Ipv4Repr};
use net::wire::mpls::LabelStack;
use proptest::prelude::*;

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

proptest! {
    #[test]
    fn views_never_panic(b in proptest::collection::vec(any::<u8>(), 0..300), depth in 0usize..20) {
        if let Ok(f) = EthernetFrame::new_checked(&b[..]) {
            let _ = (f.dst_addr(), f.src_addr(), f.ethertype(), f.vlan_tci(), f.payload());
            let _ = EthernetRepr::parse(&f);
        }
        if let Ok(p) = Ipv4Packet::new_checked(&b[..]) {
            let _ = (p.payload(), p.options(), p.verify_checksum(), p.is_fragment(), p.frag_offset());
            let _ = Ipv4Repr::parse(&p);
        }
        if let Ok(s) = LabelStack::new_checked(&b, depth) {
            prop_assert!(s.depth() <= depth);
            prop_assert!(s.iter().last().unwrap().bos());
        }
        if let Ok(p) = Icmpv4Packet::new_checked(&b[..]) {
            let _ = (p.data(), p.next_hop_mtu(), p.is_error());
            let _ = Icmpv4Repr::parse(&p);
        }
        if let Ok(p) = ArpPacket::new_checked(&b[..]) {
            let _ = ArpRepr::parse(&p);
        }
    }

    #[test]
    fn icmp_errors_with_extension_round_trip(
        original in proptest::collection::vec(any::<u8>(), 0..200),
        labels in proptest::collection::vec(any::<u32>(), 1..5),
    ) {
        let stack: Vec<u8> = labels.iter().flat_map(|l| l.to_be_bytes()).collect();
        let r = Icmpv4Repr::TimeExceeded { code: 0, original: &original, mpls: Some(&stack) };
        let mut buf = vec![0u8; r.buffer_len()];
        r.emit(&mut buf).unwrap();
        let p = Icmpv4Packet::new_checked(&buf[..]).unwrap();
        // etherparse ignores the RFC 4884 length byte: check with a local one's complement sum.
        prop_assert_eq!(ones_sum(&buf), 0xffff);
        prop_assert_eq!(ones_sum(&buf[8 + 128.max(original.len().next_multiple_of(4))..]), 0xffff);
        match Icmpv4Repr::parse(&p).unwrap() {
            Icmpv4Repr::TimeExceeded { original: o, mpls: Some(s), .. } => {
                prop_assert!(o.len() >= 128 && o.len() % 4 == 0);
                prop_assert_eq!(&o[..original.len()], &original[..]);
                prop_assert_eq!(s, &stack[..]);
            }
            other => prop_assert!(false, "{:?}", other),
        }
    }

    #[test]
    fn incremental_update_equals_recompute(
        mut h in any::<[u8; 20]>(),
        word in 0usize..10,
        new in any::<u16>(),
    ) {
        prop_assume!(word != 5);
        h[10] = 0;
        h[11] = 0;
        let c = checksum::compute(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        let old = u16::from_be_bytes([h[2 * word], h[2 * word + 1]]);
        h[2 * word..2 * word + 2].copy_from_slice(&new.to_be_bytes());
        let inc = checksum::update16(c, old, new);
        h[10..12].copy_from_slice(&inc.to_be_bytes());
        prop_assert_eq!(checksum::sum(&h), 0xffff);
    }

    #[test]
    fn ipv4_repr_round_trip(
        src in any::<[u8; 4]>(), dst in any::<[u8; 4]>(), protocol in any::<u8>(),
        ttl in any::<u8>(), tos in any::<u8>(), ident in any::<u16>(), df in any::<bool>(),
        payload_len in 0usize..100,
    ) {
        let r = Ipv4Repr { src, dst, protocol, ttl, tos, ident, dont_frag: df, payload_len };
        let mut b = vec![0u8; 20 + payload_len];
        r.emit(&mut b).unwrap();
        prop_assert_eq!(Ipv4Repr::parse(&Ipv4Packet::new_checked(&b[..]).unwrap()).unwrap(), r);
        let (e, _) = etherparse::Ipv4Header::from_slice(&b).unwrap();
        prop_assert_eq!(e.header_checksum, e.calc_header_checksum());
    }
}
