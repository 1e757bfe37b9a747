//! Lookups compiled with the popcnt instruction where the CPU has it, and the batched
//! lookup's design.
//!
//! The batched lookup works in two phases over up to 64 keys: first it reads every key's
//! top entry and prefetches the record that entry points to, then it finishes every key
//! (record header, leaf; rarely a deeper record). The top entries are independent loads,
//! so the first phase keeps as many misses in flight as the core allows, and by the time
//! the second phase reads a record its line is on the way or there. Measured against
//! (full view, random keys; all on the 2-core VM, which was shared and noisy, so the
//! figures are the best of interleaved runs): prefetching the top entry 16 keys ahead
//! and walking each key in turn (the layout before this one used that: 1.6-1.9x slower
//! than the two phases on the new layout), and three phases that also prefetch the leaf
//! before reading it (no better than two: the leaf is usually in the header's line or
//! the next, which the second phase gets with the header). An earlier per-key state
//! machine lost to its branch mispredictions.

use super::Lpm4;

#[inline(always)]
fn lookup_generic(lpm: &Lpm4, addr: u32) -> u32 {
    lpm.flat.lookup(addr)
}

/// Encoded value for `addr` (value + 1, 0: no route).
#[inline]
pub(super) fn lookup(lpm: &Lpm4, addr: u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU supports popcnt (checked just above).
        return unsafe { lookup_popcnt(lpm, addr) };
    }
    lookup_generic(lpm, addr)
}

/// The same code compiled with the popcnt instruction (the hot operation of a node step).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn lookup_popcnt(lpm: &Lpm4, addr: u32) -> u32 {
    lookup_generic(lpm, addr)
}

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
    lpm.flat.lookup_batch(addrs, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn lookup_batch_popcnt(lpm: &Lpm4, addrs: &[u32], out: &mut [u32]) {
    lpm.flat.lookup_batch(addrs, out)
}
