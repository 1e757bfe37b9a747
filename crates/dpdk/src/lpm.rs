//! DPDK's `rte_lpm`, the baseline our own `net::fib::Lpm4` is measured against.
//!
//! Only `mplsrouter bench-lookup` uses it; the data path uses `Lpm4`.

use std::ffi::CString;
use std::ptr::NonNull;

use crate::error::{check, DpdkError, Result};

/// Next-hop values must fit in 24 bits.
pub const LPM_MAX_NEXT_HOP: u32 = (1 << 24) - 1;

/// An `rte_lpm` table (DIR-24-8).
pub struct RteLpm {
    raw: NonNull<dpdk_sys::rte_lpm>,
    tbl8s: u32,
    max_rules: u32,
}

// SAFETY: lookups are read-only on the table; we expose mutation only through &mut self.
unsafe impl Send for RteLpm {}
// SAFETY: as above.
unsafe impl Sync for RteLpm {}

impl RteLpm {
    /// A table for up to `max_rules` prefixes with `tbl8s` groups for prefixes longer than /24.
    pub fn new(name: &str, max_rules: u32, tbl8s: u32) -> Result<RteLpm> {
        let c =
            CString::new(name).map_err(|_| DpdkError::invalid("rte_lpm_create", "NUL in name"))?;
        let cfg = dpdk_sys::rte_lpm_config {
            max_rules,
            number_tbl8s: tbl8s,
            flags: 0,
        };
        // SAFETY: valid name and config; the EAL is initialised by the caller (the
        // function fails cleanly otherwise).
        let raw = unsafe { dpdk_sys::rte_lpm_create(c.as_ptr(), -1, &cfg) };
        NonNull::new(raw)
            .map(|raw| RteLpm {
                raw,
                tbl8s,
                max_rules,
            })
            .ok_or_else(|| {
                DpdkError::last(format!("rte_lpm_create({max_rules} rules, {tbl8s} tbl8s)"))
            })
    }

    /// Adds `ip/depth` -> `next_hop` (host byte order).
    pub fn add(&mut self, ip: u32, depth: u8, next_hop: u32) -> Result<()> {
        // SAFETY: valid table.
        check("rte_lpm_add", unsafe {
            dpdk_sys::rte_lpm_add(self.raw.as_ptr(), ip, depth, next_hop)
        })?;
        Ok(())
    }

    /// Removes `ip/depth`.
    pub fn delete(&mut self, ip: u32, depth: u8) -> Result<()> {
        // SAFETY: valid table.
        check("rte_lpm_delete", unsafe {
            dpdk_sys::rte_lpm_delete(self.raw.as_ptr(), ip, depth)
        })?;
        Ok(())
    }

    /// One lookup.
    #[inline]
    pub fn lookup(&self, ip: u32) -> Option<u32> {
        let mut nh = 0u32;
        // SAFETY: valid table and out pointer.
        let r = unsafe { dpdk_sys::shim_rte_lpm_lookup(self.raw.as_ptr(), ip, &mut nh) };
        (r == 0).then_some(nh)
    }

    /// `rte_lpm_lookup_bulk`: `out[i]` is the next hop, or `miss` when there is none.
    #[inline]
    pub fn lookup_bulk(&self, ips: &[u32], out: &mut [u32], miss: u32) {
        let n = ips.len().min(out.len());
        // SAFETY: both buffers hold at least n entries.
        unsafe {
            dpdk_sys::shim_rte_lpm_lookup_bulk(
                self.raw.as_ptr(),
                ips.as_ptr(),
                out.as_mut_ptr(),
                n as u32,
            )
        };
        for o in &mut out[..n] {
            *o = if *o & dpdk_sys::RTE_LPM_LOOKUP_SUCCESS != 0 {
                *o & LPM_MAX_NEXT_HOP
            } else {
                miss
            };
        }
    }

    /// `rte_lpm_lookupx4`: four lookups at once, `miss` where there is no route.
    #[inline]
    pub fn lookup_x4(&self, ips: &[u32; 4], miss: u32) -> [u32; 4] {
        let mut hop = [0u32; 4];
        // SAFETY: 4-entry arrays as the shim expects.
        unsafe {
            dpdk_sys::shim_rte_lpm_lookupx4(self.raw.as_ptr(), ips.as_ptr(), hop.as_mut_ptr(), miss)
        };
        hop
    }

    /// Where lookups read: `(name, address, bytes)` of tbl24 and of the tbl8 groups, for
    /// reports of the pages backing them (`bench-lookup`).
    pub fn regions(&self) -> [(&'static str, usize, usize); 2] {
        let entry = std::mem::size_of::<dpdk_sys::rte_lpm_tbl_entry>();
        // SAFETY: `raw` is a live table created by rte_lpm_create; reading its tbl8
        // pointer (set at creation, never changed) races with nothing.
        let tbl8 = unsafe { (*self.raw.as_ptr()).tbl8 } as usize;
        [
            (
                "tbl24",
                self.raw.as_ptr() as usize,
                dpdk_sys::RTE_LPM_TBL24_NUM_ENTRIES as usize * entry,
            ),
            ("tbl8", tbl8, self.tbl8s as usize * 256 * entry),
        ]
    }

    /// Bytes of the lookup tables and rules (tbl24 is fixed at 2^24 entries).
    pub fn memory_bytes(&self) -> usize {
        let entry = 4usize;
        dpdk_sys::RTE_LPM_TBL24_NUM_ENTRIES as usize * entry
            + self.tbl8s as usize * 256 * entry
            + self.max_rules as usize * 8
    }
}

impl Drop for RteLpm {
    fn drop(&mut self) {
        // SAFETY: we own the table; no lookup can be running (they borrow self).
        unsafe { dpdk_sys::rte_lpm_free(self.raw.as_ptr()) }
    }
}
