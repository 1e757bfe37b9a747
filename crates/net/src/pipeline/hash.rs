//! The ECMP flow hash: the same flow always hashes the same, whatever its TTL or TC.
//!
//! Inputs: the received label stack without reserved labels (after an entropy label
//! indicator, the entropy label alone, RFC 6790), plus, when the payload is IPv4 and not
//! a fragment, source, destination, protocol and L4 ports; when it is IPv6, source,
//! destination, flow label, and the upper-layer protocol and L4 ports found by the
//! bounded extension header walk (none for a later fragment or a chain the walk refuses).

use crate::wire::ipv4::Ipv4Packet;
use crate::wire::ipv6::{field as ip6, Ipv6Packet, HEADER_LEN as IPV6_LEN};
use crate::wire::ipv6_ext;
use crate::wire::mpls::{is_reserved, LabelStackEntry, ENTRY_LEN, LABEL_ELI};
use crate::wire::{be16, be32, l4};

/// Start value of the labels' mix. The datagram hashes take the mix xor `SEED`, which is
/// 0 without labels: the fast paths' hashes then fold no seed in (ECMP over IPv4: 6
/// instructions fewer, docs/benchmarks.md, session 30).
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
        return ipv4_hash(h ^ SEED, header, &b[hl..tl]);
    } else if let Some((header, payload)) = ip.and_then(ipv6_parts) {
        return ipv6_hash(h ^ SEED, header, payload);
    }
    fmix(h)
}

/// A sound IPv6 datagram's fixed header and payload (up to its length).
fn ipv6_parts(b: &[u8]) -> Option<(&[u8; IPV6_LEN], &[u8])> {
    let len = Ipv6Packet::new_checked(b).ok()?.payload_len() as usize;
    Some((b.first_chunk()?, b.get(IPV6_LEN..IPV6_LEN + len)?))
}

/// [`flow_hash`] of an IPv6 datagram without labels whose fixed header (`header`) the
/// caller has checked, `payload` being the rest of the datagram up to its length: the
/// fast path's hash, without the checks it already made.
#[inline]
pub(crate) fn ipv6_flow_hash(header: &[u8; IPV6_LEN], payload: &[u8]) -> u32 {
    ipv6_hash(0, header, payload)
}

/// The flow hash of an IPv6 datagram on top of `h` (the labels' mix xor [`SEED`]): its
/// flow fields in independent folded multiplies, each address half, the flow label with
/// the protocol, and the ports, as for IPv4 (chained mixes made a chain of eleven
/// multiplies). Out of line: the IPv4 hash stays as short as it was.
#[inline(never)]
fn ipv6_hash(h: u32, header: &[u8; IPV6_LEN], payload: &[u8]) -> u32 {
    let word = |at: usize| {
        header
            .get(at..at + 8)
            .and_then(|w| w.first_chunk())
            .map_or(0, |w| u64::from_ne_bytes(*w))
    };
    let (protocol, ports) = match ipv6_ext::walk(header[ip6::NEXT_HEADER], payload) {
        Ok(u) if u.has_header() => (
            u.protocol,
            l4::ports_word(u.protocol, &payload[u.offset..]).unwrap_or(0),
        ),
        Ok(u) => (u.protocol, 0),
        // A chain the walk refuses: the addresses and flow label alone.
        Err(_) => (0, 0),
    };
    let flow_label = be32(header, 0) & 0xf_ffff;
    let (src, dst) = (ip6::SRC.start, ip6::DST.start);
    let seed = u64::from(h);
    let x = folded_mul(word(src) ^ seed, K_ADDRS)
        ^ folded_mul(word(src + 8), K_PORTS)
        ^ folded_mul(word(dst), K_DST_HI)
        ^ folded_mul(word(dst + 8), K_DST_LO)
        ^ folded_mul(
            u64::from(flow_label) << 40 | u64::from(protocol) << 32 | u64::from(ports),
            K_REST,
        );
    x as u32
}

/// [`flow_hash`] of an IPv4 datagram without labels whose header (`header`, 20 bytes
/// without options) the caller has checked, `payload` being the rest of the datagram:
/// the fast path's hash, without the checks it already made.
#[inline]
pub(crate) fn ipv4_flow_hash(header: &[u8; 20], payload: &[u8]) -> u32 {
    ipv4_hash(0, header, payload)
}

