//! IPv4 longest-prefix match.
//!
//! PLACEHOLDER: a simple per-length hash table so the rest of the crate can be built and
//! tested; the forwarding-tables issue replaces the internals with a compact structure.
//! The public API below is the contract the pipeline and the config compiler code against.

use std::collections::HashMap;

/// Sentinel written by [`Lpm4::lookup_batch`] for a destination with no route.
pub const NO_ROUTE: u32 = u32::MAX;

/// An IPv4 longest-prefix-match table mapping prefixes to `u32` values (route ids).
#[derive(Clone, Debug, Default)]
pub struct Lpm4 {
    by_len: Vec<HashMap<u32, u32>>,
}

fn mask(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - len as u32)
    }
}

impl Lpm4 {
    /// An empty table.
    pub fn new() -> Lpm4 {
        Lpm4 {
            by_len: vec![HashMap::new(); 33],
        }
    }

    /// Inserts or replaces `addr/len` -> `value`. Host bits of `addr` are ignored.
    /// `value` must not be [`NO_ROUTE`].
    pub fn insert(&mut self, addr: u32, len: u8, value: u32) {
        assert!(len <= 32 && value != NO_ROUTE);
        self.by_len[len as usize].insert(addr & mask(len), value);
    }

    /// Removes `addr/len`; returns its value if it was present.
    pub fn remove(&mut self, addr: u32, len: u8) -> Option<u32> {
        assert!(len <= 32);
        self.by_len[len as usize].remove(&(addr & mask(len)))
    }

    /// The value of the longest prefix covering `addr`.
    pub fn lookup(&self, addr: u32) -> Option<u32> {
        (0..=32u8)
            .rev()
            .find_map(|len| self.by_len[len as usize].get(&(addr & mask(len))).copied())
    }

    /// Looks up every address in `addrs`; `out[i]` gets the value or [`NO_ROUTE`].
    /// `out` must be at least as long as `addrs`.
    pub fn lookup_batch(&self, addrs: &[u32], out: &mut [u32]) {
        for (a, o) in addrs.iter().zip(out.iter_mut()) {
            *o = self.lookup(*a).unwrap_or(NO_ROUTE);
        }
    }

    /// Number of prefixes stored.
    pub fn len(&self) -> usize {
        self.by_len.iter().map(|m| m.len()).sum()
    }

    /// True when no prefix is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Approximate heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.len() * 16
    }
}
