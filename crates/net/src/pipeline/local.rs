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

/// Entries of the source filter.
const FILTER_LEN: usize = 512;

/// The router's MAC per port and its IPv4 addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalAddrs {
    /// By port id: the port's [`MacKey`].
    macs: Vec<MacKey>,
    /// The router's IPv4 addresses (host byte order).
    ipv4: Vec<u32>,
    /// Entry [`filter_index`] of every address in `ipv4` is set.
    filter: [bool; FILTER_LEN],
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

impl LocalAddrs {
    /// `macs[p]` is the MAC of port `p`; `ipv4` the router's addresses on all ports.
    pub fn new(macs: &[[u8; 6]], ipv4: impl IntoIterator<Item = [u8; 4]>) -> LocalAddrs {
        let mut l = LocalAddrs {
            macs: macs.iter().map(MacKey::new).collect(),
            ipv4: Vec::new(),
            filter: [false; FILTER_LEN],
        };
        for a in ipv4 {
            l.filter[filter_index(u32::from_ne_bytes(a))] = true;
            l.ipv4.push(u32::from_be_bytes(a));
        }
        l
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
}
