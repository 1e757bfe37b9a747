//! Walking IPv6 extension headers (RFC 8200 §4) to the upper-layer header, over a bounded
//! number of headers so that a crafted chain costs a fixed amount of work.
//!
//! It finds the upper-layer protocol and where it starts (for the flow hash's ports, for
//! ICMPv6), and describes a fragment header; it never interprets options or routing
//! headers (a router forwards them untouched) and never allocates.

use super::ipv6::{NH_DEST_OPTS, NH_FRAGMENT, NH_HOP_BY_HOP, NH_ROUTING};
use super::{be16, Result, WireError};

/// Authentication header (RFC 4302): its length counts 32-bit words.
pub const NH_AUTH: u8 = 51;
/// Extension headers walked at most; a longer chain is refused.
pub const MAX_EXT_HEADERS: usize = 8;
/// Bytes of a fragment header.
pub const FRAGMENT_LEN: usize = 8;

/// Byte offsets inside an extension header.
mod field {
    pub const NEXT_HEADER: usize = 0;
    pub const HDR_EXT_LEN: usize = 1;
    /// Fragment header: offset (13 bits) << 3 | reserved (2) | M (1).
    pub const FRAG_OFF_M: usize = 2;
    pub const FRAG_IDENT: core::ops::Range<usize> = 4..8;
}

/// A fragment header's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fragment {
    /// Offset of this fragment's data in bytes.
    pub offset: u16,
    pub more: bool,
    pub ident: u32,
}

/// Where the walk ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpperLayer {
    /// Protocol of the header at `offset` (59: no next header). For a fragment other
    /// than the first, the protocol of the data, which does not start with its header.
    pub protocol: u8,
    /// Offset of the upper-layer header from the start of the IPv6 payload.
    pub offset: usize,
    /// Extension headers passed.
    pub headers: usize,
    pub fragment: Option<Fragment>,
}

impl UpperLayer {
    /// Whether the upper-layer header (ports, ICMPv6 type) is at `offset`: false for
    /// later fragments, whose data continues an earlier fragment's.
    pub fn has_header(&self) -> bool {
        self.fragment.is_none_or(|f| f.offset == 0)
    }
}

/// Whether `nh` is an extension header this walk passes over.
pub fn is_extension(nh: u8) -> bool {
    matches!(
        nh,
        NH_HOP_BY_HOP | NH_ROUTING | NH_FRAGMENT | NH_DEST_OPTS | NH_AUTH
    )
}

