//! ICMPv6 (RFC 4443): echo, the error messages with the RFC 4884 extension and RFC 4950
//! MPLS label stack object ([`super::icmp_ext`], shared with ICMPv4), and the NDP
//! messages of [`super::ndp`]. The checksum covers the RFC 8200 §8.1 pseudo-header, so
//! emitting and verifying take the source and destination addresses.

use super::icmp_ext::{echo_word, emit_body, message_len, parse_extension};
use super::ndp::NdpRepr;
use super::{be16, checksum, put16, Result, WireError};

pub const TYPE_DST_UNREACHABLE: u8 = 1;
pub const TYPE_PACKET_TOO_BIG: u8 = 2;
pub const TYPE_TIME_EXCEEDED: u8 = 3;
pub const TYPE_PARAM_PROBLEM: u8 = 4;
pub const TYPE_ECHO_REQUEST: u8 = 128;
pub const TYPE_ECHO_REPLY: u8 = 129;
/// Destination unreachable codes.
pub const CODE_NO_ROUTE: u8 = 0;
pub const CODE_ADMIN_PROHIBITED: u8 = 1;
pub const CODE_BEYOND_SCOPE: u8 = 2;
pub const CODE_ADDR_UNREACHABLE: u8 = 3;
pub const CODE_PORT_UNREACHABLE: u8 = 4;
/// Time exceeded code: hop limit exceeded in transit.
pub const CODE_HOP_LIMIT_EXCEEDED: u8 = 0;
/// Bytes of the header (type, code, checksum and the 4-byte type-specific word).
pub const HEADER_LEN: usize = 8;
/// Largest error message: an error must fit the minimum IPv6 MTU (RFC 4443 §2.4 (c)),
/// 1280 bytes less the 40-byte IPv6 header.
pub const MAX_ERROR_LEN: usize = 1280 - 40;

/// Byte offsets of the header's fields.
mod field {
    pub const TYPE: usize = 0;
    pub const CODE: usize = 1;
    pub const CHECKSUM: usize = 2;
    /// Echo identifier and sequence number.
    pub const ECHO_IDENT: usize = 4;
    pub const ECHO_SEQ: usize = 6;
    /// RFC 4884 length of the original datagram, in 64-bit words (destination
    /// unreachable and time exceeded).
    pub const ORIG_LEN: usize = 4;
    /// Packet too big MTU; parameter problem pointer (32 bits each).
    pub const WORD: core::ops::Range<usize> = 4..8;
}

/// The one's complement sum (not inverted) of the RFC 8200 §8.1 pseudo-header.
pub fn pseudo_header_sum(src: &[u8; 16], dst: &[u8; 16], len: u32, next_header: u8) -> u16 {
    let mut p = [0u8; 40];
    p[..16].copy_from_slice(src);
    p[16..32].copy_from_slice(dst);
    p[32..36].copy_from_slice(&len.to_be_bytes());
    p[39] = next_header;
    checksum::sum(&p)
}

fn icmp_sum(src: &[u8; 16], dst: &[u8; 16], msg: &[u8]) -> u16 {
    let ph = pseudo_header_sum(src, dst, msg.len() as u32, super::ipv6::NH_ICMPV6);
    checksum::combine(&[ph, checksum::sum(msg)])
}

/// A checked view of an ICMPv6 message (the upper-layer payload): at least 8 bytes.
#[derive(Debug, Clone)]
pub struct Icmpv6Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Icmpv6Packet<T> {
    pub fn new_unchecked(buffer: T) -> Self {
        Icmpv6Packet { buffer }
    }
    pub fn new_checked(buffer: T) -> Result<Self> {
        if buffer.as_ref().len() < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        Ok(Icmpv6Packet { buffer })
    }
    pub fn msg_type(&self) -> u8 {
        self.buffer.as_ref()[field::TYPE]
    }
    pub fn code(&self) -> u8 {
        self.buffer.as_ref()[field::CODE]
    }
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM)
    }
    /// Whether the checksum over the pseudo-header and the message verifies.
    pub fn verify_checksum(&self, src: &[u8; 16], dst: &[u8; 16]) -> bool {
        icmp_sum(src, dst, self.buffer.as_ref()) == 0xffff
    }
    pub fn echo_ident(&self) -> u16 {
        be16(self.buffer.as_ref(), field::ECHO_IDENT)
    }
    pub fn echo_seq(&self) -> u16 {
        be16(self.buffer.as_ref(), field::ECHO_SEQ)
    }
    /// The type-specific 32-bit word: MTU of packet too big, pointer of parameter problem.
    pub fn word(&self) -> u32 {
        u32::from_be_bytes(self.buffer.as_ref()[field::WORD].try_into().unwrap())
    }
    /// RFC 4884 length of the original datagram field in 64-bit words (0: no extension).
    pub fn original_len_words(&self) -> u8 {
        self.buffer.as_ref()[field::ORIG_LEN]
    }
    /// The whole message.
    pub fn as_bytes(&self) -> &[u8] {
        self.buffer.as_ref()
    }
    /// Everything after the 8-byte header.
    pub fn data(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }
    /// Error messages (types 0-127), about which no further error may be sent (RFC 4443
    /// §2.4 (e)).
    pub fn is_error(&self) -> bool {
        self.msg_type() < 128
    }
}

