//! IPv6 longest-prefix match: a /16 direct top array, two dense 8-bit levels (bits
//! 16-32, 256 entries each, like rte_lpm6's tbl8s but leaf-pushed and only under the /16s
//! that need them), then a Poptrie (Asai & Ohara, SIGCOMM 2015) of 64-ary
//! popcount-compressed nodes down to /128.
//!
//! Why: in a full view nearly all prefixes lie in 2000::/3 between /19 and /48, only
//! ~60 /16s and ~7k /24s hold longer prefixes, and keys spread over the announced space
//! need at most 32 bits for 96% of lookups. So a lookup is the top entry (256 KiB) and at
//! most two dense entries (~7 MiB for the full view), read branch-free, with no popcount;
//! only keys inside the /32s that hold longer prefixes walk Poptrie nodes (a /48 is three
//! steps). The batch prefetches each key's second dense entry while it reads the others'
//! first, and walks the Poptrie level by level. Figures: docs/measurements.md, IPv6 LPM.
//!
//! Leaves hold `value + 1` from prefixes longer than /16 only (0: none in this /16);
//! prefixes of /16 or shorter live in `short`, per top entry, so changing one never
//! rebuilds a subtree. A change to a longer prefix rebuilds its /16 chunk and appends it
//! to the arrays; they are laid out afresh when garbage exceeds the live part. Clones
//! copy the arrays (no sharing between snapshots yet; `Lpm4` shares).
//!
//! This module must never allocate or lock in a lookup.

mod layout;
mod lookup;

use std::collections::BTreeMap;

use super::lpm4::MAX_VALUE;
use layout::{Arrays, CHUNKS, NODE};

/// Mask of the first `len` bits of a 128-bit address.
pub fn mask6(len: u8) -> u128 {
    if len == 0 {
        0
    } else {
        u128::MAX << (128 - len as u32)
    }
}

/// An IPv6 longest-prefix-match table mapping prefixes to `u32` values (route ids).
#[derive(Clone, Debug)]
pub struct Lpm6 {
    /// Every prefix (address masked, length) and its value: the control form.
    prefixes: BTreeMap<(u128, u8), u32>,
    /// Per top entry: encoded value of the longest prefix of /16 or shorter covering it.
    short: Box<[u32; CHUNKS]>,
    arrays: Arrays,
}

impl Default for Lpm6 {
    fn default() -> Self {
        Lpm6::new()
    }
}

impl Lpm6 {
    pub fn new() -> Lpm6 {
        Lpm6 {
            prefixes: BTreeMap::new(),
            short: layout::zeroed(),
            arrays: Arrays::new(),
        }
    }

    /// Builds a table in one pass (later duplicates win). Panics on a length over 128 or
    /// a value over [`MAX_VALUE`], as [`Lpm6::insert`] does.
    pub fn from_prefixes<I: IntoIterator<Item = (u128, u8, u32)>>(prefixes: I) -> Lpm6 {
        let mut t = Lpm6::new();
        for (a, l, v) in prefixes {
            check(l, v);
            t.prefixes.insert((a & mask6(l), l), v);
        }
        t.repaint_short(0, CHUNKS - 1);
        t.relayout();
        t
    }

    /// Adds or replaces a prefix. Panics on a length over 128 or a value over
    /// [`MAX_VALUE`] (route ids are bounded by the builder long before that).
    pub fn insert(&mut self, addr: u128, len: u8, value: u32) {
        check(len, value);
        let addr = addr & mask6(len);
        self.prefixes.insert((addr, len), value);
        self.changed(addr, len);
    }

    /// Removes a prefix, returning its value.
    pub fn remove(&mut self, addr: u128, len: u8) -> Option<u32> {
        let addr = addr & mask6(len.min(128));
        let old = self.prefixes.remove(&(addr, len))?;
        self.changed(addr, len);
        Some(old)
    }

    /// The value of exactly this prefix.
    pub fn get(&self, addr: u128, len: u8) -> Option<u32> {
        self.prefixes
            .get(&(addr & mask6(len.min(128)), len))
            .copied()
    }

