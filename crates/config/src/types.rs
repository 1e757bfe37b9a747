//! Small value types shared by both file kinds: IPv4 prefixes and MAC addresses, parsed
//! from the text a network engineer writes (`10.0.0.1/24`, `02:00:00:00:00:01`).

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use serde::{Deserialize, Deserializer};

/// An IPv4 address with a prefix length. Host bits may be set (a port address such as
/// `10.0.0.1/24`); route prefixes are checked for that separately so the error can
/// suggest the network address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cidr {
    /// Host byte order.
    pub addr: u32,
    pub len: u8,
}

impl Cidr {
    pub fn new(addr: Ipv4Addr, len: u8) -> Cidr {
        Cidr {
            addr: u32::from(addr),
            len,
        }
    }

    pub fn mask(self) -> u32 {
        if self.len == 0 {
            0
        } else {
            u32::MAX << (32 - self.len as u32)
        }
    }

    /// The prefix with host bits cleared.
    pub fn network(self) -> Cidr {
        Cidr {
            addr: self.addr & self.mask(),
            len: self.len,
        }
    }

    pub fn has_host_bits(self) -> bool {
        self.addr & !self.mask() != 0
    }

    pub fn contains(self, ip: u32) -> bool {
        (ip ^ self.addr) & self.mask() == 0
    }

    pub fn ip(self) -> Ipv4Addr {
        Ipv4Addr::from(self.addr)
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}/{}", self.ip(), self.len)
    }
}

/// Parses dotted-quad IPv4 without allocating (the compact route form has a million).
pub fn parse_ipv4(s: &str) -> Option<u32> {
    let b = s.as_bytes();
    let mut out = 0u32;
    let mut octets = 0;
    let mut i = 0;
    while i < b.len() {
        let start = i;
        let mut v = 0u32;
        while i < b.len() && b[i].is_ascii_digit() {
            v = v * 10 + (b[i] - b'0') as u32;
            i += 1;
            if i - start > 3 {
                return None;
            }
        }
        if i == start || v > 255 || (i - start > 1 && b[start] == b'0') {
            return None;
        }
        out = (out << 8) | v;
        octets += 1;
        if i < b.len() {
            if b[i] != b'.' || octets == 4 {
                return None;
            }
            i += 1;
            if i == b.len() {
                return None;
            }
        }
    }
    (octets == 4).then_some(out)
}

impl FromStr for Cidr {
    type Err = String;
    fn from_str(s: &str) -> Result<Cidr, String> {
        let (a, l) = s.split_once('/').ok_or_else(|| {
            format!("`{s}` is not a prefix: write ADDRESS/LENGTH, e.g. 10.0.0.0/24")
        })?;
        let addr = parse_ipv4(a).ok_or_else(|| format!("`{a}` is not an IPv4 address"))?;
        let len: u8 = l
            .parse()
            .ok()
            .filter(|&n| n <= 32)
            .ok_or_else(|| format!("prefix length `{l}` must be a number from 0 to 32"))?;
        Ok(Cidr { addr, len })
    }
}

impl<'de> Deserialize<'de> for Cidr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Cidr, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// An IPv4 address that deserializes with a helpful error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ip(pub u32);

impl Ip {
    pub fn addr(self) -> Ipv4Addr {
        Ipv4Addr::from(self.0)
    }
}

impl fmt::Display for Ip {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.addr().fmt(f)
    }
}

impl<'de> Deserialize<'de> for Ip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Ip, D::Error> {
        let s = String::deserialize(d)?;
        parse_ipv4(&s).map(Ip).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "`{s}` is not an IPv4 address (write it as four numbers 0..=255, e.g. 10.0.1.2)"
            ))
        })
    }
}

/// An IPv6 address with a prefix length (host bits allowed, as for [`Cidr`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cidr6 {
    /// The address as a big-endian 128-bit integer.
    pub addr: u128,
    pub len: u8,
}

impl Cidr6 {
    pub fn mask(self) -> u128 {
        net::fib::mask6(self.len)
    }

    /// The prefix with host bits cleared.
    pub fn network(self) -> Cidr6 {
        Cidr6 {
            addr: self.addr & self.mask(),
            len: self.len,
        }
    }

