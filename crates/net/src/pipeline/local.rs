//! The router's own addresses, as the input checks need them: the MAC each port answers
//! to (only frames addressed to the router are routed, RFC 1812 §5.2.1 and §5.3.4) and the
//! IPv4 addresses of its ports (a packet arriving from outside with one of them as source
//! is spoofed or looped, and is dropped: RFC 1812 §5.3.7, Linux's "martian source").
//!
//! Built from the ports at startup and again when a reload changes their addresses (then
//! published with the table snapshot, `Fib::set_local`, so workers switch with it). The
//! per-packet tests are one 8-byte load, shift and compare for the destination MAC, and one
//! byte of a 512-entry filter of the addresses (indexed by a multiplicative hash of the
//! source word as the checksum already loaded it) before any exact search, so a packet
//! from a foreign source costs a few instructions. Never allocates after construction.
//!
//! `local` routes of the routes file are not in the source check: they can change with
//! every reload, and the ports' addresses are the ones a neighbour can see and spoof.
//!
//! IPv6: the global addresses in one sorted list (with a filter of their own for the fast
//! path, indexed by the folded address), and each port's link-local address (EUI-64 from
//! its MAC, RFC 4291 appendix A, unless one is configured), which is the only link-local
//! address a packet may be delivered to.

use crate::wire::ipv6::{is_link_local, link_local_from_mac};

/// Entries of the source filter.
const FILTER_LEN: usize = 512;

/// The router's MAC per port and its IPv4 and IPv6 addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalAddrs {
    /// By port id: the port's [`MacKey`].
    macs: Vec<MacKey>,
    /// The router's IPv4 addresses (host byte order).
    ipv4: Vec<u32>,
    /// Entry [`filter_index`] of every address in `ipv4` is set.
    filter: [bool; FILTER_LEN],
    /// The router's IPv6 addresses other than link-local ones, sorted (big-endian values).
    ipv6: Vec<u128>,
    /// Entry [`filter_index6`] of every address in `ipv6` is set.
    filter6: [bool; FILTER_LEN],
    /// (port, address): every port's link-local addresses, by port.
    link_local: Vec<(u16, u128)>,
}

/// A port's MAC as the frames' first 8 bytes are compared with it: the six bytes as a
/// little-endian word shifted left by 16 (the two bytes after the MAC shifted out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MacKey(u64);

impl MacKey {
    fn new(mac: &[u8; 6]) -> MacKey {
        let mut b = [0u8; 8];
        b[..6].copy_from_slice(mac);
        MacKey(u64::from_le_bytes(b) << 16)
    }

    /// Whether a frame starting with `first8` is addressed to this MAC (the two bytes
    /// after the destination, the source MAC's first, are shifted out). Load, shift,
    /// compare: with the xor first, LLVM masks with a 64-bit constant it reloads.
    #[inline(always)]
    pub(crate) fn matches(self, first8: &[u8; 8]) -> bool {
        u64::from_le_bytes(*first8) << 16 == self.0
    }
}

/// Position of the address whose header bytes read `word` (native order, as the checksum
/// reads them) in the source filter: the top bits of a multiplicative hash, so that the
/// addresses of one subnet spread over the filter.
#[inline(always)]
fn filter_index(word: u32) -> usize {
    (word.wrapping_mul(0x9e37_79b1) >> 23) as usize
}

/// [`filter_index`] of an IPv6 address folded to one word (both halves count, so the
/// router's `::1` on one prefix does not shadow every `::1`).
#[inline(always)]
fn filter_index6(a: &[u8; 16]) -> usize {
    let (hi, lo) = a.split_at(8);
    let w = u64::from_ne_bytes(hi.try_into().expect("8 bytes"))
        ^ u64::from_ne_bytes(lo.try_into().expect("8 bytes"));
    filter_index((w ^ w >> 32) as u32)
}

