//! IPv4 headers (RFC 791).

use super::{be16, checksum, put16, Result, WireError};

/// Bytes of a header without options.
pub const MIN_HEADER_LEN: usize = 20;
pub const PROTO_ICMP: u8 = 1;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

/// Byte positions of the header's fields (RFC 791 §3.1).
pub mod field {
    use crate::wire::Field;
    /// Version (high nibble) and header length in words (low nibble).
    pub const VER_IHL: usize = 0;
    pub const DSCP_ECN: usize = 1;
    pub const LENGTH: Field = 2..4;
    pub const IDENT: Field = 4..6;
    /// Flags (DF, MF) and fragment offset.
    pub const FLG_OFF: Field = 6..8;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: Field = 10..12;
    pub const SRC_ADDR: Field = 12..16;
    pub const DST_ADDR: Field = 16..20;
}

/// The version/IHL byte of a header without options.
pub const VER_IHL_NO_OPTIONS: u8 = 0x45;
/// DF in the high byte of the flags/offset field.
pub const DF_HIGH_BYTE: u8 = 0x40;

const FLAG_DF: u16 = 0x4000;
const FLAG_MF: u16 = 0x2000;

/// Writes `ttl` into the header at the start of `ip` and updates its checksum
/// incrementally (RFC 1624): the one TTL writer of the fast and staged paths. `ip` holds
/// at least the fixed header.
#[inline(always)]
pub fn set_ttl(ip: &mut [u8], ttl: u8) {
    use field::{CHECKSUM, TTL};
    let ip: &mut [u8; MIN_HEADER_LEN] = match ip.first_chunk_mut() {
        Some(ip) => ip,
        None => panic!("set_ttl: {} bytes is no IPv4 header", ip.len()),
    };
    let old = ip[TTL];
    // An unchanged TTL leaves the header as received, checksum bytes included.
    if old != ttl {
        ip[TTL] = ttl;
        let stored = [ip[CHECKSUM.start], ip[CHECKSUM.start + 1]];
        ip[CHECKSUM].copy_from_slice(&checksum::after_ttl_change(stored, old, ttl));
    }
}

/// [`set_ttl`] to one less, for a TTL known to be above 1 (the fast path's input checks):
/// the checksum update folded for that case ([`checksum::after_ttl_decrement`]).
#[inline(always)]
pub fn decrement_ttl(ip: &mut [u8; MIN_HEADER_LEN]) {
    use field::{CHECKSUM, TTL};
    ip[TTL] -= 1;
    let sum = checksum::after_ttl_decrement([ip[CHECKSUM.start], ip[CHECKSUM.start + 1]]);
    ip[CHECKSUM].copy_from_slice(&sum);
}

/// A checked view of an IPv4 packet: once built, the header (options included) and the
/// `total_len` bytes it announces are inside the buffer, which may hold trailing padding.
#[derive(Debug, Clone)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    pub fn new_unchecked(buffer: T) -> Self {
        Ipv4Packet { buffer }
    }

    /// Checks RFC 1812 §5.2.2's length rules (version, IHL >= 5, total length within the
    /// buffer and covering the header). The checksum is checked separately.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < MIN_HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if b[0] >> 4 != 4 {
            return Err(WireError::Malformed("IP version is not 4"));
        }
        let hl = ((b[0] & 0xf) as usize) * 4;
        if hl < MIN_HEADER_LEN {
            return Err(WireError::Malformed("IHL below 5"));
        }
        let tl = be16(b, 2) as usize;
        if tl < hl {
            return Err(WireError::Malformed("total length shorter than the header"));
        }
        if tl > b.len() {
            return Err(WireError::Truncated);
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[0] >> 4
    }
    pub fn header_len(&self) -> usize {
        ((self.buffer.as_ref()[0] & 0xf) as usize) * 4
    }
    /// DSCP (6 bits).
    pub fn dscp(&self) -> u8 {
        self.buffer.as_ref()[1] >> 2
    }
    pub fn ecn(&self) -> u8 {
        self.buffer.as_ref()[1] & 3
    }
    pub fn total_len(&self) -> u16 {
        be16(self.buffer.as_ref(), 2)
    }
    pub fn ident(&self) -> u16 {
        be16(self.buffer.as_ref(), 4)
    }
    pub fn dont_frag(&self) -> bool {
        be16(self.buffer.as_ref(), 6) & FLAG_DF != 0
    }
    pub fn more_frags(&self) -> bool {
        be16(self.buffer.as_ref(), 6) & FLAG_MF != 0
    }
    /// Fragment offset in bytes.
    pub fn frag_offset(&self) -> u16 {
        (be16(self.buffer.as_ref(), 6) & 0x1fff) << 3
    }
    /// A fragment (first or later): its L4 ports must not be used for hashing.
    pub fn is_fragment(&self) -> bool {
        be16(self.buffer.as_ref(), 6) & (FLAG_MF | 0x1fff) != 0
    }
    pub fn ttl(&self) -> u8 {
        self.buffer.as_ref()[8]
    }
    pub fn protocol(&self) -> u8 {
        self.buffer.as_ref()[9]
    }
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), 10)
    }
    pub fn src_addr(&self) -> [u8; 4] {
        self.buffer.as_ref()[12..16].try_into().unwrap()
    }
    pub fn dst_addr(&self) -> [u8; 4] {
        self.buffer.as_ref()[16..20].try_into().unwrap()
    }
    /// Whether the header checksum verifies.
    pub fn verify_checksum(&self) -> bool {
        checksum::sum(&self.buffer.as_ref()[..self.header_len()]) == 0xffff
    }
    /// The options bytes (empty for IHL 5).
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[MIN_HEADER_LEN..self.header_len()]
    }
    /// The payload, `total_len - header_len` bytes (padding excluded).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..self.total_len() as usize]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Packet<T> {
    /// Sets the TTL and updates the checksum incrementally (RFC 1624).
    pub fn set_ttl_update_checksum(&mut self, ttl: u8) {
        let b = self.buffer.as_mut();
        let old = be16(b, 8);
        b[8] = ttl;
        let new = be16(b, 8);
        let c = checksum::update16(be16(b, 10), old, new);
        put16(b, 10, c);
    }

    /// Recomputes the header checksum from scratch.
    pub fn fill_checksum(&mut self) {
        let hl = self.header_len();
        let b = self.buffer.as_mut();
        put16(b, 10, 0);
        let c = checksum::compute(&b[..hl]);
        put16(b, 10, c);
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        let (hl, tl) = (self.header_len(), self.total_len() as usize);
        &mut self.buffer.as_mut()[hl..tl]
    }
}

