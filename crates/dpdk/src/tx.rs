//! Per-(port, queue) transmit buffers flushed in bulk.

use crate::mbuf::{Burst, Mbuf, BURST_MAX};

/// Collects mbufs for one TX queue and sends them with one `tx_burst` when full or when
/// flushed. Whatever the PMD refuses is freed at once and counted in
/// [`TxBuffer::dropped`]: a refused packet is never leaked and never retried (retrying a
/// full queue only stalls the worker).
///
/// Owned by one worker; each worker has its own TX queue on every port.
pub struct TxBuffer {
    port: u16,
    queue: u16,
    len: usize,
    pkts: [*mut dpdk_sys::rte_mbuf; BURST_MAX],
    sent: u64,
    dropped: u64,
}

// SAFETY: the buffered pointers are owned mbufs; moving the buffer moves their ownership.
unsafe impl Send for TxBuffer {}

impl TxBuffer {
    /// A buffer for TX queue `queue` of port `port`.
    pub fn new(port: u16, queue: u16) -> TxBuffer {
        TxBuffer {
            port,
            queue,
            len: 0,
            pkts: [std::ptr::null_mut(); BURST_MAX],
            sent: 0,
            dropped: 0,
        }
    }

    /// Egress port id.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Queues `m`; flushes first when the buffer is full.
    #[inline]
    pub fn push(&mut self, m: Mbuf) {
        if self.len == BURST_MAX {
            self.flush();
        }
        self.pkts[self.len] = m.into_raw();
        self.len += 1;
    }

    /// Queues every mbuf of `b`, in order, leaving it empty: one copy of the pointers
    /// instead of a push per packet (a burst for one egress port). Flushes first when
    /// they would not fit.
    #[inline]
    pub fn push_burst(&mut self, b: &mut Burst) {
        if self.len + b.len() > BURST_MAX {
            self.flush();
        }
        let src = b.take_raw();
        // A burst holds at most BURST_MAX mbufs and the buffer is empty or has room.
        self.pkts[self.len..self.len + src.len()].copy_from_slice(src);
        self.len += src.len();
    }

    /// Number of mbufs waiting.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing waits.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Sends what is buffered with one `tx_burst`; frees and counts what is refused.
    /// Returns the number sent.
    #[inline]
    pub fn flush(&mut self) -> usize {
        if self.len == 0 {
            return 0;
        }
        // SAFETY: pkts[..len] are owned mbufs; the PMD takes ownership of the first
        // `sent` of them.
        let sent = unsafe {
            dpdk_sys::shim_rte_eth_tx_burst(
                self.port,
                self.queue,
                self.pkts.as_mut_ptr(),
                self.len as u16,
            )
        } as usize;
        if sent < self.len {
            // SAFETY: pkts[sent..len] are still ours; free them in one call.
            unsafe {
                dpdk_sys::rte_pktmbuf_free_bulk(
                    self.pkts.as_mut_ptr().add(sent),
                    (self.len - sent) as u32,
                )
            };
            self.dropped += (self.len - sent) as u64;
        }
        self.sent += sent as u64;
        self.len = 0;
        sent
    }

    /// Packets handed to the PMD so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Packets the PMD refused (freed) so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

impl Drop for TxBuffer {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: pkts[..len] are owned mbufs; freeing rather than sending, because
            // the port may already be stopped when a buffer is dropped.
            unsafe { dpdk_sys::rte_pktmbuf_free_bulk(self.pkts.as_mut_ptr(), self.len as u32) };
            self.dropped += self.len as u64;
            self.len = 0;
        }
    }
}
