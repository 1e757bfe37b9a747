//! UDP, TCP and SCTP: just the port numbers, for the ECMP flow hash.

use super::ipv4::{PROTO_TCP, PROTO_UDP};

/// SCTP carries its ports at the same place as UDP and TCP.
pub const PROTO_SCTP: u8 = 132;

/// Source and destination ports of a UDP/TCP/SCTP segment as one word, the four bytes in
/// memory order (for hashing: no byte swaps); `None` for other protocols or a segment
/// too short to hold them.
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
    fn ports_of_udp_tcp_and_sctp_only() {
        let seg = [0x30, 0x39, 0x00, 0x35, 0, 0, 0, 0];
        let word = u32::from_ne_bytes([0x30, 0x39, 0x00, 0x35]);
        assert_eq!(ports_word(PROTO_UDP, &seg), Some(word));
        assert_eq!(ports_word(PROTO_TCP, &seg), Some(word));
        assert_eq!(ports_word(PROTO_SCTP, &seg), Some(word));
        assert_eq!(ports_word(1, &seg), None);
        assert_eq!(ports_word(PROTO_UDP, &seg[..3]), None);
    }
}
