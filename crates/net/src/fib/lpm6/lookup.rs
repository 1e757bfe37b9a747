//! Single and batched lookups over [`super::layout::Arrays`].
//!
//! A lookup reads the key's top entry, then one more entry of the same array: the dense
//! entry under it, or (when the top entry is a value) the top entry again, chosen
//! branch-free so that a burst runs without mispredictions. Only an entry that points at a
//! mini node (keys inside the /32s that hold longer prefixes) goes on: one direct read of
//! the mini node, then one of its 64 direct leaves or the Poptrie walk from bit 36 or 42.
//! The batch takes a burst in passes: every key's second index, prefetching it (the top
//! entries of a full view's announced space are a few hundred KiB, mostly cached); then
//! every second entry and, for keys under a mini node, their mini entry and direct leaf
//! read at once (no pass and no list of their own), prefetching the Poptrie roots; then
//! the Poptrie walk one level per pass over the keys still inside it, branch-free, each
//! key's slot taken from its own shifted address bits (so roots at bit 36 and 42 walk
//! together), prefetching each next node or leaf; then their leaves. The first two passes
//! go in steps of four keys with a constant trip count, which the compiler unrolls.
//! On CPUs with AVX-512 F and VPOPCNTDQ the first two passes run sixteen keys a gather
//! instead (`wide.rs`, session 17: `examples/lpm6_lookup` 1.29x uniform, 1.75x per prefix
//! on the Emerald Rapids VM; session 27 on AMD Zen 4: 0.85-0.9x, 1.3-1.4x); the walk stays
//! scalar.

use super::layout::{
    slot, Arrays, Node, CHUNKS, DENSE, DENSE_BITS, DENSE_END, KIND, LEAVES, NODE, STRIDE, WIDE_BITS,
};
use crate::prefetch::prefetch;
use std::hint::select_unpredictable;

#[cfg(target_arch = "x86_64")]
mod wide;

/// Keys walked together by the batched lookup (at most 256: indices are u8).
const BURST: usize = 64;
/// Keys per step of the unrolled passes (divides `BURST`).
const UNROLL: usize = 4;
/// Poptrie levels whose slots a key's address bits from its root on hold (bits 32-96
/// shifted past its mini node, which has at most `WIDE_BITS`).
const REST_LEVELS: u32 = (64 - WIDE_BITS) / STRIDE;

/// The top 32 bits of a key: all the top and dense levels read.
#[inline(always)]
fn hi32(addr: u128) -> u32 {
    (addr >> 96) as u32
}

/// The index in `direct` of the second entry a key whose top 32 bits are `k` reads: its
/// dense entry if its top entry points at a dense node, else the top entry itself.
#[inline(always)]
fn second(top: &[u32; CHUNKS], k: u32) -> usize {
    let i = (k >> DENSE_BITS) as usize;
    let t = top[i];
    let dense = ((t & !NODE) | (k & (DENSE as u32 - 1))) as usize;
    select_unpredictable(t & NODE != 0, dense, i)
}

/// Bits of the mini node dense entry `e` points at.
#[inline(always)]
fn mini_bits(e: u32) -> u32 {
    (e & KIND) * 2
}

/// The index in `mini` of the entry a key whose top 64 bits are `hi` reads under dense
/// entry `e`, whose mini node has `bits` bits.
#[inline(always)]
fn mini_index(e: u32, hi: u64, bits: u32) -> usize {
    let bits32 = hi as u32; // address bits 32-64
    ((e & !(NODE | KIND)) + (bits32 >> (32 - bits))) as usize
}

