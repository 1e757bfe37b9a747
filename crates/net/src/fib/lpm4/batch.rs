//! Lookups compiled with the popcnt instruction where the CPU has it, and the batched
//! lookup's design.
//!
//! The batched lookup works in two phases over up to 64 keys: first it reads every key's
//! top entry and prefetches the record that entry points to, then it finishes every key
//! (the record's line: leaf bitmap and leaf; rarely a deeper record). The top entries are
//! independent loads, so the first phase keeps as many misses in flight as the core
//! allows, and by the time the second phase reads a record its line is on the way or
//! there. Variants measured on
//! the full view with random keys (best of interleaved passes over 128k-key segments on
//! the shared 2-core VM under load, one run, so only the order is solid; ns/lookup): the
//! previous layout's loop (prefetch the top entry 16 keys ahead, walk each key) 31.5,
//! the same loop on the new layout 22.1, three phases that also prefetch the leaf before
//! reading it 16.3, and these two phases 13.7 (the new-layout variants there without
//! the popcnt instruction). With popcnt, in a later run: two phases 7.6, three 9.4;
//! aligning 17-32-word records to 128 bytes (the pair of lines the L2 prefetcher fetches
//! together) did not help either (8.0 and 9.6, for 4% more memory). An earlier per-key
//! state machine lost to its branch mispredictions.
//!
//! Since h-lpm4 the first phase also answers every key from its top entry and lists, without
//! a branch, the keys whose entry is a record; the second phase finishes only those. The
//! old second phase branched per key on the kind of top entry, which the full view's
//! random keys (69% values, 31% records) mispredicted 0.40 times per lookup (callgrind
//! --branch-sim: 0.03 now; docs/benchmarks.md, "h-lpm4").
//!
//! Since session 15 a pass before the first prefetches every key's top entry: the first
//! phase's loads are demand loads, and where the 1 MiB top array is not in L2 (the AMD
//! VM's 512 KiB) only as many of them as the reorder buffer holds were in flight. On
//! that VM the batch went from 96 to 130 Mlookups/s (full view, 256 values); it costs
//! about three instructions a key (docs/benchmarks.md, "Session 15").
//!
//! Since session 17, CPUs with AVX-512 F and VPOPCNTDQ (Intel from Ice Lake, AMD from
//! Zen 4; not Skylake-SP, whose 512-bit instructions also slow the core's clock) run the
//! same phases sixteen keys a gather (`flat/avx512.rs`): on the Emerald Rapids VM 1.33x
//! the scalar batch on the full view and 1.7-1.85x on a table in cache in bursts of 64,
//! 1.1x and 1.4x in the router's bursts of 32 (docs/benchmarks.md, "Session 17").

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
    if crate::fib::avx512_batches() {
        // SAFETY: the CPU has AVX-512 F and VPOPCNTDQ (checked just above).
        unsafe { lpm.flat.lookup_batch_wide(addrs, out) };
        return;
    }
    scalar(lpm, addrs, out)
}

/// The scalar batch, whatever the CPU (see `Lpm4::lookup_batch_scalar`).
pub(super) fn lookup_batch_scalar(lpm: &Lpm4, addrs: &[u32], out: &mut [u32]) {
    assert!(
        out.len() >= addrs.len(),
        "lookup_batch: output shorter than input"
    );
    scalar(lpm, addrs, out)
}

/// The scalar batch with popcnt where the CPU has it; the caller checked the lengths.
#[inline]
fn scalar(lpm: &Lpm4, addrs: &[u32], out: &mut [u32]) {
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
