//! IPv6 longest-prefix match: one flat array of a /18 direct top level and, under the
//! /18s that hold longer prefixes, dense 14-bit nodes (bits 18-32); under the /32s that
//! hold longer prefixes, a direct mini node (bits 32-36, or 32-42 for a /32 with 16 or
//! more); then 64 direct leaves, or a Poptrie (Asai & Ohara, SIGCOMM 2015) of 64-ary
//! popcount-compressed nodes down to /128.
//!
//! Why: in a full view nearly all prefixes lie in 2000::/3 between /19 and /48, only
//! ~190 /18s hold longer prefixes, and keys spread over the announced space need at most
//! 32 bits for 96% of lookups: one top entry and at most one dense entry of the same
//! array, with no branch and no popcount. Keys drawn per prefix (the ipv6-full scenario)
//! mostly end in /48s: under a wide mini node (bits 32-42) a /42 whose prefixes all end
//! by bit 48 is 64 direct leaves, so such a key reads one leaf and no Poptrie node. Every
//! value, from /0 on, is leaf-pushed, so the entry a lookup ends at is the answer.
//! Figures: docs/benchmarks.md, IPv6 lookup, h-lpm6 and h-lpm6b.
//! Leaves hold `value + 1` (0: no route). A change to a prefix longer than /18 rebuilds
//! its /18 chunk and appends it to the arrays; a change to a shorter one repaints the top
//! entries it covers and rebuilds the chunks whose inherited value changed. The arrays are
//! laid out afresh when garbage exceeds the live part. Clones copy the arrays.
//!
//! This module must never allocate or lock in a lookup.

mod layout;
mod lookup;

use std::collections::BTreeMap;

use super::lpm4::MAX_VALUE;
use layout::{chunk_of, paint, Arrays, CHUNKS, TOP_BITS};

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
            arrays: Arrays::new(vec![0; CHUNKS]),
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
        lookup::lookup(&self.arrays, addr).checked_sub(1)
    }

    /// Looks up every address; `out[i]` is the value or [`NO_ROUTE`]. Panics if `out` is
    /// shorter than `addrs`. Never inlined: one call per burst, and a named symbol lets
    /// callgrind count it (`--toggle-collect='*Lpm6*lookup_batch*'`).
    ///
    /// [`NO_ROUTE`]: super::NO_ROUTE
    #[inline(never)]
    pub fn lookup_batch(&self, addrs: &[u128], out: &mut [u32]) {
        lookup::lookup_batch(&self.arrays, addrs, out)
    }

    /// [`Lpm6::lookup_batch`] without its AVX-512 passes, whatever the CPU: for tests
    /// that compare the two forms on a CPU that takes the AVX-512 one.
    #[doc(hidden)]
    pub fn lookup_batch_scalar(&self, addrs: &[u128], out: &mut [u32]) {
        lookup::lookup_batch_scalar(&self.arrays, addrs, out)
    }

    pub fn len(&self) -> usize {
        self.prefixes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.prefixes.is_empty()
    }

    /// Bytes a lookup can read: top entries, dense nodes, Poptrie nodes and leaves
    /// (garbage included).
    pub fn memory_bytes(&self) -> usize {
        self.arrays.bytes()
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
        let first = chunk_of(addr);
        if u32::from(len) <= TOP_BITS {
            let painted = short_paint(&self.prefixes, addr, len);
            for (c, v) in (first..).zip(painted) {
                let p = &self.prefixes;
                self.arrays.set_inherited(c, v, || chunk_prefixes(p, c));
            }
        } else {
            let inherited = self.arrays.inherited(first);
            let p = chunk_prefixes(&self.prefixes, first);
            self.arrays.rebuild_chunk(first, p, inherited);
        }
        if self.arrays.too_much_garbage() {
            self.relayout();
        }
    }

    /// Lays out every chunk afresh into new arrays (drops garbage): the top entries from
    /// the prefixes of /18 or shorter, then one pass over the longer ones, chunk by chunk.
    fn relayout(&mut self) {
        let mut a = Arrays::new(short_paint(&self.prefixes, 0, 0));
        let mut group: Vec<(u128, u8, u32)> = Vec::new();
        let mut cur = 0;
        let long = self
            .prefixes
            .iter()
            .filter(|((_, l), _)| u32::from(*l) > TOP_BITS);
        for (&(addr, l), &v) in long {
            let c = chunk_of(addr);
            if c != cur && !group.is_empty() {
                // The top entry is still the value the chunk inherits.
                a.rebuild_chunk(cur, std::mem::take(&mut group), a.direct[cur]);
            }
            cur = c;
            group.push((addr, l, v + 1));
        }
        if !group.is_empty() {
            a.rebuild_chunk(cur, group, a.direct[cur]);
        }
        self.arrays = a;
    }
}

fn check(len: u8, value: u32) {
    assert!(len <= 128, "IPv6 prefix length {len} over 128");
    assert!(value <= MAX_VALUE, "LPM value {value} over {MAX_VALUE}");
}

/// The encoded value (value + 1, 0: none) of the longest prefix of /18 or shorter
/// covering each top chunk inside `addr/len` (`len` <= 18), in chunk order.
fn short_paint(p: &BTreeMap<(u128, u8), u32>, addr: u128, len: u8) -> Vec<u32> {
    let mut slots = vec![0; 1 << (TOP_BITS - u32::from(len))];
    let covering = (0..len).filter_map(|l| {
        let a = addr & mask6(l);
        p.get(&(a, l)).map(|&v| (a, l, v + 1))
    });
    let last = addr | !mask6(len);
    let inside = p
        .range((addr, len)..=(last, TOP_BITS as u8))
        .filter(|((_, l), _)| u32::from(*l) <= TOP_BITS)
        .map(|(&(a, l), &v)| (a, l, v + 1));
    let all: Vec<(u128, u8, u32)> = covering.chain(inside).collect();
    paint(&mut slots, &all, u32::from(len), TOP_BITS);
    slots
}

/// Prefixes longer than /18 inside top chunk `c`, in (address, length) order.
fn chunk_prefixes(p: &BTreeMap<(u128, u8), u32>, c: usize) -> Vec<(u128, u8, u32)> {
    let lo = (c as u128) << (128 - TOP_BITS);
    let hi = lo | !mask6(TOP_BITS as u8);
    p.range((lo, TOP_BITS as u8 + 1)..=(hi, 128))
        .map(|(&(a, l), &v)| (a, l, v + 1))
        .collect()
}
