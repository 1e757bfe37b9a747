//! DPDK's IPv6 tables, `rte_lpm6` and `rte_fib6` (trie), the baselines our own
//! `net::fib::Lpm6` is measured against.
//!
//! Only `mplsrouter bench-lookup --family ipv6` uses them; the data path uses `Lpm6`.
//! Addresses are 16 network-order bytes, as DPDK takes them; next hops are small values.

use std::ffi::CString;
use std::ptr::NonNull;

use crate::error::{check, DpdkError, Result};

/// `rte_lpm6` next hops must fit in 21 bits.
pub const LPM6_MAX_NEXT_HOP: u32 = (1 << 21) - 1;

fn c_name(op: &str, name: &str) -> Result<CString> {
    CString::new(name).map_err(|_| DpdkError::invalid(op, "NUL in name"))
}

/// Bytes allocated from DPDK's heaps (all sockets): the difference around building a
/// table is what it costs, its rules and tries included.
pub fn heap_allocated_bytes() -> usize {
    // SAFETY: reads heap statistics; the EAL is initialised by the caller (the call
    // reports 0 for sockets without a heap).
    unsafe { dpdk_sys::shim_rte_malloc_allocated_bytes() as usize }
}

/// An `rte_lpm6` table (24-bit first level, 8-bit tbl8 levels below).
pub struct RteLpm6 {
    raw: NonNull<dpdk_sys::rte_lpm6>,
}

// SAFETY: lookups only read the table; mutation needs &mut self.
unsafe impl Send for RteLpm6 {}
// SAFETY: as above.
unsafe impl Sync for RteLpm6 {}

impl RteLpm6 {
    /// A table for up to `max_rules` prefixes with `tbl8s` groups below the first level.
    pub fn new(name: &str, max_rules: u32, tbl8s: u32) -> Result<RteLpm6> {
        let c = c_name("rte_lpm6_create", name)?;
        let cfg = dpdk_sys::rte_lpm6_config {
            max_rules,
            number_tbl8s: tbl8s,
            flags: 0,
        };
        // SAFETY: valid name and config; the EAL is initialised by the caller (the
        // function fails cleanly otherwise).
        let raw = unsafe { dpdk_sys::rte_lpm6_create(c.as_ptr(), -1, &cfg) };
        NonNull::new(raw).map(|raw| RteLpm6 { raw }).ok_or_else(|| {
            DpdkError::last(format!("rte_lpm6_create({max_rules} rules, {tbl8s} tbl8s)"))
        })
    }

    /// Adds `ip/depth` -> `next_hop` (at most [`LPM6_MAX_NEXT_HOP`]).
    pub fn add(&mut self, ip: u128, depth: u8, next_hop: u32) -> Result<()> {
        let b = ip.to_be_bytes();
        // SAFETY: valid table; `b` is the 16 bytes DPDK reads.
        check("rte_lpm6_add", unsafe {
            dpdk_sys::rte_lpm6_add(self.raw.as_ptr(), b.as_ptr(), depth, next_hop)
        })?;
        Ok(())
    }

    /// One lookup.
    #[inline]
    pub fn lookup(&self, ip: &[u8; 16]) -> Option<u32> {
        let mut nh = 0u32;
        // SAFETY: valid table, 16-byte address and out pointer.
        let r = unsafe { dpdk_sys::rte_lpm6_lookup(self.raw.as_ptr(), ip.as_ptr(), &mut nh) };
        (r == 0).then_some(nh)
    }

    /// `rte_lpm6_lookup_bulk_func`: `out[i]` is the next hop or -1.
    #[inline]
    pub fn lookup_bulk(&self, ips: &[[u8; 16]], out: &mut [i32]) {
        let n = ips.len().min(out.len());
        // SAFETY: both buffers hold at least n entries; DPDK declares the address array
        // mutable but only reads it.
        unsafe {
            dpdk_sys::rte_lpm6_lookup_bulk_func(
                self.raw.as_ptr(),
                ips.as_ptr() as *mut [u8; 16],
                out.as_mut_ptr(),
                n as u32,
            )
        };
    }
}

impl Drop for RteLpm6 {
    fn drop(&mut self) {
        // SAFETY: we own the table; no lookup can be running (they borrow self).
        unsafe { dpdk_sys::rte_lpm6_free(self.raw.as_ptr()) }
    }
}

/// An `rte_fib6` table of type TRIE with 4-byte next hops.
pub struct RteFib6 {
    raw: NonNull<dpdk_sys::rte_fib6>,
}

// SAFETY: lookups only read the table; mutation needs &mut self.
unsafe impl Send for RteFib6 {}
// SAFETY: as above.
unsafe impl Sync for RteFib6 {}

impl RteFib6 {
    /// A trie for up to `max_routes` prefixes with `tbl8s` groups; `miss` is what a
    /// lookup without a route returns.
    pub fn new_trie(name: &str, max_routes: u32, tbl8s: u32, miss: u32) -> Result<RteFib6> {
        let c = c_name("rte_fib6_create", name)?;
        // SAFETY: valid name; the EAL is initialised by the caller.
        let raw = unsafe {
            dpdk_sys::shim_rte_fib6_create_trie(
                c.as_ptr(),
                -1,
                max_routes as i32,
                tbl8s,
                u64::from(miss),
            )
        };
        NonNull::new(raw).map(|raw| RteFib6 { raw }).ok_or_else(|| {
            DpdkError::last(format!(
                "rte_fib6_create(trie, {max_routes} routes, {tbl8s} tbl8s)"
            ))
        })
    }

    /// Adds `ip/depth` -> `next_hop`.
    pub fn add(&mut self, ip: u128, depth: u8, next_hop: u32) -> Result<()> {
        let b = ip.to_be_bytes();
        // SAFETY: valid table; `b` is the 16 bytes DPDK reads.
        check("rte_fib6_add", unsafe {
            dpdk_sys::rte_fib6_add(self.raw.as_ptr(), b.as_ptr(), depth, u64::from(next_hop))
        })?;
        Ok(())
    }

    /// `rte_fib6_lookup_bulk`: `out[i]` is the next hop, or the table's `miss`.
    #[inline]
    pub fn lookup_bulk(&self, ips: &[[u8; 16]], out: &mut [u64]) {
        let n = ips.len().min(out.len());
        // SAFETY: both buffers hold at least n entries. DPDK takes the table and the
        // addresses as mutable pointers but a lookup only reads them.
        unsafe {
            dpdk_sys::rte_fib6_lookup_bulk(
                self.raw.as_ptr(),
                ips.as_ptr() as *mut [u8; 16],
                out.as_mut_ptr(),
                n as i32,
            )
        };
    }
}

impl Drop for RteFib6 {
    fn drop(&mut self) {
        // SAFETY: we own the table; no lookup can be running (they borrow self).
        unsafe { dpdk_sys::rte_fib6_free(self.raw.as_ptr()) }
    }
}
