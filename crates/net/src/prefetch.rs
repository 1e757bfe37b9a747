//! A cache prefetch hint, for the stages that know which memory they will touch next
//! (packet headers of a burst, LPM nodes of the next keys).

/// Asks the CPU to bring the cache line at `p` into L1. Only a hint: it never faults,
/// whatever the address, and is a no-op on targets without one.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it never faults, whatever the address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