    /// The value of the longest prefix covering `addr`.
    #[inline]
    pub fn lookup(&self, addr: u128) -> Option<u32> {
        lookup::lookup(&self.arrays, &self.short, addr).checked_sub(1)
    }

    /// Looks up every address; `out[i]` is the value or [`NO_ROUTE`]. Panics if `out` is
    /// shorter than `addrs`.
    pub fn lookup_batch(&self, addrs: &[u128], out: &mut [u32]) {
        lookup::lookup_batch(&self.arrays, &self.short, addrs, out)
    }

    pub fn len(&self) -> usize {
        self.prefixes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.prefixes.is_empty()
    }

    /// Bytes a lookup can read: top, short, dense entries, nodes and leaves (garbage
    /// included).
    pub fn memory_bytes(&self) -> usize {
        self.arrays.bytes() + self.short.len() * 4
    }

    /// (dense and Poptrie nodes, leaves) in the lookup arrays, garbage included.
    pub fn shape(&self) -> (usize, usize) {
        self.arrays.shape()
    }

    /// The prefixes whose address lies in `lo..=hi`, in (address, length) order.
    pub fn range(&self, lo: u128, hi: u128) -> impl Iterator<Item = (u128, u8, u32)> + '_ {
        self.prefixes
            .range((lo, 0)..=(hi, 128))
            .map(|(&(a, l), &v)| (a, l, v))
    }

    /// Every prefix and value, in address order.
    pub fn to_vec(&self) -> Vec<(u128, u8, u32)> {
        self.prefixes
            .iter()
            .map(|(&(a, l), &v)| (a, l, v))
            .collect()
    }

    fn changed(&mut self, addr: u128, len: u8) {
        let first = (addr >> 112) as usize;
        if len <= layout::TOP_BITS as u8 {
            let last = first + (1usize << (16 - len)) - 1;
            self.repaint_short(first, last);
            for c in first..=last {
                if self.arrays.top[c] & NODE == 0 {
                    self.arrays.top[c] = self.short[c];
                }
            }
        } else {
            self.arrays.rebuild_chunk(
                first,
                chunk_prefixes(&self.prefixes, first),
                self.short[first],
            );
            if self.arrays.too_much_garbage() {
                self.relayout();
            }
        }
    }

    /// Recomputes `short[first..=last]` from the prefixes of /16 or shorter.
    fn repaint_short(&mut self, first: usize, last: usize) {
        self.short[first..=last].fill(0);
        let mut short: Vec<(u128, u8, u32)> = (0..=layout::TOP_BITS as u8)
            .flat_map(|l| {
                let lo = ((first as u128) << 112) & mask6(l);
                let hi = (last as u128) << 112;
                self.prefixes
                    .range((lo, l)..=(hi, l))
                    .filter(move |((_, pl), _)| *pl == l)
                    .map(|(&(a, l), &v)| (a, l, v))
            })
            .collect();
        short.sort_by_key(|p| p.1);
        for (a, l, v) in short {
            let s = (a >> 112) as usize;
            let e = s + (1usize << (16 - l)) - 1;
            self.short[s.max(first)..=e.min(last)].fill(v + 1);
        }
    }

    /// Lays out every chunk afresh into new arrays (drops garbage).
    fn relayout(&mut self) {
        let mut a = Arrays::new();
        a.top.copy_from_slice(&self.short[..]);
        let mut c = 0;
        while c < CHUNKS {
            let p = chunk_prefixes(&self.prefixes, c);
            if !p.is_empty() {
                a.rebuild_chunk(c, p, self.short[c]);
            }
            c += 1;
        }
        self.arrays = a;
    }
}

fn check(len: u8, value: u32) {
    assert!(len <= 128, "IPv6 prefix length {len} over 128");
    assert!(value <= MAX_VALUE, "LPM value {value} over {MAX_VALUE}");
}

/// Prefixes longer than /16 inside top chunk `c`, in (address, length) order.
fn chunk_prefixes(p: &BTreeMap<(u128, u8), u32>, c: usize) -> Vec<(u128, u8, u32)> {
    let lo = (c as u128) << 112;
    let hi = lo | !mask6(16);
    p.range((lo, 17)..=(hi, 128))
        .map(|(&(a, l), &v)| (a, l, v + 1))
        .collect()
}