impl LocalAddrs {
    /// `macs[p]` is the MAC of port `p`; `ipv4` the router's addresses on all ports. Each
    /// port gets the link-local IPv6 address derived from its MAC
    /// ([`link_local_from_mac`]) until [`LocalAddrs::with_ipv6`] configures one.
    pub fn new(macs: &[[u8; 6]], ipv4: impl IntoIterator<Item = [u8; 4]>) -> LocalAddrs {
        let mut l = LocalAddrs {
            macs: macs.iter().map(MacKey::new).collect(),
            ipv4: Vec::new(),
            filter: [false; FILTER_LEN],
            ipv6: Vec::new(),
            filter6: [false; FILTER_LEN],
            link_local: Vec::new(),
        };
        for a in ipv4 {
            l.filter[filter_index(u32::from_ne_bytes(a))] = true;
            l.ipv4.push(u32::from_be_bytes(a));
        }
        for (port, mac) in macs.iter().enumerate() {
            let ll = u128::from_be_bytes(link_local_from_mac(*mac));
            l.link_local.push((port as u16, ll));
        }
        l
    }

    /// The same addresses plus the router's IPv6 addresses, as (port, address): global
    /// ones join the router's own, link-local ones (fe80::/10) replace the port's
    /// MAC-derived address (a port may have several).
    pub fn with_ipv6(mut self, addrs: impl IntoIterator<Item = (u16, [u8; 16])>) -> LocalAddrs {
        let mut configured: Vec<(u16, u128)> = Vec::new();
        for (port, a) in addrs {
            if is_link_local(&a) {
                configured.push((port, u128::from_be_bytes(a)));
            } else {
                self.filter6[filter_index6(&a)] = true;
                self.ipv6.push(u128::from_be_bytes(a));
            }
        }
        self.ipv6.sort_unstable();
        self.ipv6.dedup();
        self.link_local
            .retain(|(p, _)| !configured.iter().any(|(q, _)| q == p));
        self.link_local.extend(configured);
        self.link_local.sort_unstable();
        self.link_local.dedup();
        self
    }

    /// The link-local address of `port` (its first, when it has several).
    pub fn link_local(&self, port: u16) -> Option<[u8; 16]> {
        let i = self.link_local.partition_point(|&(p, _)| p < port);
        let &(p, a) = self.link_local.get(i)?;
        (p == port).then(|| a.to_be_bytes())
    }

    /// Whether `addr` is a link-local address of `port`.
    #[inline]
    pub fn is_port_link_local(&self, port: u16, addr: u128) -> bool {
        self.link_local.contains(&(port, addr))
    }

    /// Whether `addr` is one of the router's IPv6 addresses (a global one, or the
    /// link-local one of any port).
    #[inline]
    pub fn is_own6(&self, addr: u128) -> bool {
        self.ipv6.binary_search(&addr).is_ok() || self.link_local.iter().any(|&(_, a)| a == addr)
    }

    /// The MAC of `port`, if the port is known.
    pub fn port_mac(&self, port: u16) -> Option<[u8; 6]> {
        let k = self.macs.get(port as usize)?;
        Some(
            (k.0 >> 16).to_le_bytes()[..6]
                .try_into()
                .expect("six bytes"),
        )
    }

    /// The key of `port`'s MAC; `None` for a port without one (every frame on it is
    /// refused).
    #[inline(always)]
    pub(crate) fn mac_key(&self, port: u16) -> Option<MacKey> {
        self.macs.get(port as usize).copied()
    }

    /// False when the source address whose header bytes read `word` (native order) is
    /// certainly not the router's (the fast path's test).
    #[inline(always)]
    pub(crate) fn may_be_own(&self, word: u32) -> bool {
        self.filter[filter_index(word)]
    }

    /// False when `addr`, an IPv6 address outside fe80::/10, is certainly not one of the
    /// router's (the fast path's test, for sources and destinations).
    #[inline(always)]
    pub(crate) fn may_be_own6(&self, addr: &[u8; 16]) -> bool {
        self.filter6[filter_index6(addr)]
    }

