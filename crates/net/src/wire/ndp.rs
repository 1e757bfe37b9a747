//! Neighbor Discovery messages (RFC 4861 §4): router and neighbour solicitations and
//! advertisements, with the link-layer address options (and the MTU option of an RA).
//!
//! Validation here is the message's own (RFC 4861 §6.1.1, §7.1.1-2: code 0, lengths,
//! nonzero option lengths, a unicast target); the IP-level rules (hop limit 255, an
//! unspecified source without a link-layer option) need the IPv6 header and belong to
//! the slow path. Other options (prefix information, ...) are skipped, not decoded.

use super::icmpv6::{Icmpv6Packet, HEADER_LEN};
use super::{be16, put16, Result, WireError};

pub const TYPE_ROUTER_SOLICIT: u8 = 133;
pub const TYPE_ROUTER_ADVERT: u8 = 134;
pub const TYPE_NEIGHBOR_SOLICIT: u8 = 135;
pub const TYPE_NEIGHBOR_ADVERT: u8 = 136;
pub const OPT_SOURCE_LLADDR: u8 = 1;
pub const OPT_TARGET_LLADDR: u8 = 2;
pub const OPT_MTU: u8 = 5;

/// Byte offsets inside an NDP message (from the ICMPv6 type byte).
mod field {
    use core::ops::Range;
    pub const RA_HOP_LIMIT: usize = 4;
    pub const RA_FLAGS: usize = 5;
    pub const RA_LIFETIME: usize = 6;
    pub const RA_REACHABLE: Range<usize> = 8..12;
    pub const RA_RETRANS: Range<usize> = 12..16;
    pub const NA_FLAGS: usize = 4;
    /// NS and NA target address.
    pub const TARGET: Range<usize> = 8..24;
}

const RA_MANAGED: u8 = 0x80;
const RA_OTHER: u8 = 0x40;
const NA_ROUTER: u8 = 0x80;
const NA_SOLICITED: u8 = 0x40;
const NA_OVERRIDE: u8 = 0x20;

/// A decoded NDP message. Link-layer addresses are Ethernet (6 bytes, RFC 2464 §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NdpRepr {
    RouterSolicit {
        lladdr: Option<[u8; 6]>,
    },
    RouterAdvert {
        hop_limit: u8,
        managed: bool,
        other: bool,
        router_lifetime: u16,
        reachable_time: u32,
        retrans_time: u32,
        lladdr: Option<[u8; 6]>,
        mtu: Option<u32>,
    },
    NeighborSolicit {
        target: [u8; 16],
        lladdr: Option<[u8; 6]>,
    },
    NeighborAdvert {
        router: bool,
        solicited: bool,
        override_: bool,
        target: [u8; 16],
        lladdr: Option<[u8; 6]>,
    },
}

/// The options an NDP message may carry that this module decodes.
#[derive(Default)]
struct Options {
    source: Option<[u8; 6]>,
    target: Option<[u8; 6]>,
    mtu: Option<u32>,
}

fn parse_options(mut b: &[u8]) -> Result<Options> {
    let mut o = Options::default();
    while !b.is_empty() {
        let len = *b.get(1).ok_or(WireError::Truncated)? as usize * 8;
        if len == 0 {
            return Err(WireError::Malformed("NDP option of length 0"));
        }
        let opt = b.get(..len).ok_or(WireError::Truncated)?;
        let mac = || opt[2..8].try_into().unwrap();
        match opt[0] {
            OPT_SOURCE_LLADDR => o.source = Some(mac()),
            OPT_TARGET_LLADDR => o.target = Some(mac()),
            OPT_MTU => o.mtu = Some(u32::from_be_bytes(opt[4..8].try_into().unwrap())),
            _ => {}
        }
        b = &b[len..];
    }
    Ok(o)
}

/// Fixed part of each message type, options excluded.
fn fixed_len(ty: u8) -> usize {
    match ty {
        TYPE_ROUTER_ADVERT => 16,
        TYPE_NEIGHBOR_SOLICIT | TYPE_NEIGHBOR_ADVERT => 24,
        _ => HEADER_LEN,
    }
}

