//! Single and batched lookups over [`super::layout::Arrays`].
//!
//! The batch walks up to [`BURST`] keys level by level: every key still inside the trie
//! takes one node step per pass and prefetches its next node, so a burst keeps one miss
//! per key in flight instead of one in total. Keys start at the same depth and each step
//! is one stride, so one depth counter serves the whole burst.

use super::layout::{slot, Arrays, Node, NODE, STRIDE, TOP_BITS};
use crate::prefetch::prefetch;

/// Keys walked together by the batched lookup (at most 256: indices are u8).
const BURST: usize = 64;

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

/// Looks up one burst: top entries first (prefetching each root node), then one level per
/// pass over the keys still inside the trie (prefetching each next node, or the leaf
/// where the walk ends), then every leaf, by then in cache or on its way.
fn burst(a: &Arrays, short: &[u32], keys: &[u128], out: &mut [u32]) {
    let mut cur = [0u32; BURST];
    let (mut walk, mut nw) = ([0u8; BURST], 0);
    let (mut done, mut nd) = ([0u8; BURST], 0);
    for (i, k) in keys.iter().enumerate() {
        let e = a.top[(k >> (128 - TOP_BITS)) as usize];
        out[i] = e;
        if e & NODE != 0 {
            cur[i] = e & !NODE;
            prefetch(&a.nodes[cur[i] as usize]);
            walk[nw] = i as u8;
            nw += 1;
        }
    }
    let mut d = TOP_BITS;
    while nw > 0 {
        let mut still = 0;
        for j in 0..nw {
            let i = walk[j] as usize;
            let n = &a.nodes[cur[i] as usize];
            let v = slot(keys[i], d);
            let upto = (2u64 << v).wrapping_sub(1);
            if n.vector & (1 << v) != 0 {
                cur[i] = n.base_child + (n.vector & upto).count_ones() - 1;
                prefetch(&a.nodes[cur[i] as usize]);
                walk[still] = i as u8;
                still += 1;
            } else {
                cur[i] = n.base_leaf + (n.leafvec & upto).count_ones() - 1;
                prefetch(&a.leaves[cur[i] as usize]);
                done[nd] = i as u8;
                nd += 1;
            }
        }
        nw = still;
        d += STRIDE;
    }
    for &i in &done[..nd] {
        let i = i as usize;
        out[i] = match a.leaves[cur[i] as usize] {
            0 => short[(keys[i] >> (128 - TOP_BITS)) as usize],
            v => v,
        };
    }
    for o in out.iter_mut().take(keys.len()) {
        *o = o.wrapping_sub(1); // 0 (no route) becomes NO_ROUTE
    }
}
