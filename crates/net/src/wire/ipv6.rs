//! IPv6 fixed headers (RFC 8200) and the address classes the forwarding rules test
//! (RFC 4291): link-local, multicast, unspecified, loopback, solicited-node.
//!
//! The view checks the fixed header and the payload length once; extension headers are
//! walked by [`super::ipv6_ext`]. No decision is taken here about what may be forwarded.

use super::{be16, put16, Result, WireError};

/// Bytes of the fixed header.
pub const HEADER_LEN: usize = 40;
/// Next header values (IANA protocol numbers).
pub const NH_HOP_BY_HOP: u8 = 0;
pub const NH_TCP: u8 = 6;
pub const NH_UDP: u8 = 17;
pub const NH_ROUTING: u8 = 43;
pub const NH_FRAGMENT: u8 = 44;
pub const NH_ICMPV6: u8 = 58;
pub const NH_NO_NEXT: u8 = 59;
pub const NH_DEST_OPTS: u8 = 60;

/// Byte offsets of the fixed header's fields.
pub mod field {
    use core::ops::Range;
    /// Version (4 bits), traffic class (8), flow label (20).
    pub const VER_TC_FLOW: Range<usize> = 0..4;
    pub const PAYLOAD_LEN: usize = 4;
    pub const NEXT_HEADER: usize = 6;
    pub const HOP_LIMIT: usize = 7;
    pub const SRC: Range<usize> = 8..24;
    pub const DST: Range<usize> = 24..40;
}

/// A checked view of an IPv6 packet: once built, the fixed header and the
/// `payload_len` bytes it announces are inside the buffer (which may hold padding).
/// Jumbograms (payload length 0 with a hop-by-hop jumbo option) are refused.
#[derive(Debug, Clone)]
pub struct Ipv6Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv6Packet<T> {
    pub fn new_unchecked(buffer: T) -> Self {
        Ipv6Packet { buffer }
    }

    /// Checks the version and that the announced payload is inside the buffer.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if b[0] >> 4 != 6 {
            return Err(WireError::Malformed("IP version is not 6"));
        }
        if HEADER_LEN + be16(b, field::PAYLOAD_LEN) as usize > b.len() {
            return Err(WireError::Truncated);
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn word0(&self) -> u32 {
        let b = &self.buffer.as_ref()[field::VER_TC_FLOW];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }
    pub fn version(&self) -> u8 {
        (self.word0() >> 28) as u8
    }
    /// Traffic class: DSCP << 2 | ECN.
    pub fn traffic_class(&self) -> u8 {
        (self.word0() >> 20) as u8
    }
    /// Flow label (20 bits).
    pub fn flow_label(&self) -> u32 {
        self.word0() & 0xf_ffff
    }
    pub fn payload_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::PAYLOAD_LEN)
    }
    pub fn next_header(&self) -> u8 {
        self.buffer.as_ref()[field::NEXT_HEADER]
    }
    pub fn hop_limit(&self) -> u8 {
        self.buffer.as_ref()[field::HOP_LIMIT]
    }
    pub fn src_addr(&self) -> [u8; 16] {
        self.buffer.as_ref()[field::SRC].try_into().unwrap()
    }
    pub fn dst_addr(&self) -> [u8; 16] {
        self.buffer.as_ref()[field::DST].try_into().unwrap()
    }
    /// The payload (extension headers included), `payload_len` bytes, padding excluded.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..HEADER_LEN + self.payload_len() as usize]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv6Packet<T> {
    /// IPv6 has no header checksum: the hop limit is written as is.
    pub fn set_hop_limit(&mut self, hop_limit: u8) {
        self.buffer.as_mut()[field::HOP_LIMIT] = hop_limit;
    }
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = HEADER_LEN + self.payload_len() as usize;
        &mut self.buffer.as_mut()[HEADER_LEN..end]
    }
}

/// The fields of a fixed IPv6 header, for building packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv6Repr {
    pub src: [u8; 16],
    pub dst: [u8; 16],
    pub next_header: u8,
    pub hop_limit: u8,
    pub traffic_class: u8,
    /// 20 bits; higher bits are refused by `emit`.
    pub flow_label: u32,
    pub payload_len: usize,
}

impl Ipv6Repr {
    pub fn parse<T: AsRef<[u8]>>(p: &Ipv6Packet<T>) -> Result<Ipv6Repr> {
        p.check_len()?;
        Ok(Ipv6Repr {
            src: p.src_addr(),
            dst: p.dst_addr(),
            next_header: p.next_header(),
            hop_limit: p.hop_limit(),
            traffic_class: p.traffic_class(),
            flow_label: p.flow_label(),
            payload_len: p.payload_len() as usize,
        })
    }

    /// Writes the 40-byte fixed header at the start of `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        if self.flow_label > 0xf_ffff {
            return Err(WireError::Malformed("flow label wider than 20 bits"));
        }
        if self.payload_len > u16::MAX as usize {
            return Err(WireError::Malformed("payload longer than 65535 bytes"));
        }
        let b = buf.get_mut(..HEADER_LEN).ok_or(WireError::Truncated)?;
        let w0 = 6u32 << 28 | u32::from(self.traffic_class) << 20 | self.flow_label;
        b[field::VER_TC_FLOW].copy_from_slice(&w0.to_be_bytes());
        put16(b, field::PAYLOAD_LEN, self.payload_len as u16);
        b[field::NEXT_HEADER] = self.next_header;
        b[field::HOP_LIMIT] = self.hop_limit;
        b[field::SRC].copy_from_slice(&self.src);
        b[field::DST].copy_from_slice(&self.dst);
        Ok(())
    }
}