    pub fn has_host_bits(self) -> bool {
        self.addr & !self.mask() != 0
    }

    pub fn contains(self, ip: u128) -> bool {
        (ip ^ self.addr) & self.mask() == 0
    }

    pub fn ip(self) -> Ipv6Addr {
        Ipv6Addr::from(self.addr)
    }
}

impl fmt::Display for Cidr6 {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}/{}", self.ip(), self.len)
    }
}

/// Parses an IPv6 address in any RFC 4291 text form.
pub fn parse_ipv6(s: &str) -> Option<u128> {
    s.parse::<Ipv6Addr>().ok().map(u128::from)
}

/// Whether `a` is link-local (fe80::/10): such a next hop needs its port named.
pub fn is_link_local6(a: u128) -> bool {
    a >> 118 == 0x3fa
}

impl FromStr for Cidr6 {
    type Err = String;
    fn from_str(s: &str) -> Result<Cidr6, String> {
        let (a, l) = s.split_once('/').ok_or_else(|| {
            format!("`{s}` is not a prefix: write ADDRESS/LENGTH, e.g. 2001:db8::/32")
        })?;
        let addr = parse_ipv6(a).ok_or_else(|| format!("`{a}` is not an IPv6 address"))?;
        let len: u8 = l
            .parse()
            .ok()
            .filter(|&n| n <= 128)
            .ok_or_else(|| format!("prefix length `{l}` must be a number from 0 to 128"))?;
        Ok(Cidr6 { addr, len })
    }
}

impl<'de> Deserialize<'de> for Cidr6 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Cidr6, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A prefix of either family: a port address, or a route prefix before it is sorted by
/// family. The text decides: an IPv6 prefix has a `:`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AnyCidr {
    V4(Cidr),
    V6(Cidr6),
}

impl FromStr for AnyCidr {
    type Err = String;
    fn from_str(s: &str) -> Result<AnyCidr, String> {
        if s.contains(':') {
            s.parse().map(AnyCidr::V6)
        } else {
            s.parse().map(AnyCidr::V4)
        }
    }
}

impl fmt::Display for AnyCidr {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            AnyCidr::V4(c) => c.fmt(f),
            AnyCidr::V6(c) => c.fmt(f),
        }
    }
}

impl<'de> Deserialize<'de> for AnyCidr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<AnyCidr, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// An address of either family (next hops, neighbors).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IpAny {
    /// Host byte order.
    V4(u32),
    V6(u128),
}

impl IpAny {
    /// Parses dotted-quad IPv4 or any IPv6 text form.
    pub fn parse(s: &str) -> Option<IpAny> {
        if s.contains(':') {
            parse_ipv6(s).map(IpAny::V6)
        } else {
            parse_ipv4(s).map(IpAny::V4)
        }
    }
}

impl fmt::Display for IpAny {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match *self {
            IpAny::V4(a) => Ipv4Addr::from(a).fmt(f),
            IpAny::V6(a) => Ipv6Addr::from(a).fmt(f),
        }
    }
}

impl<'de> Deserialize<'de> for IpAny {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<IpAny, D::Error> {
        let s = String::deserialize(d)?;
        IpAny::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(if s.contains(':') {
                format!("`{s}` is not an IPv6 address (e.g. 2001:db8::1 or fe80::1)")
            } else {
                format!(
                    "`{s}` is not an IP address (write IPv4 as four numbers 0..=255, e.g. 10.0.1.2, or IPv6 as e.g. 2001:db8::1)"
                )
            })
        })
    }
}

/// An Ethernet MAC address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MacAddr(pub [u8; 6]);

impl FromStr for MacAddr {
    type Err = String;
    fn from_str(s: &str) -> Result<MacAddr, String> {
        let bad =
            || format!("`{s}` is not a MAC address (write six hex bytes, e.g. 02:00:00:00:00:01)");
        let parts: Vec<&str> = s.split([':', '-']).collect();
        if parts.len() != 6 {
            return Err(bad());
        }
        let mut m = [0u8; 6];
        for (o, p) in m.iter_mut().zip(parts) {
            if p.len() != 2 {
                return Err(bad());
            }
            *o = u8::from_str_radix(p, 16).map_err(|_| bad())?;
        }
        Ok(MacAddr(m))
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let m = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        )
    }
}

