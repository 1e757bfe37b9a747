//! The ECMP flow hash: the same flow always hashes the same, whatever its TTL or TC.
//!
//! Inputs: the received label stack without reserved labels (after an entropy label
//! indicator, the entropy label alone, RFC 6790), plus, when the payload is IPv4 and not
//! a fragment, source, destination, protocol and L4 ports; when it is IPv6, source,
//! destination, flow label, and the upper-layer protocol and L4 ports found by the
//! bounded extension header walk (none for a later fragment or a chain the walk refuses).

use crate::wire::ipv4::Ipv4Packet;
use crate::wire::ipv6::Ipv6Packet;
use crate::wire::ipv6_ext;
use crate::wire::mpls::{is_reserved, LabelStackEntry, ENTRY_LEN, LABEL_ELI};
use crate::wire::{be16, l4};

/// Start value of every flow hash but the entropy label's.
const SEED: u32 = 0x2545_f491;

#[inline]
fn mix(h: u32, w: u32) -> u32 {
    (h ^ w).wrapping_mul(0x9e37_79b1).rotate_left(13)
}

/// murmur3's finaliser: every input bit reaches the low bits the bucket index uses.
#[inline]
fn fmix(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// Flow hash of a packet whose label stack is `stack` (may be empty) and whose IPv4 or
/// IPv6 header, if any, starts `ip`.
pub(crate) fn flow_hash(stack: &[u8], ip: Option<&[u8]>) -> u32 {
    let mut h = SEED;
    let mut words = stack.chunks_exact(ENTRY_LEN);
    while let Some(w) = words.next() {
        let label = LabelStackEntry(u32::from_be_bytes([w[0], w[1], w[2], w[3]])).label();
        if label == LABEL_ELI {
            if let Some(el) = words.next() {
                let el = LabelStackEntry(u32::from_be_bytes([el[0], el[1], el[2], el[3]]));
                return fmix(mix(0x6c8e_9cf5, el.label()));
            }
        } else if !is_reserved(label) {
            h = mix(h, label);
        }
    }
    if let Some((header, b)) = ip.and_then(|b| {
        Some((
            b.first_chunk()?,
            Ipv4Packet::new_checked(b).ok()?.into_inner(),
        ))
    }) {
        // The checked view's payload, by hand: its accessor was not always inlined.
        let (hl, tl) = (((header[0] & 0xf) as usize) * 4, be16(header, 2) as usize);
        h = mix_ipv4(h, header, &b[hl..tl]);
    } else if let Some(b) = ip.filter(|b| b.first().is_some_and(|v| v >> 4 == 6)) {
        h = mix_ipv6(h, b);
    }
    fmix(h)
}

/// Mixes the flow fields of the IPv6 datagram `b` (if its header is sound) into `h`. Out
/// of line: the IPv4 hash stays as short as it was.
#[inline(never)]
fn mix_ipv6(mut h: u32, b: &[u8]) -> u32 {
    let Ok(ip) = Ipv6Packet::new_checked(b) else {
        return h;
    };
    for a in [ip.src_addr(), ip.dst_addr()] {
        for w in a.chunks_exact(4) {
            h = mix(h, u32::from_be_bytes([w[0], w[1], w[2], w[3]]));
        }
    }
    h = mix(h, ip.flow_label());
    let payload = ip.payload();
    if let Ok(u) = ipv6_ext::walk(ip.next_header(), payload) {
        let ports = match u.has_header() {
            true => l4::ports(u.protocol, &payload[u.offset..]).unwrap_or((0, 0)),
            false => (0, 0),
        };
        h = mix(h, (u.protocol as u32) << 16);
        h = mix(h, (ports.0 as u32) << 16 | ports.1 as u32);
    }
    h
}

/// [`flow_hash`] of an IPv4 datagram without labels whose header (`header`, 20 bytes
/// without options) the caller has checked, `payload` being the rest of the datagram:
/// the fast path's hash, without the checks it already made.
#[inline]
pub(crate) fn ipv4_flow_hash(header: &[u8; 20], payload: &[u8]) -> u32 {
    fmix(mix_ipv4(SEED, header, payload))
}

/// Mixes a datagram's flow fields (none for a fragment) into `h`. `header` is the first
/// 20 bytes of the header, `payload` what follows the whole header.
#[inline]
fn mix_ipv4(mut h: u32, header: &[u8; 20], payload: &[u8]) -> u32 {
    // The fixed fields only, which 20 bytes always hold.
    let ip = Ipv4Packet::new_unchecked(header);
    if !ip.is_fragment() {
        h = mix(h, u32::from_be_bytes(ip.src_addr()));
        h = mix(h, u32::from_be_bytes(ip.dst_addr()));
        let ports = l4::ports(ip.protocol(), payload).unwrap_or((0, 0));
        h = mix(h, (ip.protocol() as u32) << 16);
        h = mix(h, (ports.0 as u32) << 16 | ports.1 as u32);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack(entries: &[(u32, u8)]) -> Vec<u8> {
        let n = entries.len();
        entries
            .iter()
            .enumerate()
            .flat_map(|(i, &(l, ttl))| {
                LabelStackEntry::new(l, (i % 8) as u8, i + 1 == n, ttl)
                    .0
                    .to_be_bytes()
            })
            .collect()
    }

    #[test]
    fn ttl_tc_and_reserved_labels_are_ignored() {
        let a = flow_hash(&stack(&[(100, 64), (200, 64)]), None);
        assert_eq!(a, flow_hash(&stack(&[(100, 3), (200, 9)]), None));
        assert_eq!(a, flow_hash(&stack(&[(0, 3), (100, 3), (200, 9)]), None));
        assert_ne!(a, flow_hash(&stack(&[(100, 64), (201, 64)]), None));
    }

    /// An IPv6/UDP datagram: addresses' last bytes, flow label, ports, optionally behind
    /// a destination options header or as a later fragment.
    fn ipv6(s: u8, d: u8, flow: u32, ports: (u16, u16), ext: Option<u16>) -> Vec<u8> {
        let mut udp = [0u8; 8].to_vec();
        udp[..2].copy_from_slice(&ports.0.to_be_bytes());
        udp[2..4].copy_from_slice(&ports.1.to_be_bytes());
        let (nh, mut payload) = match ext {
            None => (17, vec![]),
            Some(u16::MAX) => (60, vec![17, 0, 1, 4, 0, 0, 0, 0]),
            Some(off) => {
                let w = (off << 3).to_be_bytes();
                (44, vec![17, 0, w[0], w[1], 0, 0, 0, 1])
            }
        };
        payload.extend(udp);
        let mut b = vec![
            0x60 | (flow >> 16) as u8,
            (flow >> 8) as u8,
            flow as u8,
            0,
            0,
        ];
        b.push(payload.len() as u8);
        b.extend([nh, 64]);
        b.extend([0x20, 1, 0xd, 0xb8].iter().chain(&[0; 11]).chain(&[s]));
        b.extend([0x20, 1, 0xd, 0xb8].iter().chain(&[0; 11]).chain(&[d]));
        b.extend(payload);
        b
    }

    #[test]
    fn ipv6_hash_covers_addresses_flow_label_and_ports_behind_extensions() {
        let h = |b: Vec<u8>| flow_hash(&[], Some(&b));
        let base = h(ipv6(1, 2, 7, (1000, 53), None));
        assert_eq!(base, h(ipv6(1, 2, 7, (1000, 53), None)));
        assert_ne!(base, h(ipv6(3, 2, 7, (1000, 53), None)));
        assert_ne!(base, h(ipv6(1, 3, 7, (1000, 53), None)));
        assert_ne!(base, h(ipv6(1, 2, 8, (1000, 53), None)));
        assert_ne!(base, h(ipv6(1, 2, 7, (1001, 53), None)));
        assert_ne!(base, h(ipv6(1, 2, 7, (1000, 54), None)));
        // The ports behind a destination options header and in a first fragment count.
        let opts = h(ipv6(1, 2, 7, (1000, 53), Some(u16::MAX)));
        assert_ne!(opts, h(ipv6(1, 2, 7, (1001, 53), Some(u16::MAX))));
        let first = h(ipv6(1, 2, 7, (1000, 53), Some(0)));
        assert_ne!(first, h(ipv6(1, 2, 7, (1001, 53), Some(0))));
        // A later fragment carries no ports: its bytes there are data.
        let later = h(ipv6(1, 2, 7, (1000, 53), Some(2)));
        assert_eq!(later, h(ipv6(1, 2, 7, (1001, 54), Some(2))));
        // The hop limit and traffic class never move a flow.
        let mut b = ipv6(1, 2, 7, (1000, 53), None);
        b[7] = 3;
        b[0] = 0x6f;
        assert_eq!(base, h(b));
    }

    #[test]
    fn entropy_label_alone_after_eli() {
        let a = flow_hash(&stack(&[(100, 1), (7, 0), (5000, 0)]), Some(&[0x45; 20]));
        let b = flow_hash(&stack(&[(300, 1), (7, 0), (5000, 0), (400, 1)]), None);
        assert_eq!(a, b);
        assert_ne!(a, flow_hash(&stack(&[(100, 1), (7, 0), (5001, 0)]), None));
    }
}