/// Type, code, type-specific word, body and RFC 4950 label stack of a message.
type Parts<'a> = (u8, u8, [u8; 4], &'a [u8], Option<&'a [u8]>);

/// A decoded ICMPv6 message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Icmpv6Repr<'a> {
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
    DstUnreachable {
        code: u8,
        original: &'a [u8],
        mpls: Option<&'a [u8]>,
    },
    PacketTooBig {
        mtu: u32,
        original: &'a [u8],
    },
    /// `original` is padded to 128 bytes when `mpls` is set.
    TimeExceeded {
        code: u8,
        original: &'a [u8],
        mpls: Option<&'a [u8]>,
    },
    ParamProblem {
        code: u8,
        pointer: u32,
        original: &'a [u8],
    },
    Ndp(NdpRepr),
}

impl<'a> Icmpv6Repr<'a> {
    /// Decodes a message whose checksum verifies for `src` -> `dst`. Unknown types are
    /// `Malformed`.
    pub fn parse(p: &Icmpv6Packet<&'a [u8]>, src: &[u8; 16], dst: &[u8; 16]) -> Result<Self> {
        if !p.verify_checksum(src, dst) {
            return Err(WireError::Checksum);
        }
        let data: &'a [u8] = &p.buffer[HEADER_LEN..];
        let (ident, seq, code) = (p.echo_ident(), p.echo_seq(), p.code());
        let ext = |words: u8| parse_extension(data, words as usize * 8);
        Ok(match p.msg_type() {
            TYPE_ECHO_REQUEST => Icmpv6Repr::EchoRequest { ident, seq, data },
            TYPE_ECHO_REPLY => Icmpv6Repr::EchoReply { ident, seq, data },
            TYPE_DST_UNREACHABLE => {
                let (original, mpls) = ext(p.original_len_words())?;
                Icmpv6Repr::DstUnreachable {
                    code,
                    original,
                    mpls,
                }
            }
            TYPE_TIME_EXCEEDED => {
                let (original, mpls) = ext(p.original_len_words())?;
                Icmpv6Repr::TimeExceeded {
                    code,
                    original,
                    mpls,
                }
            }
            TYPE_PACKET_TOO_BIG => Icmpv6Repr::PacketTooBig {
                mtu: p.word(),
                original: data,
            },
            TYPE_PARAM_PROBLEM => Icmpv6Repr::ParamProblem {
                code,
                pointer: p.word(),
                original: data,
            },
            _ => Icmpv6Repr::Ndp(NdpRepr::parse(p)?),
        })
    }

