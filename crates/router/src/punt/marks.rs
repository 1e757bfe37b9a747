//! Incomplete neighbours, as the workers see them: a next hop whose ARP request is
//! outstanding is marked here by the slow path, and the workers drop its packets
//! (`neighbor_incomplete`) instead of punting each one: the first few are already held
//! by the slow path (Linux's `unres_qlen`), and the rest would only overflow its hold.
//!
//! Published without locks: a fixed table of 8-way buckets (one cache line each) of
//! `AtomicU64` keys. The slow path is the only writer (plain relaxed stores); workers
//! read with relaxed loads, only for packets that are about to be punted for a missing
//! MAC, so forwarded traffic never looks here. A full bucket just leaves an address
//! unmarked: its packets are punted, within the glean budget, as before.
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

#[inline]
fn bucket_of(key: u64) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54) as usize & (BUCKETS - 1)
}

/// The shared table (one per router, in an `Arc`).
pub struct NeighborMarks {
    buckets: Box<[Bucket]>,
}

impl Default for NeighborMarks {
    fn default() -> Self {
        NeighborMarks {
            buckets: (0..BUCKETS)
                .map(|_| Bucket([const { AtomicU64::new(0) }; WAYS]))
                .collect(),
        }
    }
}

impl NeighborMarks {
    /// Whether `m` is marked incomplete (workers).
    #[inline]
    pub fn contains(&self, m: Mark) -> bool {
        let k = m.key();
        self.buckets[bucket_of(k)]
            .0
            .iter()
            .any(|s| s.load(Relaxed) == k)
    }

    /// Marks `m`; false when its bucket is full (slow path only: one writer).
    pub fn insert(&self, m: Mark) -> bool {
        let k = m.key();
        let b = &self.buckets[bucket_of(k)].0;
        if b.iter().any(|s| s.load(Relaxed) == k) {
            return true;
        }
        match b.iter().find(|s| s.load(Relaxed) == 0) {
            Some(s) => {
                s.store(k, Relaxed);
                true
            }
            None => false,
        }
    }

    /// Clears `m` (slow path only).
    pub fn remove(&self, m: Mark) {
        let k = m.key();
        for s in self.buckets[bucket_of(k)].0.iter() {
            if s.load(Relaxed) == k {
                s.store(0, Relaxed);
            }
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
        for m in &ok {
            t.remove(*m);
        }
        assert!((0..65_536u32).all(|ip| !t.contains(Mark::Addr { port: 0, ip })));
    }
}
