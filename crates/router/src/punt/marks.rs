//! Incomplete neighbours, as the workers see them: a next hop whose ARP request is
//! outstanding is marked here by the slow path, and the workers drop its packets
//! (`neighbor_incomplete`) instead of punting each one: the first few are already held
//! by the slow path (Linux's `unres_qlen`), and the rest would only overflow its hold.
//!
//! Published without locks: a fixed table of 8-way buckets (one cache line each) of
//! `AtomicU64` keys, and one 64-bit summary word per bucket (8 KiB in all, so it stays
//! in cache under a scan of a /16, where the 64 KiB of buckets would miss on every
//! packet): a key's bucket and summary bit come from one hash, and a clear bit answers
//! "not marked" without reading the bucket. The slow path is the only writer (plain
//! relaxed stores: the key before its bit, the bit cleared only when no other key of
//! its bucket has it); workers read with relaxed loads, only for packets that are about
//! to be punted for a missing MAC, so forwarded traffic never looks here. A full bucket
//! just leaves an address unmarked: its packets are punted, within the glean budget, as
//! before.
//! Marks never outlive their resolution: the slow path clears one when the neighbour
//! answers or the resolution is given up (its entries age out with it).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Slots per bucket: one 64-byte cache line.
const WAYS: usize = 8;
/// Buckets (a power of two): 8,192 slots, enough for every resolution the slow path
/// keeps at once (`slowpath::pending::MAX_PENDING`) and their next hops.
const BUCKETS: usize = 1024;

#[repr(align(64))]
struct Bucket([AtomicU64; WAYS]);

/// What is marked: an on-link address on a port (glean) or an adjacency of the current
/// table (a route's unresolved next hop).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mark {
    Addr {
        port: u16,
        ip: u32,
    },
    Adj(u32),
    /// An on-link IPv6 address, kept as a 52-bit hash with the low 8 bits of the port:
    /// two addresses may share a key (about one chance in 2^52 per pair), which only
    /// means one's packets are dropped while the other is resolved.
    Addr6 {
        port: u16,
        ip: u128,
    },
}

impl Mark {
    /// Never 0 (an empty slot).
    #[inline]
    fn key(self) -> u64 {
        match self {
            Mark::Addr { port, ip } => 1 << 63 | (port as u64) << 32 | ip as u64,
            Mark::Adj(adj) => 1 << 62 | adj as u64,
            Mark::Addr6 { port, ip } => {
                let folded = (ip as u64) ^ ((ip >> 64) as u64).rotate_left(29);
                let h = folded.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 12;
                1 << 61 | (port as u64 & 0xff) << 52 | h
            }
        }
    }
}

/// A key's bucket (the hash's top 10 bits) and its bit in the bucket's summary word (the
/// next 6 bits).
#[inline]
fn place(key: u64) -> (usize, u64) {
    let h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((h >> 54) as usize & (BUCKETS - 1), 1 << ((h >> 48) & 63))
}

/// The shared table (one per router, in an `Arc`).
pub struct NeighborMarks {
    buckets: Box<[Bucket]>,
    /// Per bucket, the summary bits of the keys in it.
    summary: Box<[AtomicU64]>,
}

impl Default for NeighborMarks {
    fn default() -> Self {
        NeighborMarks {
            buckets: (0..BUCKETS)
                .map(|_| Bucket([const { AtomicU64::new(0) }; WAYS]))
                .collect(),
            summary: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

impl NeighborMarks {
    /// Whether `m` is marked incomplete (workers).
    #[inline]
    pub fn contains(&self, m: Mark) -> bool {
        let k = m.key();
        let (b, bit) = place(k);
        self.summary[b].load(Relaxed) & bit != 0
            && self.buckets[b].0.iter().any(|s| s.load(Relaxed) == k)
    }

    /// Marks `m`; false when its bucket is full (slow path only: one writer).
    pub fn insert(&self, m: Mark) -> bool {
        let k = m.key();
        let (i, bit) = place(k);
        let b = &self.buckets[i].0;
        if b.iter().any(|s| s.load(Relaxed) == k) {
            return true;
        }
        match b.iter().find(|s| s.load(Relaxed) == 0) {
            Some(s) => {
                s.store(k, Relaxed);
                let sum = &self.summary[i];
                sum.store(sum.load(Relaxed) | bit, Relaxed);
                true
            }
            None => false,
        }
    }

    /// Clears `m` (slow path only).
    pub fn remove(&self, m: Mark) {
        let k = m.key();
        let (i, bit) = place(k);
        let b = &self.buckets[i].0;
        let mut shared = false;
        for s in b.iter() {
            match s.load(Relaxed) {
                v if v == k => s.store(0, Relaxed),
                0 => {}
                v => shared |= place(v).1 == bit,
            }
        }
        if !shared {
            let sum = &self.summary[i];
            sum.store(sum.load(Relaxed) & !bit, Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_found_cleared_and_bounded_per_bucket() {
        let t = NeighborMarks::default();
        let a = Mark::Addr { port: 1, ip: 7 };
        assert!(!t.contains(a));
        assert!(t.insert(a) && t.insert(a));
        assert!(t.contains(a));
        assert!(!t.contains(Mark::Addr { port: 2, ip: 7 }));
        assert!(!t.contains(Mark::Adj(7)), "adjacency 7 is another key");
        t.remove(a);
        assert!(!t.contains(a));
        // A scan of a /16: most addresses fit, none is lost silently (insert says so),
        // and whatever was inserted is found.
        let mut ok = Vec::new();
        for ip in 0..65_536u32 {
            let m = Mark::Addr { port: 0, ip };
            if t.insert(m) {
                ok.push(m);
            }
        }
        assert_eq!(ok.len(), BUCKETS * WAYS);
        assert!(ok.iter().all(|m| t.contains(*m)));
        // Removing half leaves the other half found (a summary bit shared by two keys
        // of a bucket stays while either is marked).
        for m in ok.iter().step_by(2) {
            t.remove(*m);
        }
        for (n, m) in ok.iter().enumerate() {
            assert_eq!(t.contains(*m), n % 2 == 1, "{m:?}");
        }
        for m in &ok {
            t.remove(*m);
        }
        assert!((0..65_536u32).all(|ip| !t.contains(Mark::Addr { port: 0, ip })));
        assert!(
            t.summary.iter().all(|s| s.load(Relaxed) == 0),
            "an empty table has no summary bit left"
        );
    }
}
