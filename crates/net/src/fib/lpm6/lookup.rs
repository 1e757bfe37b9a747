//! Single and batched lookups over [`super::layout::Arrays`].
//!
//! A lookup reads the top entry, then at most two dense entries (bits 16-24 and 24-32),
//! then, for the few keys that need more than 32 bits, Poptrie nodes. The dense steps are
//! branch-free (a key whose walk already ended reads the dummy entry and keeps its
//! value), so a burst of keys runs through them without mispredictions. The batch takes a
//! burst in passes: top and first dense entry of every key (the first dense level is a
//! few dozen nodes in a full view, cached) while prefetching the second dense entry; then
//! the second dense entry of every key, by then in cache or on its way, prefetching the
//! Poptrie root of keys that go on; then the Poptrie walk one level per pass over the
//! keys still inside it, prefetching each next node or leaf; then their leaves.

use super::layout::{slot, Arrays, Node, CHUNKS, DENSE, DENSE_BITS, DENSE_END, NODE, STRIDE};
use crate::prefetch::prefetch;
use std::hint::select_unpredictable;

/// Keys walked together by the batched lookup (at most 256: indices are u8).
const BURST: usize = 64;

/// The top 64 bits of a key: all the top array and the dense levels read.
#[inline(always)]
fn hi(addr: u128) -> u64 {
    (addr >> 64) as u64
}

/// The top entry of a key whose top 64 bits are `hi`.
#[inline(always)]
fn top(a: &Arrays, hi: u64) -> u32 {
    a.top[(hi >> 48) as usize]
}

/// Where the dense step from entry `e` reads for the 8 bits of `hi` at `shift`: its
/// node's entry if `e` points at a dense node, else 0 (the dummy node's first entry).
#[inline(always)]
fn dense_index(e: u32, hi: u64, shift: u32) -> usize {
    let at = (((e & !NODE) as usize) << DENSE_BITS) | ((hi >> shift) as usize & (DENSE - 1));
    select_unpredictable(e & NODE != 0, at, 0)
}

/// `next` if `e` points at a node, else `e` (a value: the walk has ended). Branch-free.
#[inline(always)]
fn pick(e: u32, next: u32) -> u32 {
    select_unpredictable(e & NODE != 0, next, e)
}

/// Shifts of `hi` that give the first and the second dense level's 8 bits.
const SHIFT1: u32 = 40;
const SHIFT2: u32 = 32;

/// The entry after the top array and the first dense level.
#[inline(always)]
fn first_levels(a: &Arrays, hi: u64) -> u32 {
    let t = top(a, hi);
    pick(t, a.dense[dense_index(t, hi, SHIFT1)])
}

/// One Poptrie step at node `n`, depth `d`: `Ok(child index)` or `Err(leaf index)`.
#[inline(always)]
fn step(n: &Node, addr: u128, d: u32) -> Result<u32, u32> {
    let v = slot(addr, d);
    let upto = (2u64 << v).wrapping_sub(1);
    if n.vector & (1 << v) != 0 {
        Ok(n.base_child + (n.vector & upto).count_ones() - 1)
    } else {
        Err(n.base_leaf + (n.leafvec & upto).count_ones() - 1)
    }
}

/// Encoded value for `addr` (value + 1, 0: no route).
#[inline]
pub(super) fn lookup(a: &Arrays, short: &[u32; CHUNKS], addr: u128) -> u32 {
    let h = hi(addr);
    let e = first_levels(a, h);
    let mut e = pick(e, a.dense[dense_index(e, h, SHIFT2)]);
    if e & NODE != 0 {
        e = walk(a, e & !NODE, addr);
    }
    or_short(e, short, h)
}

/// The Poptrie walk from root node `i` (at the end of the dense levels) to a leaf.
#[inline]
fn walk(a: &Arrays, mut i: u32, addr: u128) -> u32 {
    let mut d = DENSE_END;
    loop {
        match step(&a.nodes[i as usize], addr, d) {
            Ok(child) => (i, d) = (child, d + STRIDE),
            Err(leaf) => return a.leaves[leaf as usize],
        }
    }
}

