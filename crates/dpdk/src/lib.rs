//! Safe wrappers over the parts of DPDK that mplsrouter uses.
//!
//! The rules these wrappers enforce so the rest of the code cannot get them wrong:
//! - the EAL is initialised once per process ([`Eal`]) and cleaned up on drop;
//! - an [`Mbuf`] is owned: dropping it frees it, so no packet is leaked by accident;
//! - a [`TxBuffer`] frees and counts what the PMD refuses;
//! - a panic in a worker lcore is caught and reported ([`lcore::launch`]).
//!
//! `unsafe` is allowed here, in `dpdk-sys`, and in `net`'s rcu, prefetch and LPM arena
//! only (see the README); every block says why it is sound in a `// SAFETY:` comment.

mod eal;
mod error;
pub mod lcore;
mod lpm;
mod lpm6;
mod mbuf;
mod mempool;
mod port;
mod prefix;
pub mod tap;
mod tx;

pub use eal::Eal;
pub use error::{DpdkError, Result};
pub use lpm::{RteLpm, LPM_MAX_NEXT_HOP};
pub use lpm6::{heap_allocated_bytes, RteFib6, RteLpm6, LPM6_MAX_NEXT_HOP};
pub use mbuf::{Burst, Mbuf, BURST_MAX};
pub use mempool::Mempool;
pub use port::{link, rx_burst, rx_burst_max, stats, LinkStatus, Port, PortConfig, PortStats};
pub use tx::TxBuffer;

/// The DPDK version this build was compiled against (from pkg-config).
pub const DPDK_BUILD_VERSION: &str = dpdk_sys::DPDK_VERSION;

/// The DPDK version string of the loaded libraries, e.g. "DPDK 22.11.4".
pub fn runtime_version() -> String {
    // SAFETY: rte_version returns a pointer to a static NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(dpdk_sys::rte_version()) }
        .to_string_lossy()
        .into_owned()
}

/// Timestamp counter (cycles since an arbitrary origin). The same counter as DPDK's
/// `rte_rdtsc`; on x86_64 the instruction is inlined (the worker reads it three times per
/// burst, and the shim is a call into C).
#[inline]
pub fn rdtsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: rdtsc reads the TSC; no memory is touched.
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: reads the TSC; no memory is touched.
    unsafe {
        dpdk_sys::shim_rte_rdtsc()
    }
}

/// TSC frequency in Hz as measured by the EAL (0 before [`Eal::init`]).
pub fn tsc_hz() -> u64 {
    // SAFETY: reads a value the EAL computed at init; harmless before init (returns 0).
    unsafe { dpdk_sys::rte_get_tsc_hz() }
}

/// A CPU pause hint for spin loops.
#[inline]
pub fn pause() {
    // SAFETY: a pause instruction.
    unsafe { dpdk_sys::shim_rte_pause() }
}
