//! The ECMP flow hash: the same flow always hashes the same, whatever its TTL or TC.
//!
//! Inputs: the received label stack without reserved labels (after an entropy label
//! indicator, the entropy label alone, RFC 6790), plus, when the payload is IPv4 and not
//! a fragment, source, destination, protocol and L4 ports.

use crate::wire::ipv4::Ipv4Packet;
use crate::wire::l4;
use crate::wire::mpls::{is_reserved, LabelStackEntry, ENTRY_LEN, LABEL_ELI};

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

/// Flow hash of a packet whose label stack is `stack` (may be empty) and whose IPv4
/// header, if any, starts `ip`.
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
    if let Some((header, ip)) =
        ip.and_then(|b| Some((b.first_chunk()?, Ipv4Packet::new_checked(b).ok()?)))
    {
        h = mix_ipv4(h, header, ip.payload());
    }
    fmix(h)
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

    #[test]
    fn entropy_label_alone_after_eli() {
        let a = flow_hash(&stack(&[(100, 1), (7, 0), (5000, 0)]), Some(&[0x45; 20]));
        let b = flow_hash(&stack(&[(300, 1), (7, 0), (5000, 0), (400, 1)]), None);
        assert_eq!(a, b);
        assert_ne!(a, flow_hash(&stack(&[(100, 1), (7, 0), (5001, 0)]), None));
    }
}