/// The top 6 bits of `r`: a slot.
#[inline(always)]
fn slot64(r: u64) -> u32 {
    (r >> (64 - STRIDE)) as u32
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
pub(super) fn lookup(a: &Arrays, addr: u128) -> u32 {
    let e = a.direct[second(a.top(), hi32(addr))];
    if e & NODE == 0 {
        return e;
    }
    below_dense(a, e, addr)
}

/// The rest of a single lookup whose dense entry `e` points at a mini node: kept out of
/// line, so that the common case (a value in the top or dense entry) keeps its registers.
#[inline(never)]
fn below_dense(a: &Arrays, e: u32, addr: u128) -> u32 {
    let bits = mini_bits(e);
    let m = a.mini[mini_index(e, (addr >> 64) as u64, bits)];
    let d = DENSE_END + bits;
    if m & NODE == 0 {
        m
    } else if m & LEAVES != 0 {
        a.leaves[((m & !(NODE | LEAVES)) + slot(addr, d)) as usize]
    } else {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU supports popcnt (checked just above).
            return unsafe { walk_popcnt(a, m & !NODE, addr, d) };
        }
        walk(a, m & !NODE, addr, d)
    }
}

/// [`walk`] compiled with the popcnt instruction (a step counts bits; without it each
/// count is a dozen instructions).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn walk_popcnt(a: &Arrays, i: u32, addr: u128, d: u32) -> u32 {
    walk(a, i, addr, d)
}

/// The Poptrie walk from root node `i` (at depth `d`, under a mini node) to a leaf.
#[inline(always)]
fn walk(a: &Arrays, mut i: u32, addr: u128, mut d: u32) -> u32 {
    loop {
        match step(&a.nodes[i as usize], addr, d) {
            Ok(child) => (i, d) = (child, d + STRIDE),
            Err(leaf) => return a.leaves[leaf as usize],
        }
    }
}

pub(super) fn lookup_batch(a: &Arrays, addrs: &[u128], out: &mut [u32]) {
    assert!(
        out.len() >= addrs.len(),
        "lookup_batch: output shorter than input"
    );
    #[cfg(target_arch = "x86_64")]
    if crate::fib::avx512_batches() {
        // SAFETY: the CPU has AVX-512 F (checked just above).
        unsafe { lookup_batch_wide(a, addrs, out) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU supports popcnt (checked just above).
        unsafe { lookup_batch_popcnt(a, addrs, out) };
        return;
    }
    lookup_batch_generic(a, addrs, out)
}

/// The batch with its first two passes in AVX-512 (`wide.rs`), then the scalar walk.
///
/// # Safety
/// The CPU has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn lookup_batch_wide(a: &Arrays, addrs: &[u128], out: &mut [u32]) {
    for (keys, out) in addrs.chunks(BURST).zip(out.chunks_mut(BURST)) {
        let mut at = [0u32; BURST];
        let mut w = Walking::new();
        // SAFETY: the caller's promise.
        unsafe { wide::first_passes(a, keys, out, &mut at, &mut w) };
        walk_on(a, keys, &at, &mut w, out);
    }
}

/// The scalar batch, whatever the CPU (see `Lpm6::lookup_batch_scalar`).
pub(super) fn lookup_batch_scalar(a: &Arrays, addrs: &[u128], out: &mut [u32]) {
    assert!(
        out.len() >= addrs.len(),
        "lookup_batch: output shorter than input"
    );
    lookup_batch_generic(a, addrs, out)
}

#[inline(always)]
fn lookup_batch_generic(a: &Arrays, addrs: &[u128], out: &mut [u32]) {
    for (keys, out) in addrs.chunks(BURST).zip(out.chunks_mut(BURST)) {
        match (
            <&[u128; BURST]>::try_from(keys),
            out.first_chunk_mut::<BURST>(),
        ) {
            // A full burst: a constant trip count, which the compiler unrolls.
            (Ok(keys), Some(out)) => burst(a, keys, out),
            _ => burst(a, keys, out),
        }
    }
}

/// The same code compiled with the popcnt instruction (a Poptrie step counts bits twice;
/// without it each count is a dozen instructions), as `Lpm4`'s batch is.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn lookup_batch_popcnt(a: &Arrays, addrs: &[u128], out: &mut [u32]) {
    lookup_batch_generic(a, addrs, out)
}

/// Where the second pass leaves the keys that walk on: each one's Poptrie root (`cur`),
/// its address bits from the root's depth on (`rest`), and the list of them (`walk[..nw]`).
struct Walking {
    cur: [u32; BURST],
    rest: [u64; BURST],
    walk: [u8; BURST],
    nw: usize,
}

