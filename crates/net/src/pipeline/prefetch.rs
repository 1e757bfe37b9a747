//! Cache prefetch of packet headers, so the first stage does not stall on each packet in
//! turn (the NIC has just written them; they are rarely in cache).

/// Hints the CPU to load the cache line holding the start of `data`.
#[inline(always)]
pub(crate) fn prefetch(data: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults and has no architectural effect,
    // whatever the address; here it is the start of a live slice anyway.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
            data.as_ptr() as *const i8
        )
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}
