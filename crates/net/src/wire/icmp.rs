//! ICMPv4 (RFC 792) with the RFC 4884 extension structure and the RFC 4950 MPLS label
//! stack object.

use super::icmp_ext::{echo_word, emit_body, message_len};
pub use super::icmp_ext::{
    CLASS_MPLS_STACK, CTYPE_INCOMING_STACK, EXTENSION_VERSION, ORIGINAL_LEN_WITH_EXTENSION,
};
use super::{be16, checksum, put16, Result, WireError};

pub const TYPE_ECHO_REPLY: u8 = 0;
pub const TYPE_DST_UNREACHABLE: u8 = 3;
pub const TYPE_ECHO_REQUEST: u8 = 8;
pub const TYPE_TIME_EXCEEDED: u8 = 11;
/// Destination unreachable code: fragmentation needed and DF set.
pub const CODE_FRAG_NEEDED: u8 = 4;
/// Time exceeded code: TTL exceeded in transit.
pub const CODE_TTL_EXCEEDED: u8 = 0;
/// Bytes of the ICMP header.
pub const HEADER_LEN: usize = 8;

/// A checked view of an ICMPv4 message (the IPv4 payload).
#[derive(Debug, Clone)]
pub struct Icmpv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Icmpv4Packet<T> {
    pub fn new_unchecked(buffer: T) -> Self {
        Icmpv4Packet { buffer }
    }

    /// A message of at least the 8-byte header.
    pub fn new_checked(buffer: T) -> Result<Self> {
        if buffer.as_ref().len() < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        Ok(Icmpv4Packet { buffer })
    }

    pub fn msg_type(&self) -> u8 {
        self.buffer.as_ref()[0]
    }
    pub fn code(&self) -> u8 {
        self.buffer.as_ref()[1]
    }
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), 2)
    }
    /// Whether the checksum over the whole message verifies.
    pub fn verify_checksum(&self) -> bool {
        checksum::sum(self.buffer.as_ref()) == 0xffff
    }
    pub fn echo_ident(&self) -> u16 {
        be16(self.buffer.as_ref(), 4)
    }
    pub fn echo_seq(&self) -> u16 {
        be16(self.buffer.as_ref(), 6)
    }
    /// RFC 4884 length of the original datagram field, in 32-bit words (0: no extension).
    pub fn original_len_words(&self) -> u8 {
        self.buffer.as_ref()[5]
    }
    /// Next-hop MTU of a "fragmentation needed" message (RFC 1191).
    pub fn next_hop_mtu(&self) -> u16 {
        be16(self.buffer.as_ref(), 6)
    }
    /// Everything after the 8-byte header.
    pub fn data(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }
    /// True for the error types (destination unreachable, time exceeded, ...), about which
    /// no further error may be sent (RFC 1812 §4.3.2.7).
    pub fn is_error(&self) -> bool {
        !matches!(self.msg_type(), 0 | 8 | 13 | 14 | 15 | 16 | 17 | 18)
    }
}

/// A decoded ICMP message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Icmpv4Repr<'a> {
    EchoRequest {
        ident: u16,
        seq: u16,
        data: &'a [u8],
    },
    EchoReply {
        ident: u16,
        seq: u16,
        data: &'a [u8],
    },
    TimeExceeded {
        code: u8,
        /// Leading bytes of the datagram in error (padded to 128 when `mpls` is set).
        original: &'a [u8],
        /// Raw label stack entries for the RFC 4950 object, if any.
        mpls: Option<&'a [u8]>,
    },
    DstUnreachable {
        code: u8,
        next_hop_mtu: u16,
        original: &'a [u8],
        mpls: Option<&'a [u8]>,
    },
}

