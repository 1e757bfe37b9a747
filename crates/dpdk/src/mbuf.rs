//! Owned packet buffers and fixed-size bursts of them.

use std::mem::MaybeUninit;
use std::ptr::NonNull;

use net::packet::PacketBuf;

/// Largest burst handled in one call.
pub const BURST_MAX: usize = 64;

/// An owned packet mbuf. Dropping it returns it (and any segments chained to it) to its
/// pool. The byte views ([`PacketBuf`]) cover the first segment only: RX takes chains out
/// of a burst ([`Burst::take_chained`]) before anything reads them as one buffer.
#[repr(transparent)]
#[derive(Debug)]
pub struct Mbuf {
    raw: NonNull<dpdk_sys::rte_mbuf>,
}

// SAFETY: an mbuf is owned by exactly one Mbuf value; moving it to another thread moves
// ownership, and rte_pktmbuf_free is safe from any lcore or thread.
unsafe impl Send for Mbuf {}

impl Mbuf {
    /// Takes ownership of a raw mbuf.
    ///
    /// # Safety
    /// `raw` must be a valid mbuf that nobody else frees or uses afterwards.
    #[inline]
    pub unsafe fn from_raw(raw: NonNull<dpdk_sys::rte_mbuf>) -> Mbuf {
        Mbuf { raw }
    }

    /// Gives up ownership; the caller must free or transmit the mbuf.
    #[inline]
    pub fn into_raw(self) -> *mut dpdk_sys::rte_mbuf {
        let p = self.raw.as_ptr();
        std::mem::forget(self);
        p
    }

    #[inline]
    fn m(&self) -> &dpdk_sys::rte_mbuf {
        // SAFETY: we own a valid mbuf.
        unsafe { self.raw.as_ref() }
    }

    #[inline]
    fn m_mut(&mut self) -> &mut dpdk_sys::rte_mbuf {
        // SAFETY: we own a valid mbuf, exclusively.
        unsafe { self.raw.as_mut() }
    }

    /// Input port recorded by the PMD.
    #[inline]
    pub fn port(&self) -> u16 {
        self.m().port
    }

    /// Number of segments (1 for a contiguous packet).
    #[inline]
    pub fn nb_segs(&self) -> u16 {
        self.m().nb_segs
    }

    /// Length of the whole packet, all segments.
    #[inline]
    pub fn pkt_len(&self) -> u32 {
        self.m().pkt_len
    }

    /// Chains `tail` after this packet's last segment (`rte_pktmbuf_chain`); gives both
    /// back when the chain would have too many segments.
    pub fn chain(self, tail: Mbuf) -> Result<Mbuf, (Mbuf, Mbuf)> {
        // SAFETY: both are valid owned mbufs; on success `tail` is owned by the chain (freed
        // with it), on failure nothing changed.
        let ret = unsafe { dpdk_sys::shim_rte_pktmbuf_chain(self.raw.as_ptr(), tail.raw.as_ptr()) };
        if ret == 0 {
            std::mem::forget(tail);
            Ok(self)
        } else {
            Err((self, tail))
        }
    }

    /// Appends `n` bytes at the tail (unspecified contents); false if no tailroom.
    pub fn append(&mut self, n: usize) -> bool {
        if n > u16::MAX as usize {
            return false;
        }
        // SAFETY: valid owned mbuf; DPDK checks the tailroom.
        !unsafe { dpdk_sys::shim_rte_pktmbuf_append(self.raw.as_ptr(), n as u16) }.is_null()
    }
}

impl PacketBuf for Mbuf {
    #[inline]
    fn data(&self) -> &[u8] {
        let m = self.m();
        // SAFETY: buf_addr + data_off points at data_len initialised bytes of this
        // segment; the slice borrows self so the mbuf outlives it.
        unsafe {
            std::slice::from_raw_parts(
                (m.buf_addr as *const u8).add(m.data_off as usize),
                m.data_len as usize,
            )
        }
    }
    #[inline]
    fn data_mut(&mut self) -> &mut [u8] {
        let m = self.m_mut();
        // SAFETY: as in data(), and we hold the mbuf exclusively.
        unsafe {
            std::slice::from_raw_parts_mut(
                (m.buf_addr as *mut u8).add(m.data_off as usize),
                m.data_len as usize,
            )
        }
    }
    #[inline]
    fn headroom(&self) -> usize {
        self.m().data_off as usize
    }
    #[inline]
    fn prepend(&mut self, n: usize) -> bool {
        let m = self.m_mut();
        if n > m.data_off as usize {
            return false;
        }
        // Single segment: the same bookkeeping rte_pktmbuf_prepend does.
        m.data_off -= n as u16;
        m.data_len += n as u16;
        m.pkt_len += n as u32;
        true
    }
    #[inline]
    fn adj(&mut self, n: usize) -> bool {
        let m = self.m_mut();
        if n > m.data_len as usize {
            return false;
        }
        m.data_off += n as u16;
        m.data_len -= n as u16;
        m.pkt_len -= n as u32;
        true
    }
    #[inline]
    fn trim(&mut self, n: usize) -> bool {
        let m = self.m_mut();
        if n > m.data_len as usize {
            return false;
        }
        m.data_len -= n as u16;
        m.pkt_len -= n as u32;
        true
    }
    #[inline]
    fn shrink(&mut self, front: usize, back: usize) -> &mut [u8] {
        // trim then adj on one reference: the lengths stay in registers between them.
        let m = self.m_mut();
        if back > 0 && back <= m.data_len as usize {
            m.data_len -= back as u16;
            m.pkt_len -= back as u32;
        }
        if front <= m.data_len as usize {
            m.data_off += front as u16;
            m.data_len -= front as u16;
            m.pkt_len -= front as u32;
        }
        // SAFETY: as in data_mut(): buf_addr + data_off points at data_len initialised
        // bytes of this segment, and we hold the mbuf exclusively.
        unsafe {
            std::slice::from_raw_parts_mut(
                (m.buf_addr as *mut u8).add(m.data_off as usize),
                m.data_len as usize,
            )
        }
    }
}

