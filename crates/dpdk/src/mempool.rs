//! Packet mbuf pools.

use std::ffi::CString;
use std::ptr::NonNull;

use crate::error::{DpdkError, Result};
use net::packet::PacketBuf;

use crate::mbuf::Mbuf;

/// A pool of packet mbufs (`rte_pktmbuf_pool_create`).
///
/// Dropping the pool frees it only when every mbuf is back; otherwise it is leaked on
/// purpose (freeing memory that mbufs still point into would be use-after-free).
#[derive(Debug)]
pub struct Mempool {
    raw: NonNull<dpdk_sys::rte_mempool>,
}

// SAFETY: an rte_mempool is designed for concurrent use from several lcores; the
// operations we expose (alloc, counts) are thread-safe in DPDK.
unsafe impl Send for Mempool {}
// SAFETY: as above.
unsafe impl Sync for Mempool {}

impl Mempool {
    /// A pool of `n` mbufs with a per-lcore cache of `cache` and the default data room
    /// (2048 bytes + headroom), on `socket` (-1 = any).
    pub fn new(name: &str, n: u32, cache: u32, socket: i32) -> Result<Mempool> {
        // SAFETY: reads a constant.
        let data_room = unsafe { dpdk_sys::shim_RTE_MBUF_DEFAULT_BUF_SIZE };
        Self::with_data_room(name, n, cache, data_room, socket)
    }

    /// As [`Mempool::new`] with an explicit data room size (headroom included).
    pub fn with_data_room(
        name: &str,
        n: u32,
        cache: u32,
        data_room: u16,
        socket: i32,
    ) -> Result<Mempool> {
        let c = CString::new(name).map_err(|_| DpdkError::invalid("mempool", "NUL in name"))?;
        // SAFETY: valid C string; DPDK copies the name.
        let raw = unsafe {
            dpdk_sys::rte_pktmbuf_pool_create(c.as_ptr(), n, cache, 0, data_room, socket)
        };
        NonNull::new(raw)
            .map(|raw| Mempool { raw })
            .ok_or_else(|| DpdkError::last(format!("create mempool {name:?} of {n} mbufs")))
    }

    /// The raw pointer, for ethdev queue setup.
    pub fn as_ptr(&self) -> *mut dpdk_sys::rte_mempool {
        self.raw.as_ptr()
    }

    /// Allocates one mbuf (empty, default headroom).
    pub fn alloc(&self) -> Option<Mbuf> {
        // SAFETY: the pool pointer is valid for self's lifetime.
        let m = unsafe { dpdk_sys::shim_rte_pktmbuf_alloc(self.raw.as_ptr()) };
        // SAFETY: a freshly allocated mbuf is owned by the caller.
        NonNull::new(m).map(|m| unsafe { Mbuf::from_raw(m) })
    }

    /// Allocates one mbuf holding a copy of `bytes`.
    pub fn alloc_with(&self, bytes: &[u8]) -> Option<Mbuf> {
        let mut m = self.alloc()?;
        if m.append(bytes.len()) {
            m.data_mut().copy_from_slice(bytes);
            Some(m)
        } else {
            None
        }
    }

    /// Mbufs currently allocated from the pool (includes those held in lcore caches).
    pub fn in_use(&self) -> u32 {
        // SAFETY: valid pool pointer.
        unsafe { dpdk_sys::rte_mempool_in_use_count(self.raw.as_ptr()) }
    }

    /// Mbufs currently available in the pool.
    pub fn available(&self) -> u32 {
        // SAFETY: valid pool pointer.
        unsafe { dpdk_sys::rte_mempool_avail_count(self.raw.as_ptr()) }
    }

    /// Total number of mbufs in the pool.
    pub fn capacity(&self) -> u32 {
        // SAFETY: valid pool pointer; `size` is set at creation and never changes.
        unsafe { (*self.raw.as_ptr()).size }
    }
}

impl Drop for Mempool {
    fn drop(&mut self) {
        if self.in_use() == 0 {
            // SAFETY: no mbuf from this pool is outstanding, and ports using it have been
            // stopped by their owners before the pool is dropped.
            unsafe { dpdk_sys::rte_mempool_free(self.raw.as_ptr()) }
        }
    }
}
