//! Every wire view constructor and parser on arbitrary bytes: errors are fine, panics are
//! not, and whatever parses must re-emit into a buffer of the announced size. The ICMP
//! builders of the slow path take received frames too, so they run here as well.
#![no_main]

use libfuzzer_sys::fuzz_target;
use net::fib::Fib;
use net::icmp::{self, IcmpConfig};
use net::wire::{arp, ethernet, icmp as wicmp, ipv4, l4, mpls};

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = ethernet::EthernetFrame::new_checked(data) {
        let _ = (f.dst_addr(), f.src_addr(), f.vlan_tci(), f.ethertype());
        assert!(f.header_len() <= data.len());
        let _ = f.payload();
        if let Ok(r) = ethernet::EthernetRepr::parse(&f) {
            let mut b = vec![0u8; r.header_len()];
            r.emit(&mut b).expect("emit into header_len bytes");
        }
    }
    if let Ok(p) = ipv4::Ipv4Packet::new_checked(data) {
        let _ = (
            p.version(),
            p.dscp(),
            p.ecn(),
            p.ident(),
            p.dont_frag(),
            p.more_frags(),
        );
        let _ = (
            p.frag_offset(),
            p.is_fragment(),
            p.ttl(),
            p.protocol(),
            p.checksum(),
        );
        let _ = (p.src_addr(), p.dst_addr(), p.verify_checksum(), p.options());
        assert!(p.header_len() <= data.len());
        let _ = l4::ports_word(p.protocol(), p.payload());
        if let Ok(r) = ipv4::Ipv4Repr::parse(&p) {
            let mut b = vec![0u8; r.header_len()];
            let _ = r.emit(&mut b);
        }
        let mut owned = data.to_vec();
        if let Ok(mut m) = ipv4::Ipv4Packet::new_checked(&mut owned[..]) {
            let ttl = m.ttl();
            let ok = m.verify_checksum();
            m.set_ttl_update_checksum(ttl.wrapping_sub(1));
            // RFC 1624 incremental update keeps a valid checksum valid.
            if ok {
                assert!(
                    m.verify_checksum(),
                    "incremental checksum broke a valid header"
                );
            }
            m.fill_checksum();
            assert!(m.verify_checksum());
        }
    }
    for depth in [1usize, 3, mpls::DEFAULT_MAX_DEPTH] {
        if let Ok(s) = mpls::LabelStack::new_checked(data, depth) {
            assert!(s.depth() >= 1 && s.depth() <= depth);
            assert_eq!(s.as_bytes().len(), s.depth() * mpls::ENTRY_LEN);
            let n = s.iter().count();
            assert_eq!(n, s.depth());
            for (i, e) in s.iter().enumerate() {
                assert_eq!(
                    e.bos(),
                    i + 1 == n,
                    "S bit must be on the bottom entry only"
                );
                assert_eq!(s.get(i), Some(e));
            }
        }
    }
    if let Ok(e) = mpls::LabelStackEntry::read(data) {
        let mut b = [0u8; 4];
        e.write(&mut b).unwrap();
        assert_eq!(&b[..], &data[..4]);
        let _ = mpls::is_reserved(e.label());
    }
    if let Ok(a) = arp::ArpPacket::new_checked(data) {
        let _ = (
            a.operation(),
            a.sender_mac(),
            a.sender_ip(),
            a.target_mac(),
            a.target_ip(),
        );
        if let Ok(r) = arp::ArpRepr::parse(&a) {
            let mut b = [0u8; arp::PACKET_LEN];
            r.emit(&mut b).unwrap();
            let _ = r.reply([2, 0, 0, 0, 0, 1]);
        }
    }
    if let Ok(p) = wicmp::Icmpv4Packet::new_checked(data) {
        let _ = (
            p.msg_type(),
            p.code(),
            p.checksum(),
            p.echo_ident(),
            p.echo_seq(),
        );
        let _ = (
            p.original_len_words(),
            p.next_hop_mtu(),
            p.data(),
            p.is_error(),
        );
        if let Ok(r) = wicmp::Icmpv4Repr::parse(&p) {
            let mut b = vec![0u8; r.buffer_len()];
            let n = r.emit(&mut b).expect("emit into buffer_len bytes");
            assert!(n <= b.len());
        }
    }
    // Slow-path reply builders on the frame as received.
    let cfg = IcmpConfig::default();
    let fib = Fib::empty();
    let mut out = [0u8; 2048];
    if let Ok(r) = icmp::time_exceeded(&cfg, &fib, 0, data, &mut out) {
        assert!(r.len <= out.len());
    }
    if let Ok(r) = icmp::frag_needed(&cfg, &fib, 0, data, 1400, &mut out) {
        assert!(r.len <= out.len());
    }
    if let Ok(r) = icmp::echo_reply(&cfg, data, &mut out) {
        assert!(r.len <= out.len());
    }
});
