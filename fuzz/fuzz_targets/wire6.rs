//! The IPv6 wire views on arbitrary bytes: the IPv6 view, the extension-header walk,
//! ICMPv6 (errors with RFC 4884/4950 extensions) and NDP. Errors are fine, panics are
//! not; the walk stays inside the payload and within its header bound; whatever parses
//! re-emits into the announced size with a checksum that verifies and parses back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use net::wire::icmpv6::{Icmpv6Packet, Icmpv6Repr};
use net::wire::ipv6::{self, Ipv6Packet, Ipv6Repr, NH_ICMPV6};
use net::wire::{ipv6_ext, ndp};

fn icmpv6(msg: &[u8], src: &[u8; 16], dst: &[u8; 16]) {
    let Ok(p) = Icmpv6Packet::new_checked(msg) else {
        return;
    };
    let _ = (
        p.msg_type(),
        p.code(),
        p.checksum(),
        p.word(),
        p.is_error(),
        p.data(),
    );
    let ndp = ndp::NdpRepr::parse(&p).ok();
    let Ok(r) = Icmpv6Repr::parse(&p, src, dst) else {
        return;
    };
    if let Icmpv6Repr::Ndp(n) = r {
        assert_eq!(Some(n), ndp, "NDP decoded two ways");
    }
    let mut b = vec![0u8; r.buffer_len()];
    let n = r
        .emit(src, dst, &mut b)
        .expect("emit into buffer_len bytes");
    assert_eq!(n, b.len());
    let q = Icmpv6Packet::new_checked(&b[..]).expect("re-emitted message is 8+ bytes");
    assert!(q.verify_checksum(src, dst));
    let back = Icmpv6Repr::parse(&q, src, dst).expect("re-emitted message parses");
    match (r, back) {
        // An extension moves the quote to 128 bytes or more; the labels must survive.
        (
            Icmpv6Repr::TimeExceeded { mpls: Some(a), .. },
            Icmpv6Repr::TimeExceeded { mpls: b, .. },
        )
        | (
            Icmpv6Repr::DstUnreachable { mpls: Some(a), .. },
            Icmpv6Repr::DstUnreachable { mpls: b, .. },
        ) => {
            assert_eq!(Some(a), b)
        }
        (r, back) => assert_eq!(r, back),
    }
}

fuzz_target!(|data: &[u8]| {
    // The first 32 bytes double as addresses for a bare ICMPv6 message.
    if data.len() >= 32 {
        let (s, d) = (
            data[..16].try_into().unwrap(),
            data[16..32].try_into().unwrap(),
        );
        icmpv6(&data[32..], &s, &d);
        let _ = (
            ipv6::is_link_local(&s),
            ipv6::is_solicited_node(&d),
            ipv6::solicited_node(&d),
        );
    }
    if let Some(&nh) = data.first() {
        if let Ok(u) = ipv6_ext::walk(nh, &data[1..]) {
            assert!(u.offset < data.len() && u.headers <= ipv6_ext::MAX_EXT_HEADERS);
        }
    }
    let Ok(p) = Ipv6Packet::new_checked(data) else {
        return;
    };
    let r = Ipv6Repr::parse(&p).expect("a checked view parses");
    let mut b = [0u8; ipv6::HEADER_LEN];
    r.emit(&mut b).expect("emit a parsed header");
    assert_eq!(&b[..], &data[..ipv6::HEADER_LEN]);
    let (src, dst) = (p.src_addr(), p.dst_addr());
    if let Ok(u) = ipv6_ext::walk(p.next_header(), p.payload()) {
        assert!(u.offset <= p.payload().len());
        if u.protocol == NH_ICMPV6 && u.has_header() {
            icmpv6(&p.payload()[u.offset..], &src, &dst);
        }
    }
    let mut owned = data.to_vec();
    let mut m = Ipv6Packet::new_checked(&mut owned[..]).expect("same bytes");
    m.set_hop_limit(m.hop_limit().wrapping_sub(1));
    assert_eq!(m.hop_limit(), data[7].wrapping_sub(1));
});