/// Odd multipliers of the datagram hashes (the golden ratio's, splitmix64's, and
/// murmur3's and xxhash64's 64-bit primes).
const K_ADDRS: u64 = 0x9e37_79b9_7f4a_7c15;
const K_PORTS: u64 = 0xbf58_476d_1ce4_e5b9;
const K_DST_HI: u64 = 0xff51_afd7_ed55_8ccd;
const K_DST_LO: u64 = 0xc4ce_b9fe_1a85_ec53;
const K_REST: u64 = 0x9e37_79b1_85eb_ca87;

/// The flow hash of a datagram on top of `h` (the labels' mix xor [`SEED`]): its flow
/// fields (none for a fragment) in two independent folded multiplies, of the addresses
/// and of the protocol with the ports. Three dependent steps: four chained mixes and
/// murmur's finaliser made a chain of about 30 cycles a packet, most of the IPv4 ECMP
/// stage's excess over a plain forward (docs/benchmarks.md, session 12). `header` is the
/// header's first 20 bytes, `payload` what follows the whole header.
#[inline]
fn ipv4_hash(h: u32, header: &[u8; 20], payload: &[u8]) -> u32 {
    let ip = Ipv4Packet::new_unchecked(header);
    let (addrs, rest) = if ip.is_fragment() {
        (0, 0)
    } else {
        // Source and destination, the last 8 bytes, in one load (memory order: any fixed
        // order hashes a flow the same every time).
        let addrs = header.last_chunk().map_or(0, |a| u64::from_ne_bytes(*a));
        let ports = l4::ports_word(ip.protocol(), payload).unwrap_or(0);
        (addrs, u64::from(ip.protocol()) << 32 | u64::from(ports))
    };
    let seed = u64::from(h);
    (folded_mul(addrs ^ seed, K_ADDRS) ^ folded_mul(rest ^ seed << 40, K_PORTS)) as u32
}