/// fe80::/10 (RFC 4291 §2.5.6).
pub fn is_link_local(a: &[u8; 16]) -> bool {
    a[0] == 0xfe && a[1] & 0xc0 == 0x80
}
/// ff00::/8.
pub fn is_multicast(a: &[u8; 16]) -> bool {
    a[0] == 0xff
}
/// Link-local scope multicast (ff02::/16 and other ffX2::), which a router never forwards.
pub fn is_link_scope_multicast(a: &[u8; 16]) -> bool {
    a[0] == 0xff && a[1] & 0x0f == 2
}
/// `::`.
pub fn is_unspecified(a: &[u8; 16]) -> bool {
    *a == [0; 16]
}
/// `::1`.
pub fn is_loopback(a: &[u8; 16]) -> bool {
    u128::from_be_bytes(*a) == 1
}
/// ff02::1:ff00:0/104 (RFC 4291 §2.7.1).
pub fn is_solicited_node(a: &[u8; 16]) -> bool {
    a[..13] == [0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff]
}
/// The solicited-node multicast address a neighbour solicitation for `target` goes to.
pub fn solicited_node(target: &[u8; 16]) -> [u8; 16] {
    let mut a = [0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 0];
    a[13..].copy_from_slice(&target[13..]);
    a
}
/// The Ethernet address an IPv6 multicast address maps to (RFC 2464 §7): 33:33 and the
/// low 32 bits.
pub fn multicast_mac(a: &[u8; 16]) -> [u8; 6] {
    [0x33, 0x33, a[12], a[13], a[14], a[15]]
}
/// The link-local address with an EUI-64 interface identifier from `mac` (RFC 4291
/// appendix A: the universal/local bit inverted, ff:fe in the middle).
pub fn link_local_from_mac(mac: [u8; 6]) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[0] = 0xfe;
    a[1] = 0x80;
    a[8..].copy_from_slice(&[
        mac[0] ^ 2,
        mac[1],
        mac[2],
        0xff,
        0xfe,
        mac[3],
        mac[4],
        mac[5],
    ]);
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv6Addr;

    fn o(s: &str) -> [u8; 16] {
        s.parse::<Ipv6Addr>().unwrap().octets()
    }

    fn repr() -> Ipv6Repr {
        Ipv6Repr {
            src: o("2001:db8::1"),
            dst: o("2001:db8:1::7"),
            next_header: NH_UDP,
            hop_limit: 64,
            traffic_class: 0xb8,
            flow_label: 0xa_bcde,
            payload_len: 8,
        }
    }

    #[test]
    fn emit_parse_round_trip_and_etherparse_agrees() {
        let mut b = [0u8; 50];
        repr().emit(&mut b).unwrap();
        let p = Ipv6Packet::new_checked(&b[..]).unwrap();
        assert_eq!(Ipv6Repr::parse(&p).unwrap(), repr());
        assert_eq!(p.payload().len(), 8);
        let (h, _) = etherparse::Ipv6Header::from_slice(&b).unwrap();
        assert_eq!(h.flow_label.value(), 0xa_bcde);
        assert_eq!(h.traffic_class, 0xb8);
        assert_eq!(h.hop_limit, 64);
        assert_eq!(h.payload_length, 8);
        assert_eq!(h.source, o("2001:db8::1"));
    }

    #[test]
    fn length_and_version_rules() {
        let mut b = [0u8; 48];
        repr().emit(&mut b).unwrap();
        assert_eq!(
            Ipv6Packet::new_checked(&b[..47]).unwrap_err(),
            WireError::Truncated
        );
        assert_eq!(
            Ipv6Packet::new_checked(&b[..39]).unwrap_err(),
            WireError::Truncated
        );
        b[0] = 0x45;
        assert!(matches!(
            Ipv6Packet::new_checked(&b[..]),
            Err(WireError::Malformed(_))
        ));
        let bad = Ipv6Repr {
            flow_label: 1 << 20,
            ..repr()
        };
        assert!(bad.emit(&mut [0u8; 40]).is_err());
    }

    #[test]
    fn address_classes() {
        assert!(is_link_local(&o("fe80::1")) && is_link_local(&o("febf::1")));
        assert!(!is_link_local(&o("fec0::1")) && !is_link_local(&o("2001:db8::1")));
        assert!(is_multicast(&o("ff05::2")) && !is_multicast(&o("fe80::1")));
        assert!(is_link_scope_multicast(&o("ff02::1")) && !is_link_scope_multicast(&o("ff05::1")));
        assert!(is_unspecified(&o("::")) && !is_unspecified(&o("::1")));
        assert!(is_loopback(&o("::1")) && !is_loopback(&o("::2")));
        let t = o("2001:db8::12:3456");
        assert_eq!(solicited_node(&t), o("ff02::1:ff12:3456"));
        assert!(is_solicited_node(&solicited_node(&t)) && !is_solicited_node(&o("ff02::1")));
        assert_eq!(
            multicast_mac(&o("ff02::1:ff12:3456")),
            [0x33, 0x33, 0xff, 0x12, 0x34, 0x56]
        );
        // RFC 4291 appendix A example shape: 00:1b:21:aa:bb:cc -> fe80::21b:21ff:feaa:bbcc.
        assert_eq!(
            link_local_from_mac([0x00, 0x1b, 0x21, 0xaa, 0xbb, 0xcc]),
            o("fe80::21b:21ff:feaa:bbcc")
        );
    }
}