impl Walking {
    #[inline(always)]
    fn new() -> Walking {
        Walking {
            cur: [0; BURST],
            rest: [0; BURST],
            walk: [0; BURST],
            nw: 0,
        }
    }
}

/// Looks up one burst (see the module docs); `out` gets each value or `NO_ROUTE`.
/// Both unrolled passes take the keys in chunks of `UNROLL` (arrays, so each inner loop
/// has a constant trip count whatever the burst's length), then the few left over: over
/// slices the trip count was constant only for a full burst, and the worker's bursts of
/// 32 were unrolled or not as the compiler's inlining elsewhere fell (session 15's Lpm4
/// change cost IPv6 14 instructions a packet that way; docs/benchmarks.md, session 16).
#[inline(always)]
fn burst(a: &Arrays, keys: &[u128], out: &mut [u32]) {
    // `lookup_batch_generic` passes at most a burst; `at` and `walk` hold no more.
    debug_assert!(keys.len() <= BURST, "a burst of {} keys", keys.len());
    let keys = &keys[..keys.len().min(BURST)];
    let out = &mut out[..keys.len()];
    let top = a.top();
    let mut at = [0u32; BURST];
    let at_of = |k: u128| {
        let i = second(top, hi32(k));
        prefetch(a.direct.as_ptr().wrapping_add(i));
        i as u32
    };
    let (key4, key_tail) = keys.as_chunks::<UNROLL>();
    let (at4, at_tail) = at[..keys.len()].as_chunks_mut::<UNROLL>();
    for (at, keys) in at4.iter_mut().zip(key4) {
        for j in 0..UNROLL {
            at[j] = at_of(keys[j]);
        }
    }
    for (at, &k) in at_tail.iter_mut().zip(key_tail) {
        *at = at_of(k);
    }
    // Every key's second entry, and for a key under a mini node its mini entry at once
    // (a dependent read, no pass of its own), and then its leaf if the mini entry points
    // at 64 direct leaves (nothing waits on that read but `out`); keys at a Poptrie root
    // go to `walk`, with the root in `cur` (prefetched) and their address bits from the
    // root's depth on in `rest`.
    let mut w = Walking::new();
    let (out4, out_tail) = out.as_chunks_mut::<UNROLL>();
    let (at4, at_tail) = at[..keys.len()].as_chunks::<UNROLL>();
    for (c, ((out, keys), at)) in out4.iter_mut().zip(key4).zip(at4).enumerate() {
        for j in 0..UNROLL {
            out[j] = second_entry(a, keys[j], at[j], c * UNROLL + j, &mut w);
        }
    }
    let tail = out_tail.iter_mut().zip(key_tail).zip(at_tail);
    for (j, ((o, &k), &at)) in tail.enumerate() {
        *o = second_entry(a, k, at, key4.len() * UNROLL + j, &mut w);
    }
    walk_on(a, keys, &at, &mut w, out);
}

/// The Poptrie walk of the keys the second pass left in `w` (none: nothing to do).
#[inline(always)]
fn walk_on(a: &Arrays, keys: &[u128], at: &[u32; BURST], w: &mut Walking, out: &mut [u32]) {
    if w.nw > 0 {
        let entered = w.walk;
        let entered = &entered[..w.nw.min(BURST)];
        poptrie_burst(
            a,
            (keys, at),
            &mut w.cur,
            &mut w.rest,
            (&mut w.walk, entered),
            out,
        );
    }
}