impl NdpRepr {
    /// Decodes an NDP message (its checksum is the caller's: [`super::icmpv6::Icmpv6Repr`]).
    pub fn parse<T: AsRef<[u8]>>(p: &Icmpv6Packet<T>) -> Result<NdpRepr> {
        let ty = p.msg_type();
        if !(TYPE_ROUTER_SOLICIT..=TYPE_NEIGHBOR_ADVERT).contains(&ty) {
            return Err(WireError::Malformed("unsupported ICMPv6 type"));
        }
        if p.code() != 0 {
            return Err(WireError::Malformed("NDP code is not 0"));
        }
        let b = p.as_bytes();
        let opts = parse_options(b.get(fixed_len(ty)..).ok_or(WireError::Truncated)?)?;
        let target = || -> Result<[u8; 16]> {
            let t: [u8; 16] = b[field::TARGET].try_into().unwrap();
            if t[0] == 0xff {
                return Err(WireError::Malformed("NDP target is multicast"));
            }
            Ok(t)
        };
        Ok(match ty {
            TYPE_ROUTER_SOLICIT => NdpRepr::RouterSolicit {
                lladdr: opts.source,
            },
            TYPE_ROUTER_ADVERT => NdpRepr::RouterAdvert {
                hop_limit: b[field::RA_HOP_LIMIT],
                managed: b[field::RA_FLAGS] & RA_MANAGED != 0,
                other: b[field::RA_FLAGS] & RA_OTHER != 0,
                router_lifetime: be16(b, field::RA_LIFETIME),
                reachable_time: u32::from_be_bytes(b[field::RA_REACHABLE].try_into().unwrap()),
                retrans_time: u32::from_be_bytes(b[field::RA_RETRANS].try_into().unwrap()),
                lladdr: opts.source,
                mtu: opts.mtu,
            },
            TYPE_NEIGHBOR_SOLICIT => NdpRepr::NeighborSolicit {
                target: target()?,
                lladdr: opts.source,
            },
            _ => NdpRepr::NeighborAdvert {
                router: b[field::NA_FLAGS] & NA_ROUTER != 0,
                solicited: b[field::NA_FLAGS] & NA_SOLICITED != 0,
                override_: b[field::NA_FLAGS] & NA_OVERRIDE != 0,
                target: target()?,
                lladdr: opts.target,
            },
        })
    }

    fn msg_type(&self) -> u8 {
        match self {
            NdpRepr::RouterSolicit { .. } => TYPE_ROUTER_SOLICIT,
            NdpRepr::RouterAdvert { .. } => TYPE_ROUTER_ADVERT,
            NdpRepr::NeighborSolicit { .. } => TYPE_NEIGHBOR_SOLICIT,
            NdpRepr::NeighborAdvert { .. } => TYPE_NEIGHBOR_ADVERT,
        }
    }

    /// The link-layer option this message carries: (option type, address).
    fn lladdr(&self) -> Option<(u8, [u8; 6])> {
        match *self {
            NdpRepr::RouterSolicit { lladdr }
            | NdpRepr::RouterAdvert { lladdr, .. }
            | NdpRepr::NeighborSolicit { lladdr, .. } => lladdr.map(|a| (OPT_SOURCE_LLADDR, a)),
            NdpRepr::NeighborAdvert { lladdr, .. } => lladdr.map(|a| (OPT_TARGET_LLADDR, a)),
        }
    }

    fn mtu(&self) -> Option<u32> {
        match *self {
            NdpRepr::RouterAdvert { mtu, .. } => mtu,
            _ => None,
        }
    }

    /// Bytes [`Self::emit`] writes.
    pub fn buffer_len(&self) -> usize {
        fixed_len(self.msg_type()) + self.lladdr().map_or(0, |_| 8) + self.mtu().map_or(0, |_| 8)
    }