impl<'de> Deserialize<'de> for MacAddr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<MacAddr, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_parser_agrees_with_std() {
        for s in [
            "0.0.0.0",
            "10.0.1.2",
            "255.255.255.255",
            "1.2.3",
            "1.2.3.4.5",
            "256.1.1.1",
            "01.2.3.4",
            "1..2.3",
            "1.2.3.",
            "",
            "a.b.c.d",
            "1.2.3.4 ",
            "1234.1.1.1",
        ] {
            assert_eq!(
                parse_ipv4(s),
                s.parse::<Ipv4Addr>().ok().map(u32::from),
                "{s}"
            );
        }
    }

    #[test]
    fn cidr_host_bits_and_containment() {
        let c: Cidr = "10.0.0.1/24".parse().unwrap();
        assert!(c.has_host_bits());
        assert_eq!(c.network().to_string(), "10.0.0.0/24");
        assert!(c.contains(u32::from(Ipv4Addr::new(10, 0, 0, 200))));
        assert!(!c.contains(u32::from(Ipv4Addr::new(10, 0, 1, 1))));
        assert!("0.0.0.0/0".parse::<Cidr>().unwrap().contains(7));
        assert!("10.0.0.0/33".parse::<Cidr>().is_err());
        assert!("10.0.0.0".parse::<Cidr>().is_err());
    }

    #[test]
    fn ipv6_prefixes_and_addresses() {
        let c: Cidr6 = "2001:db8::1/64".parse().unwrap();
        assert!(c.has_host_bits());
        assert_eq!(c.network().to_string(), "2001:db8::/64");
        assert!(c.contains(0x2001_0db8_0000_0000_ffff_0000_0000_0001));
        assert!(!c.contains(0x2001_0db8_0000_0001 << 64));
        assert!("::/0".parse::<Cidr6>().unwrap().contains(7));
        assert!("2001:db8::/129".parse::<Cidr6>().is_err());
        assert!("2001:db8::".parse::<Cidr6>().is_err());
        assert!("2001:db8::g/64".parse::<Cidr6>().is_err());
        assert_eq!(
            "10.0.0.1/24".parse::<AnyCidr>().unwrap(),
            AnyCidr::V4("10.0.0.1/24".parse().unwrap())
        );
        assert!(matches!(
            "fe80::1/64".parse::<AnyCidr>(),
            Ok(AnyCidr::V6(_))
        ));
        assert_eq!(IpAny::parse("10.0.0.1"), Some(IpAny::V4(0x0a000001)));
        assert_eq!(IpAny::parse("::1"), Some(IpAny::V6(1)));
        assert_eq!(IpAny::parse("1::2::3"), None);
        assert!(is_link_local6(0xfe80 << 112));
        assert!(is_link_local6(0xfebf << 112));
        assert!(!is_link_local6(0xfec0 << 112));
    }

    #[test]
    fn mac_round_trip() {
        let m: MacAddr = "02:AB:00:00:00:0f".parse().unwrap();
        assert_eq!(m.0, [2, 0xab, 0, 0, 0, 15]);
        assert_eq!(m.to_string(), "02:ab:00:00:00:0f");
        assert!("02:ab:00:00:00".parse::<MacAddr>().is_err());
        assert!("02:ab:00:00:00:0g".parse::<MacAddr>().is_err());
    }
}

/// A fast, non-cryptographic hasher (the FxHash mix) for tables keyed by prefixes and
/// short strings: a full view hashes a million keys per reload, and SipHash's DoS
/// resistance buys nothing for a file the operator writes.
#[derive(Clone, Copy, Debug, Default)]
pub struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(b));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64)
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(i as u64)
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64)
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i)
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64)
    }
    #[inline]
    fn finish(&self) -> u64 {
        // Spread the low bits into the top ones hashbrown uses for its control bytes.
        self.0.rotate_left(26)
    }
}

impl FastHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// `HashMap` with [`FastHasher`].
pub type FastMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<FastHasher>>;
/// `HashSet` with [`FastHasher`].
pub type FastSet<K> = std::collections::HashSet<K, std::hash::BuildHasherDefault<FastHasher>>;