/// The second pass for key `k` (the `i`th of its burst) whose second entry is at `at`:
/// its value (`NO_ROUTE` for none; a key that walks on is answered later), or the mini
/// node's entry and leaf, putting a key at a Poptrie root in `w`.
#[inline(always)]
fn second_entry(a: &Arrays, k: u128, at: u32, i: usize, w: &mut Walking) -> u32 {
    let mut e = a.direct[at as usize];
    if e & NODE != 0 {
        let i = i % BURST;
        let bits = mini_bits(e);
        // Address bits 32-96: the mini slot on top, then the Poptrie's bits.
        let r = ((k << DENSE_END) >> 64) as u64;
        let m = a.mini[(e & !(NODE | KIND)) as usize + (r >> (64 - bits)) as usize];
        let (r, to) = (r << bits, m & !(NODE | LEAVES));
        let (root, direct) = (m & (NODE | LEAVES) == NODE, m & LEAVES != 0);
        // Branch-free: a key not at direct leaves reads leaf 0 (if any).
        let l = select_unpredictable(direct, to + slot64(r), 0) as usize;
        let leaf = a.leaves.get(l).copied().unwrap_or(0);
        e = select_unpredictable(direct, leaf, m);
        let p = a.nodes.as_ptr().wrapping_add(to as usize).cast::<u8>();
        prefetch(select_unpredictable(root, p, a.mini.as_ptr().cast::<u8>()));
        w.cur[i] = to;
        w.rest[i] = r;
        // Written always, counted if it walks.
        w.walk[w.nw % BURST] = i as u8;
        w.nw += usize::from(root);
    }
    // 0 (no route) becomes NO_ROUTE; keys still walking are overwritten later.
    e.wrapping_sub(1)
}

/// The Poptrie walk of the keys `entered` (indices into `keys`, also in `walk`), whose
/// root nodes are in `cur`, root depths in `at` and next address bits in `rest`: one
/// level per pass, prefetching each next node or leaf; then every leaf into `out`. One pass steps keys at
/// different depths: each key's slot comes from its `rest` for `REST_LEVELS` levels,
/// then from the key itself.
#[inline(always)]
fn poptrie_burst(
    a: &Arrays,
    (keys, at): (&[u128], &[u32; BURST]),
    cur: &mut [u32; BURST],
    rest: &mut [u64; BURST],
    (walk, entered): (&mut [u8; BURST], &[u8]),
    out: &mut [u32],
) {
    let (mut nw, mut p) = (entered.len(), 0);
    while nw > 0 {
        nw = if p < REST_LEVELS {
            level(a, cur, walk, nw, |i| {
                let r = rest[i];
                rest[i] = r << STRIDE;
                (!r >> (64 - STRIDE)) as u32
            })
        } else {
            level(a, cur, walk, nw, |i| {
                let d = DENSE_END + mini_bits(a.direct[at[i] as usize]);
                63 - slot(keys[i], d + p * STRIDE)
            })
        };
        p += 1;
    }
    // Every key that entered is at a leaf now.
    for &i in entered {
        let i = i as usize % BURST;
        out[i] = a.leaves[cur[i] as usize].wrapping_sub(1);
    }
}

/// Steps the keys `walk[..nw]` one level (`cur`: each key's node, then its child or leaf),
/// branch-free (a burst of random keys would mispredict child or leaf): `flip(i)` is 63
/// less key `i`'s slot at this level, the shift that puts the slot's bit on top, so that
/// its popcount counts the bits up to it. Keeps in `walk` the keys that went on to a
/// child and returns how many.
#[inline(always)]
fn level(
    a: &Arrays,
    cur: &mut [u32; BURST],
    walk: &mut [u8; BURST],
    nw: usize,
    mut flip: impl FnMut(usize) -> u32,
) -> usize {
    let (nodes, leaves) = (&a.nodes, &a.leaves);
    let mut still = 0;
    for j in 0..nw.min(BURST) {
        let i = walk[j] as usize % BURST;
        let n = &nodes[cur[i] as usize];
        let sh = flip(i);
        let vector = n.vector << sh;
        let child = (vector as i64) < 0;
        let set = select_unpredictable(child, vector, n.leafvec << sh);
        let base = select_unpredictable(child, n.base_child, n.base_leaf);
        let next = base + set.count_ones() - 1;
        cur[i] = next;
        let node = nodes.as_ptr().wrapping_add(next as usize).cast::<u8>();
        let leaf = leaves.as_ptr().wrapping_add(next as usize).cast::<u8>();
        prefetch(select_unpredictable(child, node, leaf));
        // Written always, counted if it goes on.
        walk[still % BURST] = i as u8;
        still += usize::from(child);
    }
    still
}