    /// Writes the message with a zero checksum into `buf` (exactly [`Self::buffer_len`]
    /// bytes, zeroed); [`super::icmpv6::Icmpv6Repr::emit`] fills the checksum.
    pub(crate) fn emit(&self, buf: &mut [u8]) -> Result<()> {
        if buf.len() != self.buffer_len() {
            return Err(WireError::Truncated);
        }
        buf[0] = self.msg_type();
        match *self {
            NdpRepr::RouterSolicit { .. } => {}
            NdpRepr::RouterAdvert {
                hop_limit,
                managed,
                other,
                router_lifetime,
                reachable_time,
                retrans_time,
                ..
            } => {
                buf[field::RA_HOP_LIMIT] = hop_limit;
                buf[field::RA_FLAGS] =
                    if managed { RA_MANAGED } else { 0 } | if other { RA_OTHER } else { 0 };
                put16(buf, field::RA_LIFETIME, router_lifetime);
                buf[field::RA_REACHABLE].copy_from_slice(&reachable_time.to_be_bytes());
                buf[field::RA_RETRANS].copy_from_slice(&retrans_time.to_be_bytes());
            }
            NdpRepr::NeighborSolicit { target, .. } => buf[field::TARGET].copy_from_slice(&target),
            NdpRepr::NeighborAdvert {
                router,
                solicited,
                override_,
                target,
                ..
            } => {
                buf[field::NA_FLAGS] = if router { NA_ROUTER } else { 0 }
                    | if solicited { NA_SOLICITED } else { 0 }
                    | if override_ { NA_OVERRIDE } else { 0 };
                buf[field::TARGET].copy_from_slice(&target);
            }
        }
        let mut at = fixed_len(self.msg_type());
        if let Some((ty, mac)) = self.lladdr() {
            buf[at] = ty;
            buf[at + 1] = 1;
            buf[at + 2..at + 8].copy_from_slice(&mac);
            at += 8;
        }
        if let Some(mtu) = self.mtu() {
            buf[at] = OPT_MTU;
            buf[at + 1] = 1;
            buf[at + 4..at + 8].copy_from_slice(&mtu.to_be_bytes());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::icmpv6::Icmpv6Repr;
    use std::net::Ipv6Addr;

    fn o(s: &str) -> [u8; 16] {
        s.parse::<Ipv6Addr>().unwrap().octets()
    }

    #[test]
    fn every_message_round_trips() {
        let (s, d) = (o("fe80::1"), o("ff02::1:ff00:2"));
        let mac = Some([2, 0, 0, 0, 0, 1]);
        for n in [
            NdpRepr::RouterSolicit { lladdr: None },
            NdpRepr::RouterSolicit { lladdr: mac },
            NdpRepr::RouterAdvert {
                hop_limit: 64,
                managed: true,
                other: false,
                router_lifetime: 1800,
                reachable_time: 30000,
                retrans_time: 1000,
                lladdr: mac,
                mtu: Some(1500),
            },
            NdpRepr::NeighborSolicit {
                target: o("2001:db8::2"),
                lladdr: mac,
            },
            NdpRepr::NeighborAdvert {
                router: true,
                solicited: true,
                override_: false,
                target: o("2001:db8::2"),
                lladdr: mac,
            },
        ] {
            let r = Icmpv6Repr::Ndp(n);
            let mut b = [0u8; 64];
            let len = r.emit(&s, &d, &mut b).unwrap();
            let p = Icmpv6Packet::new_checked(&b[..len]).unwrap();
            assert_eq!(Icmpv6Repr::parse(&p, &s, &d).unwrap(), r, "{n:?}");
        }
    }

    #[test]
    fn refusals() {
        let (s, d) = (o("fe80::1"), o("ff02::1:ff00:2"));
        let ns = Icmpv6Repr::Ndp(NdpRepr::NeighborSolicit {
            target: o("ff02::1"),
            lladdr: None,
        });
        let mut b = [0u8; 64];
        let n = ns.emit(&s, &d, &mut b).unwrap();
        let p = Icmpv6Packet::new_checked(&b[..n]).unwrap();
        assert!(matches!(
            Icmpv6Repr::parse(&p, &s, &d),
            Err(WireError::Malformed(_))
        ));
        // A zero-length option would loop forever if accepted.
        let mut opt = [0u8; 32];
        opt[0] = TYPE_NEIGHBOR_SOLICIT;
        opt[24] = OPT_SOURCE_LLADDR;
        assert!(NdpRepr::parse(&Icmpv6Packet::new_checked(&opt[..]).unwrap()).is_err());
        assert_eq!(
            NdpRepr::parse(&Icmpv6Packet::new_checked(&opt[..20]).unwrap()),
            Err(WireError::Truncated)
        );
        opt[1] = 1;
        assert!(NdpRepr::parse(&Icmpv6Packet::new_checked(&opt[..]).unwrap()).is_err());
    }
}