/// `e`, or when it is 0 (no prefix longer than /16 covers the key) the value of the
/// longest of /16 or shorter.
#[inline(always)]
fn or_short(e: u32, short: &[u32; CHUNKS], hi: u64) -> u32 {
    if e == 0 {
        short[(hi >> 48) as usize]
    } else {
        e
    }
}

pub(super) fn lookup_batch(a: &Arrays, short: &[u32; CHUNKS], addrs: &[u128], out: &mut [u32]) {
    assert!(
        out.len() >= addrs.len(),
        "lookup_batch: output shorter than input"
    );
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU supports popcnt (checked just above).
        unsafe { lookup_batch_popcnt(a, short, addrs, out) };
        return;
    }
    lookup_batch_generic(a, short, addrs, out)
}

#[inline(always)]
fn lookup_batch_generic(a: &Arrays, short: &[u32; CHUNKS], addrs: &[u128], out: &mut [u32]) {
    for (keys, out) in addrs.chunks(BURST).zip(out.chunks_mut(BURST)) {
        burst(a, short, keys, out);
    }
}

/// The same code compiled with the popcnt instruction (a Poptrie step counts bits twice;
/// without it each count is a dozen instructions), as `Lpm4`'s batch is.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn lookup_batch_popcnt(a: &Arrays, short: &[u32; CHUNKS], addrs: &[u128], out: &mut [u32]) {
    lookup_batch_generic(a, short, addrs, out)
}

/// Looks up one burst (see the module docs); `out` gets each value or `NO_ROUTE`.
#[inline(always)]
fn burst(a: &Arrays, short: &[u32; CHUNKS], keys: &[u128], out: &mut [u32]) {
    let out = &mut out[..keys.len()];
    let mut at = [0usize; BURST];
    for ((o, at), &k) in out.iter_mut().zip(&mut at).zip(keys) {
        let h = hi(k);
        let e = first_levels(a, h);
        *at = dense_index(e, h, SHIFT2);
        prefetch(a.dense.as_ptr().wrapping_add(*at));
        *o = e;
    }
    let mut cur = [0u32; BURST];
    let (mut walk, mut nw) = ([0u8; BURST], 0);
    for (i, ((o, &at), &k)) in out.iter_mut().zip(&at).zip(keys).enumerate() {
        let e = pick(*o, a.dense[at]);
        if e & NODE != 0 {
            cur[i] = e & !NODE;
            prefetch(&a.nodes[cur[i] as usize]);
            walk[nw] = i as u8;
            nw += 1;
        }
        // 0 (no route) becomes NO_ROUTE; keys still walking are overwritten below.
        *o = or_short(e, short, hi(k)).wrapping_sub(1);
    }
    if nw > 0 {
        poptrie_burst(a, short, keys, &mut cur, &mut walk[..nw], out);
    }
}

/// The Poptrie walk of the keys `walk` (indices into `keys`), whose root nodes are in
/// `cur`: one level per pass, prefetching each next node or leaf; then every leaf into
/// `out`.
#[inline(always)]
fn poptrie_burst(
    a: &Arrays,
    short: &[u32; CHUNKS],
    keys: &[u128],
    cur: &mut [u32; BURST],
    walk: &mut [u8],
    out: &mut [u32],
) {
    let (mut done, mut nd) = ([0u8; BURST], 0);
    let mut nw = walk.len();
    let mut d = DENSE_END;
    while nw > 0 {
        let mut still = 0;
        for j in 0..nw {
            let i = walk[j] as usize;
            match step(&a.nodes[cur[i] as usize], keys[i], d) {
                Ok(child) => {
                    cur[i] = child;
                    prefetch(&a.nodes[child as usize]);
                    walk[still] = i as u8;
                    still += 1;
                }
                Err(leaf) => {
                    cur[i] = leaf;
                    prefetch(&a.leaves[leaf as usize]);
                    done[nd] = i as u8;
                    nd += 1;
                }
            }
        }
        nw = still;
        d += STRIDE;
    }
    for &i in &done[..nd] {
        let i = i as usize;
        out[i] = or_short(a.leaves[cur[i] as usize], short, hi(keys[i])).wrapping_sub(1);
    }
}
