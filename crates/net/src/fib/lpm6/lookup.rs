//! Single and batched lookups over [`super::layout::Arrays`].
//!
//! The batch walks up to [`BURST`] keys level by level: every key still inside the trie
//! takes one node step per pass and prefetches its next node, so a burst keeps one miss
//! per key in flight instead of one in total. Keys start at the same depth and each step
//! is one stride, so one depth counter serves the whole burst.

use super::layout::{slot, Arrays, Node, NODE, STRIDE, TOP_BITS};
use crate::prefetch::prefetch;

/// Keys walked together by the batched lookup.
const BURST: usize = 32;

/// One step at node `n`, depth `d`: `Ok(child index)` or `Err(encoded leaf)`.
#[inline(always)]
fn step(a: &Arrays, n: &Node, addr: u128, d: u32) -> Result<u32, u32> {
    let v = slot(addr, d);
    let upto = (2u64 << v).wrapping_sub(1);
    if n.vector & (1 << v) != 0 {
        Ok(n.base_child + (n.vector & upto).count_ones() - 1)
    } else {
        Err(a.leaves[(n.base_leaf + (n.leafvec & upto).count_ones() - 1) as usize])
    }
}

/// Encoded value for `addr` (value + 1, 0: no route).
#[inline]
pub(super) fn lookup(a: &Arrays, short: &[u32], addr: u128) -> u32 {
    let c = (addr >> (128 - TOP_BITS)) as usize;
    let e = a.top[c];
    if e & NODE == 0 {
        return e;
    }
    let (mut i, mut d) = (e & !NODE, TOP_BITS);
    loop {
        match step(a, &a.nodes[i as usize], addr, d) {
            Ok(child) => (i, d) = (child, d + STRIDE),
            Err(0) => return short[c],
            Err(v) => return v,
        }
    }
}

pub(super) fn lookup_batch(a: &Arrays, short: &[u32], addrs: &[u128], out: &mut [u32]) {
    assert!(
        out.len() >= addrs.len(),
        "lookup_batch: output shorter than input"
    );
    for (keys, out) in addrs.chunks(BURST).zip(out.chunks_mut(BURST)) {
        burst(a, short, keys, out);
    }
}

/// `out[i]` holds `NODE | node` while key `i` is inside the trie, then its encoded value.
fn burst(a: &Arrays, short: &[u32], keys: &[u128], out: &mut [u32]) {
    let mut pending = false;
    for (k, o) in keys.iter().zip(out.iter_mut()) {
        *o = a.top[(k >> (128 - TOP_BITS)) as usize];
        if *o & NODE != 0 {
            prefetch(&a.nodes[(*o & !NODE) as usize]);
            pending = true;
        }
    }
    let mut d = TOP_BITS;
    while pending {
        pending = false;
        for (k, o) in keys.iter().zip(out.iter_mut()) {
            if *o & NODE == 0 {
                continue;
            }
            match step(a, &a.nodes[(*o & !NODE) as usize], *k, d) {
                Ok(child) => {
                    prefetch(&a.nodes[child as usize]);
                    *o = NODE | child;
                    pending = true;
                }
                Err(0) => *o = short[(k >> (128 - TOP_BITS)) as usize],
                Err(v) => *o = v,
            }
        }
        d += STRIDE;
    }
    for o in out.iter_mut().take(keys.len()) {
        *o = o.wrapping_sub(1); // 0 (no route) becomes NO_ROUTE
    }
}