    /// Whether `addr` (host byte order) is one of the router's IPv4 addresses.
    #[inline]
    pub fn is_own(&self, addr: u32) -> bool {
        self.may_be_own(u32::from_ne_bytes(addr.to_be_bytes())) && self.ipv4.contains(&addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_compare_the_destination_mac_only() {
        let l = LocalAddrs::new(&[[2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]], []);
        let frame = |dst: [u8; 6]| {
            let mut f = [0xeeu8; 8];
            f[..6].copy_from_slice(&dst);
            f
        };
        let k0 = l.mac_key(0).unwrap();
        assert!(k0.matches(&frame([2, 0, 0, 0, 0, 1])));
        assert!(!l.mac_key(1).unwrap().matches(&frame([2, 0, 0, 0, 0, 1])));
        for byte in 0..6 {
            let mut m = [2, 0, 0, 0, 0, 1];
            m[byte] ^= 0x80;
            assert!(!k0.matches(&frame(m)), "byte {byte}");
        }
        assert_eq!(l.port_mac(1), Some([2, 0, 0, 0, 0, 2]));
        assert_eq!(l.port_mac(2), None);
        assert_eq!(l.mac_key(2), None);
    }

    #[test]
    fn own_addresses_are_found_and_others_mostly_filtered() {
        let own = [
            [192, 0, 2, 1],
            [10, 0, 0, 1],
            [10, 0, 1, 1],
            [198, 51, 100, 254],
        ];
        let l = LocalAddrs::new(&[], own);
        for a in own {
            assert!(l.is_own(u32::from_be_bytes(a)));
            assert!(l.may_be_own(u32::from_ne_bytes(a)));
        }
        let (mut hits, mut n) = (0, 0);
        for a in (0..65536u32).map(|i| 0x0a00_0000 | i) {
            if own.iter().any(|o| u32::from_be_bytes(*o) == a) {
                continue;
            }
            assert!(!l.is_own(a));
            hits += l.may_be_own(u32::from_ne_bytes(a.to_be_bytes())) as u32;
            n += 1;
        }
        // 4 entries of 512 set: about 0.8% of foreign sources take the exact search.
        assert!(hits * 50 < n, "{hits} of {n} passed the filter");
    }

    #[test]
    fn ipv6_addresses_and_link_locals_per_port() {
        let v6 = |s: &str| s.parse::<std::net::Ipv6Addr>().unwrap().octets();
        let macs = [[0x02, 0, 0, 0, 0, 1], [0x00, 0x1b, 0x21, 0xaa, 0xbb, 0xcc]];
        let l = LocalAddrs::new(&macs, []).with_ipv6([
            (0, v6("2001:db8::1")),
            (1, v6("fe80::1")),
            (1, v6("2001:db8:1::1")),
        ]);
        // Port 0 keeps its EUI-64 address; port 1's configured one replaces it.
        assert_eq!(l.link_local(0), Some(v6("fe80::ff:fe00:1")));
        assert_eq!(l.link_local(1), Some(v6("fe80::1")));
        assert_eq!(l.link_local(2), None);
        let n = |s| u128::from_be_bytes(v6(s));
        assert!(l.is_port_link_local(0, n("fe80::ff:fe00:1")));
        assert!(!l.is_port_link_local(1, n("fe80::ff:fe00:1")));
        assert!(!l.is_port_link_local(0, n("fe80::1")));
        assert!(!l.is_port_link_local(1, n("fe80::21b:21ff:feaa:bbcc")));
        for own in ["2001:db8::1", "2001:db8:1::1", "fe80::1", "fe80::ff:fe00:1"] {
            assert!(l.is_own6(n(own)), "{own}");
        }
        assert!(!l.is_own6(n("2001:db8::2")));
        assert!(!l.is_own6(n("fe80::21b:21ff:feaa:bbcc")));
        // The fast path's filter holds every global address and few others.
        for own in ["2001:db8::1", "2001:db8:1::1"] {
            assert!(l.may_be_own6(&v6(own)), "{own}");
        }
        let foreign = (0..4096u128)
            .map(|i| (n("2001:db8:2::") + (i << 64) + i).to_be_bytes())
            .filter(|a| l.may_be_own6(a))
            .count();
        assert!(
            foreign * 50 < 4096,
            "{foreign} foreign addresses passed the filter"
        );
    }
}