/// The 128-bit product's halves xored: every bit of it depends on every bit of `a`.
#[inline(always)]
fn folded_mul(a: u64, k: u64) -> u64 {
    let m = u128::from(a) * u128::from(k);
    (m >> 64) as u64 ^ m as u64
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

    /// An IPv4 header (20 bytes) and 8 bytes of UDP.
    fn ipv4(src: [u8; 4], dst: [u8; 4], ports: (u16, u16), frag: u16) -> ([u8; 20], [u8; 8]) {
        let mut h = [
            0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        h[6..8].copy_from_slice(&frag.to_be_bytes());
        h[12..16].copy_from_slice(&src);
        h[16..20].copy_from_slice(&dst);
        let mut udp = [0u8; 8];
        udp[..2].copy_from_slice(&ports.0.to_be_bytes());
        udp[2..4].copy_from_slice(&ports.1.to_be_bytes());
        (h, udp)
    }

    #[test]
    fn ipv4_hash_covers_addresses_protocol_and_ports_and_is_the_fast_paths() {
        let h = |(hdr, udp): ([u8; 20], [u8; 8])| {
            let mut b = hdr.to_vec();
            b.extend(udp);
            let fast = ipv4_flow_hash(&hdr, &udp);
            assert_eq!(
                fast,
                flow_hash(&[], Some(&b)),
                "fast and staged hashes differ"
            );
            fast
        };
        let base = h(ipv4([10, 0, 0, 1], [10, 0, 1, 9], (1000, 53), 0));
        assert_ne!(base, h(ipv4([11, 0, 0, 1], [10, 0, 1, 9], (1000, 53), 0)));
        assert_ne!(base, h(ipv4([10, 0, 0, 1], [10, 0, 1, 8], (1000, 53), 0)));
        assert_ne!(base, h(ipv4([10, 0, 0, 1], [10, 0, 1, 9], (1001, 53), 0)));
        assert_ne!(base, h(ipv4([10, 0, 0, 1], [10, 0, 1, 9], (1000, 54), 0)));
        let (mut tcp, udp) = ipv4([10, 0, 0, 1], [10, 0, 1, 9], (1000, 53), 0);
        tcp[9] = 6;
        assert_ne!(base, h((tcp, udp)));
        // TTL, DSCP and the checksum never move a flow.
        let (mut other, udp) = ipv4([10, 0, 0, 1], [10, 0, 1, 9], (1000, 53), 0);
        (other[1], other[8], other[10]) = (0xb8, 3, 0x5a);
        assert_eq!(base, h((other, udp)));
        // Fragments hash without the datagram's fields (the later ones carry no ports).
        let frag = h(ipv4([10, 0, 0, 1], [10, 0, 1, 9], (1000, 53), 0x2000));
        assert_eq!(frag, h(ipv4([10, 9, 0, 1], [10, 0, 1, 7], (7, 9), 0x0010)));
    }

    /// Whether the bucket index (the hash's low byte) of 4096 flows takes every one of
    /// the 256 buckets, none by more than 2.5 times its share.
    fn spreads(name: &str, hash: impl Fn(u32) -> u32) {
        let mut buckets = [0u32; 256];
        for i in 0..4096 {
            buckets[hash(i) as usize % 256] += 1;
        }
        let (empty, most) = (
            buckets.iter().filter(|&&b| b == 0).count(),
            buckets.iter().max(),
        );
        assert!(
            empty == 0 && most <= Some(&40),
            "{name}: {empty} empty, most {most:?}"
        );
    }

    /// Flows that differ in one field only, whichever, spread over the buckets.
    #[test]
    fn bucket_index_spreads_flows_differing_in_any_one_field() {
        type Flow = fn(u32) -> ([u8; 20], [u8; 8]);
        let fields: [(&str, Flow); 5] = [
            ("source port", |i| {
                ipv4([10, 0, 0, 1], [10, 0, 1, 9], (i as u16, 53), 0)
            }),
            ("destination port", |i| {
                ipv4([10, 0, 0, 1], [10, 0, 1, 9], (53, i as u16), 0)
            }),
            ("source address, low bits", |i| {
                ipv4((0x0a00_0000 | i).to_be_bytes(), [10, 0, 1, 9], (9, 53), 0)
            }),
            ("source address, high bits", |i| {
                ipv4((i << 20 | 1).to_be_bytes(), [10, 0, 1, 9], (9, 53), 0)
            }),
            ("destination address", |i| {
                ipv4(
                    [10, 0, 0, 1],
                    (0xc000_0000 | i << 8).to_be_bytes(),
                    (9, 53),
                    0,
                )
            }),
        ];
        for (name, flow) in fields {
            spreads(name, |i| {
                let (hdr, udp) = flow(i);
                ipv4_flow_hash(&hdr, &udp)
            });
        }
        let h6 = |b: Vec<u8>| flow_hash(&[], Some(&b));
        spreads("IPv6 source port", |i| {
            h6(ipv6(1, 2, 7, (i as u16, 53), None))
        });
        spreads("IPv6 flow label", |i| h6(ipv6(1, 2, i, (9, 53), None)));
        spreads("IPv6 addresses", |i| {
            h6(ipv6(i as u8, (i >> 8) as u8, 7, (9, 53), None))
        });
        spreads("label", |i| flow_hash(&stack(&[(16 + i, 64)]), None));
    }

    /// Under labels, the datagram's hash depends on the labels too: without them it is
    /// the fast path's, which folds no seed in.
    #[test]
    fn labels_and_datagram_both_move_the_hash() {
        let (hdr, udp) = ipv4([10, 0, 0, 1], [10, 0, 1, 9], (1000, 53), 0);
        let mut b = hdr.to_vec();
        b.extend(udp);
        let bare = flow_hash(&[], Some(&b));
        assert_eq!(bare, ipv4_flow_hash(&hdr, &udp));
        let one = flow_hash(&stack(&[(100, 64)]), Some(&b));
        assert_ne!(one, bare);
        assert_ne!(one, flow_hash(&stack(&[(101, 64)]), Some(&b)));
        // A reserved label (explicit null) is not part of the flow.
        assert_eq!(bare, flow_hash(&stack(&[(0, 64)]), Some(&b)));
        let v6 = ipv6(1, 2, 7, (1000, 53), None);
        let (h6, p6) = v6.split_first_chunk().unwrap();
        assert_eq!(flow_hash(&[], Some(&v6)), ipv6_flow_hash(h6, p6));
        assert_ne!(
            flow_hash(&stack(&[(100, 64)]), Some(&v6)),
            ipv6_flow_hash(h6, p6)
        );
    }

    #[test]
    fn entropy_label_alone_after_eli() {
        let a = flow_hash(&stack(&[(100, 1), (7, 0), (5000, 0)]), Some(&[0x45; 20]));
        let b = flow_hash(&stack(&[(300, 1), (7, 0), (5000, 0), (400, 1)]), None);
        assert_eq!(a, b);
        assert_ne!(a, flow_hash(&stack(&[(100, 1), (7, 0), (5001, 0)]), None));
    }
}
