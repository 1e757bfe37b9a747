//! Batched lookup: several keys walk the trie in lockstep, and each step prefetches the
//! next node or leaf of every key before any of them is read, so the cache misses of the
//! group overlap instead of adding up.

use super::block::{below_chunk, chunk_of, Block, NODE};
use super::Lpm4;

/// Keys in flight per group.
const LANES: usize = 8;

pub(super) fn lookup_batch(lpm: &Lpm4, addrs: &[u32], out: &mut [u32]) {
    assert!(
        out.len() >= addrs.len(),
        "lookup_batch: output shorter than input"
    );
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU supports popcnt (checked just above).
        unsafe { lookup_batch_popcnt(lpm, addrs, out) };
        return;
    }
    lookup_batch_generic(lpm, addrs, out)
}

/// The same code compiled with the popcnt instruction (one of the two hot operations).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn lookup_batch_popcnt(lpm: &Lpm4, addrs: &[u32], out: &mut [u32]) {
    lookup_batch_generic(lpm, addrs, out)
}

#[inline(always)]
fn lookup_batch_generic(lpm: &Lpm4, addrs: &[u32], out: &mut [u32]) {
    let out = &mut out[..addrs.len()];
    let mut a = addrs.chunks_exact(LANES);
    let mut o = out.chunks_exact_mut(LANES);
    for (a, o) in (&mut a).zip(&mut o) {
        group(lpm, a.try_into().unwrap(), o.try_into().unwrap());
    }
    for (a, o) in a.remainder().iter().zip(o.into_remainder()) {
        *o = lpm.lookup_enc(*a).wrapping_sub(1);
    }
}

#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it never faults, whatever the address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

const DONE: u8 = 0;
const AT_NODE: u8 = 1;
const AT_LEAF: u8 = 2;

#[inline(always)]
fn group(lpm: &Lpm4, a: &[u32; LANES], o: &mut [u32; LANES]) {
    let blk: [&Block; LANES] = std::array::from_fn(|l| &*lpm.blocks[(a[l] >> 24) as usize]);
    for l in 0..LANES {
        prefetch(&blk[l].top[chunk_of(a[l])]);
    }
    let mut state = [DONE; LANES];
    let mut idx = [0usize; LANES];
    let mut res = [0u32; LANES];
    let mut shift = [12u32; LANES];
    let mut walking = 0;
    for l in 0..LANES {
        let t = blk[l].top[chunk_of(a[l])];
        if t & NODE == 0 {
            res[l] = t;
        } else {
            idx[l] = (t & !NODE) as usize;
            state[l] = AT_NODE;
            walking += 1;
            prefetch(blk[l].nodes.as_ptr().wrapping_add(idx[l]));
        }
    }
    while walking > 0 {
        for l in 0..LANES {
            if state[l] != AT_NODE {
                continue;
            }
            let n = &blk[l].nodes[idx[l]];
            let bit = 1u64 << ((below_chunk(a[l]) >> shift[l]) & 63);
            if n.vector & bit != 0 {
                idx[l] = n.base1 as usize + (n.vector & (bit - 1)).count_ones() as usize;
                shift[l] = shift[l].wrapping_sub(6);
                prefetch(blk[l].nodes.as_ptr().wrapping_add(idx[l]));
            } else {
                idx[l] =
                    n.base0 as usize + (n.leafvec & (bit | (bit - 1))).count_ones() as usize - 1;
                state[l] = AT_LEAF;
                walking -= 1;
                prefetch(blk[l].leaves.as_ptr().wrapping_add(idx[l]));
            }
        }
    }
    for l in 0..LANES {
        if state[l] == AT_LEAF {
            res[l] = blk[l].leaves[idx[l]];
        }
        let v = if res[l] == 0 {
            lpm.inherit[(a[l] >> 24) as usize]
        } else {
            res[l]
        };
        o[l] = v.wrapping_sub(1);
    }
}