impl Drop for Mbuf {
    fn drop(&mut self) {
        // SAFETY: we own the mbuf; after this it is back in its pool.
        unsafe { dpdk_sys::shim_rte_pktmbuf_free(self.raw.as_ptr()) }
    }
}

/// Up to [`BURST_MAX`] owned mbufs, as received by one `rx_burst`.
/// Dropping a burst frees the mbufs still in it (with one bulk call).
pub struct Burst {
    mbufs: [MaybeUninit<Mbuf>; BURST_MAX],
    len: usize,
}

impl Default for Burst {
    fn default() -> Self {
        Burst::new()
    }
}

impl Burst {
    /// An empty burst.
    pub fn new() -> Burst {
        Burst {
            mbufs: [const { MaybeUninit::uninit() }; BURST_MAX],
            len: 0,
        }
    }

    /// Number of mbufs held.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The mbufs, mutable (for the pipeline).
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [Mbuf] {
        // SAFETY: the first `len` entries are initialised.
        unsafe { std::slice::from_raw_parts_mut(self.mbufs.as_mut_ptr() as *mut Mbuf, self.len) }
    }

    /// The mbufs.
    #[inline]
    pub fn as_slice(&self) -> &[Mbuf] {
        // SAFETY: the first `len` entries are initialised.
        unsafe { std::slice::from_raw_parts(self.mbufs.as_ptr() as *const Mbuf, self.len) }
    }

    /// Adds an mbuf; gives it back when the burst is full.
    #[inline]
    pub fn push(&mut self, m: Mbuf) -> Result<(), Mbuf> {
        if self.len == BURST_MAX {
            return Err(m);
        }
        self.mbufs[self.len].write(m);
        self.len += 1;
        Ok(())
    }

    /// Raw pointer to the slot array (for rx_burst), and the free capacity.
    #[inline]
    pub(crate) fn raw_slots(&mut self) -> (*mut *mut dpdk_sys::rte_mbuf, usize) {
        // Mbuf is repr(transparent) over a non-null rte_mbuf pointer.
        (
            // SAFETY: pointer arithmetic within the array.
            unsafe { self.mbufs.as_mut_ptr().add(self.len) as *mut *mut dpdk_sys::rte_mbuf },
            BURST_MAX - self.len,
        )
    }

    /// Marks `n` more slots as filled (after rx_burst wrote them).
    ///
    /// # Safety
    /// The `n` slots after the current length must hold valid owned mbufs.
    #[inline]
    pub(crate) unsafe fn set_filled(&mut self, n: usize) {
        self.len += n;
    }

    /// Empties the burst, handing its mbufs over as raw pointers, in order: the caller
    /// owns them and must transmit or free each (as [`crate::TxBuffer::push_burst`] does).
    #[inline]
    pub(crate) fn take_raw(&mut self) -> &[*mut dpdk_sys::rte_mbuf] {
        let n = std::mem::replace(&mut self.len, 0);
        // SAFETY: Mbuf is repr(transparent) over a non-null rte_mbuf pointer and the first
        // n slots are initialised; with len 0 the burst no longer owns (or drops) them.
        unsafe {
            std::slice::from_raw_parts(self.mbufs.as_ptr() as *const *mut dpdk_sys::rte_mbuf, n)
        }
    }

    /// Takes every mbuf out, in order, leaving the burst empty.
    pub fn drain(&mut self) -> impl Iterator<Item = Mbuf> + '_ {
        let n = self.len;
        self.len = 0;
        // SAFETY: the first n entries were initialised and are read exactly once.
        (0..n).map(move |i| unsafe { self.mbufs[i].assume_init_read() })
    }

    /// Moves every multi-segment mbuf into `out` (freeing it at once when `out` is full),
    /// keeping the others in order; returns how many were taken out. One pass of loads
    /// when there is none, which is the rule.
    #[inline]
    pub fn take_chained(&mut self, out: &mut Burst) -> usize {
        // The segment counts OR'd (no early exit, no compare per packet): above 1 exactly
        // when some count is.
        let any = self.as_slice().iter().fold(0u16, |a, m| a | m.nb_segs());
        if any <= 1 {
            return 0;
        }
        let n = self.len;
        self.len = 0;
        let mut taken = 0;
        for i in 0..n {
            // SAFETY: slot i < n is initialised and read exactly once; slots below
            // self.len <= i are rewritten only after their mbuf was read.
            let m = unsafe { self.mbufs[i].assume_init_read() };
            if m.nb_segs() > 1 {
                taken += 1;
                if let Err(m) = out.push(m) {
                    drop(m);
                }
            } else {
                self.mbufs[self.len].write(m);
                self.len += 1;
            }
        }
        taken
    }

    /// Frees every mbuf with one bulk call.
    pub fn free_all(&mut self) {
        if self.len == 0 {
            return;
        }
        // SAFETY: the first len entries are owned mbufs; after the bulk free we forget them.
        unsafe {
            dpdk_sys::rte_pktmbuf_free_bulk(
                self.mbufs.as_mut_ptr() as *mut *mut dpdk_sys::rte_mbuf,
                self.len as u32,
            )
        };
        self.len = 0;
    }
}

impl Drop for Burst {
    fn drop(&mut self) {
        self.free_all();
    }
}
