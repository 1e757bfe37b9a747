//! Single and batched lookups over [`super::layout::Arrays`].
//!
//! A lookup reads the top entry, then at most two dense entries (bits 16-24 and 24-32),
//! then, for the few keys that need more than 32 bits, Poptrie nodes. The dense steps are
//! branch-free (a key whose walk already ended reads a dummy entry and keeps its value),
//! so a burst of keys runs through them without mispredictions. The batch takes a burst
//! in passes: top and first dense entry of every key (the first dense level is a few
//! dozen nodes in a full view, cached) while prefetching the second dense entry; then the
//! second dense entry of every key, by then in cache or on its way, prefetching the
//! Poptrie root of keys that go on; then the Poptrie walk one level per pass over the
//! keys still inside it, prefetching each next node or leaf; then the leaves.

use super::layout::{byte, slot, Arrays, Node, DENSE_BITS, DENSE_END, NODE, STRIDE, TOP_BITS};
use crate::prefetch::prefetch;

/// Keys walked together by the batched lookup (at most 256: indices are u8).
const BURST: usize = 64;

/// The top entry of `addr`.
#[inline(always)]
fn top(a: &Arrays, addr: u128) -> u32 {
    a.top[(addr >> (128 - TOP_BITS)) as usize]
}

/// Where the dense step from entry `e` at depth `d` reads: its node's entry for `addr` if
/// `e` points at a node, else 0 (the dummy node, never reached otherwise).
#[inline(always)]
fn dense_index(e: u32, addr: u128, d: u32) -> usize {
    let node = 0usize.wrapping_sub((e >> 31) as usize);
    ((((e & !NODE) as usize) << DENSE_BITS) | byte(addr, d)) & node
}

/// One dense step at depth `d`, branch-free: the next entry if `e` points at a dense
/// node, else `e` itself (a value: the walk has ended).
#[inline(always)]
fn dense_step(a: &Arrays, e: u32, addr: u128, d: u32) -> u32 {
    let next = a.dense[dense_index(e, addr, d)];
    let node = 0u32.wrapping_sub(e >> 31);
    (next & node) | (e & !node)
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
pub(super) fn lookup(a: &Arrays, short: &[u32], addr: u128) -> u32 {
    let e = dense_step(a, top(a, addr), addr, TOP_BITS);
    let mut e = dense_step(a, e, addr, TOP_BITS + DENSE_BITS);
    if e & NODE != 0 {
        e = walk(a, e & !NODE, addr);
    }
    or_short(e, short, addr)
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

/// `e`, or when it is 0 (no prefix longer than /16 covers `addr`) the value of the
/// longest of /16 or shorter.
#[inline(always)]
fn or_short(e: u32, short: &[u32], addr: u128) -> u32 {
    if e == 0 {
        short[(addr >> (128 - TOP_BITS)) as usize]
    } else {
        e
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

/// Looks up one burst (see the module docs); `out` gets each value or `NO_ROUTE`.
fn burst(a: &Arrays, short: &[u32], keys: &[u128], out: &mut [u32]) {
    let out = &mut out[..keys.len()];
    let second = TOP_BITS + DENSE_BITS;
    for (o, &k) in out.iter_mut().zip(keys) {
        let e = dense_step(a, top(a, k), k, TOP_BITS);
        prefetch(a.dense.as_ptr().wrapping_add(dense_index(e, k, second)));
        *o = e;
    }
    let mut cur = [0u32; BURST];
    let (mut walk, mut nw) = ([0u8; BURST], 0);
    for (i, (o, &k)) in out.iter_mut().zip(keys).enumerate() {
        let e = dense_step(a, *o, k, second);
        if e & NODE != 0 {
            cur[i] = e & !NODE;
            prefetch(&a.nodes[cur[i] as usize]);
            walk[nw] = i as u8;
            nw += 1;
        }
        *o = e;
    }
    if nw > 0 {
        poptrie_burst(a, keys, &mut cur, &mut walk[..nw], out);
    }
    for (o, &k) in out.iter_mut().zip(keys) {
        *o = or_short(*o, short, k).wrapping_sub(1); // 0 (no route) becomes NO_ROUTE
    }
}

/// The Poptrie walk of the keys `walk` (indices into `keys`), whose root nodes are in
/// `cur`: one level per pass, prefetching each next node or leaf; then every leaf into
/// `out`.
fn poptrie_burst(
    a: &Arrays,
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
        out[i as usize] = a.leaves[cur[i as usize] as usize];
    }
}