    /// Type, code, type-specific word, body and label stack of the non-NDP messages.
    fn parts(&self) -> Option<Parts<'a>> {
        Some(match *self {
            Icmpv6Repr::EchoRequest { ident, seq, data } => {
                (TYPE_ECHO_REQUEST, 0, echo_word(ident, seq), data, None)
            }
            Icmpv6Repr::EchoReply { ident, seq, data } => {
                (TYPE_ECHO_REPLY, 0, echo_word(ident, seq), data, None)
            }
            Icmpv6Repr::DstUnreachable {
                code,
                original,
                mpls,
            } => (TYPE_DST_UNREACHABLE, code, [0; 4], original, mpls),
            Icmpv6Repr::TimeExceeded {
                code,
                original,
                mpls,
            } => (TYPE_TIME_EXCEEDED, code, [0; 4], original, mpls),
            Icmpv6Repr::PacketTooBig { mtu, original } => {
                (TYPE_PACKET_TOO_BIG, 0, mtu.to_be_bytes(), original, None)
            }
            Icmpv6Repr::ParamProblem {
                code,
                pointer,
                original,
            } => (
                TYPE_PARAM_PROBLEM,
                code,
                pointer.to_be_bytes(),
                original,
                None,
            ),
            Icmpv6Repr::Ndp(_) => return None,
        })
    }

    /// Bytes [`Self::emit`] writes.
    pub fn buffer_len(&self) -> usize {
        match (self, self.parts()) {
            (Icmpv6Repr::Ndp(n), _) => n.buffer_len(),
            (_, Some((_, _, _, body, mpls))) => message_len(HEADER_LEN, body.len(), mpls, 8),
            (_, None) => unreachable!("parts() is None only for NDP"),
        }
    }

    /// Writes the message for `src` -> `dst` with a valid checksum (and extension
    /// checksum) into `buf`; returns its length.
    pub fn emit(&self, src: &[u8; 16], dst: &[u8; 16], buf: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        let buf = buf.get_mut(..len).ok_or(WireError::Truncated)?;
        buf.fill(0);
        match (self, self.parts()) {
            (Icmpv6Repr::Ndp(n), _) => n.emit(buf)?,
            (_, Some((ty, code, word, body, mpls))) => {
                buf[field::TYPE] = ty;
                buf[field::CODE] = code;
                buf[field::WORD].copy_from_slice(&word);
                let words = emit_body(&mut buf[HEADER_LEN..], body, mpls, 8)?;
                if mpls.is_some() {
                    buf[field::ORIG_LEN] = words;
                }
            }
            (_, None) => unreachable!("parts() is None only for NDP"),
        }
        let c = !icmp_sum(src, dst, buf);
        put16(buf, field::CHECKSUM, c);
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv6Addr;

    fn o(s: &str) -> [u8; 16] {
        s.parse::<Ipv6Addr>().unwrap().octets()
    }

    #[test]
    fn echo_round_trip_and_etherparse_checksum() {
        let (s, d) = (o("2001:db8::1"), o("2001:db8::2"));
        let r = Icmpv6Repr::EchoRequest {
            ident: 7,
            seq: 9,
            data: b"hello",
        };
        let mut b = [0u8; 64];
        let n = r.emit(&s, &d, &mut b).unwrap();
        let p = Icmpv6Packet::new_checked(&b[..n]).unwrap();
        assert!(p.verify_checksum(&s, &d));
        assert!(!p.verify_checksum(&d, &o("2001:db8::3")));
        assert_eq!(Icmpv6Repr::parse(&p, &s, &d).unwrap(), r);
        let (h, _) = etherparse::Icmpv6Header::from_slice(&b[..n]).unwrap();
        assert_eq!(
            h.checksum,
            h.icmp_type.calc_checksum(s, d, &b[8..n]).unwrap()
        );
    }

    #[test]
    fn time_exceeded_with_rfc4950_object() {
        let (s, d) = (o("2001:db8::1"), o("2001:db8::2"));
        let original = [0x60u8; 60];
        let stack = [0x00, 0x06, 0x41, 0x01, 0x00, 0x0c, 0x81, 0x01];
        let r = Icmpv6Repr::TimeExceeded {
            code: 0,
            original: &original,
            mpls: Some(&stack),
        };
        let mut b = [0u8; 300];
        let n = r.emit(&s, &d, &mut b).unwrap();
        assert_eq!(n, 8 + 128 + 4 + 4 + 8);
        assert_eq!(b[4], 16, "length in 64-bit words");
        assert_eq!(b[8 + 128], 0x20);
        assert_eq!(checksum::sum(&b[8 + 128..n]), 0xffff);
        let p = Icmpv6Packet::new_checked(&b[..n]).unwrap();
        match Icmpv6Repr::parse(&p, &s, &d).unwrap() {
            Icmpv6Repr::TimeExceeded {
                original: o,
                mpls: Some(m),
                ..
            } => {
                assert_eq!(&o[..60], &original[..]);
                assert!(o[60..].iter().all(|&x| x == 0));
                assert_eq!(m, &stack[..]);
            }
            other => panic!("{other:?}"),
        }
        b[n - 1] ^= 0xff;
        assert_eq!(
            Icmpv6Repr::parse(&Icmpv6Packet::new_checked(&b[..n]).unwrap(), &s, &d),
            Err(WireError::Checksum)
        );
    }

    #[test]
    fn packet_too_big_and_param_problem_carry_their_word() {
        let (s, d) = (o("fe80::1"), o("2001:db8::2"));
        for r in [
            Icmpv6Repr::PacketTooBig {
                mtu: 1492,
                original: &[0x60; 48],
            },
            Icmpv6Repr::ParamProblem {
                code: 1,
                pointer: 40,
                original: &[0x60; 48],
            },
            Icmpv6Repr::DstUnreachable {
                code: CODE_NO_ROUTE,
                original: &[0x60; 48],
                mpls: None,
            },
        ] {
            let mut b = [0u8; 64];
            let n = r.emit(&s, &d, &mut b).unwrap();
            let p = Icmpv6Packet::new_checked(&b[..n]).unwrap();
            assert!(p.is_error());
            assert_eq!(Icmpv6Repr::parse(&p, &s, &d).unwrap(), r);
        }
    }
}
