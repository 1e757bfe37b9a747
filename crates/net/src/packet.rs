//! The packet buffer abstraction the pipeline works on.
//!
//! The DPDK runtime implements [`PacketBuf`] for its mbuf wrapper; tests and benchmarks use
//! [`VecBuf`]. The pipeline only ever moves the start of the packet (prepend / adj) and
//! rewrites bytes in place; it never grows the tail, so no implementation needs to allocate.

/// A contiguous packet with headroom in front of it.
pub trait PacketBuf {
    /// The packet bytes, from the current start (the Ethernet header) to the end.
    fn data(&self) -> &[u8];
    /// The packet bytes, mutable.
    fn data_mut(&mut self) -> &mut [u8];
    /// Bytes available in front of the packet for [`PacketBuf::prepend`].
    fn headroom(&self) -> usize;
    /// Moves the start `n` bytes to the front (the new bytes are unspecified).
    /// Returns `false` and leaves the packet untouched when the headroom is short.
    fn prepend(&mut self, n: usize) -> bool;
    /// Removes `n` bytes from the front. Returns `false` and leaves the packet untouched
    /// when the packet is shorter than `n`.
    fn adj(&mut self, n: usize) -> bool;
    /// Removes `n` bytes from the end (Ethernet padding after an IPv4 datagram).
    /// Returns `false` and leaves the packet untouched when the packet is shorter than `n`.
    fn trim(&mut self, n: usize) -> bool;
    /// Removes `back` bytes from the end, then `front` from the front (as [`PacketBuf::trim`]
    /// and [`PacketBuf::adj`]: each skipped when the packet is shorter), and returns the
    /// bytes left. One call, so that an implementation can read its bookkeeping once:
    /// through separate calls the compiler may have to read the buffer's pointer and
    /// lengths back from memory after each write (the PHP fast path's pop).
    #[inline]
    fn shrink(&mut self, front: usize, back: usize) -> &mut [u8] {
        if back > 0 {
            let _ = self.trim(back);
        }
        let _ = self.adj(front);
        self.data_mut()
    }
    /// Packet length in bytes.
    fn len(&self) -> usize {
        self.data().len()
    }
    /// True when the packet has no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Default headroom of a [`VecBuf`], the same as DPDK's `RTE_PKTMBUF_HEADROOM`.
pub const DEFAULT_HEADROOM: usize = 128;

/// A `Vec`-backed [`PacketBuf`] for tests, benchmarks and the slow path.
#[derive(Debug, PartialEq, Eq)]
pub struct VecBuf {
    buf: Vec<u8>,
    start: usize,
}

impl VecBuf {
    /// A packet holding `bytes`, with [`DEFAULT_HEADROOM`] bytes of headroom.
    pub fn new(bytes: &[u8]) -> Self {
        Self::with_headroom(bytes, DEFAULT_HEADROOM)
    }

    /// A packet holding `bytes`, with `headroom` bytes in front.
    pub fn with_headroom(bytes: &[u8], headroom: usize) -> Self {
        let mut buf = vec![0u8; headroom + bytes.len()];
        buf[headroom..].copy_from_slice(bytes);
        VecBuf {
            buf,
            start: headroom,
        }
    }

    /// The packet bytes as an owned vector.
    pub fn to_vec(&self) -> Vec<u8> {
        self.data().to_vec()
    }
}

impl Clone for VecBuf {
    fn clone(&self) -> Self {
        VecBuf {
            buf: self.buf.clone(),
            start: self.start,
        }
    }

    /// Reuses the allocation (benchmarks reset bursts without touching the allocator).
    fn clone_from(&mut self, source: &Self) {
        self.buf.clone_from(&source.buf);
        self.start = source.start;
    }
}

impl PacketBuf for VecBuf {
    #[inline]
    fn data(&self) -> &[u8] {
        &self.buf[self.start..]
    }
    #[inline]
    fn data_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.start..]
    }
    #[inline]
    fn headroom(&self) -> usize {
        self.start
    }
    #[inline]
    fn prepend(&mut self, n: usize) -> bool {
        if n > self.start {
            return false;
        }
        self.start -= n;
        true
    }
    #[inline]
    fn adj(&mut self, n: usize) -> bool {
        if n > self.len() {
            return false;
        }
        self.start += n;
        true
    }
    #[inline]
    fn trim(&mut self, n: usize) -> bool {
        if n > self.len() {
            return false;
        }
        let new_len = self.buf.len() - n;
        self.buf.truncate(new_len);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepend_adj_trim_respect_bounds() {
        let mut p = VecBuf::with_headroom(&[1, 2, 3, 4], 2);
        assert!(!p.prepend(3));
        assert!(p.prepend(2));
        assert_eq!(p.len(), 6);
        assert_eq!(p.headroom(), 0);
        assert!(p.adj(3));
        assert_eq!(p.data(), &[2, 3, 4]);
        assert!(!p.adj(4));
        assert!(p.trim(1));
        assert_eq!(p.data(), &[2, 3]);
        assert!(!p.trim(3));
    }

    #[test]
    fn shrink_is_trim_then_adj() {
        let mut p = VecBuf::with_headroom(&[1, 2, 3, 4, 5, 6], 2);
        assert_eq!(p.shrink(2, 1), &mut [3, 4, 5]);
        assert_eq!(p.headroom(), 4);
        assert_eq!(p.shrink(1, 0), &mut [4, 5]);
        // Each part is skipped when the packet is shorter, as trim and adj are.
        assert_eq!(p.shrink(1, 3), &mut [5]);
        assert_eq!(p.shrink(2, 0), &mut [5]);
    }
}