/// The fields of an option-less IPv4 header, for building packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Repr {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub protocol: u8,
    pub ttl: u8,
    /// DSCP << 2 | ECN.
    pub tos: u8,
    pub ident: u16,
    pub dont_frag: bool,
    pub payload_len: usize,
}

impl Ipv4Repr {
    /// Decodes a checked packet whose checksum verifies. Options are skipped; fragments are
    /// described by the view, not here.
    pub fn parse<T: AsRef<[u8]>>(p: &Ipv4Packet<T>) -> Result<Ipv4Repr> {
        p.check_len()?;
        if !p.verify_checksum() {
            return Err(WireError::Checksum);
        }
        Ok(Ipv4Repr {
            src: p.src_addr(),
            dst: p.dst_addr(),
            protocol: p.protocol(),
            ttl: p.ttl(),
            tos: p.buffer.as_ref()[1],
            ident: p.ident(),
            dont_frag: p.dont_frag(),
            payload_len: p.total_len() as usize - p.header_len(),
        })
    }

    pub fn header_len(&self) -> usize {
        MIN_HEADER_LEN
    }

    /// Writes a 20-byte header with a valid checksum at the start of `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        let tl = MIN_HEADER_LEN + self.payload_len;
        if buf.len() < MIN_HEADER_LEN || tl > u16::MAX as usize {
            return Err(WireError::Truncated);
        }
        let b = &mut buf[..MIN_HEADER_LEN];
        b[0] = 0x45;
        b[1] = self.tos;
        put16(b, 2, tl as u16);
        put16(b, 4, self.ident);
        put16(b, 6, if self.dont_frag { FLAG_DF } else { 0 });
        b[8] = self.ttl;
        b[9] = self.protocol;
        put16(b, 10, 0);
        b[12..16].copy_from_slice(&self.src);
        b[16..20].copy_from_slice(&self.dst);
        let c = checksum::compute(b);
        put16(b, 10, c);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr() -> Ipv4Repr {
        Ipv4Repr {
            src: [10, 0, 0, 1],
            dst: [192, 0, 2, 7],
            protocol: PROTO_UDP,
            ttl: 64,
            tos: 0xb8,
            ident: 0x1234,
            dont_frag: true,
            payload_len: 8,
        }
    }

    #[test]
    fn emit_parse_round_trip_and_etherparse_agrees() {
        let mut b = [0u8; 30];
        repr().emit(&mut b).unwrap();
        let p = Ipv4Packet::new_checked(&b[..]).unwrap();
        assert_eq!(Ipv4Repr::parse(&p).unwrap(), repr());
        assert_eq!(p.payload().len(), 8);
        assert_eq!(p.dscp(), 46);
        let (h, _) = etherparse::Ipv4Header::from_slice(&b).unwrap();
        assert_eq!(h.header_checksum, h.calc_header_checksum());
        assert_eq!(h.time_to_live, 64);
        assert!(h.dont_fragment);
    }

    #[test]
    fn length_rules() {
        let mut b = [0u8; 30];
        repr().emit(&mut b).unwrap();
        assert_eq!(
            Ipv4Packet::new_checked(&b[..27]).unwrap_err(),
            WireError::Truncated
        );
        let mut v6 = b;
        v6[0] = 0x65;
        assert!(matches!(
            Ipv4Packet::new_checked(&v6[..]),
            Err(WireError::Malformed(_))
        ));
        let mut ihl4 = b;
        ihl4[0] = 0x44;
        assert!(Ipv4Packet::new_checked(&ihl4[..]).is_err());
        let mut short_tl = b;
        short_tl[2..4].copy_from_slice(&19u16.to_be_bytes());
        assert!(Ipv4Packet::new_checked(&short_tl[..]).is_err());
    }

    #[test]
    fn ttl_update_keeps_checksum_valid() {
        let mut b = [0u8; 28];
        repr().emit(&mut b).unwrap();
        let mut p = Ipv4Packet::new_checked(&mut b[..]).unwrap();
        p.set_ttl_update_checksum(63);
        assert!(p.verify_checksum());
        assert_eq!(p.ttl(), 63);
        b[10] ^= 1;
        assert!(!Ipv4Packet::new_checked(&b[..]).unwrap().verify_checksum());
    }
}
