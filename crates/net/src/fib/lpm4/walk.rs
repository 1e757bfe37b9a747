//! Reading the stored prefixes back for operators (`show routes`): the prefixes under a
//! given one, in address order, and the one an address matches. Control side only: it
//! reads the control-plane form (each /8 block's sorted prefix list), never the lookup
//! form, and it is never called per packet.

use super::block::mask;
use super::{Lpm4, BLOCK_LEN};

impl Lpm4 {
    /// Stored prefixes inside `addr/len` (itself included), as `(addr, len, value)`,
    /// sorted by address then length. Visits only the /8 blocks the prefix covers.
    pub fn prefixes_under(&self, addr: u32, len: u8) -> impl Iterator<Item = (u32, u8, u32)> + '_ {
        let len = len.min(32);
        let base = addr & mask(len);
        let inside = move |a: u32, l: u8| l >= len && a & mask(len) == base;
        let first = (base >> 24) as usize;
        let count = if len >= BLOCK_LEN {
            1
        } else {
            1usize << (BLOCK_LEN - len)
        };
        let short = self.short.iter().filter(move |p| inside(p.addr, p.len));
        let mut merged: Vec<_> = short.map(|p| (p.addr, p.len, p.enc - 1)).collect();
        merged.sort_unstable();
        let blocks = self.blocks[first..first + count]
            .iter()
            .flat_map(|b| b.prefixes().iter())
            .filter(move |p| inside(p.addr, p.len))
            .map(|p| (p.addr, p.len, p.enc - 1));
        // Short prefixes (under /8) sort before every block prefix with the same top byte
        // only when their address is not larger: merge the two sorted streams.
        Merge {
            a: merged.into_iter().peekable(),
            b: blocks.peekable(),
        }
    }

    /// The longest stored prefix covering `addr`, as `(addr, len, value)`.
    pub fn longest_match(&self, addr: u32) -> Option<(u32, u8, u32)> {
        (0..=32u8)
            .rev()
            .find_map(|l| self.get(addr, l).map(|v| (addr & mask(l), l, v)))
    }
}

/// Merges two iterators sorted by `(addr, len)`.
struct Merge<A: Iterator, B: Iterator> {
    a: std::iter::Peekable<A>,
    b: std::iter::Peekable<B>,
}

impl<A, B> Iterator for Merge<A, B>
where
    A: Iterator<Item = (u32, u8, u32)>,
    B: Iterator<Item = (u32, u8, u32)>,
{
    type Item = (u32, u8, u32);

    fn next(&mut self) -> Option<Self::Item> {
        match (self.a.peek(), self.b.peek()) {
            (Some(x), Some(y)) if (x.0, x.1) <= (y.0, y.1) => self.a.next(),
            (Some(_), None) => self.a.next(),
            _ => self.b.next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> u32 {
        u32::from(s.parse::<std::net::Ipv4Addr>().unwrap())
    }

    #[test]
    fn under_a_prefix_in_order_and_longest_match() {
        let pfx = [
            (ip("0.0.0.0"), 0, 1),
            (ip("10.0.0.0"), 8, 2),
            (ip("10.1.0.0"), 16, 3),
            (ip("10.1.2.0"), 24, 4),
            (ip("11.0.0.0"), 8, 5),
            (ip("8.0.0.0"), 6, 6),
        ];
        let t = Lpm4::from_prefixes(pfx);
        let all: Vec<_> = t.prefixes_under(0, 0).collect();
        let mut want = pfx.to_vec();
        want.sort_unstable();
        assert_eq!(all, want);
        let ten: Vec<_> = t.prefixes_under(ip("10.0.0.0"), 8).map(|p| p.2).collect();
        assert_eq!(ten, [2, 3, 4]);
        let six: Vec<_> = t.prefixes_under(ip("8.0.0.0"), 6).map(|p| p.2).collect();
        assert_eq!(six, [6, 2, 3, 4, 5]);
        assert_eq!(
            t.longest_match(ip("10.1.2.3")),
            Some((ip("10.1.2.0"), 24, 4))
        );
        assert_eq!(
            t.longest_match(ip("10.9.2.3")),
            Some((ip("10.0.0.0"), 8, 2))
        );
        assert_eq!(t.longest_match(ip("200.0.0.1")), Some((0, 0, 1)));
        assert_eq!(Lpm4::new().longest_match(1), None);
    }
}