impl<'a> Icmpv4Repr<'a> {
    /// Decodes a message whose checksum verifies. Unknown types are `Malformed`.
    pub fn parse(p: &Icmpv4Packet<&'a [u8]>) -> Result<Icmpv4Repr<'a>> {
        if !p.verify_checksum() {
            return Err(WireError::Checksum);
        }
        let data: &'a [u8] = &p.buffer[HEADER_LEN..];
        let (ident, seq) = (p.echo_ident(), p.echo_seq());
        match p.msg_type() {
            TYPE_ECHO_REQUEST => Ok(Icmpv4Repr::EchoRequest { ident, seq, data }),
            TYPE_ECHO_REPLY => Ok(Icmpv4Repr::EchoReply { ident, seq, data }),
            t @ (TYPE_TIME_EXCEEDED | TYPE_DST_UNREACHABLE) => {
                let words = p.original_len_words() as usize;
                let (original, mpls) = super::icmp_ext::parse_extension(data, words * 4)?;
                Ok(if t == TYPE_TIME_EXCEEDED {
                    Icmpv4Repr::TimeExceeded {
                        code: p.code(),
                        original,
                        mpls,
                    }
                } else {
                    Icmpv4Repr::DstUnreachable {
                        code: p.code(),
                        next_hop_mtu: p.next_hop_mtu(),
                        original,
                        mpls,
                    }
                })
            }
            _ => Err(WireError::Malformed("unsupported ICMP type")),
        }
    }

    fn parts(&self) -> (u8, u8, [u8; 4], &'a [u8], Option<&'a [u8]>) {
        match *self {
            Icmpv4Repr::EchoRequest { ident, seq, data } => {
                (TYPE_ECHO_REQUEST, 0, echo_word(ident, seq), data, None)
            }
            Icmpv4Repr::EchoReply { ident, seq, data } => {
                (TYPE_ECHO_REPLY, 0, echo_word(ident, seq), data, None)
            }
            Icmpv4Repr::TimeExceeded {
                code,
                original,
                mpls,
            } => (TYPE_TIME_EXCEEDED, code, [0; 4], original, mpls),
            Icmpv4Repr::DstUnreachable {
                code,
                next_hop_mtu,
                original,
                mpls,
            } => {
                let m = next_hop_mtu.to_be_bytes();
                (
                    TYPE_DST_UNREACHABLE,
                    code,
                    [0, 0, m[0], m[1]],
                    original,
                    mpls,
                )
            }
        }
    }

    /// Bytes [`Self::emit`] writes.
    pub fn buffer_len(&self) -> usize {
        let (_, _, _, body, mpls) = self.parts();
        message_len(HEADER_LEN, body.len(), mpls, 4)
    }

    /// Writes the message with a valid checksum (and extension checksum) into `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        let (ty, code, rest, body, mpls) = self.parts();
        let buf = buf.get_mut(..len).ok_or(WireError::Truncated)?;
        buf.fill(0);
        buf[0] = ty;
        buf[1] = code;
        buf[4..8].copy_from_slice(&rest);
        let words = emit_body(&mut buf[HEADER_LEN..], body, mpls, 4)?;
        if mpls.is_some() {
            buf[5] = words;
        }
        let c = checksum::compute(buf);
        put16(buf, 2, c);
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_round_trip() {
        let r = Icmpv4Repr::EchoRequest {
            ident: 7,
            seq: 9,
            data: b"hello",
        };
        let mut b = [0u8; 64];
        let n = r.emit(&mut b).unwrap();
        let p = Icmpv4Packet::new_checked(&b[..n]).unwrap();
        assert!(p.verify_checksum());
        assert_eq!(Icmpv4Repr::parse(&p).unwrap(), r);
        assert!(!p.is_error());
    }

    #[test]
    fn time_exceeded_with_rfc4950_object() {
        let original = [0x45u8; 60];
        let stack = [0x00, 0x06, 0x41, 0x01, 0x00, 0x0c, 0x81, 0x01];
        let r = Icmpv4Repr::TimeExceeded {
            code: 0,
            original: &original,
            mpls: Some(&stack),
        };
        let mut b = [0u8; 300];
        let n = r.emit(&mut b).unwrap();
        assert_eq!(n, 8 + 128 + 4 + 4 + 8);
        let p = Icmpv4Packet::new_checked(&b[..n]).unwrap();
        assert_eq!(p.original_len_words(), 32);
        // Extension header: version 2, checksum over the extension verifies.
        assert_eq!(b[8 + 128], 0x20);
        assert_eq!(checksum::sum(&b[8 + 128..n]), 0xffff);
        assert_eq!(&b[8 + 128 + 4..8 + 128 + 8], &[0, 12, 1, 1]);
        match Icmpv4Repr::parse(&p).unwrap() {
            Icmpv4Repr::TimeExceeded {
                original: o,
                mpls: Some(s),
                ..
            } => {
                assert_eq!(&o[..60], &original[..]);
                assert!(o[60..].iter().all(|&x| x == 0));
                assert_eq!(s, &stack[..]);
            }
            other => panic!("{other:?}"),
        }
        b[n - 1] ^= 0xff;
        assert!(Icmpv4Repr::parse(&Icmpv4Packet::new_checked(&b[..n]).unwrap()).is_err());
    }

    #[test]
    fn frag_needed_carries_mtu() {
        let r = Icmpv4Repr::DstUnreachable {
            code: CODE_FRAG_NEEDED,
            next_hop_mtu: 1492,
            original: &[0x45; 28],
            mpls: None,
        };
        let mut b = [0u8; 64];
        let n = r.emit(&mut b).unwrap();
        let p = Icmpv4Packet::new_checked(&b[..n]).unwrap();
        assert_eq!(p.next_hop_mtu(), 1492);
        assert_eq!(Icmpv4Repr::parse(&p).unwrap(), r);
    }
}
