//! UDP and TCP: just the port numbers, for the ECMP flow hash.

use super::ipv4::{PROTO_TCP, PROTO_UDP};

/// SCTP carries its ports at the same place as UDP and TCP.
pub const PROTO_SCTP: u8 = 132;

/// Source and destination ports of a UDP/TCP/SCTP segment, `None` for other protocols or
/// a segment too short to hold them.
#[inline]
pub fn ports(protocol: u8, segment: &[u8]) -> Option<(u16, u16)> {
    match protocol {
        PROTO_TCP | PROTO_UDP | PROTO_SCTP => segment.get(..4).map(|p| {
            (
                u16::from_be_bytes([p[0], p[1]]),
                u16::from_be_bytes([p[2], p[3]]),
            )
        }),
        _ => None,
    }
}

/// [`ports`] as one word, the four bytes in memory order (for hashing: no byte swaps).
#[inline]
pub fn ports_word(protocol: u8, segment: &[u8]) -> Option<u32> {
    match protocol {
        PROTO_TCP | PROTO_UDP | PROTO_SCTP => segment.first_chunk().map(|p| u32::from_ne_bytes(*p)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_of_udp_and_tcp_only() {
        let seg = [0x30, 0x39, 0x00, 0x35, 0, 0, 0, 0];
        assert_eq!(ports(PROTO_UDP, &seg), Some((12345, 53)));
        assert_eq!(ports(PROTO_TCP, &seg), Some((12345, 53)));
        assert_eq!(ports(1, &seg), None);
        assert_eq!(ports(PROTO_UDP, &seg[..3]), None);
    }
}