/// Walks from the fixed header's next header `first` over `payload` (the IPv6 payload).
/// Errors: a header runs past the payload (`Truncated`), hop-by-hop anywhere but first,
/// or more than [`MAX_EXT_HEADERS`] headers (`Malformed`).
pub fn walk(first: u8, payload: &[u8]) -> Result<UpperLayer> {
    let (mut nh, mut at, mut fragment) = (first, 0usize, None);
    for headers in 0..=MAX_EXT_HEADERS {
        let later_fragment = matches!(fragment, Some(Fragment { offset: o, .. }) if o != 0);
        if !is_extension(nh) || later_fragment {
            return Ok(UpperLayer {
                protocol: nh,
                offset: at,
                headers,
                fragment,
            });
        }
        if headers == MAX_EXT_HEADERS {
            break;
        }
        if nh == NH_HOP_BY_HOP && headers != 0 {
            return Err(WireError::Malformed("hop-by-hop header not first"));
        }
        let h = payload.get(at..at + 2).ok_or(WireError::Truncated)?;
        let len = match nh {
            NH_FRAGMENT => FRAGMENT_LEN,
            NH_AUTH => (h[field::HDR_EXT_LEN] as usize + 2) * 4,
            _ => (h[field::HDR_EXT_LEN] as usize + 1) * 8,
        };
        let h = payload.get(at..at + len).ok_or(WireError::Truncated)?;
        if nh == NH_FRAGMENT {
            let w = be16(h, field::FRAG_OFF_M);
            let ident = u32::from_be_bytes(h[field::FRAG_IDENT].try_into().unwrap());
            fragment = Some(Fragment {
                offset: w & !7,
                more: w & 1 != 0,
                ident,
            });
        }
        nh = h[field::NEXT_HEADER];
        at += len;
    }
    Err(WireError::Malformed(
        "more IPv6 extension headers than allowed",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ipv6::{NH_NO_NEXT, NH_TCP, NH_UDP};

    /// An options header (hop-by-hop, destination) of `8 * (1 + ext)` bytes.
    fn opts(next: u8, ext: u8) -> Vec<u8> {
        let mut h = vec![0u8; 8 * (1 + ext as usize)];
        h[0] = next;
        h[1] = ext;
        h[2] = 1; // PadN
        h[3] = h.len() as u8 - 4;
        h
    }

    fn frag(next: u8, offset: u16, more: bool) -> Vec<u8> {
        let w = offset | more as u16;
        let mut h = vec![next, 0, (w >> 8) as u8, w as u8];
        h.extend(0xdead_beefu32.to_be_bytes());
        h
    }

    #[test]
    fn no_extension_headers() {
        let u = walk(NH_UDP, &[1, 2, 3, 4]).unwrap();
        assert_eq!(
            (u.protocol, u.offset, u.headers, u.fragment),
            (NH_UDP, 0, 0, None)
        );
    }

    #[test]
    fn chain_of_every_kind() {
        let mut p = opts(NH_ROUTING, 1);
        p.extend(opts(NH_FRAGMENT, 0)); // a routing header has the same length layout
        p.extend(frag(NH_AUTH, 0, true));
        p.extend([NH_DEST_OPTS, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]); // AH: (1 + 2) * 4 bytes
        p.extend(opts(NH_TCP, 0));
        p.extend([0x30, 0x39, 0, 80]);
        let u = walk(NH_HOP_BY_HOP, &p).unwrap();
        assert_eq!(u.protocol, NH_TCP);
        assert_eq!(u.offset, 16 + 8 + 8 + 12 + 8);
        assert_eq!(u.headers, 5);
        let f = u.fragment.unwrap();
        assert_eq!((f.offset, f.more, f.ident), (0, true, 0xdead_beef));
        assert!(u.has_header());
    }

    #[test]
    fn later_fragment_stops_the_walk() {
        let mut p = frag(NH_DEST_OPTS, 1448, false);
        p.extend([0xff; 16]); // fragment data, not a header
        let u = walk(NH_FRAGMENT, &p).unwrap();
        assert_eq!((u.protocol, u.offset), (NH_DEST_OPTS, 8));
        assert!(!u.has_header());
    }

    #[test]
    fn refusals() {
        assert_eq!(
            walk(NH_HOP_BY_HOP, &opts(NH_UDP, 1)[..15]),
            Err(WireError::Truncated)
        );
        assert_eq!(walk(NH_HOP_BY_HOP, &[]), Err(WireError::Truncated));
        let mut late_hbh = opts(NH_HOP_BY_HOP, 0);
        late_hbh.extend(opts(NH_UDP, 0));
        assert!(matches!(
            walk(NH_DEST_OPTS, &late_hbh),
            Err(WireError::Malformed(_))
        ));
        let mut long = Vec::new();
        for _ in 0..MAX_EXT_HEADERS {
            long.extend(opts(NH_DEST_OPTS, 0));
        }
        let n = long.len();
        long[n - 8] = NH_UDP;
        assert_eq!(walk(NH_DEST_OPTS, &long).unwrap().headers, MAX_EXT_HEADERS);
        long[n - 8] = NH_DEST_OPTS;
        long.extend(opts(NH_UDP, 0));
        assert!(matches!(
            walk(NH_DEST_OPTS, &long),
            Err(WireError::Malformed(_))
        ));
        assert_eq!(walk(NH_NO_NEXT, &[]).unwrap().protocol, NH_NO_NEXT);
    }
}
