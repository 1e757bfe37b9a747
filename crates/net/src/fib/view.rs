//! Reading a snapshot back for operators (`show routes`, `show mpls`): the prefixes and
//! label entries it holds, by key. Control side only; nothing here runs per packet.

use super::{Fib, Ipv4Route, LabelEntry};

impl Fib {
    /// IPv4 routes inside `addr/len`, sorted by address then length.
    pub fn ipv4_routes_under(
        &self,
        addr: u32,
        len: u8,
    ) -> impl Iterator<Item = (u32, u8, &Ipv4Route)> + '_ {
        self.lpm
            .prefixes_under(addr, len)
            .map(|(a, l, id)| (a, l, &self.routes[id as usize]))
    }

    /// The route `addr` matches, with its prefix.
    pub fn ipv4_longest_match(&self, addr: u32) -> Option<(u32, u8, &Ipv4Route)> {
        let (a, l, id) = self.lpm.longest_match(addr)?;
        Some((a, l, &self.routes[id as usize]))
    }

    /// IPv6 routes inside `addr/len`, sorted by address then length.
    pub fn ipv6_routes_under(&self, addr: u128, len: u8) -> Vec<(u128, u8, &Ipv4Route)> {
        let m = super::mask6(len.min(128));
        let lo = addr & m;
        self.lpm6
            .range(lo, lo | !m)
            .filter(|&(_, l, _)| l >= len)
            .map(|(a, l, id)| (a, l, &self.routes[id as usize]))
            .collect()
    }

    /// The IPv6 route `addr` matches, with its prefix.
    pub fn ipv6_longest_match(&self, addr: u128) -> Option<(u128, u8, &Ipv4Route)> {
        (0..=128u8).rev().find_map(|l| {
            let a = addr & super::mask6(l);
            self.lpm6
                .get(a, l)
                .map(|id| (a, l, &self.routes[id as usize]))
        })
    }

    /// Every bound label with its entry, sorted by label.
    pub fn label_entries(&self) -> Vec<(u32, &LabelEntry)> {
        let mut v: Vec<_> = self
            .label_keys
            .iter()
            .copied()
            .zip(self.label_entries.iter())
            .collect();
        v.sort_unstable_by_key(|e| e.0);
        v
    }
}
